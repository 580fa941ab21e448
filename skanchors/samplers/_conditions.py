"""A tabular predicate as the sampler computes with it, and its one public form.

An anchor's predicate has one meaning and two spellings. The public
:class:`~skanchors.Predicate` (``Age <= 28.0``) names the column and the value; the sampler
works in the reference data's codes, where a :class:`Condition` names the column by position, the
kind of test and a category code or bin number. Rows of the same bins have equal conditions,
which is what lets their searches share reference pools, masks and sample streams.
:func:`predicate_of` is the only place a condition becomes a :class:`~skanchors.Predicate`.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import pandas as pd

from .._explanation import Predicate

__all__ = ["Condition", "Kind", "predicate_of"]


class Kind(IntEnum):
    """The test a :class:`Condition` makes."""

    CODE = 0  # a categorical feature equals the category of code ``level`` (NaN has one)
    MISSING = 1  # a numeric feature is missing
    AT_MOST = 2  # a numeric feature lies at or below edge ``level`` (its bin <= level)
    ABOVE = 3  # a numeric feature lies above edge ``level - 1`` (its bin >= level)
    IN_BIN = 4  # a numeric feature lies in bin ``level``: edge[level - 1] < x <= edge[level]


class Condition(NamedTuple):
    """A predicate in the reference data's codes: ``feature`` (column position), ``kind``
    (:class:`Kind`) and ``level`` (a category code or a bin number; -1 for ``MISSING``)."""

    feature: int
    kind: Kind
    level: int

    def plain(self):
        """The three numbers, for stable hashing (independent of the enum's spelling)."""
        return int(self.feature), int(self.kind), int(self.level)


def predicate_of(condition, name, edges=None, value=None):
    """The public :class:`~skanchors.Predicate` of ``condition`` on column ``name``.

    ``edges`` are the bin edges of a numeric feature (bin ``b`` is ``edges[b - 1] < x <=
    edges[b]``); ``value`` is the explained row's category (``Kind.CODE``).
    """
    j, kind, level = condition
    if kind == Kind.CODE:
        return Predicate(name, "==", value, j)
    if kind == Kind.MISSING:
        return Predicate(name, "isna", None, j)
    if kind == Kind.AT_MOST:
        return Predicate(name, "<=", float(edges[level]), j)
    if kind == Kind.ABOVE:
        return Predicate(name, ">", float(edges[level - 1]), j)
    interval = pd.Interval(float(edges[level - 1]), float(edges[level]), closed="right")
    return Predicate(name, "in", interval, j)
