"""Input checks of the tabular sampler: the reference data and the rows to explain as frames or
arrays of the reference data's columns, which features are categorical, and clear errors for
what a table of anchors cannot hold (dates, True beside 1, infinite numbers)."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_array

from .._validation import refuse_complex

__all__ = ["TableInput", "refuse_bools_among_numbers", "refuse_dates"]


class TableInput:
    """The input validation of :class:`~skanchors.samplers.TabularSampler` (a mixin: it reads
    the sampler's ``categorical_features`` and the ``_frame_input``, ``feature_names_in_``,
    ``n_features_in_``, ``categorical_`` it sets)."""

    def _as_frame(self, X, reset):
        if isinstance(X, pd.Series):
            raise ValueError("X must be 2-dimensional (a DataFrame or 2-d array), got a Series.")
        if reset:
            self._frame_input = isinstance(X, pd.DataFrame)
        if isinstance(X, pd.DataFrame):
            if not self._frame_input:
                raise ValueError(
                    "The explainer was fitted on an array; pass an array, not a DataFrame."
                )
            frame = X
            names = [str(c) for c in frame.columns]
            if reset:
                if len(set(names)) != len(names):
                    twice = frame.columns[frame.columns.duplicated()].unique().tolist()
                    if twice:
                        raise ValueError(f"X has duplicate column names: {twice}.")
                    alike = [c for c in frame.columns if names.count(str(c)) > 1]
                    raise ValueError(
                        f"X has columns whose names read alike: {alike!r}; rename them (column "
                        "names are shown and exported as text)."
                    )
                self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
                self.n_features_in_ = frame.shape[1]
            elif list(frame.columns) != list(self.feature_names_in_):
                expected = list(self.feature_names_in_)
                missing = [c for c in expected if c not in frame.columns]
                unknown = [c for c in frame.columns if c not in expected]
                if missing or unknown:
                    what = []
                    if unknown:
                        what.append(
                            f"the column(s) {unknown} that the reference data did not have "
                            "(drop them: a label column?)"
                        )
                    if missing:
                        what.append(f"no column(s) {missing}, which the reference data had")
                    raise ValueError(
                        f"X has {' and '.join(what)}; the rows to explain need the reference "
                        "data's columns."
                    )
                frame = frame[expected]
        else:
            if not reset and self._frame_input:
                raise ValueError(
                    "The explainer was fitted on a DataFrame; pass a DataFrame with the columns "
                    f"{list(self.feature_names_in_)}, got {type(X).__name__}."
                )
            arr = self._check_array(X, reset)
            if reset:
                self.feature_names_in_ = None
                self.n_features_in_ = arr.shape[1]
                self._dtype = arr.dtype
            elif arr.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (the reference data's)."
                )
            frame = pd.DataFrame(arr)
            if arr.dtype == object:
                # An object array (say, a mixed DataFrame's to_numpy()) holds each column's
                # values as Python objects: a column of numbers is numeric, as in the frame.
                frame = frame.infer_objects()
        if frame.shape[1] == 0:
            raise ValueError("X has no columns.")
        return frame

    def _check_array(self, X, reset):
        if reset and isinstance(X, (list, tuple, np.ndarray)) and np.ndim(X) == 1:
            if any(isinstance(v, (str, bytes)) for v in X):
                raise ValueError(
                    "X holds documents (a 1-d collection of str), but TabularSampler samples "
                    "the rows of a table; for documents use a text sampler (UnkSampler, "
                    "CorpusSampler or MaskedLMSampler)."
                )
        if (
            not reset
            and type(X) is np.ndarray
            and X.ndim == 2
            and X.dtype.kind in "biuf"
            and X.shape[0] >= 1
            and X.shape[1] >= 1
            and (X.dtype.kind != "f" or not np.isinf(X).any())
        ):
            # What check_array would return for a finite-or-NaN numeric matrix, without its
            # checks for every explained row.
            return X
        return check_array(
            X,
            dtype=None,
            accept_sparse=False,
            ensure_all_finite="allow-nan",
            ensure_min_samples=2 if reset else 1,
            input_name="X",
        )

    def _as_rows(self, X):
        """``X`` validated: a DataFrame (in the reference column order) or a 2-d array."""
        if self._frame_input or isinstance(X, (pd.DataFrame, pd.Series)):
            return self._as_frame(X, reset=False)
        arr = self._check_array(X, reset=False)
        if arr.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (the reference data's)."
            )
        return arr

    def _categorical_mask(self, frame):
        cf = self.categorical_features
        n = frame.shape[1]
        if isinstance(cf, str) and cf == "auto":
            return np.array(
                [
                    not pd.api.types.is_numeric_dtype(frame[c])
                    or pd.api.types.is_bool_dtype(frame[c])
                    for c in frame.columns
                ]
            )
        # (item by item: np.asarray made [0, "Sex"] the strings ["0", "Sex"])
        items = cf.tolist() if isinstance(cf, (np.ndarray, pd.Index, pd.Series)) else list(cf)
        if items and all(isinstance(c, (bool, np.bool_)) for c in items):
            if len(items) != n:
                raise ValueError(
                    f"categorical_features as a mask must have {n} entries, got {len(items)}."
                )
            return np.array(items, dtype=bool)
        mask = np.zeros(n, dtype=bool)
        names = list(frame.columns) if self._frame_input else []
        for c in items:
            if c in names:  # a name first: in pd.DataFrame(array) the names are numbers
                mask[names.index(c)] = True
            elif isinstance(c, numbers.Integral) and not isinstance(c, bool):
                if not -n <= c < n:
                    raise ValueError(f"categorical_features index {c} is out of range for {n}.")
                mask[c] = True
            else:
                raise ValueError(
                    f"categorical_features names unknown feature {c!r}; features are "
                    f"{names or list(range(n))}."
                )
        return mask

    def _check_numbers(self, frame):
        """Columns that are numeric in the reference data hold numbers (or nothing) in
        ``frame``: numbers stored as text are fine, other text is refused by name."""
        for j in np.flatnonzero(~self.categorical_):
            column = frame.iloc[:, j]
            if pd.api.types.is_complex_dtype(column.dtype):
                refuse_complex(frame.iloc[:, [j]])
            if pd.api.types.is_numeric_dtype(column.dtype):
                if not pd.api.types.is_float_dtype(column.dtype):
                    continue  # (integers and flags are finite)
                values = column.to_numpy()
                if values.dtype.kind != "f":  # pandas' nullable floats
                    values = column.to_numpy(dtype=float, na_value=np.nan)
                if np.isinf(values).any():
                    raise ValueError(
                        f"X column {frame.columns[j]!r} holds infinite values; the numbers of "
                        "the rows to explain must be finite, as the reference data's (missing "
                        "values, NaN, are allowed)."
                    )
                continue
            bad = pd.to_numeric(column, errors="coerce").isna() & column.notna()
            if bad.any():
                raise ValueError(
                    f"X column {frame.columns[j]!r} is numeric in the reference data, but "
                    f"holds {column[bad].iloc[0]!r}, which is not a number."
                )


def refuse_bools_among_numbers(frame):
    """An object column with True and 1 (or False and 0) would hold one value for both: they
    are equal and hash alike, so the sampler could never draw the one it met second."""
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_object_dtype(column.dtype):
            continue
        if not pd.api.types.infer_dtype(column, skipna=True).startswith("mixed"):
            continue  # one type of value (the common case, decided in C)
        values = column.dropna().tolist()
        flags = {v for v in values if isinstance(v, (bool, np.bool_))}
        amounts = [  # Decimal(1) == True too
            v
            for v in values
            if isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))
        ]
        clash = [f for f in flags if any(f == v for v in amounts)]
        if clash:
            raise ValueError(
                f"X column {name!r} holds both {clash[0]!r} and the number {int(clash[0])}, which "
                "are equal in Python (True == 1), so they cannot be told apart as categories; "
                "make the column one type (e.g. .astype(str))."
            )


def refuse_dates(frame):
    """Dates, times and durations are neither bins nor categories the rules could print: every
    date would be a category of its own, and a Timestamp no JSON can hold."""
    dated = {}
    for name, dtype in frame.dtypes.items():
        values = frame[name]
        if isinstance(dtype, pd.CategoricalDtype):  # what the categories hold
            values = dtype.categories
            dtype = values.dtype
        if isinstance(dtype, pd.IntervalDtype):  # pd.cut of dates: intervals of dates
            dtype = dtype.subtype
        if (
            pd.api.types.is_datetime64_any_dtype(dtype)
            or pd.api.types.is_timedelta64_dtype(dtype)
            or isinstance(dtype, pd.PeriodDtype)
        ):
            dated[name] = str(dtype)
        elif pd.api.types.is_object_dtype(dtype):
            # Python dates and times in an object column (.dt.date, read_sql)
            kind = pd.api.types.infer_dtype(values, skipna=True)
            if kind in ("date", "datetime", "datetime64", "time", "timedelta", "period"):
                dated[name] = kind
    if dated:
        name = next(iter(dated))
        raise ValueError(
            f"Feature(s) {list(dated)} of X hold dates, times or durations "
            f"({', '.join(sorted(set(dated.values())))}); anchors need numbers or categories. "
            f"Give the model and the explainer numbers derived from them instead (for instance "
            f"pd.to_datetime(X[{name!r}]).dt.year, or the days since a date), or strings for "
            "categories."
        )
