"""The compiled kernels of the tabular sampler, asked for by name (:mod:`skanchors._compiled`).

Stream blocks (``make_blocks``), stream windows drawn without their blocks (``make_windows``)
and rule coverage from packed masks (``coverage_counts``), each the same to the last bit as the
numpy code of :class:`~skanchors.samplers._tabular_instance.TabularInstance` that runs where
they are not in use (numba missing, ``SKANCHORS_NUMBA=0``, switched off). The kernels
themselves are the speed layer's (:mod:`skanchors._speed.kernels.blocks`); loading one
compiles the three.
"""

from __future__ import annotations

from .. import _compiled

__all__ = ["block_kernel", "coverage_kernel", "window_kernel"]


def block_kernel():
    """The compiled ``make_blocks``, or None (the numpy code runs)."""
    return _compiled.kernel("make_blocks")


def coverage_kernel():
    """The compiled ``coverage_counts``, or None (the numpy code runs)."""
    return _compiled.kernel("coverage_counts")


def window_kernel():
    """The compiled ``make_windows``, or None (the numpy code runs)."""
    return _compiled.kernel("make_windows")
