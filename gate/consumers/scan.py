"""Find the consumer files worth reading and read them: the package's only I/O.

Cost stays with the change: nothing happens unless a breaking change needs
explaining, one ``git grep -F -i -f -`` picks the files that mention a changed
dataset's table name at all, and only those are read (one batched blob read)
and parsed (in the run's worker processes when there are several).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gate.config import ConsumerConfig
from gate.consumers.impact import read_column, wants_consumers
from gate.consumers.names import (
    DbtScope,
    NameIndex,
    ScopedIndex,
    added_ids,
    added_names,
    as_resolved_at_head,
    configured,
    search_words,
)
from gate.dbt.projects import ProjectIndex, exclusions, model_folders
from gate.diff import Change
from gate.git import PendingSearch, Repo, TooLarge
from gate.limits import DEFAULT_LIMITS
from gate.model import ContractError, Dataset, NotAnalysed, UsageError
from gate.workers import Workers

if TYPE_CHECKING:  # the readers import sqlglot's optimizer: only when there is work
    from gate.consumers.reader import FileResult, Found
    from gate.lineage.flow import FileFlow

#: Below this many files, worker processes cost more than they save: a dbt model
#: takes ~2 ms of CPU to analyse (1 ms with sqlglotc); a forked worker starts in
#: ~10 ms (or is already running), a spawned one re-imports the gate (~0.3 s).
_FORK_THRESHOLD = 12
_SPAWN_THRESHOLD = 200


@dataclass(frozen=True)
class Scan:
    found: tuple[Found, ...] = ()
    not_analysed: tuple[NotAnalysed, ...] = ()
    files_read: int = 0
    #: Where the models that select a breaking change's column pass it on:
    #: downstream lineage's first level, from the scan's own parse.
    flows: tuple[FileFlow, ...] = ()


@dataclass(frozen=True)
class _Context:
    """What one scan reads with, shared by its SQL and its exposure readers:
    a value, so that neither takes a dozen parameters that must stay in step."""

    repo: Repo
    head: str | None
    config: ConsumerConfig
    dialect: str
    #: Which dataset a name in a reader means (an added contract takes no base read).
    index: NameIndex
    #: The words ``git grep`` looks for: the changed datasets' table names.
    needles: set[str]
    #: Both sides' datasets: a reader's column is checked against either.
    datasets: tuple[Dataset, ...]
    workers: Workers | None
    projects: ProjectIndex | None
    #: The dialect of one reader's file where it is not ``dialect`` for all (each dbt
    #: project's own adapter, ``gate.repo_dialect.project_dialect``); ``None``: ``dialect``.
    dialect_of: Callable[[str], str | None] | None = None


#: What every file's analysis shares: dialect, name index, columns by dataset,
#: size cap, and the breaking changes' columns by dataset (to follow downstream).
_Shared = tuple[str, NameIndex, dict[str, frozenset[str]], int, dict[str, frozenset[str]]]


def _read_one(shared: _Shared, item: tuple[str, bytes, DbtScope | None, str | None]) -> FileResult:
    """One reader's file, in its own dialect (the item's) where it has one."""
    from gate.consumers.reader import read_consumer

    path, data, scope, own = item
    dialect, index, columns, max_bytes, follow = shared
    return read_consumer(
        path, data, own or dialect, index, columns, max_bytes, scope=scope, follow=follow
    )


def _follow(changes: Sequence[Change]) -> dict[str, frozenset[str]]:
    """The columns of breaking changes, by dataset id (and old id): what lineage follows."""
    follow: dict[str, set[str]] = {}
    for change in changes:
        column = read_column(change) if change.column else None
        if column is None:
            continue
        for dataset in (change.dataset, change.old_dataset):
            if dataset:
                follow.setdefault(dataset, set()).add(column)
    return {k: frozenset(v) for k, v in follow.items()}


def warm(dialect: str) -> None:
    """Load what analysing a consumer needs (sqlglot's optimizer, ~20-50 ms) while
    git greps, rather than in the first file's analysis."""
    from gate.consumers.reader import read_consumer

    read_consumer("warm.sql", b"select a from t where b = 1", dialect, NameIndex([]), {})


def _needles(datasets: Sequence[Dataset], ids: set[str], config: ConsumerConfig) -> set[str]:
    """The table names consumers may use for the datasets ``ids``."""
    return {
        word
        for d in datasets
        if d.id in ids
        for word in search_words(d, configured(config.tables, d))
    }


@dataclass
class Search:
    """Files that mention any dataset of the changed contracts, looked for while
    the diff decides which changes are breaking."""

    pending: PendingSearch
    needles: set[str]


def start_search(
    repo: Repo,
    head: str | None,
    base: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    config: ConsumerConfig,
) -> Search | None:
    """Start the consumer search with every dataset of the changed contracts.

    The diff that tells which of them break takes ~25 ms for 100 contracts, and
    ``git grep`` over thousands of models ~50 ms; started first, the search runs
    on another core meanwhile. A pull request without a breaking change cancels
    it at once, so it costs at most the diff's time of a core that was idle.
    """
    if not config.enabled or not config.globs:
        return None
    datasets = [*base, *head_datasets]
    needles = _needles(datasets, {d.id for d in datasets}, config)
    # Word matches: ``table_100`` must not pull in every ``table_1000``.
    pending = repo.start_files_containing(head, config.globs, needles, ignore_case=True, words=True)
    return None if pending is None else Search(pending, needles)


def _too_large(size: int, limit: int) -> str:
    """The reason a file is not analysed, as ``read_consumer`` words it."""
    return f"{size} bytes is over the {limit}-byte limit"


def _mentions_any(data: bytes, needles: set[str]) -> bool:
    """Whether ``data`` contains one of ``needles`` in any case (a superset of git's -i -w)."""
    text = data.decode("utf-8", "replace").casefold()
    # git searches a needle with a newline as its lines; so does this.
    lines = (line.casefold() for needle in needles for line in needle.splitlines())
    return any(line.strip() and line in text for line in lines)


def _scopes(
    repo: Repo,
    head: str | None,
    paths: Sequence[str],
    datasets: Sequence[Dataset],
    projects: ProjectIndex | None,
    properties: bool = False,
) -> dict[str, DbtScope]:
    """The dbt project of each candidate model file, when dbt projects matter.

    Only a run that compares dbt models of a project pays for this: one batch
    lookup of the ``dbt_project.yml`` files above the candidates (usually
    already known from the comparison), and, only for a project other than the
    changed models' own, one listing of its model file names. ``properties``:
    the paths are properties files (exposures), placed as dbt reads them.
    """
    changed_in = {d.project for d in datasets if d.project is not None}
    if not changed_in:
        return {}
    index = projects if projects is not None else ProjectIndex(repo, head, "head")
    try:
        if properties:
            owners = index.locate(paths)
        else:
            # ``.py`` too: a file in a project's model paths is a dbt Python model.
            owners = index.owners(p for p in paths if p.endswith((".sql", ".py")))
    except (ContractError, UsageError):
        return {}  # an unreadable project: its files are read unscoped, as before
    local: dict[str, frozenset[str]] = {}
    scopes: dict[str, DbtScope] = {}
    for path, project in owners.items():
        if project is None:
            continue
        if changed_in - {project.name} and project.path not in local:
            stems = project.sql_folders or model_folders(repo, head, project)
            local[project.path] = frozenset(s.lower() for s in stems)
        stem, ext = posixpath.splitext(posixpath.basename(path))
        own = stem.lower() if ext in (".sql", ".py") else ""
        scopes[path] = DbtScope(project.name.lower(), local.get(project.path, frozenset()), own=own)
    return scopes


def read_candidates(
    repo: Repo, head: str | None, paths: Sequence[str], max_bytes: int
) -> tuple[list[tuple[str, bytes]], list[NotAnalysed]]:
    """The candidate files' bytes (one batched read at a commit), and those left unread.

    A file over ``max_bytes`` is never loaded (its size is asked first); a
    symlink out of the repository or a FIFO is not a regular file inside it.
    """
    unreadable: list[NotAnalysed] = []
    texts: list[tuple[str, bytes]] = []
    if head is None:
        for path in paths:
            try:
                texts.append((path, repo.read_worktree(path, max_bytes)))
            except TooLarge as exc:
                unreadable.append(NotAnalysed(path, _too_large(exc.size, max_bytes)))
            except UsageError as exc:  # a symlink out of the repository, a FIFO...
                unreadable.append(NotAnalysed(path, str(exc)))
    else:
        blobs, over = repo.read_files_within(head, paths, max_bytes)
        texts = [(path, blobs[path]) for path in paths if path in blobs]
        unreadable = [
            NotAnalysed(path, _too_large(over[path], max_bytes))
            if path in over
            else NotAnalysed(path, "not a regular file inside the repository")
            for path in paths
            if path not in blobs
        ]
    return texts, unreadable


def scan(
    repo: Repo,
    head: str | None,
    changes: Sequence[Change],
    base: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    config: ConsumerConfig,
    dialect: str,
    workers: Workers | None = None,
    projects: ProjectIndex | None = None,
    search: Search | None = None,
    dialect_of: Callable[[str], str | None] | None = None,
) -> Scan:
    """Every read of a changed dataset in the consumer files at ``head``.

    ``projects`` is the run's index of dbt projects at ``head``, if it has one.
    ``dialect_of``: a file's dialect where the dbt projects' warehouses differ
    (``gate.repo_dialect.project_dialect``, from the base side); else ``dialect``.
    ``search`` is ``start_search``'s, begun before the diff with the same
    datasets; without one, the search starts here. Either way it ends here.
    """
    try:
        return _scan(
            repo,
            head,
            changes,
            base,
            head_datasets,
            config,
            dialect,
            workers,
            projects,
            search,
            dialect_of,
        )
    finally:
        if search is not None:
            search.pending.cancel()


def _scan(
    repo: Repo,
    head: str | None,
    changes: Sequence[Change],
    base: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    config: ConsumerConfig,
    dialect: str,
    workers: Workers | None,
    projects: ProjectIndex | None,
    search: Search | None,
    dialect_of: Callable[[str], str | None] | None = None,
) -> Scan:
    wanted = [c for c in changes if wants_consumers(c)]
    if not config.enabled or not wanted or not config.globs:
        return Scan()
    ids = {c.dataset for c in wanted} | {c.old_dataset for c in wanted if c.old_dataset}
    # A contract the pull request adds owns no read a base contract's name agrees with.
    added = added_ids(base, head_datasets, changes)
    new_names = added_names(base, head_datasets, config.tables)
    index = NameIndex(as_resolved_at_head(base, head_datasets), config.tables, added, new_names)
    needles = _needles([*base, *head_datasets], ids, config)
    # dbt exposures are looked for beside the SQL and Python readers (one more git grep).
    from gate.consumers import exposures

    exposure_globs = exposures.globs(repo, head)
    exposure_search = (
        repo.start_files_containing(
            head, (*exposure_globs, *exclusions(config.sql)), [exposures.KEY], words=True
        )
        if exposure_globs
        else None
    )
    context = _Context(
        repo,
        head,
        config,
        dialect,
        index,
        needles,
        (*base, *head_datasets),
        workers,
        projects,
        dialect_of,
    )
    try:
        sql = _scan_sql(context, wanted, search)
        more = _scan_exposures(context, exposure_search)
    finally:
        if exposure_search is not None:
            exposure_search.cancel()
    if not more.files_read and not more.not_analysed:
        return sql
    return replace(
        sql,
        found=sql.found + more.found,
        not_analysed=sql.not_analysed + more.not_analysed,
        files_read=sql.files_read + more.files_read,
    )


def _scan_exposures(context: _Context, pending: PendingSearch | None) -> Scan:
    """The dbt exposures that depend on a changed dataset (``gate.consumers.exposures``).

    Only properties files dbt reads (inside a project's resource paths) that
    declare exposures and mention a changed dataset's name are parsed; one
    whose project cannot be read is listed as not analysed.
    """
    from gate.consumers.exposures import read_exposures

    paths = pending.result() if pending is not None else []
    if not paths:
        return Scan()
    max_bytes = context.config.max_file_bytes or DEFAULT_LIMITS.consumer_bytes
    texts, unreadable = read_candidates(context.repo, context.head, paths, max_bytes)
    texts = [(path, data) for path, data in texts if _mentions_any(data, context.needles)]
    if not texts:
        return Scan(not_analysed=tuple(unreadable))
    index_at = context.projects
    if index_at is None:
        index_at = ProjectIndex(context.repo, context.head, "head")
    try:
        located = index_at.locate(path for path, _data in texts)
    except (ContractError, UsageError) as exc:
        reason = f"dbt exposures: its dbt project could not be read ({exc})"
        return Scan(not_analysed=(*unreadable, *(NotAnalysed(p, reason) for p, _d in texts)))
    texts = [(path, data) for path, data in texts if located.get(path) is not None]
    scopes = _scopes(
        context.repo,
        context.head,
        [p for p, _d in texts],
        context.datasets,
        index_at,
        properties=True,
    )
    results = []
    for path, data in texts:
        scope = scopes.get(path)
        index = context.index
        lookup: NameIndex | ScopedIndex = index if scope is None else ScopedIndex(index, scope)
        results.append(read_exposures(path, data, lookup))
    return Scan(
        found=tuple(f for r in results for f in r.found),
        not_analysed=(*unreadable, *(n for r in results for n in r.not_analysed)),
        files_read=len(texts),
    )


def _scan_sql(context: _Context, wanted: Sequence[Change], search: Search | None) -> Scan:
    """The SQL and Python readers (``gate.consumers.reader``) of the changed datasets."""
    repo, head, config, dialect = context.repo, context.head, context.config, context.dialect
    needles, workers = context.needles, context.workers
    if search is not None and needles <= search.needles and search.pending.done():
        # The search is already over: nothing to overlap, and no analyser to load
        # (here or in the workers) when it found no file.
        paths = search.pending.result()
        if paths and workers is not None:
            workers.prepare(warm, dialect)
    elif search is not None and needles <= search.needles:
        # While git searches, every process loads the analyser it is about to need.
        if workers is not None:
            workers.prepare(warm, dialect)
        warm(dialect)
        paths = search.pending.result()
    else:
        if workers is not None:
            workers.prepare(warm, dialect)
        search = None
        paths = repo.files_containing(
            head,
            config.globs,
            needles,
            ignore_case=True,
            words=True,
            meanwhile=functools.partial(warm, dialect),
        )
    if not paths:
        return Scan()
    columns: dict[str, set[str]] = {}
    for dataset in context.datasets:
        columns.setdefault(dataset.id, set()).update(c.name.lower() for c in dataset.columns)
    frozen = {k: frozenset(v) for k, v in columns.items()}
    # The bound in force (``config.with_base_limits``): checked on each file's
    # size before it is read, so a huge blob is never loaded.
    max_bytes = config.max_file_bytes or DEFAULT_LIMITS.consumer_bytes
    texts, unreadable = read_candidates(repo, head, paths, max_bytes)
    if search is not None and needles != search.needles:
        # The search looked for every changed dataset; only files that mention
        # a breaking one are worth analysing.
        texts = [(path, data) for path, data in texts if _mentions_any(data, needles)]
    shared: _Shared = (dialect, context.index, frozen, max_bytes, _follow(wanted))
    scopes = _scopes(repo, head, [p for p, _d in texts], context.datasets, context.projects)
    own = context.dialect_of
    items = [(path, data, scopes.get(path), own(path) if own else None) for path, data in texts]
    if workers is None:
        workers = Workers(1)
    results = workers.map(
        _read_one,
        shared,
        items,
        fork_threshold=_FORK_THRESHOLD,
        spawn_threshold=_SPAWN_THRESHOLD,
    )
    found = tuple(f for r in results for f in r.found)
    not_analysed = (*unreadable, *(n for r in results for n in r.not_analysed))
    flows = tuple(r.flow for r in results if r.flow is not None)
    return Scan(found=found, not_analysed=not_analysed, files_read=len(texts), flows=flows)
