"""Settings of skanchors as a whole: what changes costs, never results.

:func:`set_config`, :func:`get_config` and :func:`config_context` work as scikit-learn's
functions of the same names, for the whole process.
"""

from __future__ import annotations

from contextlib import contextmanager
from numbers import Integral

__all__ = ["config_context", "get_config", "set_config"]

_DEFAULTS = {"cache_size": 250_000}
_CONFIG = dict(_DEFAULTS)


def get_config():
    """The current settings, as a dict (a copy: change them with :func:`set_config`).

    Returns
    -------
    config : dict
        ``cache_size``: see :func:`set_config`.
    """
    return dict(_CONFIG)


def set_config(cache_size=None):
    """Change skanchors' settings (for the whole process).

    Parameters
    ----------
    cache_size : int >= 0 or None, default=None
        How many of the model's predictions on perturbations an :class:`~skanchors.AnchorExplainer`
        keeps (default 250,000). Perturbations are drawn from *streams*: the ``i``-th sample for a
        rule depends only on the rule's predicates (``Age <= 37``, the same for every row in that
        bin), ``i`` and ``random_state``, so the searches of different rows read the same samples; a
        fitted explainer keeps the model's predictions on up to ``cache_size`` of them, and later
        searches, in the same or later calls, reuse them without a model call. It also keeps what
        its searches found (up to 10,000 of them) and gives a row whose predicates are another's in
        the reference data's terms (the same bins and categories), anchoring the same class, the
        earlier anchor without searching again; a document explained again gets its first search's
        anchor. This only changes costs: the anchors are the same for any ``cache_size`` (0 keeps
        nothing). The cache is part of the optional speed layer (``skanchors._speed``, loaded by
        ``import skanchors``; switched off inside ``skanchors._speed.disabled()``, where nothing is
        kept either). Each kept prediction takes about 250 bytes with its perturbation (Adult's 14
        columns: the default then holds up to about 60 MB). An explainer reads the setting when it
        fits and when it explains (a changed setting starts a new, empty cache); the cache is not
        pickled, and a model refitted in place starts a new one. ``None`` leaves the setting
        unchanged.

    Examples
    --------
    >>> import skanchors
    >>> with skanchors.config_context(cache_size=0):
    ...     skanchors.get_config()["cache_size"]
    0
    >>> skanchors.get_config()["cache_size"]
    250000
    """
    if cache_size is not None:
        _CONFIG["cache_size"] = check_cache_size(cache_size, "cache_size")


@contextmanager
def config_context(**settings):
    """Change skanchors' settings (:func:`set_config`) within a ``with`` block only."""
    unknown = sorted(set(settings) - set(_DEFAULTS))
    if unknown:
        raise TypeError(
            f"config_context() got unknown setting(s) {unknown}; the settings are "
            f"{sorted(_DEFAULTS)}."
        )
    old = get_config()
    set_config(**settings)
    try:
        yield
    finally:
        set_config(**old)


def check_cache_size(value, name):
    """``value`` as a cache size, or a ValueError naming ``name``."""
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}.")
    return int(value)
