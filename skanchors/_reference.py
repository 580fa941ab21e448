"""The samples of an instance whose perturbations are reference rows (``D(z | A)`` is the
reference rows satisfying ``A``): :class:`ReferenceStore` and the bandit's view of it,
:class:`ReferenceArms`."""

from __future__ import annotations

import numpy as np

from ._arms import Arms, ArmsCapabilities
from ._samples import _Predictions

__all__ = ["ReferenceStore", "ReferenceArms"]


class ReferenceStore(_Predictions):
    """The samples of an instance whose ``D(z | A)`` is the reference rows satisfying ``A``.

    For samplers with ``draws_reference_rows`` (the tabular ``perturbation="reference"``).
    The reference rows are read in one random order (``instance.reference_order``, fixed by
    the explainer's seed). The samples of a rule are its rows, in that order, up to the first
    one not drawn yet: a uniform draw without replacement from the rows that satisfy it,
    whichever rules the rows were drawn for (a draw for a rule takes its next rows, so a rule
    covering a drawn rule's rows finds no gap in them). Every sample thus serves every rule it
    satisfies, without bias, and counts once: a rule that covers ``k`` reference rows has at
    most ``k`` samples, so its confidence bounds are those of ``k`` rows of the data, not of
    as many draws as the search would like.

    The order is cut in two halves (``part`` 0 and 1): the search chooses rules on the rows of
    the first and validates them on those of the second, whose predictions the choice never
    saw. (A rule's rows that merely were not drawn yet when it was chosen are no such sample:
    a row that satisfies more of the explained row's predicates is more likely to have been
    drawn for some rule, so the undrawn rows differ from the rule's other rows.)

    Parameters are those of :class:`SampleStore`; with ``shared`` the order comes from its
    seed (the same for every explained row), else from ``rng``.
    """

    draws_reference_rows = True
    exact_reuse = True
    stratified = False

    def __init__(self, instance, predict, target, rng, shared=None):
        super().__init__(instance, predict, target, rng, shared)
        seed = shared.seed if shared is not None else int(rng.integers(2**31))
        self._keys, self._hashes, self._predicates = instance.reference_order(seed)
        n = len(self._hashes)
        self._drawn = np.zeros(n, dtype=bool)
        self._class = np.full(n, -1, dtype=np.int64)  # predictions of the drawn rows
        self._order = []  # positions drawn, one array per draw
        self._rows = {(): np.arange(n)}  # positions of the rows satisfying each rule
        self._half = n // 2  # the first position of part 1
        self._parts = {}  # (rule, part) -> its rows in that part
        self._prefix = {}  # (rule, part) -> [samples, positives]

    def _positions(self):
        if len(self._order) > 1:
            self._order = [np.concatenate(self._order)]
        return self._order[0] if self._order else np.zeros(0, dtype=np.intp)

    @property
    def size(self):
        return int(self._drawn.sum())

    @property
    def keys(self):
        return self._keys[self._positions()]

    @property
    def labels(self):
        return self._class[self._positions()]

    def arms(self, candidates, parents=None, fresh=False):
        """The bandit's arms for ``candidates``; with ``fresh``, on the rows of part 1 (the
        validation of chosen rules)."""
        return ReferenceArms(self, candidates, part=1 if fresh else 0)

    def rows(self, anchor, part=0):
        """Positions (in the drawing order) of the reference rows of ``part`` (0 or 1) that
        satisfy ``anchor``."""
        anchor = tuple(sorted(anchor))
        rows = self._parts.get((anchor, part))
        if rows is None:
            every = self._all_rows(anchor)
            cut = int(np.searchsorted(every, self._half))
            rows = self._parts[(anchor, part)] = every[cut:] if part else every[:cut]
        return rows

    def _all_rows(self, anchor):
        """Positions of all the reference rows that satisfy the sorted rule ``anchor``."""
        rows = self._rows.get(anchor)
        if rows is None:
            if len(anchor) == 1:
                rows = self._predicates[anchor[0]][1]
            else:
                # Filter the fewest rows of a known rule one predicate shorter (the search's
                # parent, usually), else of the rule without its last predicate.
                known = [
                    (len(r), i)
                    for i in range(len(anchor))
                    if (r := self._rows.get(anchor[:i] + anchor[i + 1 :])) is not None
                ]
                i = min(known)[1] if known else len(anchor) - 1
                shorter = self._all_rows(anchor[:i] + anchor[i + 1 :])
                rows = shorter[self._predicates[anchor[i]][0][shorter]]
            self._rows[anchor] = rows
        return rows

    def prefix(self, anchor, part=0):
        """``(samples, positives)`` of ``anchor`` in ``part``: its rows up to the first not
        drawn."""
        return self._prefix_of(tuple(sorted(anchor)), part)

    def _prefix_of(self, anchor, part=0):
        """:meth:`prefix` of a sorted rule."""
        state = self._prefix.get((anchor, part))
        if state is None:
            state = self._prefix[(anchor, part)] = [0, 0]
        rows = self._parts.get((anchor, part))
        if rows is None:
            rows = self.rows(anchor, part)
        p = state[0]
        if p < len(rows) and self._drawn[rows[p]]:
            start = p
            while p < len(rows):
                window = self._drawn[rows[p : p + 512]]
                k = int(np.argmin(window))
                if not window[k]:
                    p += k
                    break
                p += len(window)
            got = self._class[rows[start:p]] == self.target
            state[0], state[1] = p, state[1] + int(np.count_nonzero(got))
        return state[0], state[1]

    def draw(self, requests, part=0):
        """Draw the next ``n`` rows of ``part`` of each ``(anchor, n)`` request, in one model
        call.

        Returns the store's ``(start, stop)`` of the rows not drawn before.
        """
        new = []
        for anchor, n in requests:
            p, _ = self.prefix(anchor, part)
            new.append(self.rows(anchor, part)[p : p + int(n)])
        new = np.unique(np.concatenate(new)) if new else np.zeros(0, dtype=np.intp)
        new = new[~self._drawn[new]]
        start = self.size
        if new.size:
            self._class[new] = self._label(self._keys[new], self._hashes[new])
            self._drawn[new] = True
            self._order.append(new)
        return start, start + new.size

    def valid(self, candidates, start=0, stop=None, reuse=None):
        """Boolean matrix (drawn rows start:stop x candidates): the candidate's samples, in
        both parts."""
        pos = self._positions()[start:stop]
        out = np.zeros((len(pos), len(candidates)), dtype=bool)
        inside = np.zeros(len(self._drawn), dtype=bool)
        for j, cand in enumerate(candidates):
            inside[:] = False
            for part in (0, 1):
                p, _ = self.prefix(cand, part)
                inside[self.rows(cand, part)[:p]] = True
            out[:, j] = inside[pos]
        return out

    def keys_of(self, rows):
        """The keys of drawn rows ``rows``."""
        return self.keys[np.asarray(rows, dtype=np.intp)]

    def valid_indices(self, candidate, reuse=None):
        """Indices of the drawn rows that count for ``candidate``."""
        return np.flatnonzero(self.valid([candidate])[:, 0])


class ReferenceArms(Arms):
    """The bandit's arms on a :class:`ReferenceStore`: counts read from each rule's rows of
    ``part`` (0: the rows rules are chosen on; 1: those they are validated on).

    ``n_available`` is how many samples an arm can ever have (the rule's rows of its part);
    the bandit and the validation stop sampling an arm that has them all.
    """

    capabilities = ArmsCapabilities(pulls_each=True, finite_supply=True, hopeless_rounds=True)

    def __init__(self, store, candidates, part=0):
        self.store = store
        self.part = part
        self.candidates = [tuple(sorted(c)) for c in candidates]
        m = len(self.candidates)
        self.n_available = np.array(
            [len(store.rows(c, part)) for c in self.candidates], dtype=float
        )
        self.n_samples, self.n_positives = np.zeros(m), np.zeros(m)
        self._refresh()

    def _refresh(self):
        prefix = self.store._prefix_of
        for i, cand in enumerate(self.candidates):
            self.n_samples[i], self.n_positives[i] = prefix(cand, self.part)

    def pull(self, indices, n):
        """Draw ``n`` more rows for each arm in ``indices`` (one model call); a drawn row
        then counts for every arm whose rows reach it without a gap."""
        self.pull_each(indices, [n] * len(indices))

    def pull_each(self, indices, counts):
        """Draw ``counts[j]`` more rows for arm ``indices[j]``, all in one model call."""
        requests = [(self.candidates[i], int(c)) for i, c in zip(indices, counts)]
        self.store.draw(requests, self.part)
        self._refresh()
