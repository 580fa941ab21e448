"""Perturbation distributions ``D(z | A)``: one module per modality.

A sampler is fitted on reference data (``fit``), validates and splits the inputs to explain
(``split``), and builds a per-instance sampler (``instance``) that the search uses. A custom
sampler subclasses :class:`Sampler`, and its instances :class:`InstanceSampler`, declaring
their optional abilities in :class:`Capabilities` (see :mod:`skanchors.samplers._protocol`).
"""

from ._protocol import Capabilities, InstanceSampler, Sampler, SamplerCapabilities
from .tabular import TabularInstance, TabularSampler

__all__ = [
    "Capabilities",
    "InstanceSampler",
    "Sampler",
    "SamplerCapabilities",
    "TabularInstance",
    "TabularSampler",
]
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
