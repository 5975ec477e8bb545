"""The run's external-consumer step: base-side sources read, reads attached, severity graded.

Plain values in (the engine hands over its sides' repository and commits), so
this stays below the run steps (docs/architecture.md). Nothing is read unless
the base side's ``lineage:`` names a source or switches usage-aware severity
on, and the run has a breaking change that wants consumers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gate import rules
from gate.config import Config
from gate.consumers.impact import read_column, wants_consumers
from gate.consumers.names import NameIndex
from gate.lineage.settings import changed_notice
from gate.lineage.where import Where
from gate.model import Change, Dataset

if TYPE_CHECKING:  # the SQL analysis and the sources: only when a break wants readers
    from gate.consumers.sql import TableName
    from gate.workers import Workers


class _ColumnsOf:
    """A contracted table's columns (both sides'), to attribute unqualified columns.

    A class rather than a closure: it travels to the worker processes that
    analyse a manifest's readers (``gate.lineage.dbt_mesh``), so it must pickle.
    """

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.index = NameIndex(datasets)
        columns: dict[str, set[str]] = {}
        for d in datasets:
            columns.setdefault(d.id, set()).update(c.name.lower() for c in d.columns)
        self.columns = {k: frozenset(v) for k, v in columns.items()}

    def __call__(self, table: TableName) -> frozenset[str] | None:
        ids = self.index.lookup(table)
        if not ids:
            return None
        return frozenset(name for i in ids for name in self.columns.get(i, ()))


def external_step(
    base: Config,
    head: Config,
    run: Config,
    where: Where,
    changes: list[Change],
    datasets: Sequence[Dataset],
    not_analysed: int,
    dialect: str,
    workers: Workers | None = None,
) -> tuple[list[Change], list[str]]:
    """(changes, notices): external readers attached, usage-aware grades applied.

    ``base``/``head``: each side's config (only the base's ``lineage:`` is used;
    a HEAD edit is a notice); ``run``: the run's effective config (consumer
    search on or off, ``consumers.tables``); ``not_analysed``: consumer files
    the in-repo search could not read; ``workers``: the run's pool, where a
    manifest's readers are analysed.
    """
    notices = changed_notice(base.lineage, head.lineage, head.source or base.source)
    lineage = base.lineage
    if not lineage.active:
        return changes, notices
    wanting = [c for c in changes if wants_consumers(c)]
    if not wanting:
        return changes, notices
    from gate.lineage.attach import Evidence, attach, usage_aware
    from gate.lineage.matching import DatasetMatcher
    from gate.lineage.sources import external_reads

    ids = {d for c in wanting for d in (c.dataset, c.old_dataset) if d}
    tables = _with_file_aliases(where, datasets, run.consumers.tables)
    matcher = DatasetMatcher(datasets, lineage.datasets, tables)
    memo: dict[str, bool] = {}

    def wanted(name: str) -> bool:
        if name not in memo:
            memo[name] = bool(matcher.match(name) & ids)
        return memo[name]

    names = [n for i in sorted(ids) for n in lineage.datasets.get(i, ())]
    columns = _changed_columns(wanting)

    def changed_columns(name: str) -> frozenset[str] | None:
        found: set[str] = set()
        for dataset_id in matcher.match(name) & ids:
            some = columns.get(dataset_id)
            if some is None:
                return None
            found |= some
        return frozenset(found) if found else None

    reads, warnings = (
        external_reads(
            lineage,
            where,
            wanted,
            names,
            dialect,
            _ColumnsOf(datasets),
            workers,
            changed_columns,
        )
        if lineage.sources
        else ([], [])
    )
    changes = attach(changes, matcher.reads_of(reads))
    notices += warnings
    if lineage.usage_aware_severity:
        from gate.lineage.marquez import DatasetWarning

        gaps: list[str] = []
        unread = [w for w in warnings if not isinstance(w, DatasetWarning)]
        if unread:
            gaps.append(f"{len(unread)} lineage source(s) could not be read")
        if not run.consumers.enabled:
            gaps.append("the in-repository consumer search is off (consumers: false)")
        if not_analysed:
            gaps.append(f"{not_analysed} consumer file(s) could not be analysed")
        held = _claimed_by_added(changes, datasets)
        for i, why in _claimed_by_config(changes, datasets, base, head).items():
            held.setdefault(i, why)
        for i, why in _renamed_in_place(datasets).items():
            held.setdefault(i, why)
        for w in warnings:  # a dataset a lineage API does not know: that dataset only
            if isinstance(w, DatasetWarning):
                for i in sorted(ids):
                    if w.dataset in lineage.datasets.get(i, ()):
                        held.setdefault(i, f"the lineage API does not know {w.dataset}")
        changes, more = usage_aware(changes, Evidence(len(lineage.sources), tuple(gaps)), held)
        notices += more
    return changes, notices


def _changed_columns(wanting: Sequence[Change]) -> dict[str, frozenset[str] | None]:
    """Per dataset id, the columns its breaking changes' readers read (``None``: all).

    What ``gate.lineage.attach`` attaches a read by: a change without a column
    (a removed model) wants every reader of its dataset, so its dataset gets
    ``None`` and no reader of it is prefiltered.
    """
    out: dict[str, set[str] | None] = {}
    for change in wanting:
        column = read_column(change)
        for dataset_id in {d for d in (change.dataset, change.old_dataset) if d}:
            if column is None:
                out[dataset_id] = None
            else:
                known = out.setdefault(dataset_id, set())
                if known is not None:
                    known.add(column)
    return {k: None if v is None else frozenset(v) for k, v in out.items()}


def _with_file_aliases(
    where: Where, datasets: Sequence[Dataset], tables: Mapping[str, Sequence[str]]
) -> Mapping[str, Sequence[str]]:
    """``consumers.tables`` plus the ``config(alias='x')`` of each dbt contract's model file.

    dbt materialises such a model as ``x``, the name an OpenLineage event or a
    catalog gives it; the properties' ``config: alias:`` is already one of the
    contract's names. The model files (of the compared contracts only) are read
    at HEAD and at the base, and both sides' aliases count: a reader of either
    relation is a reader (one batched read per side).
    """
    files: dict[str, list[Dataset]] = {}
    for d in datasets:
        if d.format == "dbt" and d.model_file and d.model_file.endswith(".sql"):
            files.setdefault(d.model_file, []).append(d)
    if not files:
        return tables
    from gate.consumers.names import configured
    from gate.consumers.scan import read_candidates
    from gate.limits import DEFAULT_LIMITS
    from gate.lineage.downstream import model_alias

    found: dict[str, dict[str, None]] = {}
    for commit in dict.fromkeys((where.head_commit, where.base_commit)):
        texts, _unreadable = read_candidates(
            where.repo, commit, sorted(files), DEFAULT_LIMITS.consumer_bytes
        )
        for path, data in texts:
            alias = model_alias(data.decode("utf-8", "replace"))
            if alias is None:
                continue
            for d in files[path]:
                found.setdefault(d.id, dict.fromkeys(configured(tables, d)))[alias] = None
    if not found:
        return tables
    return {**tables, **{k: tuple(v) for k, v in found.items()}}


def _claimed_by_config(
    changes: Sequence[Change], datasets: Sequence[Dataset], base: Config, head: Config
) -> dict[str, str]:
    """Changed datasets whose readers a ``consumers.tables`` name this pull request
    adds to another dataset could claim.

    The run takes the names of both sides (``gate.policy``), and the longest name
    wins a read: ``misc: [warehouse.orders]`` written in the PR's own config takes
    the reader of ``warehouse.orders`` from ``orders``. Like an added contract's,
    such a name holds back the grading of the datasets whose last name part it shares.
    """
    from gate.consumers.names import dataset_names, split_name
    from gate.dbt.identity import bare_id

    lasts: dict[str, list[str]] = {}
    for owner, names in head.consumers.tables.items():
        before = set(base.consumers.tables.get(owner, ()))
        for written in names:
            parts = split_name(written)
            if parts and written not in before:
                lasts.setdefault(parts[-1], []).append(owner)
    if not lasts:
        return {}
    by_id = {d.id: d for d in datasets}
    held: dict[str, str] = {}
    for change in changes:
        for maybe in (change.dataset, change.old_dataset):
            if not maybe or maybe not in by_id:
                continue
            own = {maybe, bare_id(by_id[maybe]), change.dataset, change.old_dataset}
            for name in dataset_names(by_id[maybe]):
                other = next((k for k in lasts.get(name[-1], ()) if k not in own), None)
                if other is not None:
                    held[maybe] = (
                        f"this pull request gives {other} a name in consumers.tables that "
                        "its readers may use, which could have claimed them"
                    )
    return held


def _renamed_in_place(datasets: Sequence[Dataset]) -> dict[str, str]:
    """Kept datasets that take a name in this pull request another dataset shares.

    A name the pull request gives a kept contract (an ODCS logical ``name``, a
    dbt ``config.alias``) reads only what no base name agrees with
    (``gate.consumers.names.added_names``): the reader of ``warehouse.orders`` stays
    the base ``orders``'s, though it may be this dataset's. Its removals are
    not graded down for want of readers. ``datasets``: the base side's, then HEAD's.
    """
    from gate.consumers.names import added_names, dataset_names

    sides: dict[str, list[Dataset]] = {}
    for dataset in datasets:
        sides.setdefault(dataset.id, []).append(dataset)
    kept = [pair for pair in sides.values() if len(pair) > 1]
    new = added_names([p[0] for p in kept], [p[-1] for p in kept])
    if not new:
        return {}
    lasts: dict[str, set[str]] = {}
    for dataset in datasets:
        for name in dataset_names(dataset):
            lasts.setdefault(name[-1], set()).add(dataset.id)
    held: dict[str, str] = {}
    for name, dataset_id in sorted(new):
        others = sorted(lasts.get(name[-1], set()) - {dataset_id})
        if others:
            held.setdefault(
                dataset_id,
                f"this pull request names it {'.'.join(name)}, which {others[0]} goes by "
                "too: its readers may be counted as that dataset's",
            )
    return held


def _claimed_by_added(changes: Sequence[Change], datasets: Sequence[Dataset]) -> dict[str, str]:
    """Changed datasets whose readers a contract this pull request adds could claim.

    A table name in SQL is attributed to the contract whose name agrees longest
    (``gate.consumers.names``): adding ``db/warehouse/orders`` takes the reader
    of ``warehouse.orders`` away from ``orders``. A removal from a dataset that
    shares its last name part with an added one is not lowered, whatever the
    search found. A rename's new id counts as added here (the consumer scan
    lets it compete as a base dataset, so renaming an unread ``misc`` to
    ``db/warehouse/orders`` does take that reader), except for the renamed
    dataset's own changes.
    """
    from gate.consumers.names import dataset_names

    by_id = {d.id: d for d in datasets}
    added = {c.dataset for c in changes if c.rule == rules.MODEL_ADDED.id}
    renamed = {
        c.dataset: c.old_dataset
        for c in changes
        if c.rule == rules.MODEL_RENAMED.id and c.old_dataset and c.old_dataset != c.dataset
    }
    lasts: dict[str, list[str]] = {}
    for dataset_id in sorted(added | renamed.keys()):
        if dataset_id in by_id:
            for name in dataset_names(by_id[dataset_id]):
                lasts.setdefault(name[-1], []).append(dataset_id)
    held: dict[str, str] = {}
    for change in changes:
        pair = {d for d in (change.dataset, change.old_dataset) if d}
        for maybe in (change.dataset, change.old_dataset):
            if not maybe or maybe in added or maybe in renamed or maybe not in by_id:
                continue
            dataset_id = maybe
            for name in dataset_names(by_id[dataset_id]):
                claimant = next(
                    (
                        i
                        for i in lasts.get(name[-1], ())
                        if i not in pair and renamed.get(i) not in pair
                    ),
                    None,
                )
                if claimant is not None:
                    how = "renames to" if claimant in renamed else "adds"
                    held[dataset_id] = (
                        f"{claimant}, a contract this pull request {how}, goes by a "
                        "name its readers may use, and could have claimed them"
                    )
    return held
