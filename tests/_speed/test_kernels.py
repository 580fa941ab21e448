"""The compiled kernels as a layer (:mod:`skanchors._compiled`, :mod:`skanchors._speed.kernels`):
every registered kernel equals its numpy twin to the last bit, a kernel that fails is an
error (never a silent fall-back), ``SKANCHORS_NUMBA=0``, a missing numba and
``skanchors._speed.disabled()`` give the numpy code, and the core imports none of it. Also the
bounds' golden values: the one implementation of each formula against high-precision roots."""

import ast
import math
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

import skanchors
from skanchors import AnchorExplainer, _compiled, _speed, _stratified, _trees
from skanchors._bounds import (
    kl_bound,
    kl_lower_bound,
    kl_upper_bound,
    stratified_bound,
    stratified_kl_bounds,
    two_term_rate,
)
from skanchors.samplers._popcount import popcounts

NUMBA = _compiled.available()
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba (the fast extra) is not installed")


# ------------------------------------------------------------------ golden bound values
# Computed with mpmath at 60 digits (bisection to 1e-60 on the KL divergence, the Gamma(2, 1)
# tail and the dual of the joint constraint), independent of the code under test.
KL_GOLDEN = [  # p, level, upper bound, lower bound
    (0.5, 0.1, 0.712878631455824, 0.287121368544176),
    (0.9, 0.05, 0.96872160372772065, 0.77992139889307541),
    (0.0, 0.2, 0.18126924692201815, 0.0),
    (1.0, 0.2, 1.0, 0.81873075307798185),
    (0.3, 1e-12, 0.3000006480743365, 0.29999935192619682),
    (0.999, 3.0, 1.0, 0.04924893087486221),
    (1e-06, 0.5, 0.39347806383045751, 0.0),
    (0.02, 5.0, 0.99449428180926737, 0.0),
    (0.75, 30.0, 1.0, 2.0072216076196241e-18),
]
RATE_GOLDEN = [  # beta, b with (1 + b) exp(-b) = exp(-beta)
    (0.5, 1.3576766739458991),
    (math.log(10), 3.8897201698674293),
    (5.0, 7.0907174051554846),
    (20.0, 23.185764204040805),
]
STRATIFIED_GOLDEN = [  # p1, n1, p2, n2, pi, beta, lower, upper
    (1.0, 200.0, 0.85, 20.0, 0.8, math.log(10), 0.91179600145871987, 0.99637710601642251),
    (0.9, 40.0, 0.75, 20.0, 0.5, 3.0, 0.63411782114155157, 0.94733138916662455),
    (0.0, 10.0, 0.5, 10.0, 0.3, 2.0, 0.1015406739686949, 0.59987788731431922),
    (0.95, 1000.0, 1.0, 3.0, 0.99, 7.5, 0.9135342703016365, 0.97515988940812323),
]


@pytest.mark.parametrize("p, level, upper, lower", KL_GOLDEN)
def test_kl_bounds_equal_the_golden_roots(p, level, upper, lower):
    ub, lb = kl_upper_bound(p, level), kl_lower_bound(p, level)
    # Newton stops within float resolution of KL near p (at level 1e-12, about 2e-11 in q),
    # and on the safe side: never tighter than the exact bound (up to one rounding)
    assert ub == pytest.approx(upper, abs=5e-11) and lb == pytest.approx(lower, abs=5e-11)
    assert ub >= upper - 1e-15 and lb <= lower + 1e-15
    assert lb <= p <= ub
    assert (ub, lb) == (kl_bound(p, level, True), kl_bound(p, level, False))


@pytest.mark.parametrize("beta, rate", RATE_GOLDEN)
def test_two_term_rate_equals_the_golden_root_on_the_safe_side(beta, rate):
    b = two_term_rate(beta)
    assert b == pytest.approx(rate, rel=1e-11)
    assert b >= rate  # never a smaller, optimistic rate


@pytest.mark.parametrize("p1, n1, p2, n2, pi, beta, lower, upper", STRATIFIED_GOLDEN)
def test_stratified_bounds_equal_the_golden_extremes_on_the_safe_side(
    p1, n1, p2, n2, pi, beta, lower, upper
):
    lb, ub = stratified_kl_bounds([[p1, p2]], [[n1, n2]], [pi], beta)
    # within the dual's tolerance, and never tighter than the exact extreme
    assert lower - 1e-8 <= lb[0] <= lower + 1e-12
    assert upper - 1e-12 <= ub[0] <= upper + 1e-8
    assert lb[0] == stratified_bound(p1, n1, p2, n2, pi, beta, True)
    assert ub[0] == stratified_bound(p1, n1, p2, n2, pi, beta, False)


# ------------------------------------------------------------- twins, to the last bit
def _random_strata(rng, m):
    """Counts of two strata with every edge case: no samples, all or no positives, weights 0
    and 1, and huge counts (tiny levels)."""
    n1, n2 = (rng.integers(0, 300, m).astype(float) for _ in range(2))
    n1[rng.random(m) < 0.1] = 0
    n2[rng.random(m) < 0.1] = 0
    n1[rng.random(m) < 0.05] = 10.0**9

    def positives(n):
        u = rng.random(m)
        return np.floor(np.where(u < 0.2, 1.0, np.where(u < 0.3, 0.0, rng.random(m))) * n)

    pi = rng.random(m)
    pi[rng.random(m) < 0.05] = 0.0
    pi[rng.random(m) < 0.05] = 1.0
    return n1, positives(n1), n2, positives(n2), pi


def _twin_stratified_bounds(kernel, monkeypatch):
    rng = np.random.default_rng(0)
    m = 3000
    n1, pos1, n2, pos2, pi = _random_strata(rng, m)
    p = np.column_stack([pos1 / np.maximum(n1, 1), pos2 / np.maximum(n2, 1)])
    for beta in (1e-9, 0.5, 2.375, 9.125, 40.0):
        want = stratified_kl_bounds(p, np.column_stack([n1, n2]), pi, beta)
        for lower, expected in zip((True, False), want):
            values = np.full(m, np.nan)
            kernel(n1, pos1, n2, pos2, pi, np.arange(m), beta, two_term_rate(beta), lower, values)
            assert values.tolist() == expected.tolist()


def _twin_precision_estimates(kernel, monkeypatch):
    rng = np.random.default_rng(1)
    for m in (0, 1, 7, 500):
        arms = object.__new__(_stratified.StratifiedArms)
        arms.n1, arms.pos1, arms.n2, arms.pos2, arms.pi = _random_strata(rng, m)
        arms._estimates_kernel, arms._estimates = None, None
        want = arms.precision_estimates()
        got = kernel(arms.n1, arms.pos1, arms.n2, arms.pos2, arms.pi)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


def _search_tests():
    import test_search_kernels

    return test_search_kernels


def _twin_extreme_bounds(kernel, monkeypatch):
    test_search_kernels = _search_tests()
    test_search_kernels.test_compiled_extreme_bounds_and_estimates_equal_the_plain_float_ones()


def _twin_stratum_counts(kernel, monkeypatch):
    test_search_kernels = _search_tests()
    for streamed in (False, True):
        test_search_kernels.test_compiled_stratum_counts_equal_the_numpy_counts(
            monkeypatch, 0, streamed
        )


def _twin_make_blocks(kernel, monkeypatch):
    _search_tests().test_compiled_blocks_equal_the_numpy_blocks(monkeypatch, True)


def _twin_make_windows(kernel, monkeypatch):
    _search_tests().test_compiled_stream_windows_are_the_samples_of_the_blocks(monkeypatch, False)


def _twin_coverage_counts(kernel, monkeypatch):
    rng = np.random.default_rng(2)
    for n_bytes in (8, 24):
        bits = rng.integers(0, 256, size=(9, n_bytes), dtype=np.uint8)
        bits[0] = 0
        bits[1] = 255
        words = bits.view(np.uint64)
        for size in (1, 2, 4):
            anchors = rng.integers(0, 9, size=(40, size))
            anchors[:3, :] = [0], [1], [2]  # nothing, everything, one predicate repeated
            want = popcounts(np.bitwise_and.reduce(bits[anchors], axis=1))
            assert kernel(words, anchors).tolist() == want.tolist()


def _twin_prediction_table(kernel, monkeypatch):
    import test_cache

    test_cache.test_compiled_table_answers_as_the_dictionaries_do()


def _forests():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    X[:, 3] = np.round(X[:, 3])  # ties at thresholds
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 0.5)
    return (
        X,
        y,
        [
            RandomForestClassifier(25, random_state=0).fit(X, y),
            RandomForestClassifier(25, max_depth=4, random_state=0).fit(X, y > 0),
            RandomForestRegressor(25, max_depth=6, random_state=0).fit(X, X[:, 0] * 3.0),
        ],
    )


def _rows(X, rng):
    # no row, one row, fewer than a lane group, and enough to be taken in leaf order
    new = rng.normal(size=(300, X.shape[1])).astype(np.float32)
    new[:, 3] = np.round(new[:, 3])
    return [new[:0], new[:1], new[:5], new]


def _twin_forest_sums(kernel, monkeypatch):
    X, _, forests = _forests()
    rng = np.random.default_rng(4)
    for forest in forests:
        columns = len(getattr(forest, "classes_", [0]))
        packed = _trees.compact([t.tree_ for t in forest.estimators_], columns, X.shape[1])
        for rows in _rows(X, rng):
            sums = kernel(rows, *packed)
            want = np.zeros((len(rows), columns))
            for tree in forest.estimators_:  # scikit-learn's sum, in the forest's order
                want += tree.tree_.predict(rows)[:, :columns]
            assert sums.tolist() == want.tolist()


def _twin_forest_labels(kernel, monkeypatch):
    X, _, forests = _forests()
    rng = np.random.default_rng(5)
    for forest in forests[:2]:
        columns = len(forest.classes_)
        packed = _trees.compact([t.tree_ for t in forest.estimators_], columns, X.shape[1])
        for rows in _rows(X, rng):
            want = forest.predict_proba(rows).argmax(axis=1) if len(rows) else np.zeros(0)
            assert kernel(rows, *packed, 1e-6).tolist() == want.tolist()


def _twin_boosting_add(kernel, monkeypatch):
    from sklearn.ensemble._gradient_boosting import predict_stages

    X, y, _ = _forests()
    rng = np.random.default_rng(6)
    for boost in (
        GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y),
        GradientBoostingClassifier(n_estimators=15, max_depth=5, min_samples_split=40).fit(
            X, y > 0
        ),
    ):
        stages = boost.estimators_
        trees = [stages[i, k].tree_ for i in range(stages.shape[0]) for k in range(stages.shape[1])]
        columns = np.tile(np.arange(stages.shape[1]), stages.shape[0])
        packed = _trees.complete(trees, columns, boost.learning_rate)
        for rows in _rows(X, rng):
            init = np.zeros((len(rows), stages.shape[1]))
            want = init.copy()
            predict_stages(stages, rows, boost.learning_rate, want)
            assert kernel(rows, *packed, init).tolist() == want.tolist()


TWINS = {
    "stratified_bounds": _twin_stratified_bounds,
    "precision_estimates": _twin_precision_estimates,
    "extreme_bounds": _twin_extreme_bounds,
    "stratum_counts": _twin_stratum_counts,
    "make_blocks": _twin_make_blocks,
    "make_windows": _twin_make_windows,
    "coverage_counts": _twin_coverage_counts,
    "prediction_table": _twin_prediction_table,
    "forest_sums": _twin_forest_sums,
    "forest_labels": _twin_forest_labels,
    "boosting_add": _twin_boosting_add,
}


def test_the_speed_layer_registers_the_kernels_the_twins_cover():
    assert sorted(_compiled.registered()) == sorted(TWINS)


@needs_numba
@pytest.mark.parametrize("name", sorted(_compiled.registered()))
def test_every_compiled_kernel_equals_its_numpy_twin(name, monkeypatch):
    # a kernel registered without a twin check here fails (KeyError), as it should
    check = TWINS[name]
    monkeypatch.setenv("SKANCHORS_NUMBA", "1")
    kernel = _compiled.kernel(name)
    assert kernel is not None
    check(kernel, monkeypatch)


# ----------------------------------------------------------------- loud, or switched off
def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 4, size=n).astype(float)})
    return X, (X["a"] > 0).astype(int)


def test_a_kernel_that_fails_to_load_is_an_error_that_says_how_to_switch_off(monkeypatch):
    def broken():
        raise TypeError("No implementation of function Function(<built-in function getitem>)")

    monkeypatch.setattr(_compiled, "_NUMBA", True)
    monkeypatch.setenv("SKANCHORS_NUMBA", "1")
    monkeypatch.setitem(_compiled._LOADERS, "stratum_counts", (broken, "the numpy counts"))
    monkeypatch.setattr(_compiled, "_LOADED", {})
    with pytest.raises(_compiled.CompiledKernelError, match="'stratum_counts'") as error:
        _compiled.kernel("stratum_counts")
    assert "SKANCHORS_NUMBA=0" in str(error.value) and "TypeError" in str(error.value)
    assert isinstance(error.value.__cause__, TypeError)
    # not silently the numpy code: a tabular fit (which loads the search's kernels) fails
    X, y = _table()
    model = RandomForestClassifier(10, random_state=0).fit(X, y)
    with pytest.raises(_compiled.CompiledKernelError, match="stratum_counts"):
        AnchorExplainer(model, random_state=0).fit(X)
    # switched off, the same fit runs the numpy code
    monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    anchor = AnchorExplainer(model, random_state=0).fit(X).explain(X.iloc[:1])[0]
    assert anchor.predicates


def test_numba_that_breaks_on_import_is_an_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "numba":
            raise SystemError("numba's C extension crashed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(_compiled, "_NUMBA", None)
    monkeypatch.setenv("SKANCHORS_NUMBA", "1")
    with pytest.raises(_compiled.CompiledKernelError, match="SKANCHORS_NUMBA=0"):
        _compiled.kernel("stratum_counts")
    monkeypatch.setenv("SKANCHORS_NUMBA", "0")  # switched off, numba is not imported
    assert _compiled.kernel("stratum_counts") is None


def test_an_unregistered_name_is_the_numpy_code(monkeypatch):
    monkeypatch.setattr(_compiled, "_NUMBA", True)
    monkeypatch.setenv("SKANCHORS_NUMBA", "1")
    assert _compiled.kernel("no such kernel") is None


@pytest.mark.parametrize("how", ["environment", "numba missing", "speed layer disabled"])
def test_without_compiled_kernels_the_core_runs_numpy(how, monkeypatch):
    if how == "environment":
        monkeypatch.setenv("SKANCHORS_NUMBA", "0")
    elif how == "numba missing":
        monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        monkeypatch.setattr(_compiled, "_NUMBA", None)
    context = _speed.disabled() if how == "speed layer disabled" else _nothing()
    with context:
        assert not _compiled.available()
        assert all(_compiled.kernel(name) is None for name in _compiled.registered())
        assert _stratified._arm_kernel() is None and _trees.kernels() is None
        X, y = _table()
        explainer = AnchorExplainer(RandomForestClassifier(10, random_state=0).fit(X, y))
        explainer.set_params(random_state=0).fit(X)
        if how == "speed layer disabled":
            assert explainer._cache is None  # (nor a prediction cache)
        else:
            assert not explainer._cache.compiled
        assert explainer.explain(X.iloc[:1])[0].predicates
    if how == "speed layer disabled":
        assert _compiled.available() == NUMBA  # back on after the block


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


@needs_numba
def test_the_anchors_are_the_same_with_the_compiled_kernels_off(monkeypatch):
    # the benchmark's kind of rows (a table with numeric and categorical columns, a forest,
    # the default and the replace perturbation), explained with the compiled kernels and
    # with the numpy code: the same anchors, to the last bit
    from skanchors.datasets import load_titanic

    X, y = load_titanic(return_X_y=True)
    numeric = X.select_dtypes("number").columns
    X = X[numeric].fillna(X[numeric].median())
    forest = RandomForestClassifier(30, max_depth=6, random_state=0).fit(X[:500], y[:500])
    out = {}
    for setting in ("1", "0"):
        monkeypatch.setenv("SKANCHORS_NUMBA", setting)
        anchors = []
        for kw in ({}, {"perturbation": "replace", "beam_size": 2}):
            explainer = AnchorExplainer(forest, random_state=0, **kw).fit(X[:500])
            assert explainer._cache.compiled == (setting == "1")
            for anchor in explainer.explain(X[600:604]):
                found = anchor.to_dict()
                del found["wall_time"]
                anchors.append(found)
        out[setting] = anchors
    assert out["1"] == out["0"]
    assert all(anchor["predicates"] for anchor in out["1"])


# ------------------------------------------------------------------------ the layering
def test_the_core_imports_neither_numba_nor_the_kernels():
    package = pathlib.Path(skanchors.__file__).parent
    layer = package / "_speed"
    checked = 0
    for path in package.rglob("*.py"):
        if layer in path.parents or path == package / "__init__.py":
            continue  # the layer itself, and the package's entry, which loads the layer
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):  # deferred imports included
            if isinstance(node, ast.ImportFrom):
                imported.add(node.module or "")
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        bad = {name for name in imported if "numba" in name.split(".") or "_speed" in name}
        if path.name == "_compiled.py":  # the interface probes whether numba imports
            bad.discard("numba")
        assert not bad, (path.name, bad)
        checked += 1
    assert checked > 50
    # the prediction cache and the call sharing are the layer's too: the core asks for them
    # through skanchors._sharing (the modules that use them are among those checked above)
    assert not (package / "_cache.py").exists() and not (package / "_batching.py").exists()
    for core in ("explainer.py", "_anchor_model.py", "_explain_rows.py", "_samples.py"):
        source = (package / core).read_text()
        assert "_sharing" in source or "shared.cache" in source, core
