"""dbt Mesh: the readers in another dbt project's ``manifest.json``.

A cross-project ``ref('jaffle_platform', 'stg_orders')`` appears in the
downstream project's manifest as ``model.jaffle_platform.stg_orders`` in the
reading node's ``depends_on.nodes`` (checked with dbt-core 1.10 and dbt-loom,
tests/lineage/dbt_mesh/). Each node of the manifest's own project (models,
snapshots, analyses, exposures) that depends on a node of *another* project is
a reader of it, named ``<project>.<node>`` with its ``original_file_path``.

Which columns it reads comes from its ``compiled_code`` (a manifest written by
``dbt compile``/``build``), analysed like an in-repo SQL file
(``gate.consumers.sql``): a ``SELECT *`` or SQL sqlglot cannot read gives
``columns=None`` (reads every column), and so does a manifest without compiled
SQL (``dbt parse``). Nothing is rendered or run: the manifest is data.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

import sqlglot.errors
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from gate.consumers.names import split_name
from gate.consumers.sql import (
    Budget,
    ColumnsOf,
    SqlError,
    TableName,
    analyse,
    parse,
    table_name,
)
from gate.lineage.external import ExternalRead
from gate.lineage.matching import dbt_unique_id
from gate.workers import Workers

#: Node types whose ``depends_on`` makes them readers.
_READERS = ("model", "snapshot", "analysis", "exposure", "test")

#: dbt adapter types whose SQL sqlglot reads under another name.
_DIALECTS = {"databricks": "databricks", "spark": "spark", "sqlserver": "tsql", "synapse": "tsql"}


class ManifestError(Exception):
    """Not a dbt manifest the gate can read; the message says why, in one line."""


def _project(manifest: dict[str, Any]) -> str | None:
    metadata = manifest.get("metadata")
    name = metadata.get("project_name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


def _nodes(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in ("nodes", "exposures"):
        group = manifest.get(key) or {}
        if not isinstance(group, dict):
            raise ManifestError(f"'{key}' is not a mapping")
        out += [n for n in group.values() if isinstance(n, dict)]
    return out


def _relation(node: dict[str, Any] | None, unique_id: str) -> TableName:
    """How the compiled SQL names the upstream table: its relation, else its alias."""
    if node:
        relation = node.get("relation_name")
        if isinstance(relation, str) and relation:
            return split_name(relation)
        alias = node.get("alias") or node.get("name")
        if isinstance(alias, str) and alias:
            return (alias.lower(),)
    found = dbt_unique_id(unique_id)
    if found is None:
        return ()
    model, dot_v, version = found[1].partition(".v")
    return (f"{model}_v{version}",) if dot_v else (model,)  # dbt's relation of a version


def _columns(
    sql: str, dialect: str, upstream: TableName, columns_of: ColumnsOf
) -> frozenset[str] | None:
    """The columns of ``upstream`` the SQL reads; ``None`` for a star or unreadable SQL."""
    budget = Budget()
    scopes: dict[int, list[Scope]] = {}
    try:
        # Parsed and traversed once: the star check below asks the same scopes.
        statements = parse(sql, dialect, budget)
        uses = analyse(
            sql, dialect, columns_of, budget=budget, statements=statements, scopes=scopes
        )
    except SqlError:
        return None
    size = len(upstream)
    read: set[str] = set()
    star = False
    named = False
    for use in uses:
        common = min(size, len(use.table))
        if not common or use.table[-common:] != upstream[-common:]:
            continue
        named = True
        if use.column == "*":
            star = True
        elif use.column is not None:
            read.add(use.column.lower())
    if not named:  # dbt says it reads the upstream; its SQL names it some other way
        return None
    if star and _passes_on(statements, upstream, scopes):
        return None
    return frozenset(read)


def _same(table: TableName, upstream: TableName) -> bool:
    common = min(len(table), len(upstream))
    return bool(common) and table[-common:] == upstream[-common:]


def _passes_on(
    statements: list[exp.Expr | None],
    upstream: TableName,
    scopes: dict[int, list[Scope]] | None = None,
) -> bool:
    """Whether a ``*`` hands the upstream's every column on to the model's output.

    dbt style reads every upstream through ``with x as (select * from {{ ref() }})``
    and then names the columns it uses: such a star ends inside the model, and
    the columns named after it are what it reads. A star reaches the output when
    the final ``SELECT`` (any branch of a union) projects ``*`` or ``x.*`` over
    the upstream, directly or through CTEs and derived tables that do the same.
    When in doubt (a shape not followed), it does. ``statements``: the SQL as
    ``gate.consumers.sql.parse`` parsed it; ``scopes``: the analysis's scopes of
    its queries (``gate.consumers.sql.analyse``), traversed here when missing.
    """
    scopes = scopes if scopes is not None else {}
    for statement in statements:
        if statement is None:
            continue
        query = statement.expression if isinstance(statement, exp.Create) else statement
        if not isinstance(query, exp.Query):
            return True
        walked = scopes.get(id(query))
        if walked is None:
            try:
                walked = traverse_scope(query)
            except (sqlglot.errors.SqlglotError, RecursionError):
                return True
        if walked and _escapes(walked[-1], upstream, 0):
            return True
    return False


def _escapes(scope: Scope, upstream: TableName, depth: int) -> bool:
    if depth > 32:
        return True
    if scope.set_operation_scopes:
        return any(_escapes(s, upstream, depth + 1) for s in scope.set_operation_scopes)
    select = scope.expression
    if not isinstance(select, exp.Select):
        return True
    for projection in select.expressions:
        # What FROM and JOIN select from (``scope.sources`` also holds every CTE).
        selected = {name: source for name, (_node, source) in scope.selected_sources.items()}
        if isinstance(projection, exp.Star):
            names: list[str] = list(selected)
        elif isinstance(projection, exp.Column) and projection.is_star:
            names = [projection.table]
        else:
            continue
        for name in names:
            source = selected.get(name)
            if isinstance(source, exp.Table):
                if _same(table_name(source), upstream):
                    return True
            elif isinstance(source, Scope):
                if _escapes(source, upstream, depth + 1):
                    return True
            else:
                return True
    return False


#: What lets SQL read a column without spelling its name: a star (``*``, ``t.*``,
#: ``* EXCLUDE``, ``COUNT(*)``: any ``*``, multiplication and comments included),
#: positional references and dollar-quoted text (``$1``: Snowflake; ``#1``: DuckDB),
#: escapes that spell an identifier in other characters (``\x61``: BigQuery,
#: ``U&"\0061"``: PostgreSQL), ``NATURAL JOIN`` (joins on every shared name), ``PIVOT``/``UNPIVOT``
#: (group by every column not named), ``COLUMNS('regex')`` (DuckDB) and ``TABLE t``
#: (``SELECT * FROM t``). Matched anywhere, in strings and comments too.
_IMPLICIT = re.compile(
    r"[*$#\\]|u&|(?<![a-z0-9_])(?:natural|pivot|unpivot|columns|table)(?![a-z0-9_])",
    re.IGNORECASE,
)
#: A query without ``SELECT`` (DuckDB's ``FROM t`` is ``SELECT * FROM t``).
_SELECT = re.compile(r"(?<![a-z0-9_])select(?![a-z0-9_])", re.IGNORECASE)
#: Characters a quoted identifier escapes by doubling (or a backslash): a column
#: name holding one may be spelt otherwise in SQL, so it is never prefiltered.
_QUOTES = frozenset("\"`'[]\\")


def _spelt(columns: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern matching any of ``columns`` as a whole token; ``None``: no prefilter."""
    tops = sorted({c.split(".", 1)[0] for c in columns})  # ``a.b`` is read through ``a``
    if not tops or not all(t and t.isascii() and not _QUOTES & set(t) for t in tops):
        return None
    words = "|".join(re.escape(t) for t in tops)
    return re.compile(rf"(?<![a-z0-9_])(?:{words})(?![a-z0-9_])", re.IGNORECASE)


def cannot_read(sql: str, spelt: re.Pattern[str] | None) -> bool:
    """Whether ``sql`` cannot read any of the columns ``spelt`` matches: its parse is skipped.

    Why it is sound: SQL reads a column of a table by its name, or through one
    of the forms that name no column (``_IMPLICIT``, a query without
    ``SELECT``); with none of those present, a column whose name the text never
    spells cannot be read. The spelling test errs towards "spelt": every
    occurrence counts (in a string, a comment, a longer quoted name with a dot,
    an alias, another table's column), case-insensitively whatever the quoting
    (``"AMOUNT"``, ```amount```, ``[Amount]`` spell ``amount``), and a token
    boundary is any character but an ASCII letter, digit or ``_``: an identifier
    is bounded by characters that cannot continue it (``$``, which can, is an
    ``_IMPLICIT`` form), and a digit before a name makes a number and an alias
    (``1amount``), not a read. A name holding a quote, bracket or backslash may be
    spelt with escapes (``"a""b"``), and a non-ASCII text or name may fold case
    otherwise than Python's ``lower()``: neither is prefiltered (``_spelt``,
    ``isascii``). Nested ``a.b`` is read through ``a``, the name tested.

    What it changes: such a reader's SQL is not parsed, and its read says no
    column (``frozenset()``), where the parse gave the columns it does read, or
    ``None`` when sqlglot could not read the SQL or the SQL names the upstream
    otherwise than its relation; either way it is not a reader of the changed
    columns. A whole-row reference (``SELECT t FROM orders AS t``) reads every
    column under an alias; the parse does not see it either (it reads a column
    ``t``), so the prefilter loses nothing the gate saw.
    """
    if spelt is None or not sql.isascii() or "*" in sql:  # most dbt SQL: a quick no
        return False
    if _IMPLICIT.search(sql) or not _SELECT.search(sql):
        return False
    return spelt.search(sql) is None


#: Below this many readers the pool costs more than it saves: a reader's
#: compiled SQL takes ~2-3 ms of CPU (the consumer scan's own threshold).
_FORK_THRESHOLD = 12
_SPAWN_THRESHOLD = 200

#: One reader's analysis: its compiled SQL, the dialect and the upstream's relation
#: as the SQL names it; ``None`` when there is nothing to analyse (no compiled SQL,
#: an exposure); ``SKIPPED`` when its SQL cannot read the changed columns
#: (``cannot_read``: it reads none of them, unparsed).
_Job = tuple[str, str, TableName] | str | None
SKIPPED = "skipped"


def unknown_columns(_table: TableName) -> frozenset[str] | None:
    """No contract columns known (a module-level function: a pool must pickle it)."""
    return None


def _no_deadline() -> None:
    return None


def read_manifest(
    data: bytes,
    location: str,
    dialect: str,
    wanted: Callable[[str], bool],
    columns_of: ColumnsOf = unknown_columns,
    tick: Callable[[], object] = _no_deadline,
    workers: Workers | None = None,
    changed_columns: Callable[[str], frozenset[str] | None] | None = None,
) -> list[ExternalRead]:
    """Every read of a ``wanted`` node of another project by this manifest's project.

    ``wanted`` is asked with the upstream's unique id (``model.<project>.<model>``):
    only the reads of the changed contracts are analysed, so a large manifest
    costs its JSON parse and one pass over its nodes. ``tick`` is called before
    each reader's SQL is analysed: the run's deadline raises there.

    ``workers``: the run's pool; from ``_FORK_THRESHOLD`` readers up their SQL
    is analysed there, as the consumer scan's files are (``columns_of`` and
    ``tick`` then travel to the workers: module-level functions or picklable
    objects, such as ``Deadline.left``). The reads come back in the same order.

    ``changed_columns``: the columns of an upstream (by unique id) whose readers
    the run wants; ``None`` (or no function): every column (a removed model).
    A reader whose compiled SQL cannot read any of them (``cannot_read``) is
    not parsed and reads no column.
    """
    try:
        manifest = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"not JSON: {str(exc)[:120]}") from None
    except RecursionError:
        raise ManifestError("JSON nested too deeply") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("nodes"), dict):
        raise ManifestError("not a dbt manifest.json (no 'nodes' mapping)")
    if not isinstance(manifest.get("metadata") or {}, dict):
        raise ManifestError("'metadata' is not a mapping")
    project = _project(manifest)
    adapter = (manifest.get("metadata") or {}).get("adapter_type")
    sql_dialect = _DIALECTS.get(adapter, adapter) if isinstance(adapter, str) else dialect
    nodes = _nodes(manifest)
    if not all(isinstance(n.get("unique_id"), (str, type(None))) for n in nodes):
        raise ManifestError("a node's 'unique_id' is not a string")
    by_id = {n.get("unique_id"): n for n in nodes}
    found: list[tuple[dict[str, Any], str]] = []
    for node in by_id.values():
        own = node.get("package_name")
        if node.get("resource_type") not in _READERS or (project and own != project):
            continue
        depends_on = node.get("depends_on") or {}
        if not isinstance(depends_on, dict):
            raise ManifestError(f"'depends_on' of {node.get('unique_id')} is not a mapping")
        depends = depends_on.get("nodes") or []
        if not isinstance(depends, list):
            raise ManifestError(f"'depends_on.nodes' of {node.get('unique_id')} is not a list")
        for upstream in depends:
            if not isinstance(upstream, str):
                continue
            parsed = dbt_unique_id(upstream)
            if parsed is None or parsed[0] == (own or "").lower() or not wanted(upstream):
                continue
            found.append((node, upstream))
    jobs = [_job(node, upstream, sql_dialect, by_id) for node, upstream in found]
    jobs = _prefilter(jobs, [upstream for _node, upstream in found], changed_columns)
    columns = _analyse_all(jobs, sql_dialect, columns_of, tick, workers)
    return [
        _read(node, upstream, project or node.get("package_name"), location, read)
        for (node, upstream), read in zip(found, columns, strict=True)
    ]


def _job(
    node: dict[str, Any], upstream: str, dialect: str, by_id: dict[Any, dict[str, Any]]
) -> _Job:
    compiled = node.get("compiled_code")
    if not isinstance(compiled, str) or not compiled.strip():
        return None
    if node.get("resource_type") == "exposure":
        return None
    return (compiled, dialect, _relation(by_id.get(upstream), upstream))


def _prefilter(
    jobs: list[_Job],
    upstreams: list[str],
    changed_columns: Callable[[str], frozenset[str] | None] | None,
) -> list[_Job]:
    """The jobs, each whose SQL cannot read its upstream's changed columns ``SKIPPED``.

    Kept in the list (not dropped): the reads come back in order, one per job,
    and a skipped job costs the pool nothing but its place."""
    if changed_columns is None:
        return jobs
    patterns: dict[str, re.Pattern[str] | None] = {}
    compiled: dict[frozenset[str], re.Pattern[str] | None] = {}  # upstreams share columns
    out: list[_Job] = []
    for job, upstream in zip(jobs, upstreams, strict=True):
        if upstream not in patterns:
            wanted = changed_columns(upstream)
            if wanted is not None and wanted not in compiled:
                compiled[wanted] = _spelt(wanted)
            patterns[upstream] = None if wanted is None else compiled[wanted]
        skip = isinstance(job, tuple) and cannot_read(job[0], patterns[upstream])
        out.append(SKIPPED if skip else job)
    return out


def _load_dialect(dialect: str) -> None:
    """Import the manifest's dialect (ahead of the batch, in every process)."""
    from sqlglot.dialects.dialect import Dialect

    with contextlib.suppress(ValueError):  # an unknown adapter: each reader says so
        Dialect.get_or_raise(dialect)


def _analyse_all(
    jobs: list[_Job],
    dialect: str,
    columns_of: ColumnsOf,
    tick: Callable[[], object],
    workers: Workers | None,
) -> list[frozenset[str] | None]:
    """The columns each job's reader reads, in order; in the pool when it is worth it."""
    if workers is None or sum(isinstance(job, tuple) for job in jobs) < _FORK_THRESHOLD:
        workers = Workers(1)
    else:
        workers.prepare(_load_dialect, dialect)  # workers already running load it now
        _load_dialect(dialect)
    return workers.map(
        _analyse_one,
        (columns_of, tick),
        jobs,
        fork_threshold=_FORK_THRESHOLD,
        spawn_threshold=_SPAWN_THRESHOLD,
    )


def _analyse_one(
    shared: tuple[ColumnsOf, Callable[[], object]], job: _Job
) -> frozenset[str] | None:
    columns_of, tick = shared
    tick()
    if job is None:
        return None
    if not isinstance(job, tuple):  # SKIPPED
        return frozenset()
    sql, dialect, upstream = job
    try:
        return _columns(sql, dialect, upstream, columns_of)
    except ValueError:  # an adapter sqlglot does not know
        return None


def _read(
    node: dict[str, Any],
    upstream: str,
    project: str | None,
    location: str,
    columns: frozenset[str] | None,
) -> ExternalRead:
    name = str(node.get("name") or node.get("unique_id"))
    if node.get("version") is not None:
        name = f"{name}.v{node['version']}"
    path = node.get("original_file_path")
    return ExternalRead(
        source=f"dbt-mesh:{project or location}",
        consumer=f"{project}.{name}" if project else name,
        dataset=upstream,
        columns=columns,
        location=path if isinstance(path, str) and path else location,
    )
