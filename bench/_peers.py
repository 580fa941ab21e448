"""The benchmark's harness, shared by tabular.py, seeds.py, text.py, heldout_bootstrap.py and
revisions.py: the data as one float matrix, the model behind one counting wrapper, each package's
explainer made and called the same way, the peers' printed anchors parsed back into rules, and
the benchmark's own draws of fresh perturbations to check any package's rule on.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

THRESHOLD = 0.95
DELTA = 0.1
EPSILON = 0.15  # alibi and anchor-exp call it tau
BATCH_SIZE = 100
DISC_PERC = (25, 50, 75)  # alibi's setting; anchor-exp's quartile discretizer uses the same
SEED = 0
MISSING = "NaN"  # name of the category that a missing categorical value becomes


# --------------------------------------------------------------------------------------------
# data


def load_raw(name):
    from skanchors.datasets import load_adult, load_titanic

    loader = load_adult if name == "adult" else load_titanic
    X, y = loader(return_X_y=True, as_frame=True)
    return X, np.asarray(y), "skanchors.datasets"


def prepare(name, reference="train"):
    """Encode a raw frame into the one float matrix that all three packages see.

    ``reference="train"``: the model is fit on the training split and every explainer on the
    same rows. ``"validation"``: a quarter of the training split (random_state=0) is held out
    of the model's fit and is every explainer's reference data.
    """
    raw, y, source = load_raw(name)
    columns = []
    categorical_names = {}
    for j, col in enumerate(raw.columns):
        s = raw[col]
        if isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == object:
            cats = sorted(str(v) for v in s.dropna().unique())
            codes = pd.Categorical(s.astype("string").astype(object), categories=cats).codes
            codes = codes.astype(float)
            if (codes < 0).any():  # NaN -> its own code, one past the last category
                codes[codes < 0] = len(cats)
                cats = [*cats, MISSING]
            categorical_names[j] = cats
            columns.append(codes)
        else:
            v = s.to_numpy(dtype=float)
            columns.append(np.where(np.isnan(v), np.nanmedian(v), v))  # anchor-exp cannot do NaN
    X = np.column_stack(columns).astype(float)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=SEED)
    if reference == "validation":
        X_model, X_reference, y_model, _ = train_test_split(
            X_train, y_train, test_size=0.25, random_state=SEED
        )
    else:
        X_model, X_reference, y_model = X_train, X_train, y_train
    feature_names = [str(c) for c in raw.columns]
    numeric = [j for j in range(X.shape[1]) if j not in categorical_names]
    # Bin edges of the peers' quartile discretizers: used to undo their "%.2f" rounding.
    edges = {j: np.unique(np.percentile(X_reference[:, j], DISC_PERC)) for j in numeric}
    return {
        "name": name,
        "source": source,
        "X_model": X_model,  # the model's fit
        "y_model": y_model,
        "X_reference": X_reference,  # every explainer's fit
        "X_test": X_test,
        "y_test": y_test,
        "feature_names": feature_names,
        "categorical_names": categorical_names,
        "categorical": sorted(categorical_names),
        "edges": edges,
        "class_names": ["0", "1"] if name == "titanic" else ["<=50K", ">50K"],
    }


# --------------------------------------------------------------------------------------------
# model wrapper


class CountingModel:
    """The model as all three packages see it; counts calls and rows predicted."""

    def __init__(self, model):
        self.model = model
        self.reset()

    def reset(self):
        self.calls = 0
        self.rows = 0
        self.seconds = 0.0  # time spent inside the model

    def _run(self, method, X):
        self.calls += 1
        self.rows += int(np.shape(X)[0])
        t0 = time.perf_counter()
        out = method(np.asarray(X, dtype=float))
        self.seconds += time.perf_counter() - t0
        return out

    def predict(self, X):
        return self._run(self.model.predict, X)

    def predict_proba(self, X):
        return self._run(self.model.predict_proba, X)


# --------------------------------------------------------------------------------------------
# parsing the peers' anchor strings into rules

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf"


def _snap(value, edges):
    """Map a number printed with '%.2f' back to the discretizer's exact bin edge."""
    if edges is None or len(edges) == 0:
        return value
    k = int(np.argmin(np.abs(edges - value)))
    return float(edges[k]) if abs(edges[k] - value) <= 0.0051 else value


def parse_predicate(text, feature_names, categorical_names, edges=None):
    """Parse one condition as printed by alibi or anchor-exp.

    Returns a list of ``(feature_index, op, value)`` with op in ``{"==", "<=", ">"}``; a range
    ``'a < F <= b'`` gives two conditions. Categorical values become their integer code.
    """
    text = text.strip()
    edges = edges or {}
    index = {n: j for j, n in enumerate(feature_names)}
    m = re.fullmatch(rf"({_NUM}) < (.+) <= ({_NUM})", text)
    if m and m.group(2) in index:
        j = index[m.group(2)]
        lo, hi = (_snap(float(m.group(k)), edges.get(j)) for k in (1, 3))
        return [(j, ">", lo), (j, "<=", hi)]
    m = re.fullmatch(rf"(.+) (<=|>) ({_NUM})", text)
    if m and m.group(1) in index:
        j = index[m.group(1)]
        return [(j, m.group(2), _snap(float(m.group(3)), edges.get(j)))]
    for name in sorted(index, key=len, reverse=True):  # longest first: names may share prefixes
        if text.startswith(name + " = "):
            j, value = index[name], text[len(name) + 3 :]
            if j in categorical_names:
                return [(j, "==", float(categorical_names[j].index(value)))]
            return [(j, "==", float(value))]
    # A category whose name contains '<' or '>' is printed alone, without "F = ".
    hits = [
        (j, v) for j, names in categorical_names.items() for v, n in enumerate(names) if n == text
    ]
    if len(hits) == 1:
        return [(hits[0][0], "==", float(hits[0][1]))]
    raise ValueError(f"cannot parse anchor condition {text!r}")


def rule_mask(conditions, X):
    mask = np.ones(X.shape[0], dtype=bool)
    for j, op, v in conditions:
        col = X[:, j]
        if op == "==":
            mask &= col == v
        elif op == "<=":
            mask &= col <= v
        elif op == ">":
            mask &= col > v
        else:  # pragma: no cover
            raise ValueError(op)
    return mask


def selftest():
    names = ["Age", "Sex", "hours-per-week", "hours", "Fare"]
    cats = {1: ["Female", "Male", MISSING]}
    edges = {4: np.array([7.9104, 14.4542, 31.0])}
    P = parse_predicate  # noqa: N806
    assert P("Age <= 37.00", names, cats) == [(0, "<=", 37.0)]
    assert P("28.00 < Age <= 37.00", names, cats) == [(0, ">", 28.0), (0, "<=", 37.0)]
    assert P("Age > 48.00", names, cats) == [(0, ">", 48.0)]
    assert P("Sex = Male", names, cats) == [(1, "==", 1.0)]
    assert P("Sex = NaN", names, cats) == [(1, "==", 2.0)]
    assert P("hours-per-week > 45.00", names, cats) == [(2, ">", 45.0)]
    assert P("hours > -1.50", names, cats) == [(3, ">", -1.5)]
    assert P("Fare <= 7.91", names, cats, edges) == [(4, "<=", 7.9104)]
    assert P("7.91 < Fare <= 14.45", names, cats, edges) == [(4, ">", 7.9104), (4, "<=", 14.4542)]
    assert P("Fare > 99.00", names, cats, edges) == [(4, ">", 99.0)]  # far from an edge: kept
    try:
        P("Height <= 3.00", names, cats)
    except ValueError:
        pass
    else:  # pragma: no cover
        raise AssertionError("unknown feature parsed")
    X = np.array([[30.0, 1, 40, 0, 7.9104], [40.0, 0, 50, 0, 8.0], [25.0, 1, 20, 0, 50.0]])
    cond = P("28.00 < Age <= 37.00", names, cats) + P("Sex = Male", names, cats)
    assert rule_mask(cond, X).tolist() == [True, False, False]
    assert rule_mask(P("Fare <= 7.91", names, cats, edges), X).tolist() == [True, False, False]
    assert rule_mask([], X).all()
    # D(z | A) drawn by the benchmark itself: every draw satisfies the rule, the features the
    # rule leaves free come from random rows, and a rule no row satisfies gives no draws.
    ref = np.column_stack([np.arange(40.0), np.arange(40.0) % 2, np.arange(40.0) % 5])
    rule = [(0, "<=", 9.0), (1, "==", 1.0)]
    for how in ("replace", "joint"):
        Z = perturb(rule, ref, 500, np.random.default_rng(0), how)
        assert Z.shape == (500, 3) and rule_mask(rule, Z).all(), how
        assert set(Z[:, 2]) == {0.0, 1.0, 2.0, 3.0, 4.0}, how
    # joint: the rule's features come together from one row that satisfies the rule
    Z = perturb(rule, ref, 500, np.random.default_rng(0), "joint")
    assert set(map(tuple, Z[:, :2])) <= {(1.0, 1.0), (3.0, 1.0), (5.0, 1.0), (7.0, 1.0), (9.0, 1.0)}
    # replace: a value that keeps the rule stays as drawn
    Z = perturb([(1, "==", 1.0)], ref, 500, np.random.default_rng(0), "replace")
    assert (Z[:, 1] == 1.0).all() and len(set(Z[:, 0])) > 20
    assert perturb(rule, ref, 0, None, "reference").tolist() == ref[[1, 3, 5, 7, 9]].tolist()
    for how in ("replace", "joint", "reference"):
        assert perturb([(0, ">", 99.0)], ref, 10, np.random.default_rng(0), how) is None
    return True


# --------------------------------------------------------------------------------------------
# one explanation per package


class ExplainTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ExplainTimeout


class PeerAnchor:
    """A peer's anchor reduced to what the benchmark needs."""

    def __init__(self, names, conditions, valid, precision, coverage):
        self.names = list(names)
        self.conditions = conditions
        self.valid = bool(valid)
        self.precision = float(precision)
        self.coverage = float(coverage)


def make_alibi(data, model, beam_size, seed=SEED):
    from alibi.explainers import AnchorTabular

    logging.getLogger("alibi").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    explainer = AnchorTabular(
        model.predict,
        feature_names=data["feature_names"],
        categorical_names=data["categorical_names"],
        dtype=np.float64,  # the model was trained on float64; alibi's default is float32
        seed=seed,
    )
    explainer.fit(data["X_reference"], disc_perc=DISC_PERC)
    fit_time = time.perf_counter() - t0
    kwargs = {"beam_size": beam_size} if beam_size is not None else {}

    def explain(row):
        exp = explainer.explain(
            row,
            threshold=THRESHOLD,
            delta=DELTA,
            tau=EPSILON,
            batch_size=BATCH_SIZE,
            **kwargs,
        )
        names = list(exp.anchor)
        return PeerAnchor(
            names,
            None,
            exp.raw["success"],
            exp.precision,
            exp.coverage,
        )

    return explain, fit_time


class _FallbackDetector:
    """anchor-exp has no "found an anchor" flag. Its only KL-LUCB call without ``verbose_every``
    is the one in the "could not find an anchor" fallback, so a wrapper around ``lucb`` tells."""

    fallback = False
    installed = False

    @classmethod
    def install(cls):
        if cls.installed:
            return
        from anchor.anchor_base import AnchorBaseBeam

        original = AnchorBaseBeam.lucb

        def lucb(*args, **kwargs):
            if "verbose_every" not in kwargs:
                cls.fallback = True
            return original(*args, **kwargs)

        AnchorBaseBeam.lucb = staticmethod(lucb)
        cls.installed = True


def make_anchor_exp(data, model, beam_size):
    from anchor import anchor_base, anchor_explanation, anchor_tabular

    _FallbackDetector.install()
    t0 = time.perf_counter()
    explainer = anchor_tabular.AnchorTabularExplainer(
        data["class_names"],
        data["feature_names"],
        data["X_reference"],
        data["categorical_names"],
    )
    fit_time = time.perf_counter() - t0

    def run(row):
        if beam_size is None:
            # The documented call. Its ``beam_size=4`` parameter is never passed on to the
            # search (anchor_base's default beam_size=1 is used), so it is not set here.
            return explainer.explain_instance(
                row,
                model.predict,
                threshold=THRESHOLD,
                delta=DELTA,
                tau=EPSILON,
                batch_size=BATCH_SIZE,
            )
        # explain_instance swallows beam_size, so the only way to get a wider beam is to do
        # what it does with the search called directly.
        sample_fn, mapping = explainer.get_sample_fn(row, model.predict)
        exp = anchor_base.AnchorBaseBeam.anchor_beam(
            sample_fn,
            delta=DELTA,
            epsilon=EPSILON,
            batch_size=BATCH_SIZE,
            desired_confidence=THRESHOLD,
            max_anchor_size=None,
            beam_size=beam_size,
        )
        explainer.add_names_to_exp(row, exp, mapping)
        exp["instance"] = row
        exp["prediction"] = model.predict(row.reshape(1, -1))[0]
        return anchor_explanation.AnchorExplanation("tabular", exp, explainer.as_html)

    def explain(row):
        _FallbackDetector.fallback = False
        exp = run(row)
        return PeerAnchor(
            exp.names(),
            None,
            not _FallbackDetector.fallback,
            exp.precision(),
            exp.coverage(),
        )

    return explain, fit_time


class CountedCalls:
    """Counts, into a :class:`CountingModel`, the calls skanchors' model adapter makes when
    it is given the fitted estimator itself (its own faster path for a forest included)."""

    def __init__(self, fn, counter):
        self.fn = fn
        self.counter = counter

    @property
    def favours_large_batches(self):
        # what the adapter tells the explainer about the model, passed on
        return getattr(self.fn, "favours_large_batches", False)

    @property
    def labels(self):
        # the adapter's way to the predicted classes alone (cheaper for a forest), counted
        inner = getattr(self.fn, "labels", None)
        return None if inner is None else (lambda X: self._count(inner, X))

    def __call__(self, X):
        return self._count(self.fn, X)

    def _count(self, fn, X):
        counter = self.counter
        counter.calls += 1
        counter.rows += int(np.shape(X)[0])
        t0 = time.perf_counter()
        out = fn(X)
        counter.seconds += time.perf_counter() - t0
        return out


def fit_skanchors(explainer, data, model):
    """Fit; when the explainer holds the estimator itself, count its model calls."""
    explainer.fit(data["X_reference"])
    if explainer.estimator is model.model:
        explainer.model_._fn = CountedCalls(explainer.model_._fn, model)
    return explainer


def make_skanchors(data, model, beam_size, as_callable=False, seed=SEED, compiled=True, **options):
    """skanchors given the fitted estimator, as its README shows (a forest's trees are then
    evaluated by skanchors itself, to the same probabilities), or with ``as_callable`` its
    ``predict_proba`` as a function (the peers get its ``predict``, that argmax). With
    ``compiled=False`` nothing runs compiled even where numba (the ``fast`` extra) is
    installed: a forest's trees are traversed by scikit-learn's code, the search's stream
    blocks, stratum counts and bounds are numpy and plain floats, and the prediction cache is
    dictionaries, as with ``SKANCHORS_NUMBA=0``."""
    from _common import with_sampler

    from skanchors import AnchorExplainer, _compiled

    # replaced rows unless a configuration says otherwise: the distribution alibi and the
    # authors' package search, which these reports compare against (not the default "auto")
    kwargs = {"beam_size": beam_size} if beam_size is not None else {}
    kwargs = {"perturbation": "replace", **kwargs, **options}
    kwargs = with_sampler({"categorical_features": data["categorical"], **kwargs})
    # this explainer's cache only (skanchors.set_config would size every explainer's)
    cache_size = kwargs.pop("cache_size", None)
    t0 = time.perf_counter()
    explainer = AnchorExplainer(
        model.predict_proba if as_callable else model.model,
        threshold=THRESHOLD,
        delta=DELTA,
        epsilon=EPSILON,
        batch_size=BATCH_SIZE,
        random_state=seed,
        **kwargs,
    )
    if cache_size is not None:
        explainer._own_cache_size = cache_size
    # (the trees and the cache's table are read by fit: this explainer keeps to them)
    with contextlib.nullcontext() if compiled else _compiled.switched_off():
        fit_skanchors(explainer, data, model)
    cache = explainer._cache
    if not compiled and cache is not None and cache.compiled:
        raise RuntimeError("the explainer without numba kept the compiled prediction table")
    fit_time = time.perf_counter() - t0

    def explain(row):
        if compiled:
            return explainer.explain(row.reshape(1, -1))[0]
        # the search's kernels are asked for during the search: off for this call only
        with _compiled.switched_off():
            return explainer.explain(row.reshape(1, -1))[0]

    explain.explainer = explainer
    return explain, fit_time


def _klucb(pulls, **options):
    from skanchors import KLLUCB

    return KLLUCB(pulls=pulls, **options)


# --------------------------------------------------------------------------------------------
# skanchors' anchors as conditions


def _column_index(p):
    """Column of a skanchors predicate on an array (``feature`` is an index or "x<j>")."""
    if isinstance(p.feature, (int, np.integer)):
        return int(p.feature)
    pos = getattr(p, "position", None)
    return int(pos) if pos is not None else None


def skanchors_conditions(anchor):
    """``(column, op, value)`` conditions of a skanchors anchor, as the rule parser gives the
    peers': a bin (``bounds="interval"``) is its two sides."""
    out = []
    for p in anchor.predicates:
        j = _column_index(p)
        if p.op == "in":
            out += [(j, ">", float(p.value.left)), (j, "<=", float(p.value.right))]
        else:
            out.append((j, p.op, float(p.value)))
    return out


def _predicate_str(p, data):
    """skanchors predicates on an array name columns by index: print them with the names."""
    j, op, v = _column_index(p), p.op, p.value
    if j is None:
        return str(p)
    name = data["feature_names"][j]
    cats = data["categorical_names"].get(int(j))
    if op == "==" and cats is not None and float(v).is_integer() and 0 <= v < len(cats):
        return f"{name} = {cats[int(v)]}"
    if op == "in":
        return f"{v.left:.6g} < {name} <= {v.right:.6g}"
    return f"{name} {'=' if op == '==' else op} {v:.6g}" if v is not None else f"{name} {op}"


# --------------------------------------------------------------------------------------------
# precision on fresh perturbations: every package's anchor checked on D(z | A), drawn here

PERTURBATION_SAMPLES = 2000
# The distributions the rules are checked on: key in the results, label in the report.
PERTURBATIONS = (
    ("replace", "authors' replacement"),
    ("joint", "alibi's joint draw"),
    ("reference", "reference rows"),
)
# The distribution each package searches on (skanchors' default and anchor-exp: "replace").
OWN_PERTURBATION = {"alibi": "joint", "skanchors-reference": "reference"}


def perturb(conditions, X, n, rng, how="replace"):
    """``n`` draws from D(z | A) for the rule ``conditions`` over the reference rows ``X``.

    ``"replace"``: the authors' distribution (anchor-exp's ``sample_from_train``, skanchors'
    default): a random reference row whose values that break the rule's conditions on a
    feature are replaced by that feature's values in reference rows that satisfy them.
    ``"joint"``: alibi's: a random reference row whose rule features are all taken from one
    random reference row that satisfies the whole rule (alibi itself fills in from partial
    rules when fewer than a batch of rows satisfy it). ``"reference"``: every reference row
    that satisfies the rule, once (``n`` and ``rng`` unused). Returns None when no reference
    row satisfies what a draw needs.
    """
    if how == "reference":
        covered = rule_mask(conditions, X)
        return X[covered] if covered.any() else None
    Z = X[rng.integers(0, len(X), n)]
    features = sorted({j for j, _, _ in conditions})
    if how == "joint":
        covered = np.flatnonzero(rule_mask(conditions, X))
        if not covered.size:
            return None
        Z[:, features] = X[np.ix_(rng.choice(covered, n), features)]
        return Z
    for j in features:
        own = [c for c in conditions if c[0] == j]
        pool = X[rule_mask(own, X), j]
        if not pool.size:
            return None
        broken = ~rule_mask(own, Z)
        Z[broken, j] = pool[rng.integers(0, pool.size, int(broken.sum()))]
    return Z


def fresh_precision(conditions, data, predict, label, seed):
    """Share of fresh draws of each distribution in :data:`PERTURBATIONS` on which the model
    keeps ``label``; equal rules of one row get equal draws (``seed``), whatever the package."""
    out = {}
    for k, (how, _) in enumerate(PERTURBATIONS):
        rng = np.random.default_rng([SEED, seed, k])
        Z = perturb(conditions, data["X_reference"], PERTURBATION_SAMPLES, rng, how)
        out[how] = math.nan if Z is None else float((predict(Z) == label).mean())
    return out


def held_out(mask, test_pred, label):
    coverage = float(mask.mean())
    precision = float((test_pred[mask] == label).mean()) if mask.any() else math.nan
    return precision, coverage
