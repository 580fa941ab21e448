"""Where skanchors' warnings point: at the user's line, not at skanchors' or scikit-learn's.

A module of its own, importing nothing of skanchors, so that every module that warns (the
discretizers as well as the explainers) can import it without an import cycle.
"""

from __future__ import annotations

import os
import sys

__all__ = ["outside_stacklevel"]


def outside_stacklevel():
    """The ``stacklevel`` for a warning its caller raises: the first frame outside skanchors
    and scikit-learn (whose wrappers, Pipelines and searches may stand between), i.e. the
    user's line that called ``explain``, ``transform``, ``fit``, or a Pipeline's method."""
    import sklearn

    inside = tuple(
        os.path.dirname(os.path.abspath(module.__file__)) + os.sep
        for module in (sys.modules[__package__], sklearn)
    )
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
