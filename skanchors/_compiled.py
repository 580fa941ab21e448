"""The named interface between the core and its optional compiled kernels.

A few of the core's loops (the stratified arms' counts and bounds, the prediction cache's
table, the tabular sampler's stream blocks, a forest's traversal) have compiled twins: numba
functions that compute the same numbers to the last bit, faster. They live in one optional
layer, :mod:`skanchors._speed.kernels`, which registers each under a name
(:func:`register`); the core asks for one by name (:func:`kernel`) and runs its own numpy
code when the answer is None. The core never imports the layer or numba.

:func:`kernel` answers None, and the numpy code runs, when

- the environment variable ``SKANCHORS_NUMBA`` is ``0`` (read at every request),
- compiled kernels are switched off (:func:`switched_off`, which
  ``skanchors._speed.disabled()`` uses),
- numba cannot be imported (the ``fast`` extra is not installed), or
- no kernel is registered under the name (the speed layer is not loaded).

Any other failure is loud: a kernel that does not load or compile raises
:class:`CompiledKernelError`, which names the kernel and how to do without compiled kernels.
A kernel is loaded once, at its first request (numba compiles it then, or reads the machine
code it cached on disk), and kept for the process.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

__all__ = [
    "CompiledKernelError",
    "available",
    "kernel",
    "register",
    "registered",
    "switched_off",
]

ENVIRONMENT_VARIABLE = "SKANCHORS_NUMBA"


class CompiledKernelError(RuntimeError):
    """A compiled kernel failed to load or compile (numba is installed but the kernel does
    not work with it): the error names the kernel and how to switch compiled kernels off."""


_LOADERS = {}  # name -> (load, twin)
_LOADED = {}  # name -> the loaded kernel
_LOCK = threading.Lock()
_OFF = 0  # depth of switched_off() blocks
_NUMBA = None  # whether numba imports (decided at the first request)


def register(name, load, twin):
    """Register ``load`` as the loader of the compiled kernel ``name``.

    Parameters
    ----------
    name : str
        The name the core asks for.
    load : callable
        ``load()`` imports numba and the kernel, compiles it (a first call on a small
        input) and returns it.
    twin : str
        The core's numpy code that computes the same (for error messages and the tests,
        which compare the two).
    """
    if not callable(load):
        raise ValueError(f"load must be callable, got {load!r}.")
    with _LOCK:
        _LOADERS[name] = (load, twin)
        _LOADED.pop(name, None)


def registered():
    """``{name: twin}`` of every registered kernel."""
    return {name: twin for name, (_, twin) in _LOADERS.items()}


def available():
    """Whether :func:`kernel` gives compiled kernels now: numba imports, ``SKANCHORS_NUMBA``
    is not ``0`` and they are not switched off."""
    global _NUMBA
    if _OFF or os.environ.get(ENVIRONMENT_VARIABLE, "1").strip() == "0":
        return False
    if _NUMBA is None:
        try:
            import numba  # noqa: F401
        except ImportError:  # not installed, or not for this numpy: the numpy code
            _NUMBA = False
        except Exception as exc:
            raise CompiledKernelError(
                f"numba failed to import ({type(exc).__name__}: {exc}). Set the environment "
                f"variable {ENVIRONMENT_VARIABLE}=0 to run the numpy code instead."
            ) from exc
        else:
            _NUMBA = True
    return _NUMBA


def kernel(name):
    """The compiled kernel registered as ``name``, loaded at the first request; None where
    compiled kernels are not in use (see the module's notes), and the caller's numpy code
    runs.

    Raises
    ------
    CompiledKernelError
        When the kernel fails to load or compile.
    """
    if not available():
        return None
    found = _LOADED.get(name)
    if found is not None:
        return found
    entry = _LOADERS.get(name)
    if entry is None:
        return None
    load, twin = entry
    with _LOCK:
        found = _LOADED.get(name)
        if found is None:
            try:
                found = load()
            except Exception as exc:
                raise CompiledKernelError(
                    f"The compiled kernel {name!r} (the twin of {twin}) failed to load: "
                    f"{type(exc).__name__}: {exc}. Set the environment variable "
                    f"{ENVIRONMENT_VARIABLE}=0 to run the numpy code instead (the same "
                    "results, slower), or reinstall numba (the 'fast' extra)."
                ) from exc
            _LOADED[name] = found
    return found


@contextmanager
def switched_off():
    """Within this block :func:`kernel` answers None: the numpy code runs (the same results).
    The switch is read when a kernel is requested, for the whole process; objects that got a
    kernel before keep it."""
    global _OFF
    with _LOCK:
        _OFF += 1
    try:
        yield
    finally:
        with _LOCK:
            _OFF -= 1
