"""skanchors: anchors (high-precision IF-THEN rules) that explain any classifier.

``import skanchors`` is light: torch, transformers and matplotlib are imported only by the
features that need them.
"""

from . import _speed  # noqa: F401 (the speed layer plugs into skanchors.models)
from ._arms import Arms, ArmsCapabilities
from ._bandit import KLLUCB, BatchSAR
from ._config import config_context, get_config, set_config
from ._explanation import Anchor, Predicate, RuleCheck
from ._image_explanation import ImageAnchor, ImageLimeExplanation
from ._pick import SubmodularPick, pick
from ._reliance import make_reliance_scorer
from ._scoring import anchor_scorer
from .aggregation import GlobalAnchorAggregator, GlobalLimeAggregator
from .compare import ModelComparison, compare_models
from .explainer import AnchorExplainer, NoAnchorWarning
from .hf import HFTextClassifier
from .hf_image import HFImageClassifier
from .lime import LimeExplainer, LimeExplanation

__version__ = "0.2.0"

__all__ = [
    "Anchor",
    "AnchorExplainer",
    "Arms",
    "ArmsCapabilities",
    "BatchSAR",
    "GlobalAnchorAggregator",
    "GlobalLimeAggregator",
    "HFImageClassifier",
    "HFTextClassifier",
    "ImageAnchor",
    "ImageLimeExplanation",
    "KLLUCB",
    "LimeExplainer",
    "LimeExplanation",
    "ModelComparison",
    "NoAnchorWarning",
    "Predicate",
    "RuleCheck",
    "SubmodularPick",
    "__version__",
    "anchor_scorer",
    "config_context",
    "get_config",
    "compare_models",
    "make_reliance_scorer",
    "pick",
    "set_config",
]
