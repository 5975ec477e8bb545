"""Relationships (foreign keys) of a dataset pair: one rule family for every format.

ODCS ``relationships``, DCS ``references`` and dbt ``foreign_key`` constraints
all parse into ``Relationship(columns, to)``. A relationship is identified by
the columns it starts from: the same columns pointing elsewhere is
``relationship_changed`` (consumers' joins now mean something else), columns
that lost their relationship is ``relationship_removed`` (consumers join on
it), and a new one is ``relationship_added``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate.model import Relationship


def emit_all(
    emit: Callable[..., None], old: Sequence[Relationship], new: Sequence[Relationship]
) -> None:
    """Emit one finding per relationship that was removed, retargeted or added."""
    before = {r.columns: r for r in old}
    after = {r.columns: r for r in new}
    for columns, rel in before.items():
        name = ", ".join(columns)
        moved = after.get(columns)
        if moved is None:
            emit(
                "relationship_removed",
                f"column '{name}' no longer references {rel.to}; consumers join on it",
                column=name,
                before=rel.to,
            )
        elif moved.to != rel.to:
            emit(
                "relationship_changed",
                f"column '{name}' now references {moved.to} instead of {rel.to}",
                column=name,
                line=moved.line,
                before=rel.to,
                after=moved.to,
            )
    for columns, rel in after.items():
        if columns not in before:
            name = ", ".join(columns)
            emit(
                "relationship_added",
                f"column '{name}' now references {rel.to}",
                column=name,
                line=rel.line,
                after=rel.to,
            )
