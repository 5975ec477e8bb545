"""Downstream lineage in the repository: where a breaking change's column goes past its first reader.

The consumer scan names the first in-repo readers of a changed column. A model
that passes the column on (same name, an alias, a cast, ``SELECT *``) makes a
new column of its own output, and the models that read *that* break too. This
follows the column hop by hop:

- level 0: the first readers' ``.sql`` files that select the column (a reader
  that only filters or aggregates it passes nothing on), read again in one
  batch and walked with ``gate.lineage.flow``;
- level n: the models reached at level n-1 are looked for by their output
  name (the dbt model's file stem, the SQLMesh ``name``, a ``CREATE VIEW``
  target) with one ``git grep -F -i -w`` over the consumer globs, and the
  files found are walked the same way.

A path ends where nothing in the repository reads the column further (a final
output), where a clause consumes it (an aggregate, a filter, a join...), or
where a bound cuts it (``limits.lineage_depth`` models, ``SECONDS`` of wall
time, ``MAX_FILES`` files); a cut path says so. Nothing here raises
``consumer_broken``: the first reader is the line to fix.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from gate.config import ConsumerConfig
from gate.consumers import jinja
from gate.consumers.impact import read_column
from gate.consumers.names import (
    NameIndex,
    added_ids,
    added_names,
    as_resolved_at_head,
    split_name,
)
from gate.consumers.reader import as_sql, kind_of
from gate.consumers.scan import read_candidates
from gate.consumers.sql import Budget, SqlError, TableName
from gate.diff import Change
from gate.git import Repo
from gate.limits import DEFAULT_LIMITS
from gate.lineage.flow import FileFlow, file_flow
from gate.model import Column, Dataset, LineageHop, LineagePath, NotAnalysed
from gate.workers import Workers

#: Paths listed per change; past it, one more path says the rest was cut.
MAX_PATHS = 50
#: Wall time of the whole walk; the levels not begun by then are cut.
SECONDS = 10.0
#: Files analysed by the whole walk (each level's files count once per level).
MAX_FILES = 2_000
#: A first reader's usages that may pass a column on to its output.
_PASSING = ("selected", "star")
_FORK_THRESHOLD = 12
_SPAWN_THRESHOLD = 200

#: A column of a contracted dataset (level 0) or of a model's output: (level kind, key, column).
Node = tuple[str, str, str]

_NAME = re.compile(r"""^(['"])([A-Za-z_][\w$]*)\1$""")


def model_alias(text: str) -> str | None:
    """The relation name a dbt model file's own ``config(alias='x')`` gives its model.

    dbt materialises the model as ``x``: SQL outside dbt's ``ref()`` (a view, a
    SQLMesh model, an analysis) reads it as ``schema.x``, while ``ref()`` still
    names the model. Read as text, like ``contract`` and ``enabled``
    (``gate.formats.dbt.model_config``): a keyword or a ``{'alias': ...}``
    literal, a later call winning. Only a quoted name counts; anything dbt would
    have to evaluate (``var()``, Jinja, concatenation) gives ``None``, as does a
    custom ``generate_alias_name`` macro's rewrite, which is not seen.
    """
    from gate.formats.dbt.model_config import (
        _KEYWORD,
        CallsTooCostly,
        _calls,
        _dict_literal,
        _split,
    )

    found: str | None = None
    try:
        calls = _calls(text)
    except CallsTooCostly:  # lineage only: a file too costly to read names no alias
        return None
    for _offset, arguments in calls:
        for _at, piece in _split(arguments):
            keyword = _KEYWORD.match(piece)
            if keyword:
                if keyword[1] == "alias":
                    value = _NAME.match(piece[keyword.end() :].strip())
                    found = value[2] if value else None
                continue
            entries = _dict_literal(piece[2:].strip() if piece.startswith("**") else piece)
            for _e, key, value_text in entries or ():
                if key == "alias":
                    value = _NAME.match(value_text.strip())
                    found = value[2] if value else None
    return found.lower() if found else None


@dataclass(frozen=True)
class _Shared:
    """What every file of one level is analysed against (picklable for the workers)."""

    dialect: str
    index: NameIndex
    #: Key (dataset id or model name) -> the columns followed.
    wanted: Mapping[str, frozenset[str]]
    #: Key -> its known column names, ``None`` when unknown.
    columns: Mapping[str, frozenset[str] | None]
    max_bytes: int


def _analyse_one(shared: _Shared, item: tuple[str, bytes, str]) -> FileFlow:
    """One model's flow, in its own dialect (the item's: its dbt project's)."""
    path, data, dialect = item
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FileFlow(path, problem=NotAnalysed(path, f"not UTF-8 (byte {exc.start})"))
    kind = kind_of(path, text)

    def columns_of(table: TableName) -> frozenset[str] | None:
        found = [shared.columns.get(k) for k in shared.index.lookup(table)]
        if not found or any(c is None for c in found):
            return None
        return frozenset().union(*(c for c in found if c is not None))

    try:
        model = as_sql(path, text, kind, dialect)
        return file_flow(
            path,
            model.name,
            model.sql,
            model.dialect,
            shared.index.lookup,
            shared.wanted,
            columns_of,
            Budget(),
        )
    except (SqlError, jinja.JinjaError, ValueError) as exc:
        label = {"dbt": "dbt model", "sqlmesh": "SQLMesh model"}.get(kind, "SQL")
        line = exc.line if isinstance(exc, SqlError) else None
        return FileFlow(path, problem=NotAnalysed(path, f"{label}: {exc}", line))
    except (RecursionError, MemoryError):
        return FileFlow(path, problem=NotAnalysed(path, "nested too deeply"))


@dataclass
class _Graph:
    """Hops and ends between nodes, as the levels find them."""

    hops: dict[Node, dict[Node, LineageHop]] = field(default_factory=dict)
    ends: dict[Node, dict[tuple[str, str, int], str]] = field(default_factory=dict)
    cut: dict[Node, str] = field(default_factory=dict)
    not_analysed: dict[str, NotAnalysed] = field(default_factory=dict)
    #: Model name (a dbt file's stem) -> the relation its ``config(alias=)`` gives it.
    aliases: dict[str, str] = field(default_factory=dict)


class _Walk:
    """The level-by-level search, bounded in depth, files and time."""

    def __init__(
        self,
        repo: Repo,
        head: str | None,
        config: ConsumerConfig,
        dialect: str,
        depth: int,
        workers: Workers,
        dialect_of: Callable[[str], str | None] | None = None,
    ) -> None:
        self.repo = repo
        self.head = head
        self.config = config
        self.dialect = dialect
        #: A file's dialect where the dbt projects' differ (``gate.repo_dialect``).
        self.dialect_of = dialect_of
        self.depth = depth
        self.workers = workers
        self.max_bytes = config.max_file_bytes or DEFAULT_LIMITS.consumer_bytes
        self.graph = _Graph()
        self.deadline = time.monotonic() + SECONDS
        self.files = 0

    def _dialect(self, path: str) -> str:
        """``path``'s own dbt project's dialect, else the run's."""
        own = self.dialect_of(path) if self.dialect_of else None
        return own or self.dialect

    def analyse(self, paths: Sequence[str], shared: _Shared) -> list[FileFlow]:
        texts, unreadable = read_candidates(self.repo, self.head, paths, self.max_bytes)
        for problem in unreadable:
            self.graph.not_analysed.setdefault(problem.path, problem)
        self.files += len(texts)
        self.learn_aliases(texts)
        return self.workers.map(
            _analyse_one,
            shared,
            [(path, data, self._dialect(path)) for path, data in texts],
            fork_threshold=_FORK_THRESHOLD,
            spawn_threshold=_SPAWN_THRESHOLD,
        )

    def learn_aliases(self, texts: Sequence[tuple[str, bytes]]) -> None:
        """The ``config(alias=)`` of each dbt model file read (a text scan, no parse)."""
        for path, data in texts:
            if not path.endswith(".sql") or b"alias" not in data:
                continue
            text = data.decode("utf-8", "replace")
            if kind_of(path, text) != "dbt":
                continue
            alias = model_alias(text)
            stem = posixpath.splitext(posixpath.basename(path))[0].lower()
            if alias and alias != stem:
                self.graph.aliases[stem] = alias

    def record(self, level: int, results: list[FileFlow]) -> dict[str, frozenset[str] | None]:
        """Hops and ends of one level; returns the output columns of the models reached."""
        kind = "dataset" if level == 0 else "model"
        outputs: dict[str, frozenset[str] | None] = {}
        for result in results:
            if result.problem is not None:
                self.graph.not_analysed.setdefault(result.path, result.problem)
                continue
            for key, model, step in result.steps:
                node = (kind, key, step.column)
                if kind == "model" and model == key:
                    continue  # a model reading its own output (an incremental {{ this }})
                if step.output is None:
                    end = (result.path, model, step.line)
                    self.graph.ends.setdefault(node, {}).setdefault(end, step.how)
                    continue
                to = ("model", model, step.output)
                hop = LineageHop(model, step.output, result.path, step.line, step.how)
                self.graph.hops.setdefault(node, {}).setdefault(to, hop)
            outputs.update(dict(result.outputs))
        return outputs

    def run(
        self,
        first: Mapping[str, set[tuple[str, str]]],
        index: NameIndex,
        columns: Mapping[str, frozenset[str] | None],
        flows: Sequence[FileFlow] = (),
    ) -> _Graph:
        """``first``: file -> (dataset id, column) its first reads select; ``flows``:
        the consumer scan's walks of first readers (``Scan.flows``), not redone."""
        wanted: dict[str, set[str]] = {}
        for reads in first.values():
            for dataset, column in reads:
                wanted.setdefault(dataset, set()).add(column)
        frozen = {k: frozenset(v) for k, v in wanted.items()}
        shared = _Shared(self.dialect, index, frozen, columns, self.max_bytes)
        # The consumer scan walked most first readers already, from its own parse.
        known = [f for f in flows if f.path in first]
        done = {f.path for f in known}
        passing = sorted(f.path for f in known if any(s.output for _k, _m, s in f.steps))
        if passing:  # the scan's files are not kept: their aliases, from one batch read
            texts, _unreadable = read_candidates(self.repo, self.head, passing, self.max_bytes)
            self.learn_aliases(texts)
        results = known + self.analyse(sorted(p for p in first if p not in done), shared)
        outputs = self.record(0, results)
        seen: set[Node] = set()
        frontier = self._new(seen)
        level = 1
        while frontier:
            if level > self.depth:
                self._cut(frontier, f"lineage cut at depth {self.depth}")
                break
            if time.monotonic() > self.deadline:
                self._cut(frontier, f"lineage cut: over the {SECONDS:g} s budget")
                break
            if self.files >= MAX_FILES:
                self._cut(frontier, f"lineage cut: over {MAX_FILES:,} files analysed")
                break
            outputs = self.level(level, frontier, outputs)
            frontier = self._new(seen)
            level += 1
        return self.graph

    def _new(self, seen: set[Node]) -> list[Node]:
        """Model nodes reached and not yet followed."""
        reached = {to for hops in self.graph.hops.values() for to in hops}
        new = sorted(reached - seen)
        seen.update(new)
        return new

    def _cut(self, nodes: Sequence[Node], note: str) -> None:
        for node in nodes:
            self.graph.cut.setdefault(node, note)

    def level(
        self, level: int, frontier: Sequence[Node], known: Mapping[str, frozenset[str] | None]
    ) -> dict[str, frozenset[str] | None]:
        wanted: dict[str, set[str]] = {}
        for _kind, model, column in frontier:
            wanted.setdefault(model, set()).add(column)
        aliases = {name: self.graph.aliases[name] for name in wanted if name in self.graph.aliases}
        models = [
            Dataset(
                id=name,
                path="",
                format="sql",
                columns=tuple(Column(c) for c in sorted(cols)),
                aliases=(aliases[name],) if name in aliases else (),
            )
            for name, cols in sorted(wanted.items())
        ]
        index = NameIndex(models)
        needles = {split_name(m)[-1] for m in (*wanted, *aliases.values()) if split_name(m)}
        paths = self.repo.files_containing(
            self.head, self.config.globs, needles, ignore_case=True, words=True
        )
        # PySpark jobs are not followed. A model named by its file's stem is not
        # its own reader (dbt refuses the cycle; ``{{ this }}`` reads no name):
        # when its own name is the only one looked for, that file is skipped
        # unread. With others, it may read one of them (a model of the same
        # level), so it is read; ``record`` drops a read of its own output.
        stems = {name for name in wanted if "." not in name}

        def own_only(path: str) -> bool:
            stem = posixpath.splitext(posixpath.basename(path))[0]
            own = {stem, aliases.get(stem, stem)}
            return stem in stems and not needles - own

        paths = [p for p in paths if p.endswith(".sql") and not own_only(p)]
        if not paths:
            return {}
        shared = _Shared(
            self.dialect,
            index,
            {k: frozenset(v) for k, v in wanted.items()},
            {name: known.get(name) for name in wanted},
            self.max_bytes,
        )
        return self.record(level, self.analyse(paths, shared))


def _contract_columns(datasets: Sequence[Dataset]) -> dict[str, frozenset[str] | None]:
    columns: dict[str, set[str]] = {}
    for dataset in datasets:
        columns.setdefault(dataset.id, set()).update(c.name.lower() for c in dataset.columns)
    return {k: frozenset(v) for k, v in columns.items()}


def _paths(change: Change, column: str, graph: _Graph) -> tuple[LineagePath, ...]:
    """Every path from the change's column through the graph, at most ``MAX_PATHS``."""
    # A rename is followed under the old name, the one the readers still use.
    read = change.before if change.spec.reads_old_name and change.before else change.column
    source = f"{change.old_dataset or change.dataset}.{read}"
    out: list[LineagePath] = []
    starts = [("dataset", d, column) for d in (change.dataset, change.old_dataset) if d]

    def walk(node: Node, hops: tuple[LineageHop, ...], on_path: frozenset[Node]) -> bool:
        """Adds the paths through ``node``; ``False`` once the cap is reached.

        Every branch adds a path (a cycle too), so the cap bounds the search:
        models reading each other would otherwise have factorially many paths."""
        if hops:
            for (path, obj, line), how in sorted(graph.ends.get(node, {}).items()):
                out.append(LineagePath(source, hops, how, path, line, obj))
            if node in graph.cut:
                out.append(LineagePath(source, hops, "cut", note=graph.cut[node]))
            elif not graph.hops.get(node) and not graph.ends.get(node):
                out.append(LineagePath(source, hops, "output"))
        for to, hop in sorted(graph.hops.get(node, {}).items()):
            if len(out) >= MAX_PATHS:
                return False
            if to in on_path:  # a cycle: listed and cut, so every branch ends in a path
                note = f"lineage cut: a cycle, {hop.model}.{hop.column} is read again"
                out.append(LineagePath(source, (*hops, hop), "cut", note=note))
                continue
            if not walk(to, (*hops, hop), on_path | {to}):
                return False
        return len(out) < MAX_PATHS

    complete = True
    for start in starts:
        complete = complete and walk(start, (), frozenset({start}))
    if not complete and out:
        last = out[-1]
        note = f"lineage cut: more than {MAX_PATHS} paths"
        out[-1] = replace(last, end="cut", note=note, end_path=None, end_line=None)
    return tuple(out[:MAX_PATHS])


@dataclass(frozen=True)
class Lineage:
    changes: list[Change]
    not_analysed: tuple[NotAnalysed, ...] = ()
    files_read: int = 0


def attach(
    repo: Repo,
    head: str | None,
    changes: list[Change],
    base: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    config: ConsumerConfig,
    dialect: str,
    depth: int = DEFAULT_LIMITS.lineage_depth,
    workers: Workers | None = None,
    flows: Sequence[FileFlow] = (),
    dialect_of: Callable[[str], str | None] | None = None,
) -> Lineage:
    """``changes`` with ``downstream`` paths on each change whose first readers pass its column on.

    ``flows``: ``Scan.flows``, the first readers the consumer scan already walked.
    ``dialect_of``: each file's dialect where the dbt projects' differ, else ``dialect``.

    Costs nothing unless a change has a ``.sql`` reader that selects the
    column (``consumers`` already attached by ``gate.consumers.explain``).
    """
    first: dict[str, set[tuple[str, str]]] = {}
    for change in changes:
        column = read_column(change) if change.column else None
        if column is None or not change.consumers:
            continue
        for consumer in change.consumers:
            if consumer.usage in _PASSING and consumer.path.endswith(".sql"):
                for dataset in (change.dataset, change.old_dataset):
                    if dataset:
                        first.setdefault(consumer.path, set()).add((dataset, column))
    if not first:
        return Lineage(changes)
    datasets = as_resolved_at_head(base, head_datasets)
    # As the consumer scan: a dataset the PR adds, or a name it gives a kept one,
    # takes no read from a base one.
    added = added_ids(base, head_datasets, changes)
    new_names = added_names(base, head_datasets, config.tables)
    index = NameIndex(datasets, config.tables, added, new_names)
    walk = _Walk(repo, head, config, dialect, depth, workers or Workers(1), dialect_of)
    graph = walk.run(first, index, _contract_columns(datasets), flows)
    out = []
    for change in changes:
        column = read_column(change) if change.column else None
        if column is None or not change.consumers:
            out.append(change)
            continue
        paths = _paths(change, column, graph)
        out.append(replace(change, downstream=paths) if paths else change)
    return Lineage(out, tuple(graph.not_analysed.values()), walk.files)
