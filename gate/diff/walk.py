"""The walk: pair base and HEAD datasets, then columns and nested fields, and hand
each pair to the family handlers, in one fixed order.

Every family has one shape: module functions that receive the pair (a
``DatasetPair``, and a column pair where the rule is about a column) and emit
catalogue ``Rule``s through it (gate/diff/emitter.py). The walkers are written
once (gate/diff/pairing.py); the handlers never pair anything themselves, as in
buf's breaking checker and oasdiff's one-family-per-file checks.
The diff never does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from gate.diff import (
    access,
    checks,
    column_types,
    columns,
    constraints,
    conversion,
    datasets,
    regex_lang,
)
from gate.diff.emitter import DatasetPair, Emitter, SeverityFn, default_severity
from gate.diff.pairing import pair_columns, pair_datasets, removed_anchors
from gate.diff.relationships import relationships
from gate.diff.versions import versions
from gate.model import Change, Column, Dataset


def walk_columns(
    pair: DatasetPair,
    old_columns: Sequence[Column],
    new_columns: Sequence[Column],
    prefix: str,
    parent_line: int | None,
) -> None:
    """Columns of one dataset pair (or nested fields of one column pair), recursively."""
    pairs, removed, added = pair_columns(old_columns, new_columns, pair.dialect)
    survivors = {id(old): new for old, new in pairs}
    anchors = removed_anchors(old_columns, survivors, parent_line)
    for old in removed:
        columns.removed(pair, old, prefix + old.name, anchors.get(id(old), parent_line))
    for new in added:
        columns.added(pair, new, prefix + new.name)
        column_types.unknown_types(pair.out, pair.new, [new], prefix, pair.dialect)
    for old, new in pairs:
        _column_pair(pair, old, new, prefix)


def _column_pair(pair: DatasetPair, old: Column, new: Column, prefix: str) -> None:
    # Lines are not part of equality: an unchanged column says nothing, unless its
    # two sides are read in different dialects (the same ``int8`` moved from a
    # Postgres project into a Databricks one is a BIGINT become a TINYINT).
    if old == new and pair.old_dialect is None:
        return
    name = prefix + new.name
    columns.renamed(pair, old, new, name, prefix)
    column_types.column_type(pair, old, new, name)
    column_types.physical_types(pair, old, new, name)
    columns.required(pair, old, new, name)
    constraints.enum_values(pair, old, new, name)
    columns.unique(pair, old, new, name)
    constraints.constraints(pair, old, new, name)
    checks.checks(
        pair,
        old.checks,
        new.checks,
        name,
        anchor=new.line,
        values_changed=(old.enum, old.constraints) != (new.enum, new.constraints),
    )
    if old.fields or new.fields:
        walk_columns(pair, old.fields, new.fields, prefix=f"{name}.", parent_line=new.line)


def _dataset_pair(pair: DatasetPair) -> None:
    """Every rule over one pair of guarded datasets (same identity, or a rename)."""
    start = len(pair.out.changes)
    datasets.renamed(pair)
    datasets.relation_moved(pair)
    access.narrowed(pair)
    walk_columns(pair, pair.old.columns, pair.new.columns, prefix="", parent_line=pair.new.line)
    checks.checks(pair, pair.old.checks, pair.new.checks, column=None)
    columns.primary_key(pair)
    relationships(pair)
    versions(pair, start)


def diff_datasets(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    *,
    dialect: str = "spark",
    severity_of: SeverityFn = default_severity,
    renamed_paths: dict[str, str] | None = None,
    now: datetime | None = None,
    dialect_of: Callable[[str], str | None] | None = None,
) -> list[Change]:
    """Every change between the base and HEAD datasets, in a stable order.

    ``dialect_of`` names the dialect of a file where it is not ``dialect`` for
    all (dbt projects on different warehouses, gate/repo_dialect.py; ``None``:
    in no project of the base's): a dataset's types are read as its own
    warehouse reads them, each side of a pair in its own path's. A pair moved
    out of every base project (a project folder the PR renames) is read in its
    old path's on both sides, as it was graded before the merge.

    ``renamed_paths`` maps base paths to HEAD paths for files git saw move, so a
    moved file whose dataset id changed is still a ``model_renamed``. ``now``
    (timezone-aware) decides whether a removed dataset's ``deprecation_date``
    has passed; without it every removal of a guarded dataset is breaking.
    """
    out = Emitter(severity_of)
    regex_lang.start_run()  # one time budget for all the pattern automata of this diff
    # A disabled dbt model does not exist for its consumers: compare it as absent
    # and say "disabled" where it was removed.
    disabled = {d.id: d for d in head if not d.enabled}
    # A dbt properties entry whose model file was there at the base and is gone
    # now: dbt builds nothing for it, so it is absent too. "There" is anything
    # but known missing: a name two files held at the base (one disabled, as
    # dbt allows) has no single file, yet dbt built it.
    had_file = {d.id for d in base if not d.model_file_missing}
    orphans = {d.id: d for d in head if d.model_file_missing and d.id in had_file}

    def never_built(old: Dataset) -> bool:
        # An entry without a model file in a project whose model paths held other
        # model files at the base: a model dbt never built. A project with none in
        # sight may generate them at build time (``Dataset.model_files_committed``).
        return old.model_file_missing and old.model_files_committed

    base = [d for d in base if d.enabled]
    head = [d for d in head if d.enabled and d.id not in orphans]
    pairs, removed, added = pair_datasets(base, head, renamed_paths or {}, dialect)
    for old in removed:
        if old.enforced:
            datasets.removed(
                out, old, disabled.get(old.id), orphans.get(old.id), now, never_built(old)
            )

    def own(path: str) -> str:
        return (dialect_of(path) if dialect_of else None) or dialect

    for new in added:
        if new.enforced:
            datasets.added(out, new, own(new.path))
    for new in head:
        datasets.file_missing(out, new)
    datasets.latest_moves(out, base, head)
    pairs = [conversion.comparable(old, new) for old, new in pairs]  # across formats
    for old, new in pairs:
        if never_built(old):
            # No contract of it was in force: it starts now, if dbt builds it now.
            if new.enforced and not new.model_file_missing:
                datasets.added(out, new, own(new.path))
            continue
        if old.enforced or new.enforced:  # an unguarded model's settings promise nothing
            datasets.unevaluable(out, old, new)
        if old.enforced and not new.enforced:
            datasets.enforcement_removed(out, new)
            continue
        if not new.enforced:
            continue
        if not old.enforced:
            datasets.enforcement_added(out, new, own(new.path))
            continue
        # A contract moved into a dbt project on another warehouse: each side's
        # types are read in its own dialect (Postgres' int8 is no Spark TINYINT).
        old_dialect = own(old.path)
        new_dialect = (dialect_of(new.path) if dialect_of else None) or old_dialect
        moved = old_dialect if old_dialect != new_dialect else None
        _dataset_pair(DatasetPair(out, old, new, new_dialect, moved))
    return out.changes


__all__ = ["Change", "SeverityFn", "default_severity", "diff_datasets"]
