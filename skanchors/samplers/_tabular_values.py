"""Value codes of a table: each column's distinct reference values, and the code of a value.

The sampler holds a table as integer codes (a value's position among its column's distinct
reference values, missing values last) and decodes samples by one gather from the values.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

# Columns with more distinct values than this find the explained row's code by binary search
# in their sorted numbers (or, for other values, in a pandas Index): 8 to 16 bytes a value
# rather than a dict's hundred or so, which matters for the fitted explainer pickled to every
# joblib worker.
_DICT_LOOKUP_MAX = 4096


def _numpy_dtype(values):
    """The numpy dtype of a column's values held in numpy (not, say, pandas strings, masked
    integers or categoricals), else None."""
    if isinstance(values, np.ndarray):
        return values.dtype
    if type(values) is pd.arrays.NumpyExtensionArray:
        return values.dtype.numpy_dtype
    return None


class _SortedCodes:
    """A column's many distinct numbers, sorted, with their codes: a value's code by binary
    search (cheaper per explained row than pandas' get_indexer)."""

    def __init__(self, values):
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]

    def __len__(self):
        return len(self.order)

    def get(self, value):
        if not isinstance(value, numbers.Number):  # as a dict: "3.5" is not 3.5
            return None
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            return None
        at = int(np.searchsorted(self.sorted, number))
        if at < len(self.sorted) and self.sorted[at] == number:
            return int(self.order[at])
        return None


def _value_lookup(uniques):
    """What finds a value's code (its position in ``uniques``) for the explained row."""
    if len(uniques) <= _DICT_LOOKUP_MAX:
        return {v: i for i, v in enumerate(uniques.tolist())}  # the fastest for a few
    if pd.api.types.is_numeric_dtype(uniques.dtype) and not pd.api.types.is_bool_dtype(
        uniques.dtype
    ):
        values = np.asarray(uniques, dtype=float)
        if np.all(np.abs(values) < 2.0**53):  # (as floats, larger integers could collide)
            return _SortedCodes(values)
    return pd.Index(uniques)


def _code_of(lookup, value):
    """The code of ``value`` in a :func:`_value_lookup`, or None for a value not seen."""
    if not isinstance(lookup, pd.Index):
        return lookup.get(value)
    try:
        at = lookup.get_indexer([value])[0]
    except (TypeError, ValueError):  # a value the index cannot compare with its own
        return None
    return None if at < 0 else int(at)


def _with_value(values, column):
    """The reference's values of a column and the row's own value (``column``, 1 row): a
    categorical stays categorical, its categories extended (concatenating categoricals of
    other categories gives an object column, which a model reading ``.cat`` cannot take)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        value = column.iloc[0]
        categorical = pd.Categorical(values)
        if pd.isna(value):
            code = -1
        else:
            if value not in categorical.categories:
                categorical = categorical.add_categories([value])
            code = categorical.categories.get_loc(value)
        return pd.Categorical.from_codes(
            np.append(categorical.codes, code), dtype=categorical.dtype
        )
    return pd.concat([pd.Series(values), column], ignore_index=True).array


def _flatten(values):
    """Per-feature value arrays as one array and each feature's offset into it."""
    sizes = [len(v) for v in values]
    offsets = np.zeros(len(values), dtype=np.int64)
    np.cumsum(sizes[:-1], out=offsets[1:])
    return np.concatenate(values), offsets


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value
