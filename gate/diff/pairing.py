"""The pair walkers, written once: base and HEAD elements paired by identity.

Datasets, columns, checks (``gate.diff.checks.pair``, which needs what a check
asserts) and relationships are paired here, never by path: a file that moves
without changing its dataset is not a change, and a dataset that moves between
files is not a removal plus an addition. Each walker returns (pairs, removed,
added); the family handlers turn them into findings.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from gate.diff.conversion import same_place, table_key
from gate.diff.emitter import type_text
from gate.model import Column, Dataset, Relationship


def _column_signature(dataset: Dataset, dialect: str) -> frozenset[tuple[str, str | None]]:
    """Names and canonical types: evidence that two datasets are the same table.

    A set, not a sequence: column order says nothing about the table (dbt's
    ``include: all`` lists a version's columns in another order than written,
    and a moved file is often rewritten), as ``columns_overlap`` already treats it.
    """
    return frozenset((c.name, type_text(c.data_type, dialect)) for c in dataset.columns)


T = TypeVar("T", Dataset, Column)


def _unpinned_ref(dataset: Dataset) -> tuple[str | None, str] | None:
    """The name an unpinned dbt ``ref()`` reads this version by (its latest version)."""
    if dataset.format != "dbt" or not dataset.unpinned_name:
        return None
    return dataset.project, dataset.unpinned_name


def _unversioned_ref(dataset: Dataset) -> tuple[str | None, str] | None:
    """The name a dbt ``ref()`` reads a model by: any dbt dataset not a latest version.

    A version other than the latest has an id such as ``orders.v1``, which no
    unpinned name equals, so it never pairs through this key.
    """
    if dataset.format != "dbt" or dataset.unpinned_name:
        return None
    return dataset.project, dataset.id


def pair_unique(
    removed: list[T],
    added: list[T],
    pairs: list[tuple[T, T]],
    old_key: Callable[[T], Hashable | None],
    new_key: Callable[[T], Hashable | None] | None = None,
) -> tuple[list[T], list[T]]:
    """Pair leftovers whose key is unique on both sides; return the new leftovers.

    Uniqueness on both sides is the "clear evidence" rule: two candidates for a
    rename mean no rename. Keys are indexed, so pairing stays linear even for a
    PR that moves thousands of datasets.
    """

    def unique(items: list[T], key: Callable[[T], Hashable | None]) -> dict[Hashable, T]:
        groups: dict[Hashable, list[T]] = {}
        for item in items:
            value = key(item)
            if value is not None:
                groups.setdefault(value, []).append(item)
        return {value: group[0] for value, group in groups.items() if len(group) == 1}

    if not removed or not added:
        return removed, added
    olds = unique(removed, old_key)
    news = unique(added, new_key or old_key)
    matched = [(old, news[value]) for value, old in olds.items() if value in news]
    if not matched:
        return removed, added
    pairs.extend(matched)
    gone = {id(item) for pair in matched for item in pair}
    return [d for d in removed if id(d) not in gone], [d for d in added if id(d) not in gone]


def _pair_converted(
    removed: list[Dataset], added: list[Dataset], pairs: list[tuple[Dataset, Dataset]]
) -> tuple[list[Dataset], list[Dataset]]:
    """Pair a removed and an added contract of one table in two formats (Soda, DCS,
    ODCS), when the table is unique among the leftovers on both sides. Two contracts
    of one table in one format are left to the other evidence (a data source moved
    is a rename), and so are two that name different schemas for it (``same_place``)."""
    found: list[tuple[Dataset, Dataset]] = []
    removed, added = pair_unique(removed, added, found, table_key)
    for old, new in found:
        if old.format != new.format and same_place(old, new):
            pairs.append((old, new))
        else:
            removed.append(old)
            added.append(new)
    return removed, added


def pair_datasets(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    renamed_paths: dict[str, str],
    dialect: str,
) -> tuple[list[tuple[Dataset, Dataset]], list[Dataset], list[Dataset]]:
    """Pair datasets by id, then detect renames on the leftovers.

    Returns (pairs, removed, added). A pair whose ids differ is a rename (but
    see ``gate.diff.datasets.renamed``). Rename evidence, strongest first: the
    same stable id (ODCS v3.1); a dbt model that gained or lost ``versions:``,
    paired with the version an unpinned ``ref()`` resolves to; a contract converted
    between formats, by the table it names (``gate.diff.conversion``); the same contract
    file (following git's rename detection) holding exactly one unpaired dataset
    on each side *and* sharing at least half of their column names
    (``columns_overlap``); the same columns with the same types, matching exactly
    one candidate.
    """
    head_by_id = {d.id: d for d in head}
    pairs: list[tuple[Dataset, Dataset]] = []
    removed: list[Dataset] = []
    for old in base:
        new = head_by_id.pop(old.id, None)
        if new is None:
            removed.append(old)
        else:
            pairs.append((old, new))
    added = list(head_by_id.values())
    # Only guarded datasets can be renamed: an unenforced dbt model was never a
    # contract, so an enforced model beside it is new, not the old one renamed.
    unguarded = [d for d in removed if not d.enforced], [d for d in added if not d.enforced]
    removed = [d for d in removed if d.enforced]
    added = [d for d in added if d.enforced]
    removed, added = pair_unique(removed, added, pairs, lambda d: d.stable_id)
    # A contract converted between formats: the same table, named the way each
    # format names it (Soda v4 qualifies it), one candidate on each side.
    removed, added = _pair_converted(removed, added, pairs)
    # dbt: a model that gained (or lost) versions is the dataset an unpinned
    # ref('<model>') resolves to on the other side, whatever its columns.
    removed, added = pair_unique(removed, added, pairs, _unversioned_ref, _unpinned_ref)
    removed, added = pair_unique(removed, added, pairs, _unpinned_ref, _unversioned_ref)
    path_pairs: list[tuple[Dataset, Dataset]] = []
    removed, added = pair_unique(
        removed, added, path_pairs, lambda d: renamed_paths.get(d.path, d.path), lambda d: d.path
    )
    for old, new in path_pairs:
        if columns_overlap(old, new):
            pairs.append((old, new))
        else:  # the file survived, the table did not: a removal plus an addition
            removed.append(old)
            added.append(new)
    removed, added = pair_unique(
        removed,
        added,
        pairs,
        lambda d: _column_signature(d, dialect) if d.columns else None,
    )
    return pairs, removed + unguarded[0], added + unguarded[1]


#: Share of column names two datasets must have in common (of all names on either
#: side) before a file rename counts as a dataset rename. git calls a file renamed
#: at 50% *text* similarity, which two unrelated tables written in one house style
#: easily reach; shared columns are evidence about the table itself.
COLUMN_OVERLAP = 0.5


def columns_overlap(old: Dataset, new: Dataset) -> bool:
    """True when at least ``COLUMN_OVERLAP`` of all column names (case-folded) are shared.

    Two datasets that declare no columns at all leave the file evidence standing
    (nothing contradicts it); one side without columns is no overlap.
    """
    before = {c.name.casefold() for c in old.columns}
    after = {c.name.casefold() for c in new.columns}
    if not before and not after:
        return True
    if not before or not after:
        return False
    return len(before & after) / len(before | after) >= COLUMN_OVERLAP


def pair_columns(
    old_columns: Sequence[Column], new_columns: Sequence[Column], dialect: str
) -> tuple[list[tuple[Column, Column]], list[Column], list[Column]]:
    """Pair columns: stable id, exact name, then a case-only rename, then position.

    A removed and an added column count as a rename only with clear evidence,
    as docs/rules.md promises: the *only* removed and the *only* added column,
    at the same position with the same declared type. Anything less is a
    removal plus an addition, never a guess.
    """
    pairs: list[tuple[Column, Column]] = []
    removed, added = list(old_columns), list(new_columns)
    removed, added = pair_unique(removed, added, pairs, lambda c: c.stable_id)
    removed, added = pair_unique(removed, added, pairs, lambda c: c.name)
    removed, added = pair_unique(removed, added, pairs, lambda c: c.name.casefold())
    if len(removed) == 1 and len(added) == 1:
        old, new = removed[0], added[0]
        old_type = type_text(old.data_type, dialect)
        if (
            old_type
            and old.position == new.position
            and old_type == type_text(new.data_type, dialect)
        ):
            return [*pairs, (old, new)], [], []
    return pairs, removed, added


def removed_anchors(
    old_columns: Sequence[Column], survivors: dict[int, Column], fallback: int | None
) -> dict[int, int | None]:
    """Where each removed column stood, in the HEAD file (by ``id`` of the column).

    At its old next neighbour that survived, else its previous one, else the
    parent (as buf anchors). Two passes over the columns, so removing thousands
    of columns stays linear.
    """
    lines = [
        new.line if (new := survivors.get(id(column))) is not None else None
        for column in old_columns
    ]
    following: list[int | None] = [None] * len(old_columns)
    nearest: int | None = None
    for index in range(len(old_columns) - 1, -1, -1):
        following[index] = nearest
        if lines[index] is not None:
            nearest = lines[index]
    anchors: dict[int, int | None] = {}
    nearest = None
    for index, column in enumerate(old_columns):
        if id(column) not in survivors:
            anchors[id(column)] = following[index] or nearest or fallback
        if lines[index] is not None:
            nearest = lines[index]
    return anchors


def pair_relationships(
    old: Sequence[Relationship], new: Sequence[Relationship]
) -> list[tuple[Relationship | None, Relationship | None]]:
    """Pair relationships by the columns they start from, in base order then the added ones.

    ``(old, None)`` was removed, ``(None, new)`` added; a pair whose targets
    differ is the same columns pointing elsewhere.
    """
    before = {r.columns: r for r in old}
    after = {r.columns: r for r in new}
    walk: list[tuple[Relationship | None, Relationship | None]] = [
        (rel, after.get(columns)) for columns, rel in before.items()
    ]
    walk.extend((None, rel) for columns, rel in after.items() if columns not in before)
    return walk
