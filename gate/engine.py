"""One gate run: git -> contracts -> diff -> acknowledgements -> (smoke) -> Report.

This is the library entry point (``gate.run(Settings(...))``); the CLI and the
GitHub Action are thin faces over it. Its cost grows with the changed contracts,
not with the repository: git lists what changed, unchanged blobs are never read,
and the blobs that are read come through one ``git cat-file --batch`` process.

Orchestration only: each side is built once (``gate.side``: commit, tree
reader, config, dbt project index), then the compared files (``gate.changed_files``)
are read (``gate.read_sides``, clashes in ``gate.duplicates``), diffed,
matched to their consumers, acknowledged, optionally smoke-tested, and
reported. ``Settings.trace`` sees each step (``gate.tracing``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING

from gate import acks, base_copies, declarations, side_config
from gate import lattice as types
from gate import tracing as steps
from gate.ack_tokens import breaking_tokens, consumer_tokens, near_miss_notices
from gate.approvals.step import approve
from gate.changed_files import compared_files
from gate.config import Config
from gate.consumers import explain as explain_consumers
from gate.consumers.scan import Scan, Search
from gate.consumers.scan import scan as scan_consumers
from gate.consumers.scan import start_search as start_consumer_search
from gate.contract_files import INHERITED, Item, Parse, every_contract, has_contracts, refuse
from gate.dbt import identity as dbt_identity
from gate.dbt import model_files as dbt_model_files
from gate.dbt.changes import Entry
from gate.diff import Change, SeverityFn, diff_datasets
from gate.duplicates import declared_elsewhere, duplicates, still_declared
from gate.formats import parse_contract
from gate.formats.dbt.settings import lenient_access
from gate.git import Repo, open_repo
from gate.limits import DEFAULT_LIMITS, Limits
from gate.lineage.run import external_step
from gate.lineage.where import Where
from gate.model import Contract, ContractError, ContractWarning, Dataset, UsageError
from gate.read_sides import read_sides
from gate.repo_dialect import Found, project_dialect
from gate.report.base import Report
from gate.rules import Severity
from gate.side import Side, base_side, head_side, resolve_base, resolve_head
from gate.side_config import RunConfig, base_config, base_limits, load_config
from gate.tracing import Trace
from gate.workers import Workers

if TYPE_CHECKING:  # PySpark-free, but only needed for the annotation
    from gate.approvals.decide import Reviews  # loaded only when a policy is active
    from gate.dbt.projects import ProjectIndex
    from gate.smoke.result import SmokeReport

__all__ = ["Settings", "base_config", "base_limits", "load_config", "parse_many", "run"]

#: Below this many files, worker processes cost more than they save. A forked
#: worker starts in ~10 ms and a contract takes ~1 ms to parse; a spawned one
#: re-imports the gate first (~0.3 s).
_FORK_THRESHOLD = 24
_SPAWN_THRESHOLD = 400
#: Without ``--jobs``, contracts are shared from this many files: a forked worker
#: parses ~12% dearer than this process (copy-on-write faults, the results pickled
#: back), which 200 files (100 changed) repay with 2% of wall time on a core of
#: its own, 500 files with 9%, 2,000 with 22% (docs/performance.md).
_AUTO_FORK_THRESHOLD = _SPAWN_THRESHOLD


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; ``None`` means "from the config file, else the default"."""

    repo: str = "."
    base: str = "origin/main"
    head: str | None = None  # None: the working tree
    merge_base: bool = True
    contracts: tuple[str, ...] | None = None
    dialect: str | None = None
    fail_on: Severity | None = None
    config: str | None = None  # explicit config path (repo-relative)
    accept: tuple[str, ...] = ()
    accept_env: str | None = None
    #: Consumer files whose ``consumer_broken`` findings are vouched for (gate.acks).
    accept_consumer_break: tuple[str, ...] = ()
    accept_consumer_break_env: str | None = None
    pr_body: str | None = None
    jobs: int | None = None
    smoke: bool = False
    smoke_changed_only: bool = False
    sample_data: str | None = None
    spark_master: str | None = None
    spark_remote: str | None = None
    quarantine: str | None = None
    notices: tuple[str, ...] = field(default=())
    #: Who approved the breaks (``--approved-by``, ``APPROVED_BY``; gate.approvals).
    approved_by: tuple[str, ...] = ()
    #: The pull request's reviews, asked per change (the Action; gate.action.reviews).
    reviews: Reviews | None = field(default=None, compare=False, repr=False)
    #: Called at each step of the run with its name, a summary and its time
    #: (``gate.tracing``; the Action's debug output). ``None``: not traced.
    trace: Trace | None = field(default=None, compare=False, repr=False)


#: What one parse needs: the file's bytes, its path, its side, its dbt project.
_Item = Item


def _parse_one(limits: Limits, item: _Item) -> Contract | ContractError:
    """A contract, or the error that refuses it, as a value.

    A value, not a raise: a batch then parses every file, so the run can report
    every refused HEAD file at once (in input order, whatever the worker
    count), and a base-side error becomes a warning (a contract invalid on the
    base branch must not block the pull request that fixes it). The base side,
    and an unchanged file read at HEAD ("other"), are read leniently: a schema
    break there is a warning, never a refusal.
    """
    data, path, side, project = item
    try:
        with lenient_access() if side == INHERITED else nullcontext():
            return parse_contract(data, path, project, limits, lenient=side != "head")
    except ContractError as exc:
        return exc


def parse_many(
    items: Sequence[_Item],
    jobs: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    workers: Workers | None = None,
) -> list[Contract | ContractError]:
    """Parse (data, path, side, dbt project) items, in worker processes when there are several.

    A file that cannot be parsed comes back as its ``ContractError``, in its
    place: the caller decides whether it is a warning or a refusal. YAML parsing dominates the run time of a large PR; on a 2-core runner two
    processes nearly halve it. ``workers`` is the run's pool (``jobs`` then
    does not matter); without one, a pool lives for this call only.
    """
    if workers is None:
        with Workers(jobs) as own:
            return parse_many(items, limits=limits, workers=own)
    if len(items) < 2:
        return [_parse_one(limits, item) for item in items]
    # The first file is parsed here before the batch may fork workers: they then
    # inherit the parser modules its format imports on first use, instead of each
    # importing them again (~5 ms of CPU a worker). Thresholds count it as before.
    first = _parse_one(limits, items[0])
    rest = workers.map(
        _parse_one,
        limits,
        items[1:],
        fork_threshold=(_AUTO_FORK_THRESHOLD if workers.auto else _FORK_THRESHOLD) - 1,
        spawn_threshold=_SPAWN_THRESHOLD - 1,
    )
    return [first, *rest]


def _parser(limits: Limits, workers: Workers, trace: Trace | None) -> Parse:
    """The run's parser: its limits, its worker pool, its trace."""

    def parse(items: Sequence[_Item]) -> list[Contract | ContractError]:
        return steps.timed(
            trace,
            steps.PARSE,
            lambda: parse_many(items, limits=limits, workers=workers),
            lambda result: steps.parsed_files(result, items),
        )

    return parse


def run(settings: Settings) -> Report:
    """Run the gate once. Raises ``GateError`` subclasses for exit-code-2 problems.

    Refused contract files raise one ``ContractErrors`` (a ``ContractError``)
    that lists every one of them; git, ref, config and usage problems raise
    the first one alone, as they stop the run where they happen.
    """
    # The workers stop first: forked, they hold copies of the repository's pipes.
    with open_repo(settings.repo) as repo, Workers(settings.jobs) as workers:
        return _run(repo, settings, workers)


def _sides(repo: Repo, settings: Settings) -> tuple[Side, Side]:
    """Both sides, each built once: refs resolved, configs read (HEAD's first)."""
    trace = settings.trace
    repo.pin(settings.head or "HEAD", settings.base)  # one git for both, once per run
    head_sha = resolve_head(repo, settings.head)
    base_sha = resolve_base(repo, settings.base, settings.head, settings.merge_base)
    # Every read below names the commit, not the ref: one comparison, one commit.
    head_commit = head_sha if settings.head is not None else None

    def described(config: Config) -> list[str]:
        return [f"config: {config.source or 'none (defaults)'}"]

    head_config = steps.timed(
        trace, steps.CONFIG, lambda: load_config(repo, head_commit, settings.config), described
    )
    head = head_side(repo, settings.head, head_sha, head_config)
    # The floor is the base branch's config now (the tip of --base), not where the
    # PR branched: an old branch must not dodge a tightening landed since.
    tip_sha = resolve_base(repo, settings.base, settings.head, False)
    floor = steps.timed(
        trace, steps.CONFIG, lambda: base_config(repo, tip_sha, settings.config), described
    )
    # Where the PR branched, read only when the base branch moved on: what the PR
    # itself relaxed is told apart from what the base branch tightened since.
    branched = (
        steps.timed(
            trace, steps.CONFIG, lambda: base_config(repo, base_sha, settings.config), described
        )
        if tip_sha != base_sha
        else None
    )
    return base_side(repo, settings.base, base_sha, floor, head, branched, tip_sha), head


def _run(plain_repo: Repo, settings: Settings, workers: Workers) -> Report:
    trace = settings.trace
    base, head = _sides(steps.traced_repo(plain_repo, trace), settings)
    policy = side_config.resolve(base, head, settings.dialect, settings.contracts, settings.fail_on)
    dialect = policy.dialect
    parse = _parser(policy.limits, workers, trace)

    read = _read(base, head, policy, parse)
    file_changes, old, new = read.files, read.base, read.head
    severity_of = dbt_identity.policy_severity(
        policy.config.severity_fn(), [*old, *new], read.renamed_projects
    )

    # The consumer search starts before the diff and runs beside it (see start_search).
    search = start_consumer_search(head.repo, head.commit, old, new, policy.config.consumers)
    try:
        changes = _diff(file_changes, old, new, dialect, severity_of, trace, policy.detected)
    except BaseException:
        if search is not None:
            search.pending.cancel()
        raise
    _freeze_survivors()
    changes, consumer_scan = _consumers(
        head, policy, changes, old, new, severity_of, workers, search, trace, base.commit
    )
    # Consumers outside the repository, from the base side's lineage: (gate.lineage).
    changes, lineage_notices = external_step(
        base.config,
        head.config,
        policy.config,
        Where(base.repo, base.sha, head.commit),
        changes,
        [*old, *new],
        len(consumer_scan.not_analysed),
        dialect,
        workers,
    )

    pr_body = settings.pr_body
    acked = acks.apply(
        changes,
        breaking_tokens(pr_body, settings.accept, settings.accept_env),
        *dbt_identity.ack_names([*old, *new]),
    )
    vouched = acks.apply_consumer_breaks(
        acked.changes,
        consumer_tokens(
            pr_body, settings.accept_consumer_break, settings.accept_consumer_break_env
        ),
    )
    smoke = (
        steps.timed(
            trace,
            steps.SMOKE,
            lambda: _smoke(head, settings, new, policy, parse, workers),
            lambda r: ["smoke test"],
        )
        if settings.smoke
        else None
    )
    approved = approve(base, head, vouched.changes, old, settings.approved_by, settings.reviews)
    notices = _notices(settings, read, policy, head) + list(approved.notices) + lineage_notices
    return Report(
        changes=approved.changes,
        approvals=approved.approvals,
        fail_on=policy.fail_on,
        acknowledgements=acked.matched,
        consumer_acknowledgements=vouched.matched,
        unmatched_acknowledgements=acked.unmatched + vouched.unmatched,
        ambiguous_acknowledgements=acked.ambiguous,
        base_ref=settings.base,
        base_sha=base.sha,
        merge_base=settings.merge_base,
        head_ref=settings.head,
        head_sha=head.sha,
        files_compared=len(file_changes),
        dialect=dialect,
        dialect_source=policy.dialect_source,
        smoke=smoke,
        notices=tuple(notices),
        not_analysed=consumer_scan.not_analysed,
        warnings=tuple(read.schema_warnings),
        relaxations=policy.relaxed,
    )


def _freeze_survivors() -> None:
    """Take what the diff leaves alive (both sides' datasets, the findings: they live
    to the end of the run) out of the collector's later walks.

    Only where the command froze its imports (``gate.cli.tune_gc``: a one-shot
    process); a host program's collector is left alone. The consumer scan's
    syntax trees come after and stay collectable. Without it the run's one young
    collection (17-27 ms with 20,000 objects, docs/impact.md) fell in the
    consumer scan and walked these too.
    """
    if gc.get_freeze_count():
        gc.freeze()


@dataclass(frozen=True)
class _Read:
    """The compared files and both sides' datasets, read and paired by identity."""

    files: list[Entry]
    base: list[Dataset]
    head: list[Dataset]
    warnings: list[str]
    schema_warnings: list[ContractWarning]
    #: dbt projects the PR renamed: base name -> HEAD name.
    renamed_projects: dict[str, str]


def _read(base: Side, head: Side, policy: RunConfig, parse: Parse) -> _Read:
    """The compared files of both sides, parsed; every refusal at once (``ContractErrors``)."""
    globs = policy.globs
    warnings: list[str] = []
    file_changes = compared_files(base, head, globs, warnings, policy.limits.model_file_bytes)
    if file_changes:
        # Parsing may fork workers now: load the dialect the diff and the consumer
        # scan need first, so that workers inherit it instead of loading it again.
        types.load_dialect(policy.dialect)
    refused: list[ContractError] = []
    schema_warnings: list[ContractWarning] = []
    old, new = read_sides(
        base,
        head,
        file_changes,
        parse,
        warnings,
        refused,
        schema_warnings,
        policy.limits.model_file_bytes,
    )
    refused += declared_elsewhere(head, globs, file_changes, old, new, parse, schema_warnings)
    # Every refusal at once, in the order git lists the files (ContractErrors).
    refuse(refused, [e.change.new_path for e in file_changes if e.change.new_path])
    # Evidence that a removed dataset is still declared comes only from files
    # that were contracts at the base: a glob the PR adds cannot supply a copy.
    elsewhere = still_declared(head, policy.base_globs or globs, file_changes, old, new, parse)
    old, copies = base_copies.single(old, new, elsewhere)
    warnings += copies
    renamed = _renamed_projects(file_changes, base.projects, head.projects)
    old, new = _dbt_identities(old, new, renamed)
    return _Read(file_changes, old, new, warnings, schema_warnings, renamed)


def _dbt_identities(
    base: list[Dataset], head: list[Dataset], renamed_projects: dict[str, str]
) -> tuple[list[Dataset], list[Dataset]]:
    """dbt models under the names the two sides share: a renamed project is
    followed, and two projects with one model name are told apart."""
    if renamed_projects:
        base = dbt_identity.follow_renames(base, renamed_projects)
    if dbt_identity.shared_names(base, head):
        base, head = dbt_identity.qualify(base, head)
        # A qualified ``platform.orders`` may meet another declaration of that id.
        refuse(duplicates([d for d in head if declarations.declares(d)]))
    return base, head


def _renamed_projects(
    file_changes: Sequence[Entry], base_projects: ProjectIndex, head_projects: ProjectIndex
) -> dict[str, str]:
    """dbt projects renamed (``name:`` changed): base -> HEAD name.

    In place (same folder), or moved with its files in the same PR: a file went
    from one project's folder to the other's, the old folder holds no project at
    HEAD and the new one held none at the base (NYCPlanning/data-engineering
    moved ``products/lion`` to ``products/cscl`` and renamed it: every model was
    ``model_renamed``). A file moved between two projects that both live on is
    no rename. A base name claimed by two HEAD names is followed by neither.
    """
    found: dict[str, set[str]] = {}
    for e in file_changes:
        if not (e.base and e.head) or e.base.name == e.head.name:
            continue
        if e.base.root != e.head.root and (
            head_projects.project_in(e.base.root) is not None
            or base_projects.project_in(e.head.root) is not None
        ):
            continue
        found.setdefault(e.base.name, set()).add(e.head.name)
    return {old: next(iter(new)) for old, new in found.items() if len(new) == 1}


def _diff(
    file_changes: Sequence[Entry],
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    dialect: str,
    severity_of: SeverityFn,
    trace: Trace | None,
    detected: Found | None = None,
) -> list[Change]:
    """Every change between the two sides' datasets, one format at a time (each dbt
    project's types in its own dialect where the projects' warehouses differ)."""
    renamed = {
        e.change.old_path: e.change.new_path
        for e in file_changes
        if e.change.status == "R" and e.change.old_path and e.change.new_path
    }
    changes: list[Change] = []
    # One dataset declared in two formats is two contracts (gate.declarations).
    for old, new in declarations.by_format(
        declarations.without_shadows(base), declarations.without_shadows(head)
    ):
        changes += steps.timed(
            trace,
            steps.DIFF,
            partial(
                diff_datasets,
                old,
                new,
                dialect=dialect,
                severity_of=severity_of,
                renamed_paths=renamed,
                now=datetime.now(timezone.utc),
                dialect_of=_project_dialects(detected),
            ),
            partial(_diff_summary, old, new),
        )
    return changes


def _project_dialects(detected: Found | None) -> Callable[[str], str | None] | None:
    """Each file's own dbt project's dialect where the base side's projects name different
    warehouses (``gate.repo_dialect.project_dialect``; ``None`` for a file in none of them,
    read in the run's dialect), for the diff, the consumers and the lineage alike; ``None``
    where the run has one dialect. Read at the base, like the dialect itself."""
    if detected is None or not detected.by_project:
        return None
    return partial(project_dialect, found=detected)


def _diff_summary(
    base: Sequence[Dataset], head: Sequence[Dataset], changes: Sequence[Change]
) -> list[str]:
    return [f"{len(changes)} change(s) from {len(base)} base and {len(head)} head dataset(s)"]


def _consumers(
    head: Side,
    policy: RunConfig,
    changes: list[Change],
    base: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    severity_of: SeverityFn,
    workers: Workers,
    search: Search | None,
    trace: Trace | None,
    base_commit: str | None = None,
) -> tuple[list[Change], Scan]:
    """The changes with the consumers at HEAD that read what they break, and the scan.
    ``base_commit``: where a model file that still builds a table must be too."""
    consumer_scan = steps.timed(
        trace,
        steps.CONSUMERS,
        lambda: scan_consumers(
            head.repo,
            head.commit,
            changes,
            base,
            head_datasets,
            policy.config.consumers,
            policy.dialect,
            workers,
            head.projects,
            search,
            _project_dialects(policy.detected),
        ),
        lambda r: [
            f"consumers: {len(r.found)} read(s) in {r.files_read} file(s) analysed,"
            f" {len(r.not_analysed)} not analysed"
        ],
    )
    if not consumer_scan.files_read:
        return changes, consumer_scan
    # A dbt properties entry without its model file, or disabled, builds nothing: for
    # its readers the model is gone, as diff_datasets already compares it.
    built = [d for d in head_datasets if not d.model_file_missing and d.enabled]
    # A deleted dbt contract whose model file stays: the table stays too.
    head_ids = {d.id for d in head_datasets}
    stays = dbt_model_files.still_built(
        head.repo,
        head.commit,
        [d for d in base if d.id not in head_ids],
        head.projects,
        policy.limits.model_file_bytes,
        base_commit,
    )
    from gate.consumers.disabled import readers_off  # only a run with readers needs it

    off = readers_off(head.repo, head.commit, head.projects, policy.limits.model_file_bytes)
    explained = explain_consumers(changes, consumer_scan.found, built, severity_of, stays, off)
    # Past the first readers: the models that pass a changed column on. Imported
    # here: like the readers, it loads sqlglot's optimizer only when there is work.
    from gate.lineage.downstream import attach as attach_downstream

    lineage = steps.timed(
        trace,
        steps.LINEAGE,
        lambda: attach_downstream(
            head.repo,
            head.commit,
            explained,
            base,
            head_datasets,
            policy.config.consumers,
            policy.dialect,
            policy.limits.lineage_depth,
            workers,
            consumer_scan.flows,
            _project_dialects(policy.detected),
        ),
        lambda r: [f"downstream lineage: {r.files_read} file(s) read"],
    )
    listed = {n.path for n in consumer_scan.not_analysed}
    extra = tuple(n for n in lineage.not_analysed if n.path not in listed)
    if extra:
        consumer_scan = replace(consumer_scan, not_analysed=consumer_scan.not_analysed + extra)
    return lineage.changes, consumer_scan


def _notices(settings: Settings, read: _Read, policy: RunConfig, head: Side) -> list[str]:
    """What the report says besides its findings, in a fixed order."""
    notices = list(settings.notices) + read.warnings + list(policy.dialect_notices)
    notices += near_miss_notices(settings.pr_body)
    notices += side_config.notices(head.config, policy)
    if not read.files and not has_contracts(head, policy.globs):
        notices.append(_nothing_to_compare(policy.globs, policy.config.allow_empty))
    notices += side_config.source_notice(policy.config)
    return notices


def _nothing_to_compare(globs: Sequence[str], allow_empty: bool) -> str:
    """No contract at HEAD and none changed, so none at the base either. A
    misspelt glob must never leave the check green forever: fail unless the
    config says the repository may have none yet."""
    where = ", ".join(globs)
    if not allow_empty:
        raise UsageError(
            f"no contract file matches the globs {where} at the base or at HEAD; "
            "set 'contracts:' in .schema-gate.yml or pass --contracts GLOB (or set "
            "'allow-empty: true' while the repository has no contract yet)"
        )
    return f"no contract file matches the globs {where} (allow-empty: true)"


def _smoke(
    head: Side,
    settings: Settings,
    changed: list[Dataset],
    policy: RunConfig,
    parse: Parse,
    workers: Workers,
) -> SmokeReport:
    """Run the smoke test on the HEAD contracts (imports PySpark only now)."""
    from gate.smoke import SmokeSettings, run_smoke

    datasets = (
        changed
        if settings.smoke_changed_only
        else every_contract(head, policy.globs, parse, policy.limits.model_file_bytes)
    )
    workers.close()  # Spark starts its own processes and threads: no idle forks beside it
    smoke_settings = SmokeSettings(
        sample_data=settings.sample_data,
        spark_master=settings.spark_master,
        spark_remote=settings.spark_remote,
        quarantine=settings.quarantine,
        dialect=policy.dialect,
        limits=policy.limits,
    )
    return run_smoke(
        [d for d in datasets if d.enforced and d.enabled], head.repo.root, smoke_settings
    )
