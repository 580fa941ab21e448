"""The sampler protocol: the abstract classes, the capabilities, and a custom sampler."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from skanchors import AnchorExplainer, LimeExplainer, Predicate
from skanchors._arms import Arms, ArmsCapabilities
from skanchors._bandit import KLLUCB, BatchSAR
from skanchors._reference import ReferenceArms
from skanchors._samples import CandidateArms
from skanchors._search import beam_search
from skanchors._stratified import StratifiedArms
from skanchors.samplers import (
    Capabilities,
    CorpusSampler,
    ImageSampler,
    InstanceSampler,
    Sampler,
    SamplerCapabilities,
    TabularSampler,
    UnkSampler,
)
from skanchors.samplers._protocol import _MEMBERS, _implements, check_instance

CORPUS = ["a good movie", "a bad plot", "good acting and a good plot", "bad bad movie"]


class BitsInstance(InstanceSampler):
    """``d`` independent fair bits; predicate ``j`` is "bit j is 1" (the row is all ones)."""

    def __init__(self, d=6, capabilities=None):
        self.d = d
        self.predicates = [Predicate(f"x{j}", "==", 1, j) for j in range(d)]
        if capabilities is not None:
            self.capabilities = capabilities

    n_predicates = property(lambda self: self.d)
    predicates = None  # (set per instance in __init__)

    def sample(self, anchor, n, rng):
        keys = rng.integers(2, size=(n, self.d))
        keys[:, list(anchor)] = 1
        return keys, keys == 1

    def decode(self, keys):
        return keys.astype(float)

    def coverage(self, anchors):
        return np.array([0.5 ** len(a) for a in anchors])

    def reference_coverage(self, anchor):
        return 0.5 ** len(anchor)


class Bits(BaseEstimator, Sampler):
    """A custom sampler of independent bits (the explainer clones it: an sklearn estimator)."""

    modality = "bits"

    def __init__(self, d=6, exact_reuse=True):
        self.d = d
        self.exact_reuse = exact_reuse

    def fit(self, X, y=None, sample_weight=None):
        self.fitted_ = True
        return self

    def split(self, X):
        return [row for row in np.asarray(X, dtype=float)]

    def instance(self, row):
        return BitsInstance(self.d, Capabilities(exact_reuse=self.exact_reuse))

    def to_model_input(self, X):
        return np.asarray(X, dtype=float)


def planted(X):
    """Class 1 exactly when bits 1 and 4 are set (probabilities of classes 0 and 1)."""
    X = np.asarray(X)
    y = X[:, 1] * X[:, 4]
    return np.column_stack([1 - y, y]).astype(float)


@pytest.mark.parametrize("exact_reuse", [True, False])
def test_a_custom_sampler_finds_the_planted_anchor(exact_reuse):
    explainer = AnchorExplainer(planted, sampler=Bits(exact_reuse=exact_reuse), random_state=0).fit(
        np.ones((5, 6))
    )
    anchor = explainer.explain(np.ones((1, 6)))[0]
    assert anchor.is_anchor and anchor.prediction == 1
    assert sorted(p.position for p in anchor.predicates) == [1, 4]
    assert anchor.coverage == pytest.approx(0.25)
    # the precision, checked on fresh draws of the sampler: the rule always holds
    keys, _ = BitsInstance().sample((1, 4), 2000, np.random.default_rng(1))
    assert (planted(keys)[:, 1] == 1).all()
    # and a rule missing one of the two bits is right only half of the time
    keys, _ = BitsInstance().sample((1,), 4000, np.random.default_rng(2))
    assert (planted(keys)[:, 1] == 1).mean() == pytest.approx(0.5, abs=0.03)
    # the beam size default is the tables' (the modality is not text)
    assert explainer._beam_size() == 10


def test_the_abstract_classes_refuse_an_incomplete_sampler():
    class NoDecode(InstanceSampler):
        n_predicates = 1
        predicates = ()

        def sample(self, anchor, n, rng):
            return np.zeros((n, 1), int), np.zeros((n, 1), bool)

        def coverage(self, anchors):
            return np.ones(len(anchors))

        def reference_coverage(self, anchor):
            return 1.0

    with pytest.raises(TypeError, match="abstract method.*decode"):
        NoDecode()

    class NoModality(BaseEstimator, Sampler):
        fit = split = instance = to_model_input = lambda self, *a, **k: None

    with pytest.raises(TypeError, match="abstract method.*modality"):
        NoModality()


def test_a_sampler_that_is_not_a_subclass_is_refused_with_a_clear_error():
    class Duck(BaseEstimator):  # every method the search once probed for, but no protocol
        def fit(self, X, y=None, sample_weight=None):
            return self

        def split(self, X):
            return list(X)

        def instance(self, row):
            return BitsInstance()

        def to_model_input(self, X):
            return X

    for make in (AnchorExplainer, LimeExplainer):
        with pytest.raises(TypeError, match=r"sampler must be a skanchors.samplers.Sampler"):
            make(planted, sampler=Duck()).fit(np.ones((3, 6)))

    class DuckInstance:
        n_predicates = 1

    with pytest.raises(TypeError, match=r"subclass skanchors.samplers.InstanceSampler"):
        check_instance(DuckInstance())


def test_declared_capabilities_need_their_members():
    # declared but not implemented: refused before a search calls the member
    inst = BitsInstance(capabilities=Capabilities(exact_reuse=True, keys_tell_holds=True))
    with pytest.raises(TypeError, match=r"keys_tell_holds=True .* does not implement holds_of"):
        beam_search(
            inst,
            planted,
            1,
            threshold=0.95,
            delta=0.1,
            epsilon=0.1,
            beam_size=2,
            max_anchor_size=None,
            batch_size=10,
            bandit=KLLUCB(),
            rng=np.random.default_rng(0),
        )
    with pytest.raises(NotImplementedError, match=r"BitsInstance.holds_of is not implemented"):
        inst.holds_of(np.zeros((1, 6)))
    # capabilities that contradict each other or lack the ones they build on
    with pytest.raises(ValueError, match="replayable=True needs keys_tell_holds=True"):
        Capabilities(exact_reuse=True, replayable=True)
    with pytest.raises(ValueError, match="keys_tell_holds=True needs exact_reuse=True"):
        Capabilities(keys_tell_holds=True)
    with pytest.raises(ValueError, match="stream_base_rows=True needs streams=True"):
        Capabilities(stratified=True, stream_base_rows=True)
    with pytest.raises(ValueError, match="exclude each other"):
        Capabilities(exact_reuse=True, stratified=True)
    with pytest.raises(TypeError, match="must be a bool"):
        Capabilities(exact_reuse=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Capabilities().exact_reuse = True


def test_a_sampler_declaring_what_it_does_not_implement_is_refused():
    # SamplerCapabilities are checked as the instance's are: a bool each, and the member each
    # declares (else a NotImplementedError would surface in fit or in the middle of explain)
    with pytest.raises(TypeError, match="SamplerCapabilities.fallback must be a bool"):
        SamplerCapabilities(fallback=1)

    for field, member in (("split_hashing", "hash_by_splits"), ("fallback", "fallback_instance")):

        class Declares(Bits):
            capabilities = SamplerCapabilities(**{field: True})

        for make in (AnchorExplainer, LimeExplainer):
            with pytest.raises(
                TypeError, match=rf"Declares declares {field}=True .* does not implement {member}"
            ):
                make(planted, sampler=Declares()).fit(np.ones((3, 6)))

    class Honest(Bits):
        capabilities = SamplerCapabilities(fallback=True)

        def fallback_instance(self, row):
            return self.instance(row)

    found = AnchorExplainer(planted, sampler=Honest(), random_state=0).fit(np.ones((5, 6)))
    assert sorted(found.explain(np.ones((1, 6)))[0].features) == ["x1", "x4"]


_TABLE = pd.DataFrame({"age": np.arange(40.0), "sex": ["f", "m"] * 20})
_TEXT = dict(exact_reuse=True, keys_tell_holds=True, replayable=True)
# each shipped instance sampler and the capabilities it must declare
_SHIPPED = [
    (
        TabularSampler(perturbation="replace"),
        dict(stratified=True, streams=True, stream_base_rows=True),
    ),
    (
        TabularSampler(perturbation="reference"),
        dict(exact_reuse=True, streams=True, reference_rows=True),
    ),
    (UnkSampler(), _TEXT),
    (UnkSampler(token=None), _TEXT),
    (CorpusSampler(), _TEXT),
    # superpixels kept independently (exact reuse), keys -1 where kept, drawn from the
    # generator alone; with a background image per perturbation too
    (ImageSampler(segmentation=lambda image: _QUADRANTS), _TEXT),
    (ImageSampler(segmentation=lambda image: _QUADRANTS, fill="reference"), _TEXT),
]
_IMAGES = np.random.default_rng(0).uniform(size=(3, 8, 8, 3))
_QUADRANTS = np.add.outer(np.arange(8) // 4, 2 * (np.arange(8) // 4))


def _data(sampler):
    """Reference data and one input to explain, of the sampler's modality."""
    if isinstance(sampler, TabularSampler):
        return "tabular", _TABLE, _TABLE.iloc[[3]]
    if isinstance(sampler, ImageSampler):
        return "image", _IMAGES, _IMAGES[1]
    return "text", CORPUS, "a good plot"


@pytest.mark.parametrize("i", range(len(_SHIPPED)))
def test_every_shipped_instance_declares_what_it_implements(i):
    sampler, expected = _SHIPPED[i]
    modality, X, row = _data(sampler)
    tabular = modality == "tabular"
    sampler = sampler.fit(X)
    inst = sampler.instance(row)
    assert isinstance(sampler, Sampler) and isinstance(inst, InstanceSampler)
    assert sampler.modality == modality
    caps = inst.capabilities
    assert caps == Capabilities(**expected)
    for field, members in _MEMBERS.items():
        if getattr(caps, field):  # declared: the members are the instance's own
            assert all(_implements(inst, m) for m in members), (type(inst).__name__, field)
    check_instance(inst)
    rng = np.random.default_rng(0)
    d = inst.n_predicates
    assert d > 0 and len(inst.predicates) == d
    keys, holds = inst.sample((0,), 50, rng)
    assert holds.shape == (50, d) and holds[:, 0].all()
    assert len(inst.decode(keys)) == 50
    if caps.keys_tell_holds:
        np.testing.assert_array_equal(inst.holds_of(keys), holds)
    if caps.stratified:
        _, holds2, native = inst.sample((0,), 50, np.random.default_rng(0), return_native=True)
        np.testing.assert_array_equal(holds2, holds)
        assert native.shape == (50, d) and len(inst.predicate_features) == d
    if caps.replayable:  # the same draws again from the same generator state
        again, _ = inst.sample((0,), 50, np.random.default_rng(0))
        np.testing.assert_array_equal(again, keys)
    # the fitted sampler's own capabilities
    assert sampler.capabilities == SamplerCapabilities(split_hashing=tabular, stratified=tabular)


def test_only_images_wrap_their_explanations():
    # the protocol's hook: the identity by default, the segmentation for images
    anchor = AnchorExplainer(planted, sampler=Bits(), random_state=0).fit(np.ones((5, 6)))
    assert type(anchor.explain(np.ones((1, 6)))[0]).__name__ == "Anchor"
    for sampler in (UnkSampler().fit(CORPUS), TabularSampler().fit(_TABLE)):
        assert sampler.wrap_explanation("explanation", None) == "explanation"

    def bright(X):  # class 1 when the top-left quadrant is bright
        p = (np.asarray(X)[:, :4, :4].mean(axis=(1, 2, 3)) > 0.45).astype(float)
        return np.column_stack([1 - p, p])

    image = _IMAGES[1].copy()
    image[:4, :4] = 1.0
    sampler = ImageSampler(segmentation=lambda image: _QUADRANTS, fill=0.0)
    explainer = AnchorExplainer(bright, sampler=sampler, random_state=0).fit(_IMAGES)
    found = explainer.explain(image[None])[0]
    assert type(found).__name__ == "ImageAnchor" and found.superpixels == [0]
    np.testing.assert_array_equal(found.segments, _QUADRANTS)
    lime = LimeExplainer(bright, sampler=sampler, random_state=0).fit(_IMAGES)
    assert type(lime.explain(image[None])[0]).__name__ == "ImageLimeExplanation"


def test_the_auto_perturbation_declares_its_fallback_search():
    sampler = TabularSampler().fit(_TABLE)
    assert sampler.capabilities.fallback
    assert sampler.instance(_TABLE.iloc[[3]]).perturbation == "reference"
    assert sampler.fallback_instance(_TABLE.iloc[[3]]).perturbation == "replace"
    with pytest.raises(NotImplementedError, match="fallback_instance is not implemented"):
        UnkSampler().fit(CORPUS).fallback_instance("a good plot")


def test_the_arms_declare_their_optional_members():
    for cls in (CandidateArms, StratifiedArms, ReferenceArms):
        assert issubclass(cls, Arms)
        caps = cls.capabilities
        declared = {
            "pull_each": caps.pulls_each,
            "precision_estimates": caps.own_estimator,
            "precision_bounds": caps.own_estimator,
            "extreme_bound": caps.extreme_bounds,
            "pull_parents": caps.parent_draws,
            "parent_can_settle": caps.parent_draws,
        }
        for member, on in declared.items():
            assert (getattr(cls, member) is not getattr(Arms, member)) == on, (cls, member)
    with pytest.raises(ValueError, match="extreme_bounds=True needs own_estimator"):
        ArmsCapabilities(extreme_bounds=True)

    with pytest.raises(TypeError, match="ArmsCapabilities.pulls_each must be a bool"):
        ArmsCapabilities(pulls_each=1)

    class Coins(Arms):  # two coins; declares its own estimator but does not implement it
        capabilities = ArmsCapabilities(own_estimator=True)

        def __init__(self):
            self.n_samples, self.n_positives = np.zeros(2), np.zeros(2)

        def pull(self, indices, n):
            self.n_samples[indices] += n
            self.n_positives[indices] += n * np.array([0.2, 0.9])[indices]

    for bandit in (KLLUCB(), BatchSAR()):
        with pytest.raises(
            TypeError, match=r"Coins declares own_estimator=True .* precision_estimates, prec"
        ):
            bandit.select(Coins(), 1, epsilon=0.1, delta=0.1, batch_size=5)
    Coins.capabilities = ArmsCapabilities()  # declares what it has: the better coin wins
    assert KLLUCB().select(Coins(), 1, epsilon=0.1, delta=0.1, batch_size=5).tolist() == [1]

    class Plain:  # arms that are not Arms: the bandit says so
        n_samples = n_positives = np.zeros(2)

        def pull(self, indices, n):
            pass

    with pytest.raises(TypeError, match="arms must be a skanchors.Arms"):
        KLLUCB().select(Plain(), 1, epsilon=0.1, delta=0.1, batch_size=5)
