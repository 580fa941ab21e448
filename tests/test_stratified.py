"""The stratified estimate of the tabular arms: unbiased reuse of the parent's samples."""

import numpy as np

from skanchors import (
    AnchorExplainer,
)
from skanchors.samplers import TabularSampler


def test_stratified_reuse_of_parent_samples_is_unbiased(adult_model):
    """A child's precision from its parent's samples plus its own matches fresh samples.

    The naive reuse (parent samples that happen to satisfy the child, counted as if drawn
    for it) is the bias the stratified estimate removes; the test checks it is really there.
    """
    from skanchors._search import SampleStore, StratifiedArms

    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X_train)
    rng = np.random.default_rng(7)
    errors, naive_errors, reused = [], [], []
    n_parent, n_own = 4000, 1500
    for i in range(6):
        x = X_test.iloc[[i]]
        cls = model.predict(x)[0]
        instance = explainer.sampler_.instance(x)

        def predict(frame, cls=cls):
            return (model.predict(frame) == cls).astype(int)

        feat = instance.predicate_features
        parent = (0,)
        children = [(0, q) for q in range(1, instance.n_predicates) if feat[q] != feat[0]][:4]
        store = SampleStore(instance, predict, 1, rng)
        store.draw([(parent, n_parent)])
        store.draw([(c, n_own) for c in children])
        arms = StratifiedArms(store, children, [parent] * len(children))
        estimate = arms.precision_estimates()
        ids = store.anchor_id[: store.size]
        for j, child in enumerate(children):
            keys, _ = instance.sample(child, 40000, rng)
            truth = np.mean(predict(instance.decode(keys)))
            errors.append(estimate[j] - truth)
            # Parent samples that satisfy the child: the child's predicate is on another
            # feature than the parent's, which the parent leaves as the base row had it.
            naive = (ids == store._id(child)) | (
                (ids == store._id(parent)) & store.native[: store.size, child[1]]
            )
            naive_errors.append(store.correct[naive].mean() - truth)
            reused.append(arms.n_samples[j] - n_own)
    errors, naive_errors = np.abs(errors), np.abs(naive_errors)
    assert min(reused) > 0  # parent samples were used
    assert np.mean(errors) < 0.01
    assert max(errors) < 0.03
    assert max(naive_errors) > 0.04  # the bias the stratification removes


def test_stratified_counts_match_their_definition(adult_model):
    """Stratum counts, built once and then updated pull by pull, against a direct count.

    Arms of mixed sizes (one arm's candidate is another's parent, as in the search's
    fallback pool) and samples of unrelated anchors in the store.
    """
    from skanchors._search import SampleStore, StratifiedArms

    model, X_train, X_test = adult_model
    explainer = AnchorExplainer(
        model, sampler=TabularSampler(perturbation="replace"), random_state=0
    ).fit(X_train)
    instance = explainer.sampler_.instance(X_test.iloc[[3]])
    cls = model.predict(X_test.iloc[[3]])[0]
    feat = np.asarray(instance.predicate_features)
    p = [q for q in range(instance.n_predicates)]
    first = next(q for q in p[1:] if feat[q] != feat[0])
    third = next(q for q in p[1:] if feat[q] not in (feat[0], feat[first]))
    candidates = [(0, first), (0, third), tuple(sorted((0, first, third)))]
    parents = [(0,), (0,), (0, first)]
    store = SampleStore(
        instance,
        lambda frame: (model.predict(frame) == cls).astype(int),
        1,
        np.random.default_rng(0),
    )
    store.draw([((0,), 300), ((first,), 200), ((0, first), 150)])
    arms = StratifiedArms(store, candidates, parents)
    arms.pull([0, 2], 120)
    arms.pull([1], 90)
    ids = store.anchor_id[: store.size]
    native = store.native[: store.size]
    right = store.correct
    for j, (cand, parent) in enumerate(zip(candidates, parents)):
        (added,) = set(cand) - set(parent)
        group = [q for q in cand if feat[q] == feat[added]]
        e = native[:, group].all(axis=1)
        own, par = ids == store._id(cand), ids == store._id(parent)
        s1, s2 = (own | par) & e, own & ~e
        assert arms.n1[j] == s1.sum() and arms.pos1[j] == (s1 & right).sum()
        assert arms.n2[j] == s2.sum() and arms.pos2[j] == (s2 & right).sum()
    assert arms.n_samples.min() > 0
