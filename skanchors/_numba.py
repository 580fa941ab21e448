"""Optional compiled kernels (the ``fast`` extra, numba): loaded at first use, never by
``import skanchors``.

Every kernel has a numpy twin that gives the same result to the last bit; the kernels only
change speed. Setting the environment variable ``SKANCHORS_NUMBA=0`` keeps to the numpy code.
"""

from __future__ import annotations

import os


def compiled(load):
    """``load()``, which imports and checks compiled kernels, or None when numba is missing,
    disabled (``SKANCHORS_NUMBA=0``) or fails its check."""
    if os.environ.get("SKANCHORS_NUMBA", "1").strip() == "0":
        return None
    try:
        return load()
    except Exception:  # noqa: BLE001 (numba missing, or too old for this numpy)
        return None
