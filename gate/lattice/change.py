"""The answer of a comparison: ``TypeChange`` and ``TypeComparison``, and which change is worse.

Split from the lattice so the vocabulary every part shares (the leaves classify
into it, the comparison combines it) has no dependency of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class TypeChange(str, Enum):
    SAME = "same"
    WIDENED = "widened"
    NARROWED = "narrowed"
    CHANGED = "changed"


#: Worst last: combining the parts of a nested type keeps the worst part.
_SEVERITY = {
    TypeChange.SAME: 0,
    TypeChange.WIDENED: 1,
    TypeChange.NARROWED: 2,
    TypeChange.CHANGED: 3,
}


@dataclass(frozen=True)
class TypeComparison:
    """How ``new`` relates to ``old``; ``reason`` is one phrase for reports."""

    change: TypeChange
    reason: str
    removed_fields: tuple[str, ...] = ()
    added_fields: tuple[str, ...] = ()
