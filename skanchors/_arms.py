"""The protocol between the search's arms and the bandit: what an arm set implements.

The search hands the bandit (:mod:`skanchors._bandit`) a list of candidate rules as *arms*:
``n_samples`` and ``n_positives`` (one float array entry per arm) and ``pull(indices, n)``,
which draws ``n`` samples for each arm of ``indices`` in one model call and updates the counts
of every arm the new samples are valid for. The optional members below are used only when the
arms' :class:`ArmsCapabilities` say so. The search may set ``coverage`` (the rules' coverage,
which breaks ties in precision towards the broader rule).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod

__all__ = ["Arms", "ArmsCapabilities", "check_arms"]


@dataclasses.dataclass(frozen=True)
class ArmsCapabilities:
    """The optional abilities of an arm set (:class:`Arms`); all False by default.

    Parameters
    ----------
    pulls_each : bool
        ``pull_each(indices, counts)``: a number of samples per arm, in one model call.
    own_estimator : bool
        ``precision_estimates()`` and ``precision_bounds(indices, beta, side)``: the arms
        estimate their precision and its confidence bounds themselves (else the empirical
        mean and its KL bounds).
    extreme_bounds : bool
        ``extreme_bound(indices, beta, side, k=1)``: the ``k`` most extreme bounds of some
        arms without computing all of them (needs ``own_estimator``).
    parent_draws : bool
        ``parent_can_settle(threshold, beta, n, parent_precision)`` and
        ``pull_parents(indices, n, own=())``: drawing for the rules the arms extend serves
        them too.
    finite_supply : bool
        ``n_available``: how many samples each arm can ever have; the bandit stops pulling an
        arm that has them all.
    hopeless_rounds : bool
        Not a member: the search first checks whether a round whose candidates all look
        below the threshold holds no anchor (and then ranks them without the bandit). It
        pays where the samples of one arm count for few others; where one sample counts for
        every candidate it satisfies (independent word masking), the bandit's shared samples
        rank them for less.
    """

    pulls_each: bool = False
    own_estimator: bool = False
    extreme_bounds: bool = False
    parent_draws: bool = False
    finite_supply: bool = False
    hopeless_rounds: bool = False

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, bool):
                raise TypeError(f"ArmsCapabilities.{field.name} must be a bool, got {value!r}.")
        if self.extreme_bounds and not self.own_estimator:
            raise ValueError("ArmsCapabilities: extreme_bounds=True needs own_estimator=True.")


# The members each capability needs (checked by check_arms).
_MEMBERS = {
    "pulls_each": ("pull_each",),
    "own_estimator": ("precision_estimates", "precision_bounds"),
    "extreme_bounds": ("extreme_bound",),
    "parent_draws": ("parent_can_settle", "pull_parents"),
}


def _missing(name):
    def member(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__}.{name} is not implemented: the bandit calls it only for "
            "arms whose capabilities declare it (see ArmsCapabilities)."
        )

    member.__name__ = name
    return member


class Arms(ABC):
    """A set of arms for the bandits (:class:`~skanchors.KLLUCB`, :class:`~skanchors.BatchSAR`).

    Subclasses keep ``n_samples`` and ``n_positives`` (float arrays, one entry per arm,
    updated in place), implement :meth:`pull`, and declare their optional members in
    ``capabilities`` (:class:`ArmsCapabilities`); the bandits call no other member, and refuse
    arms that declare a member they do not implement (:func:`check_arms`). The
    anchor search hands a bandit of the user's own (``bandit=``) such arms, with
    ``coverage`` set.
    """

    #: The optional abilities of the arms (none by default).
    capabilities = ArmsCapabilities()
    #: The rules' coverage (set by the search), or None.
    coverage = None
    #: Samples each arm can ever have (with ``capabilities.finite_supply``), or None.
    n_available = None

    @abstractmethod
    def pull(self, indices, n):
        """Draw ``n`` samples for each arm of ``indices`` (one model call)."""

    pull_each = _missing("pull_each")
    precision_estimates = _missing("precision_estimates")
    precision_bounds = _missing("precision_bounds")
    extreme_bound = _missing("extreme_bound")
    parent_can_settle = _missing("parent_can_settle")
    pull_parents = _missing("pull_parents")


def check_arms(arms):
    """Refuse ``arms`` that are not :class:`Arms`, or whose capabilities declare members they
    do not implement (a :class:`TypeError`, before the bandit would call one)."""
    if not isinstance(arms, Arms):
        raise TypeError(
            f"arms must be a skanchors.Arms (subclass it; the bandit reads its capabilities), "
            f"got {type(arms).__name__}."
        )
    caps = arms.capabilities
    for field, members in _MEMBERS.items():
        if getattr(caps, field):
            missing = [m for m in members if getattr(type(arms), m) is getattr(Arms, m)]
            if missing:
                raise TypeError(
                    f"{type(arms).__name__} declares {field}=True in its capabilities but "
                    f"does not implement {', '.join(missing)}."
                )
    return arms
