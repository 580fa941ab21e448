"""A Pipeline's ``ColumnTransformer`` computed from tables of what it made of each value.

The explainer's perturbations of a row are other rows' values recombined column by column, so
the few hundred rows of one model call hold few distinct values per column, most of them seen
in earlier calls. A ``ColumnTransformer`` built only from transformers that map every input
column on its own (one-hot and ordinal encoding, scaling, imputation, passthrough) turns a row
into the concatenation of what it makes of each value. :class:`ColumnwiseHead` keeps, per input
column, the output of every value it has seen, and assembles a batch from those tables (as a
CSR matrix built from the dense rows, as the transformer builds its own, where its output is
sparse): a value met for the first time is transformed once, together with the other new values
of that call; ``learn`` (at the explainer's ``fit``) transforms every value of the reference
data in one call. scikit-learn's transformer pays a fixed cost per call (column selection, one
``transform`` per transformer, pandas conversions) that for a one-hot encoder over a few
categorical columns is most of what such a pipeline costs in an anchor search.

Which output columns come from which input column is read from the fitted transformer (its
``output_indices_`` and each transformer's own layout), only for scikit-learn's own classes
(not subclasses, which may compute something else), and the first calls are checked against
the transformer itself: any difference, or anything unexpected, and every later call goes to
the transformer, for good.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pandas as pd

__all__ = ["ColumnwiseHead"]

# The first calls compute both ways and must agree exactly before the tables are trusted.
_CHECKED_CALLS = 2
# Stands for a missing value in the tables' keys (NaN is not equal to itself).
_MISSING = object()
# Tables holding more values than this (inputs that never repeat a value, say) are given up:
# every later call goes to the transformer.
_MAX_VALUES = 2_000_000
# ... and so are tables (or a call of the transformer made to fill them) of more cells than
# this, 200 MB of float64: a one-hot encoded ID column of 10,000 values is a 10,000 x 10,000
# table, and learning it made a dense 100,000 x 10,000 array (8 GB) at fit.
_MAX_CELLS = 25_000_000


def _classes():
    """scikit-learn's transformers that map each input column on its own, by kind."""
    compose = sys.modules.get("sklearn.compose")
    if compose is None:
        return None
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import (
        FunctionTransformer,
        MaxAbsScaler,
        MinMaxScaler,
        OneHotEncoder,
        OrdinalEncoder,
        RobustScaler,
        StandardScaler,
    )

    # one output column per input column (SimpleImputer may drop empty columns or add
    # indicators: its layout is accepted only when the widths say neither happened)
    one_to_one = (MaxAbsScaler, MinMaxScaler, OrdinalEncoder, RobustScaler, StandardScaler)
    return (
        compose.ColumnTransformer,
        Pipeline,
        one_to_one,
        SimpleImputer,
        OneHotEncoder,
        FunctionTransformer,
    )


def _identity(step, kinds):
    """Whether ``step`` is the identity a ColumnTransformer stores for ``"passthrough"``."""
    return (
        type(step) is kinds[5]
        and step.func is None
        and step.inverse_func is None
        and not step.validate
    )


def _widths(transformer, n_inputs, width, kinds):
    """The number of output columns of each of the ``n_inputs`` input columns of a fitted
    ``transformer`` whose outputs span ``width`` columns, or None when it is not known to
    map each input column on its own."""
    _, pipeline, one_to_one, imputer, one_hot, _ = kinds
    if isinstance(transformer, str) or _identity(transformer, kinds):
        if transformer != "drop" and width == n_inputs:
            return [1] * n_inputs
        return None
    kind = type(transformer)
    if getattr(transformer, "handle_unknown", None) == "warn":
        return None  # tables would warn of an unknown value once, the encoder on every call
    if kind is pipeline:
        steps = [step for _, step in transformer.steps if step not in (None, "passthrough")]
        if not steps or any(type(step) not in (*one_to_one, imputer, one_hot) for step in steps):
            return None
        if any(getattr(step, "handle_unknown", None) == "warn" for step in steps):
            return None
        if n_inputs == 1:
            return [width]
        if all(type(step) is not one_hot for step in steps[:-1]):
            return _widths(steps[-1], n_inputs, width, kinds)
        return None
    if kind not in (*one_to_one, imputer, one_hot):
        return None
    if n_inputs == 1:
        return [width]
    if kind is one_hot:
        outs = getattr(transformer, "_n_features_outs", None)
        if outs is not None and len(outs) == n_inputs and sum(outs) == width:
            return [int(w) for w in outs]
        return None
    return [1] * n_inputs if width == n_inputs else None


def _layout(transformer):
    """``[(input column, output columns), ...]`` of a fitted ``ColumnTransformer`` that maps
    every input column on its own, or None."""
    kinds = _classes()
    if kinds is None or type(transformer) is not kinds[0]:
        return None
    if not hasattr(transformer, "sparse_output_"):
        return None
    names = getattr(transformer, "feature_names_in_", None)
    inputs = getattr(transformer, "_transformer_to_input_indices", None)
    slices = getattr(transformer, "output_indices_", None)
    if names is None or inputs is None or slices is None:
        return None
    owners = {}
    total = 0
    for name, step, _ in transformer.transformers_:
        part = slices.get(name)
        columns = inputs.get(name)
        if part is None or columns is None:
            return None
        width = part.stop - part.start
        total += width
        if width == 0:
            continue
        widths = _widths(step, len(columns), width, kinds)
        if widths is None:
            return None
        start = part.start
        for column, w in zip(columns, widths):
            owners.setdefault(int(column), []).extend(range(start, start + w))
            start += w
    n_out = max((s.stop for s in slices.values()), default=0)
    if total != n_out or sorted(c for cols in owners.values() for c in cols) != list(range(n_out)):
        return None
    return [(j, np.array(cols, dtype=np.intp)) for j, cols in sorted(owners.items())]


def _codes_keys(column):
    """``(codes, keys)``: each row's position in ``keys``, the column's distinct values as
    hashable Python objects (:data:`_MISSING` for a missing value)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        present, codes = np.unique(column.array.codes, return_inverse=True)
        keys = dtype.categories.take(np.maximum(present, 0)).tolist()
        if present.size and present[0] < 0:
            keys[0] = _MISSING
        return codes.ravel(), keys
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        values, codes = np.unique(column.to_numpy(), return_inverse=True)
        keys = values.tolist()
        if dtype.kind == "f" and values.size and values[-1] != values[-1]:  # NaN sorts last
            keys[-1] = _MISSING
        return codes.ravel(), keys
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    keys = np.asarray(uniques, dtype=object)
    missing = pd.isna(keys)
    keys = keys.tolist()
    for u in np.flatnonzero(missing).tolist():
        keys[u] = _MISSING
    return codes, keys


def _sparse(matrix):
    scipy_sparse = sys.modules.get("scipy.sparse")
    return scipy_sparse is not None and scipy_sparse.issparse(matrix)


def _same(reference, out):
    """Whether two outputs are identical: type, dtype, shape and values (for CSR matrices,
    also their layout, so that what comes next computes the same to the last bit)."""
    if type(reference) is not type(out) or reference.dtype != out.dtype:
        return False
    if reference.shape != out.shape:
        return False
    nan = out.dtype.kind in "fc"
    if _sparse(out):
        return (
            reference.format == out.format == "csr"
            and np.array_equal(reference.indptr, out.indptr)
            and np.array_equal(reference.indices, out.indices)
            and np.array_equal(reference.data, out.data, equal_nan=nan)
        )
    return isinstance(out, np.ndarray) and np.array_equal(reference, out, equal_nan=nan)


class ColumnwiseHead:
    """``transformer.transform`` for DataFrames, assembled from per-column tables, then the
    ``transform`` of each of the fitted steps ``then`` (a Pipeline's steps after it).

    Build it with :meth:`make`, which returns None for heads it cannot take. ``transform``
    returns exactly what the head's ``transform`` returns; input the tables were not built
    for (not a DataFrame with the fitted columns, no rows) goes to the transformer.
    """

    def __init__(self, transformer, layout, then=()):
        self._lock = threading.Lock()  # searches in threads may call the model together
        self.then = list(then)
        self.transformer = transformer
        self.layout = layout
        self.columns = list(transformer.feature_names_in_)
        self.n_outputs = max(int(cols.max()) + 1 for _, cols in layout)
        self.dtype = None  # the transformer's output dtype, learned on the first call
        self.sparse = bool(transformer.sparse_output_)  # a CSR matrix, else an array
        self._sparse_type = None
        self.checks_left = _CHECKED_CALLS
        self.engaged = False  # whether the last call was assembled from the tables
        self.disabled = False
        # per input column: {value: row of the table}, and the table (rows x its outputs)
        self._index = {j: {} for j, _ in layout}
        self._tables = {j: None for j, _ in layout}
        self._n_values = 0
        self._n_cells = 0
        self._maps = {}  # (column, id of a CategoricalDtype) -> (the dtype, code -> table row)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]  # (locks do not pickle: joblib's workers get a new one)
        state["_maps"] = {}  # (keyed by object ids, which do not travel)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @classmethod
    def make(cls, head):
        """A ColumnwiseHead for a Pipeline ``head`` whose first step is a ``ColumnTransformer``
        of column-wise parts (or for that transformer itself), or None."""
        kinds = _classes()
        if kinds is None:
            return None
        then = []
        if type(head) is kinds[1]:
            steps = [step for _, step in head.steps if step not in (None, "passthrough")]
            if not steps:
                return None
            head, then = steps[0], steps[1:]
        layout = _layout(head)
        names = list(getattr(head, "feature_names_in_", []))
        if layout is None or len(set(names)) != len(names):
            return None
        return cls(head, layout, then)

    def transform(self, X):
        out = self._transform(X)
        for step in self.then:  # as Pipeline.transform runs them
            out = step.transform(out)
        return out

    def _transform(self, X):
        own = self.transformer.transform
        if (
            self.disabled
            or not isinstance(X, pd.DataFrame)
            or len(X) == 0
            or list(X.columns) != self.columns
        ):
            self.engaged = False
            return own(X)
        try:
            with self._lock:
                out = self._assemble(X)
        except Exception:  # noqa: BLE001 (anything unexpected: the transformer, for good)
            self.disabled, self.engaged = True, False
            return own(X)
        if self.checks_left:
            reference = own(X)
            if _same(reference, out):
                self.checks_left -= 1
            else:
                self.disabled = True
            self.engaged = False
            return reference
        self.engaged = True
        return out

    def learn(self, X):
        """Learn what the transformer makes of every value of the DataFrame ``X`` (the
        reference data, say), in one call of the transformer, so that later calls whose
        values all come from ``X`` need no call of it. Anything unexpected disables the
        tables (every call then goes to the transformer)."""
        if self.disabled or not isinstance(X, pd.DataFrame) or list(X.columns) != self.columns:
            return
        if len(X):
            try:
                with self._lock:
                    self._assemble(X, output=False)
            except Exception:  # noqa: BLE001 (as in transform)
                self.disabled = True

    def _assemble(self, X, output=True):
        reads, new = [], {}
        for j, _ in self.layout:
            column = X[self.columns[j]]
            rows = self._category_rows(j, column)
            if rows is not None:  # every category already in the table
                reads.append(rows)
                continue
            codes, keys = _codes_keys(column)
            index = self._index[j]
            fresh = [u for u, k in enumerate(keys) if k not in index]
            if fresh:
                first = np.unique(codes, return_index=True)[1]  # each value's first row
                new[j] = (first[fresh], [keys[u] for u in fresh])
            reads.append((codes, keys))
        if new:
            self._learn(X, new)
        if not output:
            return None
        out = np.empty((len(X), self.n_outputs), dtype=self.dtype)
        for (j, cols), read in zip(self.layout, reads):
            if isinstance(read, tuple):
                codes, keys = read
                get = self._index[j].__getitem__
                read = np.fromiter(map(get, keys), dtype=np.intp, count=len(keys))[codes]
            out[:, cols] = self._tables[j][read]
        # (from a dense array, as the transformer makes its dense parts sparse: zeros dropped)
        return self._sparse_type(out) if self.sparse else out

    def _category_rows(self, j, column):
        """For a categorical column: each row's row of the table, read through the
        category codes (a map from codes to table rows kept per dtype); None when the
        column is not categorical or some category in it is not in the table yet."""
        dtype = column.dtype
        if not isinstance(dtype, pd.CategoricalDtype):
            return None
        key = (j, id(dtype))
        kept = self._maps.get(key)
        if kept is None or kept[0] is not dtype:
            index = self._index[j]
            rows = [index.get(_MISSING, -1)]  # code -1: missing
            rows += [index.get(value, -1) for value in dtype.categories.tolist()]
            if len(self._maps) > 256:
                self._maps.clear()
            kept = self._maps[key] = (dtype, np.array(rows, dtype=np.intp))
        rows = kept[1][column.array.codes.astype(np.intp) + 1]
        if rows.size and rows.min() < 0:
            del self._maps[key]  # (rebuilt once the new categories are learned)
            return None
        return rows

    def _learn(self, X, new):
        """Transform the new values of each column, all in one call of the transformer."""
        self._n_values += sum(len(keys) for _, keys in new.values())
        if self._n_values > _MAX_VALUES:
            raise OverflowError("more distinct values than the tables keep")
        m = max(len(keys) for _, keys in new.values())
        width = {j: np.arange(self.n_outputs)[cols].size for j, cols in self.layout}
        self._n_cells += sum(len(keys) * width[j] for j, (_, keys) in new.items())
        if self._n_cells > _MAX_CELLS or m * self.n_outputs > _MAX_CELLS:
            raise OverflowError("larger tables than kept")
        frame = {}
        for j, name in enumerate(self.columns):
            column = X.iloc[:, j]
            if j in new:
                at = new[j][0]
                at = np.concatenate([at, np.full(m - len(at), at[0])])
            else:
                at = np.zeros(m, dtype=np.intp)
            frame[name] = column.iloc[at].reset_index(drop=True)
        made = self.transformer.transform(pd.DataFrame(frame))
        if self.sparse:
            if not (_sparse(made) and made.format == "csr"):
                raise TypeError("the transformer's output is not a CSR matrix")
            self._sparse_type = type(made)
            made = made.toarray()
        if not isinstance(made, np.ndarray) or made.dtype.kind not in "biuf":
            raise TypeError("the transformer's output is not a numeric array")
        if self.dtype is None:
            self.dtype = made.dtype
        elif made.dtype != self.dtype:
            raise TypeError("the transformer's output dtype changed")
        for j, cols in self.layout:
            if j not in new:
                continue
            keys = new[j][1]
            index, table = self._index[j], self._tables[j]
            rows = made[: len(keys)][:, cols]
            start = 0 if table is None else len(table)
            self._tables[j] = rows if table is None else np.concatenate([table, rows])
            index.update(zip(keys, range(start, start + len(keys))))
