"""One gate run: git -> contracts -> diff -> acknowledgements -> (smoke) -> Report.

This is the library entry point (``gate.run(Settings(...))``); the CLI and the
GitHub Action are thin faces over it. Its cost grows with the changed contracts,
not with the repository: git lists what changed, unchanged blobs are never read,
and the blobs that are read come through one ``git cat-file --batch`` process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from gate import acks, base_copies, declarations
from gate import lattice as types
from gate.config import CONFIG_FILE, PYPROJECT, Config, config_from_files, with_base_limits
from gate.consumers import explain as explain_consumers
from gate.consumers.scan import scan as scan_consumers
from gate.consumers.scan import start_search as start_consumer_search
from gate.dbt import changes as dbt_changes
from gate.dbt import identity as dbt_identity
from gate.dbt import model_files as dbt_model_files
from gate.dbt import projects as dbt_sources
from gate.dbt.changes import Entry
from gate.diff import Change, diff_datasets
from gate.formats import DEFAULT_GLOBS, parse_contract
from gate.formats.dbt.project import Project
from gate.git import Repo, open_repo
from gate.limits import DEFAULT_LIMITS, Limits
from gate.model import (
    Contract,
    ContractError,
    ContractErrors,
    ContractWarning,
    Dataset,
    GitError,
    UsageError,
)
from gate.policy import Relaxation, stricter
from gate.repo_dialect import changed_at_head
from gate.repo_dialect import detect as detect_dialect
from gate.report.base import Report
from gate.rules import Severity
from gate.workers import Workers

if TYPE_CHECKING:  # PySpark-free, but only needed for the annotation
    from gate.smoke.result import SmokeReport

#: Below this many files, worker processes cost more than they save. A forked
#: worker starts in ~10 ms and a contract takes ~1 ms to parse; a spawned one
#: re-imports the gate first (~0.3 s).
_FORK_THRESHOLD = 24
_SPAWN_THRESHOLD = 400


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


#: What one parse needs: the file's bytes, its path, its side, its dbt project.
_Item = tuple[bytes, str, str, Project | None]

#: The side of a HEAD file the PR did not change (compared because its dbt
#: project or a model file changed, or searched for a clash): parsed like the
#: base, and a problem in it is a warning, never a refusal.
_UNTOUCHED = "head, unchanged"


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
    return workers.map(
        _parse_one, limits, items, fork_threshold=_FORK_THRESHOLD, spawn_threshold=_SPAWN_THRESHOLD
    )


def load_config(repo: Repo, head: str | None, explicit: str | None) -> Config:
    """The config from the HEAD side: an explicit file must exist; defaults may not."""
    if explicit:
        data = repo.read_file(head, explicit)
        if data is None:
            raise UsageError(
                f"config file {explicit} not found in {'HEAD' if head else 'the working tree'} "
                "(a relative --config path starts at the repository root)"
            )
        return config_from_files(data, None, explicit)
    files = repo.read_optional(head, [CONFIG_FILE, PYPROJECT])
    return config_from_files(files[CONFIG_FILE], files[PYPROJECT])


def base_config(repo: Repo, base_sha: str, explicit: str | None) -> Config:
    """The base side's config: the floor a pull request cannot go below (``gate.policy``).

    Its limits apply as they are (they protect the runner from the pull
    request); every other setting is the stricter of it and HEAD's. No config
    at the base, or one that does not parse: the defaults.
    """
    try:
        if explicit:
            data = repo.read_file(base_sha, explicit)
            return config_from_files(data, None, explicit) if data is not None else Config()
        return load_config(repo, base_sha, None)
    except ContractError:  # the HEAD config is validated; the defaults are the safe side
        return Config()


def base_limits(repo: Repo, base_sha: str, explicit: str | None) -> Limits:
    """The limits of the base side's config: a pull request cannot raise its own."""
    return base_config(repo, base_sha, explicit).limits


def _clash(dataset: Dataset, other: Dataset) -> ContractError:
    """``dataset`` is also declared in another file, as ``other``."""
    same = (
        ""
        if other.id == dataset.id
        else f" (as '{other.id}'): ids differing only in case name one table in most warehouses"
    )
    return ContractError(
        dataset.path, f"dataset '{dataset.id}' is also declared in {other.path}{same}", dataset.line
    )


def _duplicates(datasets: Sequence[Dataset]) -> list[ContractError]:
    """Two files declaring one dataset make pairing ambiguous: each clash is a refusal.

    Ids that differ only by case count as one, as they do inside one file:
    most warehouses and Delta Lake resolve them to the same table. A third file
    declaring it clashes with the first, so each clash names the file to look at.
    Two dbt projects may each have a model of one name (``gate.dbt.identity``).
    """
    seen: dict[str, list[Dataset]] = {}
    clashes: list[ContractError] = []
    for dataset in datasets:
        firsts = seen.setdefault(dataset.id.casefold(), [])
        for first in firsts:
            if first.path != dataset.path and dbt_identity.same_dataset(first, dataset):
                clashes.append(_clash(dataset, first))
                break
        else:
            firsts.append(dataset)
    return clashes


def _refuse(errors: Sequence[ContractError], order: Sequence[str] = ()) -> None:
    """Raise ``ContractErrors`` if there are any, ordered by file as in ``order``.

    The order is the input's (git lists changed files sorted), never the order
    workers finished in; errors of one file, or of files not in ``order``, keep
    the order they were found in.
    """
    if not errors:
        return
    rank = {path: i for i, path in reversed(list(enumerate(order)))}
    ranked = sorted(errors, key=lambda e: rank.get(e.path, len(rank)))
    raise ContractErrors(tuple(ranked))


def _load(
    repo: Repo,
    entries: Sequence[tuple[str, str | None, str, Project | None]],
    workers: Workers,
    limits: Limits = DEFAULT_LIMITS,
) -> list[tuple[str, Contract | ContractError]]:
    """Read and parse (path, blob or None for the working tree, side, dbt project) entries.

    Every blob comes through one batch read; worktree files are read from disk
    inside the repository only.
    """
    blobs = repo.read_blobs(sorted({blob for _path, blob, _side, _p in entries if blob}))
    items = [
        (blobs[blob] if blob else repo.read_worktree(path), path, side, project)
        for path, blob, side, project in entries
    ]
    contracts = parse_many(items, limits=limits, workers=workers)
    return [(item[2], contract) for item, contract in zip(items, contracts, strict=True)]


def _base_warning(error: ContractError) -> str:
    where = f"{error.path}:{error.line}" if error.line else error.path
    return (
        f"warning: the base version of {where} is unreadable ({error.detail}); its "
        "datasets are compared as new, so a PR that fixes the file is not blocked"
    )


def _lenient_warning(warning: ContractWarning, which: str) -> ContractWarning:
    return ContractWarning(
        warning.path,
        f"{which} is broken ({warning.detail}); it was read leniently and compared, so a PR "
        "that fixes it is not blocked",
        warning.line,
    )


def _declaration_key(dataset: Dataset) -> tuple[str, str | None, str]:
    return dataset.format, dataset.project, dataset.id.casefold()


def _drop_old_clashes(
    base: list[Dataset], head: list[Dataset], untouched: set[str], warnings: list[str]
) -> tuple[list[Dataset], list[Dataset]]:
    """A clash between two files the PR did not change (compared only because
    their dbt project or a model file changed) was there before: a warning, and
    that dataset is compared on neither side. When a file the PR changed declares
    it too, the clash is the PR's: it stays, for ``_duplicates`` to refuse."""
    declaring = [d for d in head if declarations.declares(d)]
    quiet = [d for d in declaring if d.path in untouched]
    if len(quiet) < 2:
        return base, head
    touched = {_declaration_key(d) for d in declaring if d.path not in untouched}
    gone: set[tuple[str, str | None, str]] = set()
    for clash in _duplicates(quiet):
        found = next(d for d in quiet if (d.path, d.line) == (clash.path, clash.line))
        if _declaration_key(found) in touched:
            continue
        gone.add(_declaration_key(found))
        warnings.append(
            f"warning: {clash.path}:{clash.line}: {clash.detail}; neither file changed in "
            "this PR, so the dataset is not compared"
        )
    if not gone:
        return base, head
    return (
        [d for d in base if _declaration_key(d) not in gone],
        [d for d in head if _declaration_key(d) not in gone],
    )


def _untouched_warning(error: ContractError) -> str:
    where = f"{error.path}:{error.line}" if error.line else error.path
    return (
        f"warning: {where} is unreadable ({error.detail}); this PR did not change it, "
        "so it is not compared"
    )


def _unreadable_contracts(
    base: list[Dataset], head: list[Dataset], warnings: list[str], refused: list[ContractError]
) -> tuple[list[Dataset], list[Dataset]]:
    """dbt entries left unread because their properties file did not enforce them
    (``Dataset.unreadable``) that their model file's ``config()`` does enforce:
    a refusal at HEAD, a warning (and not compared) at the base."""

    def error(d: Dataset) -> ContractError:
        detail, line = d.unreadable or ("", None)
        return ContractError(d.path, detail, line)

    for d in head:
        if d.unreadable and declarations.declares(d):
            refused.append(error(d))
    kept = []
    for d in base:
        if d.unreadable and declarations.declares(d):
            warnings.append(_base_warning(error(d)))
        else:
            kept.append(d)
    return kept, head


def _read_sides(
    repo: Repo,
    file_changes: Sequence[Entry],
    workers: Workers,
    commits: tuple[str, str | None],
    limits: Limits,
    warnings: list[str],
    refused: list[ContractError],
    schema_warnings: list[ContractWarning],
) -> tuple[list[Dataset], list[Dataset]]:
    """Read and parse both sides of every changed contract file.

    dbt models then take their model file's own ``config()`` into account. An
    unreadable base file adds a warning to ``warnings`` and contributes no
    datasets; an unreadable HEAD file, and a dataset two HEAD files declare,
    adds to ``refused`` (the run goes on collecting, then refuses them all).
    Schema warnings go to ``schema_warnings``: HEAD's as they are, a base file
    read leniently as "the base version is broken". A HEAD file the PR did not
    change is read leniently like the base; if even that fails it is a warning
    and the file is compared on neither side: whether a run is refused never
    depends on files the PR did not touch.
    """
    entries: list[tuple[str, str | None, str, Project | None]] = []
    for entry in file_changes:
        change = entry.change
        if change.old_path and change.old_blob:
            entries.append((change.old_path, change.old_blob, "base", entry.base))
        if change.new_path:
            side = "head" if entry.touched else _UNTOUCHED
            entries.append((change.new_path, change.new_blob, side, entry.head))
    base: list[Dataset] = []
    head: list[Dataset] = []
    skipped: set[str] = set()
    for (path, _blob, _s, _p), (side, contract) in zip(
        entries, _load(repo, entries, workers, limits), strict=True
    ):
        if isinstance(contract, ContractError):
            if side == "base":
                warnings.append(_base_warning(contract))
            elif side == _UNTOUCHED:
                warnings.append(_untouched_warning(contract))
                skipped.add(path)
            else:
                refused.append(contract)
            continue
        if side == "base":
            schema_warnings += [_lenient_warning(w, "the base version") for w in contract.warnings]
        elif side == _UNTOUCHED:
            schema_warnings += [
                _lenient_warning(w, "this unchanged file") for w in contract.warnings
            ]
        else:
            schema_warnings += contract.warnings
        (base if side == "base" else head).extend(contract.datasets)
    base = [d for d in base if d.path not in skipped]
    old_projects = {e.change.old_path: e.base for e in file_changes if e.change.old_path}
    new_projects = {e.change.new_path: e.head for e in file_changes if e.change.new_path}
    base = dbt_model_files.apply_model_configs(repo, commits[0], base, old_projects)
    head = dbt_model_files.apply_model_configs(repo, commits[1], head, new_projects)
    base, head = _unreadable_contracts(base, head, warnings, refused)
    # dbt allows a disabled model beside an enabled one of the same name.
    untouched = {path for path, _b, side, _p in entries if side == _UNTOUCHED}
    base, head = _drop_old_clashes(base, head, untouched, warnings)
    refused += _duplicates([d for d in head if declarations.declares(d)])
    return base, head


def _unchanged_mentioning(
    repo: Repo,
    settings: Settings,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    ids: Iterable[str],
    limits: Limits,
    workers: Workers,
    index: dbt_sources.ProjectIndex | None,
) -> list[Contract | ContractError]:
    """The unchanged contract files at HEAD whose text mentions one of ``ids``, parsed.

    A text search finds the few unchanged files worth parsing; only those are read.
    """
    changed = {e.change.new_path for e in file_changes if e.change.new_path}
    # A dbt version's id (``orders.v2``) is not in its file's text; its model name is.
    needles = sorted({*ids, *(i.rpartition(".v")[0] for i in ids if i.rpartition(".v")[0])})
    candidates = [
        path
        for path in repo.files_containing(settings.head, globs, needles, ignore_case=True)
        if path not in changed
    ]
    # Unchanged dbt properties files outside the globs, where dbt itself reads them.
    dbt_globs = [*dbt_sources.PROPERTY_GLOBS, *(g for g in globs if g.startswith("!"))]
    mentions = [
        p
        for p in repo.files_containing(settings.head, dbt_globs, needles, ignore_case=True)
        if p not in changed and p not in candidates
    ]
    index = index or dbt_sources.ProjectIndex(repo, settings.head, "head")
    projects = index.locate([*candidates, *mentions])
    candidates += [p for p in mentions if projects[p] is not None]
    if not candidates:
        return []
    items = [
        (repo.read_file(settings.head, path) or b"", path, _UNTOUCHED, projects[path])
        for path in candidates
    ]
    return parse_many(items, limits=limits, workers=workers)


def _declared_elsewhere(
    repo: Repo,
    settings: Settings,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    limits: Limits,
    workers: Workers,
    index: dbt_sources.ProjectIndex | None = None,
    unreadable: list[ContractWarning] | None = None,
) -> list[ContractError]:
    """Each "new" dataset whose id an unchanged contract already declares: a clash.

    Only changed files are parsed, so a copied contract would otherwise pass as
    ``model_added``. A text search finds the few unchanged files that mention a
    new id; only those are parsed, leniently. One that cannot be read at all is
    a warning in ``unreadable`` (a file the PR did not touch never blocks it);
    without that list, it is refused. Only contracts clash: an unenforced dbt
    model is none, and two formats declaring one table are two contracts.
    """
    known = {(d.format, d.project, d.id.casefold()) for d in base if declarations.declares(d)}
    new: dict[str, list[Dataset]] = {}
    for d in head:
        if (d.format, d.project, d.id.casefold()) not in known and declarations.declares(d):
            new.setdefault(d.id.casefold(), []).append(d)
    if not new:
        return []
    found: list[ContractError] = []
    for contract in _unchanged_mentioning(
        repo, settings, globs, file_changes, new, limits, workers, index
    ):
        if isinstance(contract, ContractError):
            if unreadable is None:
                found.append(contract)
            else:
                unreadable.append(
                    ContractWarning(
                        contract.path,
                        f"this unchanged file mentions a dataset the PR adds but cannot be read "
                        f"({contract.detail}); it was not checked for declaring that dataset too",
                        contract.line,
                    )
                )
            continue
        for other in contract.datasets:
            for dataset in new.get(other.id.casefold(), ()) if declarations.declares(other) else ():
                if dbt_identity.same_dataset(dataset, other):
                    found.append(_clash(dataset, other))
    return found


def _still_declared(
    repo: Repo,
    settings: Settings,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    limits: Limits,
    workers: Workers,
    index: dbt_sources.ProjectIndex | None = None,
) -> list[tuple[Dataset, Dataset]]:
    """Each base dataset gone from the changed files that an unchanged contract
    still declares, with that declaration: a second copy the base held.

    Deleting one of two copies removes nothing (``gate.base_copies``). An
    unchanged file that cannot be parsed is no evidence either way: skipped. A
    dbt entry counts only where dbt still reads it (a properties file inside a
    project's model paths at HEAD) and only if it is a contract: after
    ``model-paths`` moves or ``dbt_project.yml`` goes, the old properties file
    still matches the contract globs, yet dbt builds nothing from it.
    """
    present = {(d.format, d.project, d.id.casefold()) for d in head}
    gone: dict[str, list[Dataset]] = {}
    for d in base:
        if (d.format, d.project, d.id.casefold()) not in present and d.enabled:
            gone.setdefault(d.id.casefold(), []).append(d)
    if not gone:
        return []
    found: list[tuple[Dataset, Dataset]] = []
    index = index or dbt_sources.ProjectIndex(repo, settings.head, "head")
    parsed = [
        c
        for c in _unchanged_mentioning(
            repo, settings, globs, file_changes, gone, limits, workers, index
        )
        if not isinstance(c, ContractError)
    ]
    read_by_dbt = index.locate(sorted({c.path for c in parsed}))  # one lookup for all
    for contract in parsed:
        for other in contract.datasets:
            if not declarations.declares(other) or (
                other.format == "dbt" and read_by_dbt.get(other.path) is None
            ):
                continue
            for dataset in gone.get(other.id.casefold(), ()):
                if (
                    other.id == dataset.id
                    and other.format == dataset.format
                    and dbt_identity.same_dataset(dataset, other)
                ):
                    found.append((dataset, other))
    return found


def _tokens(settings: Settings) -> list[acks.Token]:
    tokens = acks.parse_pr_body(settings.pr_body or "")
    tokens += acks.parse_list(",".join(settings.accept), "--accept")
    tokens += acks.parse_list(settings.accept_env, "ACCEPT_BREAKING_CHANGE")
    return tokens


def _consumer_tokens(settings: Settings) -> list[acks.Token]:
    key = acks.CONSUMER_KEY
    tokens = acks.parse_pr_body(settings.pr_body or "", key)
    tokens += acks.parse_list(
        ",".join(settings.accept_consumer_break), "--accept-consumer-break", key
    )
    tokens += acks.parse_list(settings.accept_consumer_break_env, "ACCEPT_CONSUMER_BREAK", key)
    return tokens


def _smoke(
    repo: Repo,
    settings: Settings,
    changed: list[Dataset],
    globs: Sequence[str],
    dialect: str,
    limits: Limits,
    workers: Workers,
) -> SmokeReport:
    """Run the smoke test on the HEAD contracts (imports PySpark only now)."""
    from gate.smoke import SmokeSettings, run_smoke

    if settings.smoke_changed_only:
        datasets = changed
    else:
        files = repo.list_files(settings.head, globs)
        dbt_files = dbt_sources.property_files(repo, settings.head, globs)
        entries = [
            (
                path,
                files[path] if path in files else dbt_files[path][0],
                "head",
                dbt_files[path][1] if path in dbt_files else None,
            )
            for path in sorted(set(files) | set(dbt_files))
        ]
        loaded = [c for _side, c in _load(repo, entries, workers, limits)]
        _refuse([c for c in loaded if isinstance(c, ContractError)], [e[0] for e in entries])
        datasets = [d for c in loaded if not isinstance(c, ContractError) for d in c.datasets]
        projects = {p: proj for p, _b, _s, proj in entries}
        datasets = dbt_model_files.apply_model_configs(repo, settings.head, datasets, projects)
    workers.close()  # Spark starts its own processes and threads: no idle forks beside it
    smoke_settings = SmokeSettings(
        sample_data=settings.sample_data,
        spark_master=settings.spark_master,
        spark_remote=settings.spark_remote,
        quarantine=settings.quarantine,
        dialect=dialect,
        limits=limits,
    )
    return run_smoke([d for d in datasets if d.enforced and d.enabled], repo.root, smoke_settings)


def _resolve_base(repo: Repo, base: str) -> str:
    """Resolve --base, saying how to get a remote branch that is not fetched."""
    try:
        return repo.resolve(base)
    except GitError as exc:
        if str(exc) != f"unknown ref '{base}'":
            raise
        remote, _, branch = base.partition("/")
        remotes = repo.remotes()
        if branch and remote in remotes:
            default = repo.remote_default(remote)
            other = f" (the remote's default branch is {default})" if default else ""
            raise GitError(
                f"{exc}: fetch it first (git fetch {remote} {branch}) or name another "
                f"base with --base{other}"
            ) from None
        if branch and remote.isidentifier():  # looks like remote/branch, no such remote
            has = f"remotes: {', '.join(remotes)}" if remotes else "the repository has none"
            local = [b for b in ("main", "master", "develop") if b in repo.branches()]
            hint = f", e.g. --base {local[0]}" if local else ""
            raise GitError(
                f"{exc}: there is no remote '{remote}' ({has}); name the branch your change "
                f"will merge into with --base{hint}"
            ) from None
        raise


def _dialect(
    repo: Repo, settings: Settings, config: Config, base_sha: str, notices: list[str]
) -> tuple[str, str, tuple[Relaxation, ...]]:
    """The dialect the types are read in, where it came from, and a change the PR holds.

    ``--dialect``, else the config's ``dialect:`` (the base side's, gate/policy.py),
    else what the base side's dbt profiles or SQLMesh config declare
    (gate/repo_dialect.py), else Spark. A PR that changes what those files
    declare is named; its dialect applies once merged.
    """
    if settings.dialect:
        return types.validate_dialect(settings.dialect), "--dialect", ()
    if config.dialect:
        where = (config.floor.source if config.floor else None) or config.source
        return types.validate_dialect(config.dialect), f"dialect: in {where}", ()
    found = detect_dialect(repo, base_sha, notices)
    dialect, source = (found.dialect, found.source) if found else ("spark", "the default")
    at_head = changed_at_head(repo, base_sha, settings.head, found)
    if at_head is None:
        return dialect, source, ()
    file = at_head.source.partition(": ")[0]
    return dialect, source, (Relaxation(file, "dialect", dialect, at_head.dialect),)


def run(settings: Settings) -> Report:
    """Run the gate once. Raises ``GateError`` subclasses for exit-code-2 problems.

    Refused contract files raise one ``ContractErrors`` (a ``ContractError``)
    that lists every one of them; git, ref, config and usage problems raise
    the first one alone, as they stop the run where they happen.
    """
    # The workers stop first: forked, they hold copies of the repository's pipes.
    with open_repo(settings.repo) as repo, Workers(settings.jobs) as workers:
        return _run(repo, settings, workers)


def _run(repo: Repo, settings: Settings, workers: Workers) -> Report:
    try:
        head_sha = repo.resolve(settings.head or "HEAD")
    except GitError as exc:
        if settings.head is None and str(exc) == "unknown ref 'HEAD'":
            raise GitError(
                "HEAD names no commit yet (a new repository or an orphan branch): the working "
                "tree is compared with the merge-base of --base and HEAD, so commit first"
            ) from None
        raise
    base_sha = _resolve_base(repo, settings.base)
    if settings.merge_base:
        # The refs as typed, so an error names them (both were just resolved).
        base_sha = repo.merge_base(settings.base, settings.head or "HEAD")
    # Every read below names the commit, not the ref: one comparison, one commit.
    head_commit = head_sha if settings.head is not None else None
    named = settings
    settings = replace(settings, head=head_commit)
    head_config = load_config(repo, settings.head, settings.config)
    config, relaxed = stricter(base_config(repo, base_sha, settings.config), head_config)
    # The base's limits apply, consumer file size included: a HEAD bound lowered
    # so far that no consumer is read would hide every consumer_broken.
    config = with_base_limits(config, config.limits)
    limits = config.limits
    dialect_notices: list[str] = []
    dialect, dialect_source, switched = _dialect(repo, settings, config, base_sha, dialect_notices)
    relaxed += switched
    globs = settings.contracts or config.contracts or DEFAULT_GLOBS
    fail_on = settings.fail_on or config.fail_on or Severity.ERROR

    globbed = repo.changed(base_sha, head_commit, globs)
    head_projects = dbt_sources.ProjectIndex(repo, head_commit, "head")
    warnings: list[str] = []
    file_changes = dbt_changes.collect(
        repo, base_sha, head_commit, globs, globbed, head_index=head_projects, warnings=warnings
    )
    # A pure move (same blob, same dbt context on both sides) cannot change any dataset.
    file_changes = [e for e in file_changes if not dbt_changes.is_pure_move(e)]
    if file_changes:
        # Parsing may fork workers now: load the dialect the diff and the consumer
        # scan need first, so that workers inherit it instead of loading it again.
        types.load_dialect(dialect)
    refused: list[ContractError] = []
    schema_warnings: list[ContractWarning] = []
    commits = (base_sha, head_commit)
    base, head = _read_sides(
        repo, file_changes, workers, commits, limits, warnings, refused, schema_warnings
    )
    refused += _declared_elsewhere(
        repo,
        settings,
        globs,
        file_changes,
        base,
        head,
        limits,
        workers,
        head_projects,
        schema_warnings,
    )
    # Every refusal at once, in the order git lists the files (ContractErrors).
    _refuse(refused, [e.change.new_path for e in file_changes if e.change.new_path])
    elsewhere = _still_declared(
        repo, settings, globs, file_changes, base, head, limits, workers, head_projects
    )
    base, copies = base_copies.single(base, head, elsewhere)
    warnings += copies
    renamed_projects = {
        e.base.name: e.head.name
        for e in file_changes
        if e.base and e.head and e.base.root == e.head.root and e.base.name != e.head.name
    }
    if renamed_projects:
        base = dbt_identity.follow_renames(base, renamed_projects)
    if dbt_identity.shared_names(base, head):
        base, head = dbt_identity.qualify(base, head)
        # A qualified ``platform.orders`` may meet another declaration of that id.
        _refuse(_duplicates([d for d in head if declarations.declares(d)]))
    renamed = {
        e.change.old_path: e.change.new_path
        for e in file_changes
        if e.change.status == "R" and e.change.old_path and e.change.new_path
    }
    severity_of = dbt_identity.policy_severity(config.severity_fn(), [*base, *head])
    # The consumer search starts before the diff and runs beside it (see start_search).
    search = start_consumer_search(repo, settings.head, base, head, config.consumers)
    try:
        changes: list[Change] = []
        # One dataset declared in two formats is two contracts (gate.declarations).
        for old, new in declarations.by_format(
            declarations.without_shadows(base), declarations.without_shadows(head)
        ):
            changes += diff_datasets(
                old,
                new,
                dialect=dialect,
                severity_of=severity_of,
                renamed_paths=renamed,
                now=datetime.now(timezone.utc),
            )
    except BaseException:
        if search is not None:
            search.pending.cancel()
        raise
    consumer_scan = scan_consumers(
        repo,
        settings.head,
        changes,
        base,
        head,
        config.consumers,
        dialect,
        workers,
        head_projects,
        search,
    )
    if consumer_scan.files_read:
        # A dbt properties entry without its model file builds nothing: for its
        # readers the model is gone, as diff_datasets already compares it.
        built = [d for d in head if not d.model_file_missing]
        # A deleted dbt contract whose model file stays: the table stays too.
        head_ids = {d.id for d in head}
        stays = dbt_model_files.still_built(
            repo, settings.head, [d for d in base if d.id not in head_ids]
        )
        changes = explain_consumers(changes, consumer_scan.found, built, severity_of, stays)
    acked = acks.apply(changes, _tokens(settings), *dbt_identity.ack_names([*base, *head]))
    vouched = acks.apply_consumer_breaks(acked.changes, _consumer_tokens(settings))
    smoke = (
        _smoke(repo, settings, head, globs, dialect, limits, workers) if settings.smoke else None
    )
    notices = list(settings.notices) + warnings + dialect_notices
    for number in acks.near_misses(settings.pr_body or ""):
        notices.append(
            f"PR body line {number} mentions accept-breaking-change but acknowledges nothing: "
            "start the line with 'accept-breaking-change: <dataset>' (a list bullet is fine; "
            "a quote, a checkbox, raw HTML or another spelling of the key is not)"
        )
    for number in acks.near_misses(settings.pr_body or "", acks.CONSUMER_KEY):
        notices.append(
            f"PR body line {number} mentions accept-consumer-break but clears nothing: "
            "start the line with 'accept-consumer-break: <path of the consumer file>'"
        )
    if any(getattr(head_config.limits, name) > getattr(limits, name) for name in Limits.names()):
        notices.append(
            "this PR changes 'limits' in the config; the base branch's limits apply until "
            "it is merged"
        )
    notices += [r.notice() for r in relaxed]
    if (
        not file_changes
        and not repo.list_files(settings.head, globs)
        and not dbt_sources.property_files(repo, settings.head, globs)
    ):
        # No contract at HEAD and none changed, so none at the base either. A
        # misspelt glob must never leave the check green forever: fail unless the
        # config says the repository may have none yet.
        where = ", ".join(globs)
        if not config.allow_empty:
            raise UsageError(
                f"no contract file matches the globs {where} at the base or at HEAD; "
                "set 'contracts:' in .schema-gate.yml or pass --contracts GLOB (or set "
                "'allow-empty: true' while the repository has no contract yet)"
            )
        notices.append(f"no contract file matches the globs {where} (allow-empty: true)")
    if config.source:
        notices.append(
            f"config read from {config.source} (HEAD side; changes to it are part of this PR)"
        )
    return Report(
        changes=vouched.changes,
        fail_on=fail_on,
        acknowledgements=acked.matched,
        consumer_acknowledgements=vouched.matched,
        unmatched_acknowledgements=acked.unmatched + vouched.unmatched,
        ambiguous_acknowledgements=acked.ambiguous,
        base_ref=settings.base,
        base_sha=base_sha,
        merge_base=settings.merge_base,
        head_ref=named.head,
        head_sha=head_sha,
        files_compared=len(file_changes),
        dialect=dialect,
        dialect_source=dialect_source,
        smoke=smoke,
        notices=tuple(notices),
        not_analysed=consumer_scan.not_analysed,
        warnings=tuple(schema_warnings),
        relaxations=relaxed,
    )
