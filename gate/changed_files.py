"""The files a run compares, each side with the dbt project it belongs to.

git lists the contract files that changed between the two sides; the dbt
properties files the changes implicate join them (``gate.dbt.changes``). A
pure move (same blob, same dbt context on both sides) cannot change any
dataset and is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.dbt import changes as dbt_changes
from gate.dbt.changes import Entry
from gate.limits import DEFAULT_LIMITS
from gate.side import Side


def compared_files(
    base: Side,
    head: Side,
    globs: Sequence[str],
    warnings: list[str],
    model_file_bytes: int = DEFAULT_LIMITS.model_file_bytes,
) -> list[Entry]:
    """The changed files to compare; a ``dbt_project.yml`` unreadable at the base
    (the head's describes both sides then) adds to ``warnings``. ``model_file_bytes``:
    the base side's bound on a dbt model file read for its ``config()``."""
    if base.commit is None:
        raise ValueError("the base side of a comparison is a commit, never the working tree")
    globbed = head.repo.changed(base.commit, head.commit, globs)
    entries = dbt_changes.collect(
        base.projects, head.projects, globs, globbed, warnings, model_file_bytes
    )
    return [e for e in entries if not dbt_changes.is_pure_move(e)]
