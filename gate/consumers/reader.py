"""One candidate consumer file -> the contracted tables and columns it reads.

Pure: bytes in, findings out. The kind of file decides the pre-pass:
``.py`` is a PySpark job (``ast``); a ``.sql`` file that starts with a
``MODEL (...)`` header is a SQLMesh model; one with Jinja (``{{``, ``{%``) is a
dbt model; anything else is plain SQL in the configured dialect. A file the
gate cannot read comes back as ``NotAnalysed`` with a one-line reason.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from gate.consumers import jinja, pyspark, sqlmesh
from gate.consumers.names import DbtScope, NameIndex, ScopedIndex, split_name
from gate.consumers.sql import (
    Budget,
    SqlError,
    StatementScopes,
    TableName,
    Use,
    analyse,
    parse,
)
from gate.limits import DEFAULT_LIMITS
from gate.lineage.flow import FileFlow, file_flow
from gate.model import NotAnalysed

#: Bigger files are not parsed: sqlglot is pure Python, and a generated
#: multi-megabyte file must not hold up a CI gate. ``limits.consumer_bytes``.
DEFAULT_MAX_BYTES = DEFAULT_LIMITS.consumer_bytes


@dataclass(frozen=True)
class Found:
    """A use of a contracted dataset in one consumer file."""

    dataset: str
    table: TableName
    column: str | None
    path: str
    line: int
    object: str
    usage: str
    #: Datasets the pull request adds that the table name also resolves to at
    #: HEAD (``NameIndex.claimants``), for a table read (``column`` None): the
    #: read stays ``dataset``'s, yet the table it names is still there.
    at_head: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileResult:
    found: tuple[Found, ...] = ()
    not_analysed: tuple[NotAnalysed, ...] = ()
    kind: str = ""
    #: Where the followed columns go in this model (gate.lineage.flow), when it
    #: selects one of them: downstream lineage's first level, from the same parse.
    flow: FileFlow | None = None


def kind_of(path: str, text: str) -> str:
    """pyspark, sqlmesh, dbt or sql."""
    if path.endswith(".py"):
        return "pyspark"
    if sqlmesh.is_model(text):
        return "sqlmesh"
    if jinja.looks_templated(text):
        return "dbt"
    return "sql"


class _Columns:
    """``columns_of`` for the SQL analyser: contract columns by written table name."""

    def __init__(
        self, index: NameIndex | ScopedIndex, columns: Mapping[str, frozenset[str]]
    ) -> None:
        self.index = index
        self.columns = columns

    def __call__(self, table: TableName) -> frozenset[str] | None:
        ids = self.index.lookup(table)
        if not ids:
            return None
        return frozenset().union(*(self.columns.get(i, frozenset()) for i in ids))


def _known_dialect(name: str) -> bool:
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class SqlModel:
    """A ``.sql`` consumer as SQL: the object it defines, the text sqlglot reads."""

    kind: str
    #: The consuming object: the SQLMesh model's ``name``, else the file stem.
    name: str
    sql: str
    dialect: str
    #: (line, table) of ``ref()``/``source()`` calls inside other Jinja expressions.
    nested: tuple[tuple[int, str], ...] = ()
    #: (line, table) of every ``{{ ref() }}``/``{{ source() }}`` the SQL holds as a name.
    direct: tuple[tuple[int, str], ...] = ()


def as_sql(path: str, text: str, kind: str, dialect: str) -> SqlModel:
    """The pre-pass of a dbt, SQLMesh or plain SQL file (``kind_of``), lines kept.

    Raises ``jinja.JinjaError`` or ``ValueError`` (an unclosed SQLMesh header).
    Shared by the consumer scan and downstream lineage, so both read a model alike.
    """
    stem = posixpath.splitext(posixpath.basename(path))[0]
    name: str | None = stem
    if kind == "sqlmesh":
        model_dialect = sqlmesh.dialect_of(text)
        if model_dialect and _known_dialect(model_dialect):
            dialect = model_dialect  # the model's own dialect wins
        name, text = sqlmesh.split(text)
    nested: list[tuple[int, str]] = []
    direct: list[tuple[int, str]] = []
    if kind == "dbt":
        text, nested, direct = jinja.render_with_reads(text)
    text = refresh_boundaries_read(text)
    return SqlModel(kind, name or stem, text, dialect, tuple(nested), tuple(direct))


#: Snowflake's ``DYNAMIC_TABLE_REFRESH_BOUNDARY(<object_name>)`` in FROM/JOIN: the object
#: "is read like a normal table" (docs.snowflake.com, dynamic-tables-refresh-boundary),
#: only outside the reader's refresh pipeline. A name: words, dots, quotes.
_BOUNDARY = re.compile(
    r"\bdynamic_table_refresh_boundary(\s*\(\s*)([\w$.\"`]+)(\s*\))", re.IGNORECASE
)


def refresh_boundaries_read(sql: str) -> str:
    """``sql`` with each ``DYNAMIC_TABLE_REFRESH_BOUNDARY(t)`` read as the table ``t`` it
    wraps (the wrapper blanked, newlines kept: lines still point into the file), so the
    columns read from it resolve as from ``t`` (Sage-Bionetworks/snowflake's marts)."""
    if "refresh_boundary" not in sql.lower():
        return sql

    def blank(text: str) -> str:
        return "".join(c if c == "\n" else " " for c in text)

    return _BOUNDARY.sub(
        lambda m: blank("dynamic_table_refresh_boundary" + m[1]) + m[2] + blank(m[3]), sql
    )


def unseen_refs(model: SqlModel, uses: Sequence[Use]) -> list[Use]:
    """The reads of refs the SQL holds where sqlglot sees no table: an argument of a
    function in FROM (``table(dynamic_table_refresh_boundary({{ ref('x') }}))``,
    ``flatten(input => {{ ref('x') }})``). Each is a read of the table and of every
    column (``*``: the columns cannot be resolved, so it is listed as a reader of
    each; ``*`` never makes a ``consumer_broken`` of a column, only a table read
    does, of a removed model)."""
    seen = {(u.line, u.table) for u in uses}  # a table or column read there: sqlglot saw it
    out: list[Use] = []
    for line, name in dict.fromkeys(model.direct):
        table = split_name(name)
        if table and (line, table) not in seen:
            out += [Use(table, None, line, "read"), Use(table, "*", line, "star")]
    return out


def read_consumer(
    path: str,
    data: bytes,
    dialect: str,
    index: NameIndex,
    columns: Mapping[str, frozenset[str]],
    max_bytes: int = DEFAULT_MAX_BYTES,
    scope: DbtScope | None = None,
    follow: Mapping[str, frozenset[str]] | None = None,
) -> FileResult:
    """Analyse one file; never raises for bad content.

    ``scope`` places a dbt model file in its project, so its refs resolve
    as dbt resolves them (``ScopedIndex``); other kinds of file ignore it.
    ``follow``: columns of breaking changes by dataset id; when a SQL model
    selects one of them, the result carries its ``flow`` (downstream lineage).
    """
    if len(data) > max_bytes:
        return FileResult(
            not_analysed=(
                NotAnalysed(path, f"{len(data)} bytes is over the {max_bytes}-byte limit"),
            )
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FileResult(not_analysed=(NotAnalysed(path, f"not UTF-8 (byte {exc.start})"),))
    kind = kind_of(path, text)
    lookup: NameIndex | ScopedIndex = index
    if kind in ("dbt", "pyspark") and scope is not None:
        # A ``.py`` file placed in a project's model paths is a dbt Python model:
        # its ``dbt.ref()`` resolves as a ``.sql`` model's ``{{ ref() }}`` does.
        refs = frozenset(jinja.ref_projects(text))
        lookup = ScopedIndex(index, replace(scope, ref_projects=scope.ref_projects | refs))
    columns_of = _Columns(lookup, columns)
    budget = Budget()  # one per file, whatever the number of SQL texts in it
    flow: FileFlow | None = None
    stem = posixpath.splitext(posixpath.basename(path))[0]
    problems: list[NotAnalysed] = []
    uses: list[tuple[Use, str]] = []
    try:
        if kind == "pyspark":
            py_uses, py_problems = pyspark.analyse(
                text, stem, lambda sql: analyse(sql, dialect, columns_of, budget=budget), budget
            )
            uses = [(u.use, u.object) for u in py_uses]
            problems = [NotAnalysed(path, reason, line) for line, reason in py_problems]
        else:
            model = as_sql(path, text, kind, dialect)
            statements = parse(model.sql, model.dialect, budget)
            resolved: list[StatementScopes] = []
            found_uses = analyse(
                model.sql,
                model.dialect,
                columns_of,
                budget=budget,
                statements=statements,
                resolved=resolved,
            )
            if follow and _passes(found_uses, lookup, follow):
                flow = _flow(path, model, lookup, follow, columns_of, budget, statements, resolved)
            uses = [(u, model.name) for u in (*found_uses, *unseen_refs(model, found_uses))]
            uses += [
                (Use(split_name(t), None, line, "read"), model.name) for line, t in model.nested
            ]
    except SyntaxError as exc:
        return FileResult(
            not_analysed=(NotAnalysed(path, f"Python syntax error: {exc.msg}", exc.lineno),),
            kind=kind,
        )
    except MemoryError:
        # CPython's parser answers ``x = ------...1`` (100,000 signs) with a
        # MemoryError: one file the gate cannot read, not a failed run.
        return FileResult(
            not_analysed=(NotAnalysed(path, "too complex: the parser ran out of memory"),),
            kind=kind,
        )
    except (SqlError, jinja.JinjaError, ValueError) as exc:
        label = {"dbt": "dbt model", "sqlmesh": "SQLMesh model"}.get(kind, "SQL")
        line = exc.line if isinstance(exc, SqlError) else None
        return FileResult(not_analysed=(NotAnalysed(path, f"{label}: {exc}", line),), kind=kind)
    except RecursionError:
        return FileResult(not_analysed=(NotAnalysed(path, "nested too deeply"),), kind=kind)
    found = [
        Found(dataset_id, use.table, use.column, path, use.line, obj, use.usage, also)
        for use, obj in uses
        for also in [_at_head(lookup, use)]
        for dataset_id in sorted(lookup.lookup(use.table))
    ]
    return FileResult(
        found=tuple(dict.fromkeys(found)), not_analysed=tuple(problems), kind=kind, flow=flow
    )


def _at_head(lookup: NameIndex | ScopedIndex, use: Use) -> tuple[str, ...]:
    """The added datasets a table read also names at HEAD (``Found.at_head``)."""
    if use.column is not None:
        return ()
    index = lookup.index if isinstance(lookup, ScopedIndex) else lookup
    return tuple(sorted(lookup.claimants(use.table))) if index.tiered else ()


def _passes(
    uses: Sequence[Use], lookup: NameIndex | ScopedIndex, follow: Mapping[str, frozenset[str]]
) -> bool:
    """Whether the model selects a followed column (by name or through ``*``)."""
    for use in uses:
        if use.usage not in ("selected", "star") or use.column is None:
            continue
        for dataset in lookup.lookup(use.table):
            if dataset in follow and (use.column == "*" or use.column in follow[dataset]):
                return True
    return False


def _flow(
    path: str,
    model: SqlModel,
    lookup: NameIndex | ScopedIndex,
    follow: Mapping[str, frozenset[str]],
    columns_of: _Columns,
    budget: Budget,
    statements: list[exp.Expr | None],
    resolved: list[StatementScopes],
) -> FileFlow:
    """The model's flow of the followed columns; a flow past the budget is a problem, not a raise.

    ``resolved``: the scan's resolvers of ``statements``; the flow asks them
    rather than walking and resolving the same trees again."""
    try:
        return file_flow(
            path,
            model.name,
            model.sql,
            model.dialect,
            lookup.lookup,
            follow,
            columns_of,
            budget,
            statements,
            resolved,
        )
    except SqlError as exc:
        return FileFlow(path, problem=NotAnalysed(path, f"downstream lineage: {exc}", exc.line))
    except RecursionError:
        return FileFlow(path, problem=NotAnalysed(path, "downstream lineage: nested too deeply"))
