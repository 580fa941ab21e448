"""The protocol between the samplers and the anchor search: what a sampler implements.

Data flow one way: a *sampler* (:class:`Sampler`) is fitted on reference data, and for each
input to explain it builds an *instance sampler* (:class:`InstanceSampler`), the perturbation
distribution ``D(z | A)`` of that one row or document. The search (:mod:`skanchors._search`)
and the bandit talk to the instance sampler only, through the members below, and never ask
which modality it is: what the search does differently for a sampler follows from the
instance's :class:`Capabilities`, one object that lists the optional abilities it has.

Required members of an instance sampler
---------------------------------------
``n_predicates``
    number of candidate predicates of the instance.
``predicates``
    the :class:`~skanchors.Predicate` of each of them (what an anchor prints).
``sample(anchor, n, rng) -> (keys, holds)``
    ``n`` perturbations drawn from ``D(z | anchor)`` with the generator ``rng``: ``keys`` is an
    integer matrix with one row per perturbation that identifies it exactly (equal rows are
    equal model inputs), and ``holds`` the boolean matrix of which of the instance's
    predicates each one satisfies.
``decode(keys)``
    the model input for rows of ``keys``.
``coverage(anchors)``
    coverage of each anchor (a tuple of predicate indices) under the perturbation
    distribution; the search maximises it.
``reference_coverage(anchor)``
    share of the reference data the anchor applies to (reported as ``Anchor.coverage``).

Members with a default
----------------------
``predicate_groups`` (default None)
    An integer per predicate; the predicates of a group are nested sets (tabular: the bounds
    on one side of a feature, ``age <= 28`` inside ``age <= 36``). A rule is extended by a
    predicate of a group it already has only to narrow it; the wider predicate is then left
    out of the printed anchor. None: every predicate a group of its own.
``hash_rows(keys)`` (default :func:`~skanchors._hashing.row_hash`)
    64-bit hashes of rows of keys; rows with equal hashes are predicted once.
``search_key()`` (default None)
    What a search of the instance depends on, hashable, for the explainer's cache of
    searches; None: the instance is always searched.
``perturbation`` (default None)
    A name of the perturbation the instance draws, reported on the anchor.

Optional members, used only when :class:`Capabilities` says so
--------------------------------------------------------------
``exact_reuse``
    A sample drawn for ``A_s`` that satisfies ``A`` (a superset of ``A_s``) is an exact draw
    of ``D(z | A)``, as with independent word masking: the search's store counts every sample
    for every candidate it is a valid draw for. No member: it changes how samples are counted.
``keys_tell_holds``: ``holds_of(keys)``
    The ``holds`` matrix of rows of ``keys``, when the keys tell it (text: a word is kept
    exactly when its key is -1); the store then keeps the keys only. Needs ``exact_reuse``.
``replayable``
    ``sample`` draws from its generator only, and cheaply: a store of an instance of many
    predicates then keeps one bit per predicate and sample and the generator's state before
    each draw, and draws a sample again when its keys are asked for
    (:class:`skanchors._wide.PackedMasks`). Needs ``keys_tell_holds``.
``stratified``: ``predicate_features`` and ``sample(..., return_native=True)``
    For samplers that build a perturbation from a random reference row (tabular): the
    feature each predicate constrains, and a third matrix of which predicates the reference
    row satisfied before the anchor was imposed. They enable the stratified estimate of
    :class:`skanchors._stratified.StratifiedArms` (a sample counts for the candidates whose
    stratum it is an exact draw of). Excludes ``exact_reuse``.
``streams``: ``stream_windows(requests, seed, cache, return_holds)`` and ``stream_namespace``
    Samplers whose ``D(z | A)`` depends on the predicates of ``A`` and not on the instance (tabular)
    offer streams: sample ``i`` of a predicate set depends on the seed, the set and ``i`` only.
    Searches of different rows then read the same samples and share their predictions through the
    explainer's prediction cache, where it has one (see :mod:`skanchors._sharing`), without changing
    any result; the streams themselves are the sampler's (they define its draws), not the cache's.
    ``requests`` lists ``(anchor, start, stop)`` windows of streams, all read at once (one bandit
    step's draws); ``cache`` is the explainer's cache, from which the sampler reads and to which it
    gives the stream blocks it generates (``get_block``, ``put_block``, ``enabled``, ``compiled``),
    or None for no cache. The answer is ``(keys, holds, native, hashes, blocks)`` over all windows:
    ``hashes`` are the :meth:`hash_rows` of the keys, computed once per stream block rather than
    once per search; with ``return_holds=False`` the holds matrix is None; ``blocks`` are ``(key,
    lo, hi)`` segments, one per stream block read (rows ``lo:hi`` of the block ``key``), by which
    the cache keeps the labels of the rows of each block (the cache's ``label_memo``), or None.
    ``stream_namespace`` names the streams (samples of equal namespaces, sets and positions are
    equal). A store keeps a streamed sample as its place in its stream, and reads the keys of the
    examples again from the streams when the search ends.
``stream_base_rows``: ``stream_windows(..., return_base=True)`` and ``native_of(base, columns)``
    The base rows (indices) in place of ``native``, and the native values of base rows (the
    cells ``[base, columns]`` with ``columns``): the store then keeps one integer per
    streamed sample instead of its row of ``native``. Needs ``streams`` and ``stratified``.
``reference_rows``: ``reference_order(seed)``
    ``D(z | A)`` is the reference rows that satisfy ``A`` (the tabular
    ``perturbation="reference"``): the search reads them without replacement, in one order
    (see :class:`skanchors._reference.ReferenceStore`), and ``reference_order`` returns the
    rows' keys, their hashes and, per predicate, the rows that satisfy it in that order.

Members of a sampler with a default
-----------------------------------
``wrap_explanation(explanation, instance)`` (default: ``explanation`` unchanged)
    The :class:`~skanchors.Anchor` or :class:`~skanchors.LimeExplanation` made for
    ``instance`` (an instance sampler of this sampler), as the modality's own: the explainers
    return what it returns. :class:`~skanchors.samplers.ImageSampler` gives an image's
    explanation its segmentation (:class:`~skanchors.ImageAnchor`,
    :class:`~skanchors.ImageLimeExplanation`: masks and pictures).

Optional members of a sampler, used only when :class:`SamplerCapabilities` says so
---------------------------------------------------------------------------------
``split_hashing``: ``hash_by_splits(thresholds, dtype)``
    Rows a tree model cannot tell apart get equal hashes (predicted once).
``fallback``: ``fallback_instance(row)``
    A second instance sampler, searched when no rule validates on the first.

Samples are stored once (their keys or places in streams, their labels, and what the estimate
needs of them: which predicates they satisfy, or their base rows) and reused by every candidate
they are valid draws for (see :class:`skanchors._samples.SampleStore`); all samples one bandit
step needs go to the model in one call, and perturbations that repeat are predicted once.

A custom sampler subclasses :class:`Sampler` and its instances :class:`InstanceSampler`; the
explainers refuse other objects, and capabilities declared without their members, with a
:class:`TypeError`, since a missing member would otherwise fail deep inside a search.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod

from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._hashing import row_hash

__all__ = [
    "Capabilities",
    "InstanceSampler",
    "Sampler",
    "SamplerCapabilities",
    "check_instance",
    "check_sampler",
]


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """The optional abilities of an instance sampler (see :mod:`skanchors.samplers._protocol`).

    Each field says that the instance implements the members named with it, and what the
    search may then do; all are False by default (a sampler with the required members only).

    Parameters
    ----------
    exact_reuse : bool
        Samples drawn for a subset of a rule that satisfy the rule are exact draws of it.
    keys_tell_holds : bool
        ``holds_of(keys)``: which predicates rows of keys satisfy (needs ``exact_reuse``).
    replayable : bool
        ``sample`` reads its generator only and is cheap: samples may be drawn again rather
        than kept (needs ``keys_tell_holds``).
    stratified : bool
        ``predicate_features`` and ``sample(..., return_native=True)``: the stratified
        estimate (excludes ``exact_reuse``).
    streams : bool
        ``stream_windows`` and ``stream_namespace``: counter-based streams shared by searches.
    stream_base_rows : bool
        ``stream_windows(..., return_base=True)`` and ``native_of`` (needs ``streams`` and
        ``stratified``).
    reference_rows : bool
        ``reference_order``: the perturbations are the reference rows satisfying the rule.
    """

    exact_reuse: bool = False
    keys_tell_holds: bool = False
    replayable: bool = False
    stratified: bool = False
    streams: bool = False
    stream_base_rows: bool = False
    reference_rows: bool = False

    def __post_init__(self):
        _check_bools(self)
        needs = [
            ("keys_tell_holds", "exact_reuse"),
            ("replayable", "keys_tell_holds"),
            ("stream_base_rows", "streams"),
            ("stream_base_rows", "stratified"),
        ]
        for field, needed in needs:
            if getattr(self, field) and not getattr(self, needed):
                raise ValueError(f"Capabilities: {field}=True needs {needed}=True.")
        if self.stratified and self.exact_reuse:
            raise ValueError(
                "Capabilities: stratified and exact_reuse exclude each other (a sample "
                "counts either for every rule it satisfies or for its stratum)."
            )


def _check_bools(capabilities):
    for field in dataclasses.fields(capabilities):
        value = getattr(capabilities, field.name)
        if not isinstance(value, bool):
            raise TypeError(
                f"{type(capabilities).__name__}.{field.name} must be a bool, got {value!r}."
            )


def _check_members(obj, capabilities, members):
    """A TypeError if ``capabilities`` declare an ability whose ``members`` ``obj`` lacks."""
    for field, names in members.items():
        if getattr(capabilities, field):
            missing = [m for m in names if not _implements(obj, m)]
            if missing:
                raise TypeError(
                    f"{type(obj).__name__} declares {field}=True in its capabilities "
                    f"but does not implement {', '.join(missing)}."
                )


# The members each capability needs, beyond the required ones (checked by check_instance).
_MEMBERS = {
    "keys_tell_holds": ("holds_of",),
    "stratified": ("predicate_features",),
    "streams": ("stream_windows", "stream_namespace"),
    "stream_base_rows": ("native_of",),
    "reference_rows": ("reference_order",),
}


def _missing(name):
    def member(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__}.{name} is not implemented: the search calls it only for "
            f"instance samplers whose capabilities declare it (see "
            f"skanchors.samplers.Capabilities)."
        )

    member.__name__ = name
    member.__doc__ = "Optional member (see :class:`Capabilities`); not implemented here."
    member._protocol_default = True
    return member


class InstanceSampler(ABC):
    """The perturbation distribution ``D(z | A)`` of one explained row or document.

    Subclasses implement the abstract members (``n_predicates`` and ``predicates`` may be
    properties or class attributes) and declare what else they offer in ``capabilities``
    (see :mod:`skanchors.samplers._protocol` for the whole protocol).

    Examples
    --------
    Three independent bits, each a predicate "bit ``j`` is 1"; a sample keeps the anchor's
    bits at 1 and draws the others:

    >>> import numpy as np
    >>> from skanchors import Predicate
    >>> from skanchors.samplers import InstanceSampler
    >>> class Bits(InstanceSampler):
    ...     n_predicates = 3
    ...     predicates = [Predicate(f"x{j}", "==", 1, j) for j in range(3)]
    ...     def sample(self, anchor, n, rng):
    ...         keys = rng.integers(2, size=(n, 3))
    ...         keys[:, list(anchor)] = 1
    ...         return keys, keys == 1
    ...     def decode(self, keys):
    ...         return keys.astype(float)
    ...     def coverage(self, anchors):
    ...         return np.array([0.5 ** len(a) for a in anchors])
    ...     def reference_coverage(self, anchor):
    ...         return 0.5 ** len(anchor)
    >>> Bits().capabilities.exact_reuse
    False
    """

    #: The optional abilities of the instance (none by default).
    capabilities = Capabilities()
    #: Nested groups of predicates (see the module docstring), or None.
    predicate_groups = None
    #: Name of the perturbation the instance draws (reported on anchors), or None.
    perturbation = None

    @property
    @abstractmethod
    def n_predicates(self):
        """Number of candidate predicates."""

    @property
    @abstractmethod
    def predicates(self):
        """The candidate predicates (:class:`~skanchors.Predicate`), by index."""

    @abstractmethod
    def sample(self, anchor, n, rng):
        """``n`` draws of ``D(z | anchor)``: ``(keys, holds)`` matrices."""

    @abstractmethod
    def decode(self, keys):
        """Model input for rows of ``keys``."""

    @abstractmethod
    def coverage(self, anchors):
        """Coverage of each anchor under the perturbation distribution (an array)."""

    @abstractmethod
    def reference_coverage(self, anchor):
        """Share of the reference data that satisfies ``anchor`` (a float)."""

    def hash_rows(self, keys):
        """64-bit hash of each row of ``keys`` (:func:`~skanchors._hashing.row_hash`)."""
        return row_hash(keys)

    def search_key(self):
        """What a search of this instance depends on (hashable), or None: no reuse."""
        return None

    # (``predicate_features`` and ``stream_namespace``, optional data members, have no
    # default: an instance may set them in ``__init__``)
    holds_of = _missing("holds_of")
    stream_windows = _missing("stream_windows")
    native_of = _missing("native_of")
    reference_order = _missing("reference_order")


def _implements(instance, name):
    """Whether ``instance`` has its own ``name`` (not the protocol's default)."""
    member = getattr(type(instance), name, None)
    if member is None:
        return hasattr(instance, name)
    if getattr(member, "_protocol_default", False):
        return name in getattr(instance, "__dict__", {})
    return True


def check_instance(instance, owner="sampler"):
    """Refuse an instance sampler that is not an :class:`InstanceSampler`, or whose
    capabilities declare members it does not implement (a :class:`TypeError` naming
    ``owner``'s ``instance`` method)."""
    if not isinstance(instance, InstanceSampler):
        raise TypeError(
            f"The {owner}'s instance() returned a {type(instance).__name__}, which is not an "
            "instance sampler: subclass skanchors.samplers.InstanceSampler (see its "
            "documentation for the members the search uses)."
        )
    caps = instance.capabilities
    if not isinstance(caps, Capabilities):
        raise TypeError(
            f"{type(instance).__name__}.capabilities must be a skanchors.samplers.Capabilities, "
            f"got {type(caps).__name__}."
        )
    _check_members(instance, caps, _MEMBERS)
    return instance


@dataclasses.dataclass(frozen=True)
class SamplerCapabilities:
    """The optional abilities of a fitted sampler (:class:`Sampler`).

    Parameters
    ----------
    split_hashing : bool
        ``hash_by_splits(thresholds, dtype)``: rows that a tree model cannot tell apart (every
        feature between the same two split thresholds) get equal hashes, so they are
        predicted once.
    stratified : bool
        Its instances use the stratified estimate (the explainer prepares its compiled
        kernels when fitted).
    fallback : bool
        ``fallback_instance(row)``: a second instance sampler, searched when no rule
        validates on the first; each search then runs at half the risk ``delta``.
    """

    split_hashing: bool = False
    stratified: bool = False
    fallback: bool = False

    def __post_init__(self):
        _check_bools(self)


# The members each capability of a sampler needs (checked by check_sampler).
_SAMPLER_MEMBERS = {"split_hashing": ("hash_by_splits",), "fallback": ("fallback_instance",)}


class Sampler(ABC):
    """A perturbation distribution fitted on reference data.

    ``fit`` learns from the reference data, ``split`` validates the inputs to explain and
    splits them into single rows, documents or images, ``instance`` builds the
    :class:`InstanceSampler` of one of them, ``to_model_input`` turns inputs into what the
    model reads, and ``wrap_explanation`` (by default the identity) turns the explanation of
    an instance into the modality's own. ``modality`` names the kind of data ("tabular",
    "text", "image", ...): the search never reads it; only the explainers' user-facing parts
    do (defaults such as the beam size, and the shape of ``transform``'s output: a
    ``"text"`` sampler gives the vocabulary of its columns as ``vocabulary_`` and
    ``get_feature_names_out``, an ``"image"`` sampler the pixels of its images as
    ``get_feature_names_out``, another one the columns of
    ``n_features_in_``, and ``feature_names_in_`` when they have names).

    The explainers clone the sampler they are given, so a custom sampler is also a
    scikit-learn estimator (:class:`~sklearn.base.BaseEstimator`, parameters in
    ``__init__``).
    """

    #: The optional abilities of the sampler (none by default).
    capabilities = SamplerCapabilities()

    @property
    @abstractmethod
    def modality(self):
        """The kind of data the sampler perturbs: a string such as "tabular" or "text"."""

    @abstractmethod
    def fit(self, X, y=None, sample_weight=None):
        """Learn from the reference data ``X``; returns self."""

    @abstractmethod
    def split(self, X):
        """The inputs of ``X`` to explain, one by one (a list)."""

    @abstractmethod
    def instance(self, row):
        """The :class:`InstanceSampler` of one input (an element of :meth:`split`)."""

    @abstractmethod
    def to_model_input(self, X):
        """``X`` as the model reads it."""

    def wrap_explanation(self, explanation, instance):
        """The explanation of ``instance`` as the modality's own; by default unchanged."""
        return explanation

    hash_by_splits = _missing("hash_by_splits")
    fallback_instance = _missing("fallback_instance")


def is_fitted(sampler):
    """Whether ``sampler`` is fitted, by scikit-learn's convention (attributes that end in
    ``_``, or ``__sklearn_is_fitted__``): a fitted sampler is used as it is, never refitted."""
    try:
        check_is_fitted(sampler)
    except NotFittedError:
        return False
    return True


def check_sampler(sampler, name="sampler"):
    """Refuse a ``sampler`` argument that is not a :class:`Sampler`, or whose capabilities
    declare members it does not implement (a :class:`TypeError`)."""
    if not isinstance(sampler, Sampler):
        raise TypeError(
            f"{name} must be a skanchors.samplers.Sampler (a sampler that subclasses it, with "
            f"instances that subclass skanchors.samplers.InstanceSampler); got "
            f"{type(sampler).__name__}."
        )
    caps = sampler.capabilities
    if not isinstance(caps, SamplerCapabilities):
        raise TypeError(
            f"{type(sampler).__name__}.capabilities must be a "
            f"skanchors.samplers.SamplerCapabilities, got {type(caps).__name__}."
        )
    _check_members(sampler, caps, _SAMPLER_MEMBERS)
    return sampler
