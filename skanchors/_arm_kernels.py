"""The compiled stratum counts of :class:`skanchors._search.StratifiedArms` (imported only when
numba is; see :mod:`skanchors._numba`).

:func:`stratum_counts` adds new samples to the arms' stratum counts as
``StratifiedArms._update`` does with numpy arrays, one sample at a time instead of through
fancy-indexed temporaries: the counts are whole numbers, so adding them one by one gives the
same float64 values.
"""

import numba


@numba.njit(nogil=True, cache=True)
def stratum_counts(ids, native, labels, target, own_arm, groups, parent_ptr, parent_arms, n1,
                   pos1, n2, pos2, changed):  # fmt: skip
    """Count samples ``ids`` (their anchor ids), ``native`` (their base rows' predicate
    values) and ``labels`` into the arms' strata.

    A sample drawn for arm ``own_arm[id]`` counts in its stratum 1 when its base row satisfies
    every predicate of the arm's group (``groups[arm]``), else in stratum 2; one drawn for a
    parent counts in stratum 1 of each of the parent's arms
    (``parent_arms[parent_ptr[id]:parent_ptr[id + 1]]``) whose group it satisfies. Arms that
    got samples are flagged in ``changed``.
    """
    width = groups.shape[1]
    n_own = own_arm.shape[0]
    n_par = parent_ptr.shape[0] - 1
    for s in range(ids.shape[0]):
        i = ids[s]
        right = 1.0 if labels[s] == target else 0.0
        if i < n_own:
            arm = own_arm[i]
            if arm >= 0:
                inside = True
                for k in range(width):
                    if not native[s, groups[arm, k]]:
                        inside = False
                        break
                if inside:
                    n1[arm] += 1.0
                    pos1[arm] += right
                else:
                    n2[arm] += 1.0
                    pos2[arm] += right
                changed[arm] = True
        if i < n_par:
            for t in range(parent_ptr[i], parent_ptr[i + 1]):
                arm = parent_arms[t]
                changed[arm] = True
                inside = True
                for k in range(width):
                    if not native[s, groups[arm, k]]:
                        inside = False
                        break
                if inside:
                    n1[arm] += 1.0
                    pos1[arm] += right
