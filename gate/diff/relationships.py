"""Relationships (foreign keys) of a dataset pair: one rule family for every format.

ODCS ``relationships``, DCS ``references`` and dbt ``foreign_key`` constraints
all parse into ``Relationship(columns, to)``. A relationship is identified by
the columns it starts from: the same columns pointing elsewhere is
``relationship_changed`` (consumers' joins now mean something else), columns
that lost their relationship is ``relationship_removed`` (consumers join on
it), and a new one is ``relationship_added``.
"""

from __future__ import annotations

from gate import rules
from gate.diff.emitter import DatasetPair
from gate.diff.pairing import pair_relationships


def relationships(pair: DatasetPair) -> None:
    """One finding per relationship that was removed, retargeted or added."""
    for rel, moved in pair_relationships(pair.old.relationships, pair.new.relationships):
        if rel is None:
            assert moved is not None
            pair.emit(
                rules.RELATIONSHIP_ADDED,
                f"column '{', '.join(moved.columns)}' now references {moved.to}",
                column=", ".join(moved.columns),
                line=moved.line,
                after=moved.to,
            )
            continue
        name = ", ".join(rel.columns)
        if moved is None:
            pair.emit(
                rules.RELATIONSHIP_REMOVED,
                f"column '{name}' no longer references {rel.to}; consumers join on it",
                column=name,
                before=rel.to,
            )
        elif moved.to != rel.to:
            pair.emit(
                rules.RELATIONSHIP_CHANGED,
                f"column '{name}' now references {moved.to} instead of {rel.to}",
                column=name,
                line=moved.line,
                after=moved.to,
                before=rel.to,
            )
