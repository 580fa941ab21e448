"""Global explanations: aggregate one-word anchors over a document collection.

:class:`GlobalAnchorAggregator` finds the top-k words of each class of a text classifier (Mor,
Belinkov and Kimelfeld, AAAI 2024); :mod:`~skanchors.aggregation.functions` holds the
aggregation functions (``G_sq``, ``G_av``, ``G_h``, ``G_pr``, ``G_base``) as pure functions of
the anchor counts.
"""

from .aggregator import GlobalAnchorAggregator
from .functions import AGGREGATIONS, aggregate, g_av, g_base, g_h, g_pr, g_sq, inverse_pr

__all__ = [
    "AGGREGATIONS",
    "GlobalAnchorAggregator",
    "aggregate",
    "g_av",
    "g_base",
    "g_h",
    "g_pr",
    "g_sq",
    "inverse_pr",
]
