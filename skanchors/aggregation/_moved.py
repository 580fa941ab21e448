"""Keywords that moved out of the global aggregators' constructors, put where they went
(see :mod:`skanchors._moved`): accepted with a FutureWarning until skanchors 0.3."""

from __future__ import annotations

from .._moved import refuse_unknown, warn_moved
from ._options import AdaptiveThreshold, AopcScorer, WordFilter

__all__ = ["MOVED_PARAMS", "take_moved"]


_SCHEDULE = {"adaptive_threshold": "mode", "omega": "omega", "min_threshold": "minimum"}
_WORDS = {
    "stop_words": "stop_words",
    "min_count": "min_count",
    "lowercase": "lowercase",
    "candidate_filtering": "filtering",
}
_LIME_WORDS = ("stop_words", "min_count", "lowercase")

_AOPC = "GridSearchCV(..., scoring=aopc_scorer(removal=...))"


def _word(old):
    return f"vocabulary__{_WORDS[old]} (with vocabulary=WordFilter(...))"


# The old keywords, as set_params spells them now.
MOVED_PARAMS = {
    "GlobalAnchorAggregator": {
        **{
            k: f"threshold__{v} (with threshold=AdaptiveThreshold(...))"
            for k, v in _SCHEDULE.items()
        },
        **{k: _word(k) for k in _WORDS},
        "removal": _AOPC,
        "shared_pool": "nothing (one perturbation pool per document is the only setting)",
    },
    "GlobalLimeAggregator": {**{k: _word(k) for k in _LIME_WORDS}, "removal": _AOPC},
}


def take_moved(aggregator, moved):
    """The keywords that moved out of a global aggregator's constructor, put where they
    went; the LIME aggregator has only the word filter's (but filtering) and ``removal``."""
    owner = type(aggregator).__name__
    anchors = owner == "GlobalAnchorAggregator"
    known = (*_SCHEDULE, *_WORDS, "shared_pool") if anchors else (*_LIME_WORDS,)
    refuse_unknown(owner, moved, (*known, "removal"))
    schedule = {_SCHEDULE[k]: moved[k] for k in _SCHEDULE if k in moved}
    if schedule:
        if isinstance(aggregator.threshold, AdaptiveThreshold):
            raise ValueError(
                f"{', '.join(k for k in _SCHEDULE if k in moved)} configure the adaptive "
                "threshold; with threshold=AdaptiveThreshold(...) given, set them on it."
            )
        mode = schedule.pop("mode", True)
        if isinstance(mode, str):
            schedule["mode"] = mode
        elif not mode:  # the threshold does not move
            schedule["omega"] = 0.0
        new = AdaptiveThreshold(aggregator.threshold, **schedule)
        warn_moved(owner, [k for k in _SCHEDULE if k in moved], f"threshold={new!r}")
        aggregator.threshold = new
    words = {_WORDS[k]: moved[k] for k in _WORDS if k in moved}
    if words:
        if aggregator.vocabulary is not None:
            raise ValueError(
                f"{', '.join(k for k in _WORDS if k in moved)} configure the vocabulary; with "
                "vocabulary=WordFilter(...) given, set them on it."
            )
        new = WordFilter(**words)
        warn_moved(owner, [k for k in _WORDS if k in moved], f"vocabulary={new!r}")
        aggregator.vocabulary = new
    if "removal" in moved:
        scorer = AopcScorer(moved["removal"])
        warn_moved(owner, ["removal"], f"GridSearchCV(..., scoring={scorer!r})")
        aggregator._scorer = scorer
    if "shared_pool" in moved:
        warn_moved(
            owner,
            ["shared_pool"],
            "the default (one perturbation pool per document; the naive per-token test is an "
            "internal of the benchmarks)",
        )
        aggregator._shared_pool = bool(moved["shared_pool"])
