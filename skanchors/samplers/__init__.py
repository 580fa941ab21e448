"""Perturbation distributions ``D(z | A)``: one module per modality.

A sampler is fitted on reference data (``fit``), validates and splits the inputs to explain
(``split``), and builds a per-instance sampler (``instance``) that the search uses; see
:mod:`skanchors._search` for the small protocol a custom sampler implements.
"""

from .tabular import TabularInstance, TabularSampler

__all__ = ["TabularInstance", "TabularSampler"]
from .image import ImageInstance, ImageSampler  # noqa: E402
from .masked_lm import MaskedLMInstance, MaskedLMSampler  # noqa: E402
from .text import (  # noqa: E402
    CorpusInstance,
    CorpusSampler,
    TextInstance,
    UnkInstance,
    UnkSampler,
    tokenize,
)

__all__ += [
    "CorpusInstance",
    "CorpusSampler",
    "ImageInstance",
    "ImageSampler",
    "MaskedLMInstance",
    "MaskedLMSampler",
    "TextInstance",
    "UnkInstance",
    "UnkSampler",
    "tokenize",
]
