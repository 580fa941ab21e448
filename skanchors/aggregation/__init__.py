"""Global explanations: aggregate one-word anchors over a document collection.

:class:`GlobalAnchorAggregator` finds the top-k words of each class of a text classifier (Mor,
Belinkov and Kimelfeld, AAAI 2024); :mod:`~skanchors.aggregation.functions` holds the
aggregation functions (``G_sq``, ``G_av``, ``G_h``, ``G_pr``, ``G_base``) as pure functions of
the anchor counts. :class:`GlobalLimeAggregator` aggregates LIME weights instead, with the
global aggregations of van der Linden et al. 2019
(:mod:`~skanchors.aggregation.lime_functions`), scored by the same AOPC^k.
"""

from ._options import AdaptiveThreshold, WordFilter, aopc_scorer
from .aggregator import GlobalAnchorAggregator
from .functions import (
    AGGREGATIONS,
    aggregate,
    g_av,
    g_base,
    g_h,
    g_pr,
    g_sq,
    inverse_pr,
    pr_estimates,
)
from .lime_aggregator import GlobalLimeAggregator
from .lime_functions import (
    LIME_AGGREGATIONS,
    aggregate_lime,
    lime_average,
    lime_homogeneity,
    lime_sqrt,
    lime_weight_sums,
)

__all__ = [
    "AGGREGATIONS",
    "AdaptiveThreshold",
    "WordFilter",
    "aopc_scorer",
    "GlobalAnchorAggregator",
    "GlobalLimeAggregator",
    "LIME_AGGREGATIONS",
    "aggregate_lime",
    "lime_average",
    "lime_homogeneity",
    "lime_sqrt",
    "lime_weight_sums",
    "aggregate",
    "g_av",
    "g_base",
    "g_h",
    "g_pr",
    "g_sq",
    "inverse_pr",
    "pr_estimates",
]
