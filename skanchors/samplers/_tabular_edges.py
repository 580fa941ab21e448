"""The bin edges of a tabular sampler's numeric features, as its predicates read them."""

from __future__ import annotations

import numbers

import numpy as np

from ..discretizers import EdgesDiscretizer, _BaseDiscretizer, _shortest_between

__all__ = ["fitted_edges", "renamed_edges"]


def renamed_edges(discretizer, renamed, columns):
    """An :class:`EdgesDiscretizer` whose ``edges`` dict names the columns of a frame with
    number names (``renamed``: name -> the name the discretizer sees) by those names: in such
    a frame a number is the column's name, not its position among the numeric features (the
    edges ``{1: [50]}`` went to the second numeric column, not the column called 1)."""
    if not isinstance(discretizer, EdgesDiscretizer) or not isinstance(discretizer.edges, dict):
        return discretizer
    edges = {}
    for key, value in discretizer.edges.items():
        if key in renamed:
            edges[renamed[key]] = value
        elif key in columns:
            raise ValueError(
                f"edges names feature {key!r}, which is categorical: only numeric features "
                "are binned."
            )
        elif isinstance(key, numbers.Integral) and not isinstance(key, bool):
            raise ValueError(
                f"edges has the key {key!r}, but no column of X is called {key!r}; its columns "
                f"are named by numbers, so edges names them by their names {list(renamed)}."
            )
        else:
            edges[key] = value
    return discretizer.set_params(edges=edges)


def fitted_edges(discretizer, num, y=None):
    """The inner bin edges of a discretizer fitted to ``num`` (DataFrame of numeric
    features), as the predicates read them: bin ``b`` is ``edges[b - 1] < x <= edges[b]``.

    The package's discretizers give these edges. Another transformer must have
    ``bin_edges_``, one array per feature, and ``transform`` must give each value's bin index
    (an ordinal encoding). Edges that include the outer ones (as
    :class:`~sklearn.preprocessing.KBinsDiscretizer`'s do: ``n_bins_ + 1`` per feature) lose
    them. Bins ``edges[b - 1] <= x < edges[b]`` (KBinsDiscretizer's) become the bins of the
    same reference values under ``<=``: each edge moves down to the shortest number between
    the largest value below it and itself (an edge with no value below it is dropped).
    Anything else is refused: the rules would not say which bins the search sampled.
    """
    # (y only when there is one: a transformer of the user's may not take it)
    fitted = discretizer.fit(num) if y is None else discretizer.fit(num, y)
    if isinstance(fitted, _BaseDiscretizer):
        return [np.asarray(e, dtype=float) for e in fitted.bin_edges_]
    name = type(discretizer).__name__
    edges = getattr(fitted, "bin_edges_", None)
    if edges is None or len(edges) != num.shape[1]:
        raise ValueError(
            f"discretizer {name} must have bin_edges_ after fit, one array of edges per "
            f"numeric feature ({num.shape[1]}); see skanchors.discretizers."
        )
    bins = fitted.transform(num)
    if hasattr(bins, "toarray"):
        bins = bins.toarray()
    bins = np.asarray(bins, dtype=float)
    if bins.shape != num.shape:
        raise ValueError(
            f"discretizer {name}.transform must give one bin index per numeric feature, shape "
            f"{num.shape}; it gave {bins.shape}. (KBinsDiscretizer needs encode='ordinal'.)"
        )
    n_bins = getattr(fitted, "n_bins_", None)
    out = []
    for j, column in enumerate(num.columns):
        e = np.asarray(edges[j], dtype=float).ravel()
        if n_bins is not None and len(e) == int(n_bins[j]) + 1:
            e = e[1:-1]  # the minimum and the maximum split nothing
        if np.any(np.isnan(e)) or np.any(np.diff(e) <= 0):
            raise ValueError(
                f"discretizer {name}'s bin_edges_ for feature {column!r} must be increasing "
                f"numbers, got {edges[j]!r}."
            )
        x = num.iloc[:, j].to_numpy(dtype=float)
        seen = ~np.isnan(x)
        x, got = x[seen], bins[seen, j]
        if np.array_equal(got, np.searchsorted(e, x, side="left")):
            out.append(e)
            continue
        if not np.array_equal(got, np.searchsorted(e, x, side="right")):
            raise ValueError(
                f"discretizer {name}.transform does not bin feature {column!r} at its "
                "bin_edges_: a value's bin must be the number of edges below it (or below "
                "or at it)."
            )
        values = np.unique(x)
        below = np.searchsorted(values, e, side="left")  # values[:below] < edge
        # (an edge at or below the smallest value has an empty bin below it: it splits nothing)
        moved = [
            _shortest_between(values[i - 1], edge)
            for edge, i in zip(e.tolist(), below.tolist())
            if i > 0
        ]
        out.append(np.unique(np.asarray(moved, dtype=float)))
    return out
