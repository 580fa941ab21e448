"""Constructor parameters that moved elsewhere: still accepted for one release, with a warning.

An estimator's ``__init__`` takes them through ``**moved`` (outside its signature, so that
``get_params`` lists only the current parameters), warns with a :class:`FutureWarning` that
says where the option went, and puts the value there: on a parameter object (the sampler, the
adaptive threshold, the vocabulary), which ``clone`` then copies like any parameter, or on a
setting that :meth:`__sklearn_clone__` carries over (``_carried``). ``set_params`` (and so a
grid search) with an old name is refused with a ValueError that gives its new spelling
(:func:`refuse_moved_params`).
"""

from __future__ import annotations

import inspect
import warnings

from ._stacklevel import outside_stacklevel

__all__ = [
    "MOVED_PARAMS",
    "carry",
    "hide_moved",
    "move_to_sampler",
    "refuse_moved_params",
    "refuse_unknown",
    "warn_moved",
]

# the release that deprecated the old spellings, and the one that will refuse them
DEPRECATED_IN = "0.2"
REMOVED_IN = "0.3"

_SAMPLER = "sampler__{0} (with sampler=TabularSampler(...), or sampler=TabularSampler({0}=...))"
_SCORER = "GridSearchCV(..., scoring=anchor_scorer({0}=...))"

# The old keywords of the local explainers, as set_params spells them now (the global
# aggregators' are in skanchors.aggregation._moved).
MOVED_PARAMS = {
    "AnchorExplainer": {
        **{k: _SAMPLER.format(k) for k in ("discretizer", "categorical_features", "bounds")},
        "perturbation": _SAMPLER.format("perturbation"),
        "score_rows": _SCORER.format("rows"),
        "score_threshold": _SCORER.format("threshold"),
        "score_tolerance": _SCORER.format("tolerance"),
        "cache_size": "skanchors.set_config(cache_size=...)",
    },
    "LimeExplainer": {k: _SAMPLER.format(k) for k in ("discretizer", "categorical_features")},
}


def hide_moved(init):
    """Decorate an ``__init__`` whose ``**moved`` takes the old keywords: its signature (what
    ``help``, ``get_params`` and scikit-learn's checks read) lists the current parameters only."""
    signature = inspect.signature(init)
    init.__signature__ = signature.replace(
        parameters=[
            p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
    )
    return init


def warn_moved(owner, names, new_spelling):
    """Warn that ``owner(<names>=...)`` is deprecated in favour of ``new_spelling``."""
    old = ", ".join(f"{name}=..." for name in names)
    warnings.warn(
        f"{owner}({old}) is deprecated since skanchors {DEPRECATED_IN} and will be refused in "
        f"{REMOVED_IN}: use {new_spelling}.",
        FutureWarning,
        stacklevel=outside_stacklevel(),
    )


def move_to_sampler(owner, explainer, options, sampler_class):
    """Put the old sampler keywords ``options`` of ``owner(...)`` on a new ``sampler_class``
    (with a warning); refused beside a ``sampler=`` of the user's, which holds its own."""
    spelled = ", ".join(f"{k}={v!r}" for k, v in options.items())
    if explainer.sampler is not None:
        raise ValueError(
            f"{', '.join(options)} configure the tabular sampler; with sampler= given, set "
            f"them on it: sampler={type(explainer.sampler).__name__}({spelled})."
        )
    new = f"{owner}(..., sampler={sampler_class.__name__}({spelled}))"
    warn_moved(owner, options, new)
    explainer.sampler = sampler_class(**options)


def refuse_unknown(owner, moved, known):
    """The TypeError Python gives for an unknown keyword argument, for those not in ``known``."""
    unknown = sorted(set(moved) - set(known))
    if unknown:
        raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}")


def refuse_moved_params(estimator, params, table):
    """A ValueError for the first name of ``params`` that is an old keyword of ``estimator``
    (``table``: class name -> {old name: new spelling}, read along the class's MRO):
    scikit-learn's own error lists the parameters but would not say where the option went."""
    moved = next((table[c.__name__] for c in type(estimator).__mro__ if c.__name__ in table), {})
    old = sorted(set(params) & set(moved))
    if old:
        owner = type(estimator).__name__
        raise ValueError(
            f"{owner}.set_params({old[0]}=...): {old[0]} is no longer a parameter of {owner} "
            f"since skanchors 0.2; use {moved[old[0]]}."
        )


def carry(source, target, names):
    """Copy the private settings ``names`` that old keywords set from ``source`` to
    ``target`` (a clone), so that a clone behaves as the original."""
    for name in names:
        if name in vars(source):
            setattr(target, name, getattr(source, name))
    return target
