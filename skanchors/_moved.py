"""Constructor parameters that moved elsewhere: still accepted for one release, with a warning.

An estimator's ``__init__`` takes them through ``**moved`` (outside its signature, so that
``get_params`` lists only the current parameters), warns with a :class:`FutureWarning` that
says where the option went, and puts the value there: on a parameter object (the sampler, the
adaptive threshold, the vocabulary), which ``clone`` then copies like any parameter, or on a
setting that :meth:`__sklearn_clone__` carries over (``_carried``).
"""

from __future__ import annotations

import inspect
import warnings

from ._stacklevel import outside_stacklevel

__all__ = ["carry", "hide_moved", "refuse_unknown", "warn_moved"]

# the release that will no longer accept the old spellings
REMOVED_IN = "0.3"


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
        f"{owner}({old}) is deprecated since skanchors 0.2 and will be refused in "
        f"{REMOVED_IN}: use {new_spelling}.",
        FutureWarning,
        stacklevel=outside_stacklevel(),
    )


def refuse_unknown(owner, moved, known):
    """The TypeError Python gives for an unknown keyword argument, for those not in ``known``."""
    unknown = sorted(set(moved) - set(known))
    if unknown:
        raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}")


def carry(source, target, names):
    """Copy the private settings ``names`` that old keywords set from ``source`` to
    ``target`` (a clone), so that a clone behaves as the original."""
    for name in names:
        if name in vars(source):
            setattr(target, name, getattr(source, name))
    return target
