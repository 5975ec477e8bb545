"""Join consumer reads with contract changes: who reads what changed, who now breaks.

Pure: changes and findings in, changes out. Only breaking changes of rules the
catalogue marks ``explained_by_consumers`` (column, type and model level) are explained. A
consumer at HEAD that still reads a column or dataset the HEAD contract no
longer has becomes a ``consumer_broken`` finding anchored at its own line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import replace
from typing import TYPE_CHECKING

from gate import rules
from gate.diff import Change, SeverityFn
from gate.model import Consumer, Dataset
from gate.rules import Severity

if TYPE_CHECKING:
    from gate.consumers.reader import Found

RULE = rules.CONSUMER_BROKEN.id


def wants_consumers(change: Change) -> bool:
    """A breaking change at column, type or model level: worth naming its readers."""
    return change.severity is Severity.ERROR and change.spec.explained_by_consumers


def read_column(change: Change) -> str | None:
    """The column name consumers of ``change`` read (the old name for a rename)."""
    if change.column is None:
        return None
    name = change.before if change.spec.reads_old_name else None
    return (name or change.column).lower()


def _top(column: str) -> str:
    """A nested field ``a.b`` is read through its top-level column ``a``."""
    return column.split(".", 1)[0]


def _matches(change: Change, found: Found) -> bool:
    if found.dataset not in (change.dataset, change.old_dataset):
        return False
    column = read_column(change)
    if column is None:
        return found.column is None
    if found.column == "*":
        return True
    return found.column is not None and found.column in (column, _top(column))


def _consumers(matches: Iterable[Found]) -> tuple[Consumer, ...]:
    seen: dict[tuple[str, int, str], Consumer] = {}
    for found in sorted(matches, key=lambda f: (f.path, f.line, f.usage)):
        key = (found.path, found.line, found.usage)
        seen.setdefault(key, Consumer(found.path, found.line, found.object, found.usage))
    return tuple(seen.values())


def _gone(change: Change, head: dict[str, Dataset], still_built: Set[str]) -> str | None:
    """What the HEAD contract no longer has that consumers of ``change`` read.

    ``"<dataset>"`` for a removed or renamed dataset, else the column name, or
    ``None`` when HEAD still has it (a type change, a case-only rename, which
    SQL reads case-insensitively), or when only the contract went and the table
    stays (``still_built``: a dbt model whose file dbt still builds).
    """
    gone = change.spec.gone_for_readers
    if gone == "dataset":
        if (change.old_dataset or change.dataset) in still_built:
            return None
        return "<dataset>"
    if gone != "column":
        return None
    column = read_column(change)
    dataset = head.get(change.dataset)
    if column is None or dataset is None:
        return None
    if "." in column and dataset.column(_top(column)) is not None:
        return column  # a removed nested field, read as a.b
    if any(c.name.lower() == column for c in dataset.columns):
        return None
    return column


def _broken(
    change: Change,
    matches: Sequence[Found],
    head: dict[str, Dataset],
    severity_of: SeverityFn,
    resolved_at_head: set[tuple[str, int]],
    still_built: Set[str],
) -> list[Change]:
    gone = _gone(change, head, still_built)
    if gone is None:
        return []
    severity = severity_of(RULE, change.dataset, None)
    if severity is Severity.OFF:
        return []
    out: dict[tuple[str, int], Change] = {}
    for found in matches:
        if gone == "<dataset>":
            if found.column is not None:
                continue
            if found.dataset in head or (found.path, found.line) in resolved_at_head:
                continue
            what = f"dataset '{change.old_dataset or change.dataset}'"
        else:
            if found.column in (None, "*") or found.column not in (gone, _top(gone)):
                continue
            if found.column == _top(gone) and gone != found.column:
                continue  # reads the parent struct; only a.b itself is gone
            read = change.before if change.spec.reads_old_name else change.column
            what = f"column '{change.dataset}.{read}'"
        key = (found.path, found.line)
        if key in out:
            continue
        out[key] = Change.of(
            rules.CONSUMER_BROKEN,
            severity,
            change.dataset,
            found.path,
            found.line,
            column=change.column if gone != "<dataset>" else None,
            message=(
                f"{found.object} reads {what} ({found.usage}), which the HEAD contract no longer "
                f"has ({change.rule}); update this consumer in the same pull request"
            ),
            before=gone if gone != "<dataset>" else change.before or change.dataset,
            after=change.after,
            old_dataset=change.old_dataset,
        )
    return list(out.values())


def explain(
    changes: Sequence[Change],
    found: Sequence[Found],
    head: Iterable[Dataset],
    severity_of: SeverityFn,
    still_built: Set[str] = frozenset(),
    disabled: Callable[[Sequence[str]], Set[str]] | None = None,
) -> list[Change]:
    """Changes with their consumers attached, plus one ``consumer_broken`` per broken read.

    ``still_built``: ids of datasets whose contract is gone but whose table is
    still built (``gate.dbt.model_files.still_built``); their readers are listed,
    not broken. ``disabled``: of the broken readers' files, those dbt does not
    build at HEAD (``gate.consumers.disabled``), asked once about those few only:
    a model nothing builds breaks nothing, so it stays listed, not broken.
    """
    head_by_id = {d.id: d for d in head}
    # A table reference that also names a HEAD dataset (an alias, a configured
    # name) still resolves, so it is not broken by a rename.
    # So is one that a contract the pull request adds also names (``Found.at_head``):
    # the read stays its base owner's, but the table moved there.
    resolved_at_head = {
        (f.path, f.line)
        for f in found
        if f.column is None and (f.dataset in head_by_id or any(a in head_by_id for a in f.at_head))
    }
    # Reads by dataset (positions, to keep their order): each change looks only
    # at the reads of its own dataset, not at every read of the pull request.
    by_dataset: dict[str, list[int]] = {}
    for position, f in enumerate(found):
        by_dataset.setdefault(f.dataset, []).append(position)
    out: list[Change] = []
    broken: dict[tuple[object, ...], Change] = {}
    for change in changes:
        if not wants_consumers(change):
            out.append(change)
            continue
        positions = by_dataset.get(change.dataset, [])
        if change.spec is rules.MODEL_RENAMED and change.old_dataset:
            # "consumers still read the old name": a read of the new name is no such
            # reader (it is the state the rename wants), so it is not listed.
            positions = by_dataset.get(change.old_dataset, [])
        elif change.old_dataset and change.old_dataset != change.dataset:
            positions = sorted(positions + by_dataset.get(change.old_dataset, []))
        matches = [found[i] for i in positions if _matches(change, found[i])]
        explained = replace(change, consumers=_consumers(matches))
        if change.spec is rules.MODEL_REMOVED and change.dataset in still_built and matches:
            explained = replace(
                explained,
                message=f"the contract of dataset '{change.dataset}' was removed; its model "
                "file still builds the table, so its readers still run, unguarded",
            )
        out.append(explained)
        for finding in _broken(
            change, matches, head_by_id, severity_of, resolved_at_head, still_built
        ):
            # One finding per (change, consumer line): an identical change twice
            # (two copies of one contract) must not report the reader twice.
            key = (change.rule, change.dataset, change.old_dataset, change.column)
            broken.setdefault((*key, finding.path, finding.line), finding)
    if disabled is not None and broken:
        off = disabled(sorted({f.path for f in broken.values() if f.path}))
        broken = {key: f for key, f in broken.items() if f.path not in off}
    return out + list(broken.values())
