"""Rows a tree model cannot tell apart (:meth:`TabularSampler.hash_by_splits`).

A tree model sees a numeric feature only through comparisons ``dtype(x) <= t`` with its split
thresholds, so values between the same two thresholds are one value to it. Hashing each row by
the intervals its values fall in, not by the values, makes rows the model answers alike one row
to the prediction cache: fewer rows go to the model, and the samples and the search are
unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["extended_split_codes", "split_codes"]


def split_codes(values, thresholds, dtype=np.float32):
    """The interval between ``thresholds`` (sorted) that each value falls in, as a tree
    model compares it (``dtype(x) <= t``): the number of thresholds below it; missing
    values get a code of their own. None when the values are not numbers. Without
    thresholds (a categorical feature) every value keeps a code of its own."""
    if thresholds is None:
        return np.arange(len(values))
    if not isinstance(values, np.ndarray):
        values = pd.Series(values)
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    single = numbers.astype(dtype).astype(np.float64)
    codes = np.searchsorted(thresholds, single, side="left").astype(np.int64)
    codes[np.isnan(numbers)] = len(thresholds) + 1
    return codes


def extended_split_codes(values, thresholds, known, dtype):
    """:func:`split_codes` of ``values`` whose first ``len(known)`` codes are ``known``:
    the explained row's values the reference data lacked, appended after them. One that is
    not a number gets a code of its own."""
    if thresholds is None:  # a categorical feature: a code per value
        return np.arange(len(values))
    out = [known]
    for k in range(len(known), len(values)):
        code = split_codes(values[k : k + 1], thresholds, dtype)
        out.append(code if code is not None else np.array([len(thresholds) + 2 + k]))
    return np.concatenate(out)
