"""LIME's perturbations of a table row: every column drawn independently of the others.

LIME (Ribeiro, Singh and Guestrin 2016) samples the interpretable components of an instance
independently; on tables, the LIME package draws each feature on its own from the training
data (a numeric feature's bin with the training frequencies, then a value inside it; a
categorical feature's value with its frequency). Here each column of a perturbation takes its
value from a reference row of its own, drawn uniformly: its bin (or category, or missing
value) comes with the reference frequency, and the value is one the data hold within that
bin. The columns are independent, so the weight that LIME's regression gives one
interpretable feature ("the value is in ``x``'s bin") is the model's response to that column
alone, not to the columns the data correlate it with.

The anchors' perturbations (:meth:`TabularInstance.sample
<skanchors.samplers.TabularInstance.sample>`) keep whole reference rows instead: with no
predicate fixed, a perturbation is one reference row, with the data's correlations.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sample_independent"]


def sample_independent(instance, n, rng):
    """``n`` perturbations of a row whose columns are drawn independently.

    Parameters
    ----------
    instance : TabularInstance
        The explained row (:meth:`TabularSampler.instance
        <skanchors.samplers.TabularSampler.instance>`).
    n : int
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    keys : ndarray of shape (n, n_features)
        Value codes (:meth:`TabularInstance.decode
        <skanchors.samplers.TabularInstance.decode>` turns them into model input): column
        ``j`` of sample ``i`` is column ``j`` of a reference row drawn for it alone (uniformly,
        or by the ``sample_weight`` the sampler was fitted with).
    holds : ndarray of bool, shape (n, n_predicates)
        Which of the row's predicates each sample satisfies.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skanchors.samplers import TabularSampler
    >>> X = pd.DataFrame({"a": np.arange(8.0), "b": np.arange(8.0)})  # b equals a
    >>> instance = TabularSampler().fit(X).instance(X.iloc[[7]])
    >>> keys, holds = sample_independent(instance, 5, np.random.default_rng(0))
    >>> [str(p) for p in instance.predicates]
    ['a > 5.0', 'b > 5.0']
    >>> instance.decode(keys)
         a    b
    0  6.0  5.0
    1  4.0  2.0
    2  2.0  0.0
    3  0.0  0.0
    4  1.0  6.0
    >>> holds
    array([[ True, False],
           [False, False],
           [False, False],
           [False, False],
           [False,  True]])
    """
    # One reference row per (sample, column), with the reference weights if the sampler was
    # fitted with some. The explained row's own values (row n_ref of the instance's row space,
    # used when no reference row satisfies one of its predicates) are never drawn: such a
    # predicate holds in no perturbation, as with whole rows.
    shape = (int(n), len(instance._values))
    cum = instance._cum
    if cum is None:
        src = rng.integers(instance._n_ref, size=shape)
    else:
        src = np.searchsorted(cum, rng.random(shape) * cum[-1], side="right")
        src = np.minimum(src, instance._n_ref - 1)
    return instance._keys(src), instance._holds_of(src)
