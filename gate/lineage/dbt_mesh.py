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
The JSON is decoded by msgspec into the fields read (``gate.lineage.dbt_manifest``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sqlglot.errors
from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokens import Token, TokenType

from gate.consumers.names import split_name
from gate.consumers.sql import (
    Budget,
    ColumnsOf,
    SqlError,
    TableName,
    Use,
    analyse,
    dialect_named,
    parse,
    table_name,
)
from gate.lineage.external import ExternalRead
from gate.lineage.matching import dbt_unique_id
from gate.workers import Workers

if TYPE_CHECKING:  # imported when a manifest is read: msgspec is not loaded before
    from gate.lineage.dbt_manifest import Manifest, Node

#: Node types whose ``depends_on`` makes them readers.
_READERS = ("model", "snapshot", "analysis", "exposure", "test")

#: dbt adapter types whose SQL sqlglot reads under another name.
_DIALECTS = {"databricks": "databricks", "spark": "spark", "sqlserver": "tsql", "synapse": "tsql"}


class ManifestError(Exception):
    """Not a dbt manifest the gate can read; the message says why, in one line."""


def _nodes(manifest: Manifest) -> list[Node]:
    from gate.lineage.dbt_manifest import Node

    out: list[Node] = []
    for key, group in (("nodes", manifest.nodes), ("exposures", manifest.exposures)):
        group = group or {}
        if not isinstance(group, dict):
            raise ManifestError(f"'{key}' is not a mapping")
        out += [n for n in group.values() if isinstance(n, Node)]  # others are skipped
    return out


def _relation(node: Node | None, unique_id: str) -> TableName:
    """How the compiled SQL names the upstream table: its relation, else its alias."""
    if node is not None:
        relation = node.relation_name
        if isinstance(relation, str) and relation:
            return split_name(relation)
        alias = node.alias or node.name
        if isinstance(alias, str) and alias:
            return (alias.lower(),)
    found = dbt_unique_id(unique_id)
    if found is None:
        return ()
    model, dot_v, version = found[1].partition(".v")
    return (f"{model}_v{version}",) if dot_v else (model,)  # dbt's relation of a version


def _columns(
    sql: str,
    dialect: str,
    upstream: TableName,
    columns_of: ColumnsOf,
    tokens: list[Token] | None = None,
) -> frozenset[str] | None:
    """The columns of ``upstream`` the SQL reads; ``None`` for a star or unreadable SQL.

    ``tokens``: the SQL already tokenized (``stars_end_inside`` asked them first)."""
    return _read_of(_analysis(sql, dialect, columns_of, tokens), upstream)


#: One compiled SQL parsed and analysed: its statements, the tables and columns
#: it uses, and the scopes of its queries; ``None`` when sqlglot cannot read it.
_Analysis = tuple[list[exp.Expr | None], list[Use], dict[int, list[Scope]]] | None


def _analysis(
    sql: str, dialect: str, columns_of: ColumnsOf, tokens: list[Token] | None = None
) -> _Analysis:
    """``sql`` parsed and analysed once, whatever the upstreams asked of it."""
    budget = Budget()
    scopes: dict[int, list[Scope]] = {}
    try:
        # Parsed and traversed once: the star check of ``_read_of`` asks the same scopes.
        statements = parse(sql, dialect, budget, tokens)
        uses = analyse(
            sql, dialect, columns_of, budget=budget, statements=statements, scopes=scopes
        )
    except SqlError:
        return None
    return statements, uses, scopes


def _read_of(analysis: _Analysis, upstream: TableName) -> frozenset[str] | None:
    """The columns of ``upstream`` an analysed SQL reads; ``None``: every column."""
    if analysis is None:
        return None
    statements, uses, scopes = analysis
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
        if any(_by_position(scope, upstream) for scope in walked):
            return True
    return False


def _by_position(scope: Scope, upstream: TableName) -> bool:
    """Whether a ``*`` over the upstream feeds a query whose columns count by
    position, not name: a branch of a union (or ``EXCEPT``/``INTERSECT``; its
    columns take the first branch's names), or a subquery compared as a row
    (``(a, b) IN (SELECT * ...)``). Every column is read there (a dropped one
    changes the arity: the query fails), wherever the result then goes."""
    if scope.set_operation_scopes:
        if _aligned(scope.set_operation_scopes):
            return False
        return any(_escapes(s, upstream, 0) for s in scope.set_operation_scopes)
    compared = scope.is_subquery and not isinstance(scope.expression.parent, exp.Exists)
    return compared and _escapes(scope, upstream, 0)


def _aligned(branches: list[Scope]) -> bool:
    """Whether the branches are each ``SELECT * FROM t`` of one table ``t``: their
    columns line up by name (``stars_end_inside``'s ``_same_star_branches``)."""
    names = set()
    for branch in branches:
        select = branch.expression
        if branch.set_operation_scopes:
            if not _aligned(branch.set_operation_scopes):
                return False
            continue
        if (
            not isinstance(select, exp.Select)
            or len(select.expressions) != 1
            or not isinstance(select.expressions[0], exp.Star)
            or select.args.get("joins")
            or len(branch.selected_sources) != 1
        ):
            return False
        source = next(iter(branch.selected_sources.values()))[1]
        if not isinstance(source, exp.Table):
            return False
        names.add(table_name(source))
    return len(names) == 1


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


#: ``_IMPLICIT`` but the star: what ``stars_end_inside`` decides on tokens instead.
_IMPLICIT_BUT_STAR = re.compile(
    r"[$#\\]|u&|(?<![a-z0-9_])(?:natural|pivot|unpivot|columns|table)(?![a-z0-9_])",
    re.IGNORECASE,
)


def needs_star_check(sql: str, spelt: re.Pattern[str] | None) -> bool:
    """Whether ``sql`` would be skipped by ``cannot_read`` but for its ``*``: then
    ``stars_end_inside`` over its tokens decides (in the worker, before a parse)."""
    if spelt is None or not sql.isascii() or "*" not in sql:
        return False
    if _IMPLICIT_BUT_STAR.search(sql) or not _SELECT.search(sql):
        return False
    return spelt.search(sql) is None


#: Tokens that end an operand and tokens that start one: a ``*`` between them multiplies.
_OPERAND_END = frozenset(
    {TokenType.NUMBER, TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING, TokenType.R_PAREN}
)
_OPERAND_START = frozenset(
    {TokenType.NUMBER, TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING, TokenType.L_PAREN}
)
#: What comes right before a projection's ``*``: ``SELECT *``, ``DISTINCT *``, ``, *``, ``t.*``.
_BEFORE_PROJECTION_STAR = frozenset(
    {TokenType.SELECT, TokenType.DISTINCT, TokenType.ALL, TokenType.COMMA, TokenType.DOT}
)
_SET_OPERATIONS = frozenset({TokenType.UNION, TokenType.INTERSECT, TokenType.EXCEPT})
#: What comes right before a subquery whose row is compared: ``IN (SELECT ...)``.
_COMPARED = frozenset(
    {
        TokenType.IN,
        TokenType.ANY,
        TokenType.ALL,
        TokenType.SOME,
        TokenType.EQ,
        TokenType.NEQ,
        TokenType.LT,
        TokenType.LTE,
        TokenType.GT,
        TokenType.GTE,
    }
)
_BY = frozenset(
    {
        TokenType.ORDER_BY,
        TokenType.GROUP_BY,
        TokenType.PARTITION_BY,
        TokenType.CLUSTER_BY,
        TokenType.DISTRIBUTE_BY,
        TokenType.SORT_BY,
    }
)


class _Level:
    """One parenthesis level of the token walk (the statement's own level first)."""

    __slots__ = ("by", "cte", "query", "starred")

    def __init__(self, query: bool, cte: tuple[TokenType, str] | None = None) -> None:
        self.query = query  # opened right before SELECT or WITH: a subquery
        self.cte = cte  # the outermost WITH's CTE it is the body of, by its name
        self.starred = False  # its projection holds a ``*``
        self.by = False  # past its ORDER/GROUP/PARTITION... BY


_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


def _name(token: Token) -> tuple[TokenType, str]:
    """A name as SQL compares it: unquoted case-insensitively, quoted exactly."""
    return (
        token.token_type,
        token.text.lower() if token.token_type == TokenType.VAR else token.text,
    )


def _outer_star_over(tokens: list[Token], i: int, ctes: dict[tuple[TokenType, str], bool]) -> bool:
    """Whether the outermost query is exactly ``SELECT * FROM <cte>`` (a ``;`` after
    it), the ``*`` at ``i``, over a CTE of its ``WITH`` whose projection has no
    ``*``: dbt style's closing ``select * from final``."""
    end = len(tokens) - (tokens[-1].token_type == TokenType.SEMICOLON)
    if i < 1 or i + 3 != end or tokens[i - 1].token_type != TokenType.SELECT:
        return False
    source = tokens[i + 2]
    return (
        tokens[i + 1].token_type == TokenType.FROM
        and source.token_type in _NAMES
        and ctes.get(_name(source)) is False
    )


def stars_end_inside(tokens: list[Token]) -> bool:
    """Whether every ``*`` of one query ends inside it, never reaching its output.

    Asked of a reader whose text never spells a changed column and holds no
    other form that reads columns unnamed (``needs_star_check``): dbt style,
    ``with src as (select * from {{ ref() }}) select src.a, src.b from src``.
    True only when the tokens (sqlglot's, so strings, comments and quoted
    names are single tokens) show

    - one statement (a ``;`` only at the end) that starts with ``SELECT`` or
      ``WITH`` and has a ``SELECT`` at its own level, and no ``UNION``,
      ``INTERSECT``, ``EXCEPT``/``MINUS`` anywhere (a branch's ``*`` counts
      by position): the outermost query is one ``SELECT`` and not in
      parentheses;
    - every ``*`` either multiplies (an operand on both sides: ``a * 2``),
      is ``COUNT(*)``, or is a projection's ``*`` (after ``SELECT``,
      ``DISTINCT``, ``ALL``, ``,`` or ``t.``) of a query in parentheses (a CTE
      body, a derived table, a subquery, but not one compared as a row after
      ``IN``, ``ANY``/``ALL``/``SOME`` or a comparison): never an argument of another
      function (``OBJECT_CONSTRUCT(*)``, ``STRUCT(t.*)`` put every column in
      one value), never ``TOP 3 *``, and at the outermost level only as the
      whole query ``SELECT * FROM final``, ``final`` a CTE of its ``WITH``
      whose own projection holds no ``*`` (dbt style's last line);
    - a query whose projection holds a ``*`` has no number and no ``ALL``
      after its ``BY`` (``ORDER BY 1``, ``GROUP BY ALL`` name columns by
      position or all at once), and no list of column names renames its
      output by position (``WITH s (a, b) AS (...)``: no such list in the
      outermost ``WITH``; ``(SELECT * ...) AS s (a, b)``: none after a
      subquery whose projection holds a ``*``).

    Why that is sound: a column of the upstream reaches a query's output or
    clauses by its name, by a form that reads it unnamed (none here but
    ``*`` and the positions excluded above), or through a ``*``. A
    projection's ``*`` in parentheses hands every column on to that
    subquery's output only; from there, again, only a name or another ``*``
    reads it. The outermost projection has no ``*``, or one over a CTE whose
    output columns are all named. So the query reads (and outputs) only
    columns it spells, which the changed ones are not: ``_columns`` would find
    none of them read and would not find the star reaching the output
    (``_passes_on`` follows the outer ``*`` to that CTE's named projections),
    so skipping the parse changes no listed reader. As for
    ``cannot_read``, SQL sqlglot cannot parse gets no column where the parse
    said "every column"; and a whole-row reference (``TO_JSON(src)``) is not
    seen, by the parse either.
    """
    if not tokens or tokens[0].token_type not in (TokenType.SELECT, TokenType.WITH):
        return False
    levels = [_Level(query=True)]
    ctes: dict[tuple[TokenType, str], bool] = {}  # the outermost WITH's: starred?
    outer_select = False
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        kind = token.token_type
        level = levels[-1]
        set_operation = kind in _SET_OPERATIONS or token.text.upper() == "MINUS"
        modifier = i > 0 and tokens[i - 1].token_type == TokenType.STAR  # ``* EXCEPT (a)``
        if set_operation and not modifier and not _same_star_branches(tokens, i):
            return False  # a union branch's ``*`` counts by position (``_by_position``)
        if kind == TokenType.L_PAREN:
            after = tokens[i + 1].token_type if i < last else None
            query = after in (TokenType.SELECT, TokenType.WITH)
            if query and i and tokens[i - 1].token_type in _COMPARED:
                return False  # ``IN (SELECT * ...)``: a row compared by position
            cte = None
            if len(levels) == 1 and not outer_select:  # in the outermost WITH
                if not query:
                    return False  # a CTE's list of column names
                named = i >= 2 and tokens[i - 2].token_type in _NAMES
                if named and tokens[i - 1].token_type == TokenType.ALIAS:
                    cte = _name(tokens[i - 2])
            levels.append(_Level(query, cte))
        elif kind == TokenType.R_PAREN:
            if len(levels) == 1:
                return False
            closed = levels.pop()
            if closed.cte is not None:
                ctes[closed.cte] = closed.starred
            if closed.starred and _renamed(tokens, i):
                return False
        elif kind == TokenType.STAR:
            before = tokens[i - 1] if i else None
            after_token = tokens[i + 1] if i < last else None
            if (
                before is not None
                and after_token is not None
                and before.token_type in _OPERAND_END
                and after_token.token_type in _OPERAND_START
            ):
                continue  # a multiplication
            if (
                i >= 2
                and before is not None
                and before.token_type == TokenType.L_PAREN
                and tokens[i - 2].text.upper() == "COUNT"
                and after_token is not None
                and after_token.token_type == TokenType.R_PAREN
            ):
                continue  # COUNT(*)
            if len(levels) == 1:
                if _outer_star_over(tokens, i, ctes):
                    continue
                return False  # the outermost projection
            if not level.query:
                return False  # a function's argument
            if before is None or before.token_type not in _BEFORE_PROJECTION_STAR or level.by:
                return False
            level.starred = True
        elif kind in _BY:
            level.by = True
        elif kind in (TokenType.NUMBER, TokenType.ALL) and level.starred and level.by:
            return False  # by position, or every column
        elif len(levels) == 1:
            if kind == TokenType.SEMICOLON and i != last:
                return False
            if kind == TokenType.SELECT:
                outer_select = True
    return len(levels) == 1 and outer_select


def _star_from(tokens: list[Token], start: int, step: int) -> tuple[int, tuple[object, ...]] | None:
    """From ``start`` (``step`` 1: forwards from ``SELECT``; -1: backwards from the
    table's last token), ``SELECT * FROM <name>``: the index past it and the name."""
    keyword = (TokenType.SELECT, TokenType.STAR, TokenType.FROM)
    i = start
    if step == 1:
        for kind in keyword:
            if i >= len(tokens) or tokens[i].token_type != kind:
                return None
            i += 1
    name: list[object] = []
    while 0 <= i < len(tokens) and (
        tokens[i].token_type in _NAMES or tokens[i].token_type == TokenType.DOT
    ):
        token = tokens[i]
        name.append(_name(token) if token.token_type in _NAMES else ".")
        i += step
    if not name:
        return None
    if step == -1:
        for kind in reversed(keyword):
            if i < 0 or tokens[i].token_type != kind:
                return None
            i -= 1
        name.reverse()
    return i, tuple(name)


def _same_star_branches(tokens: list[Token], i: int) -> bool:
    """Whether the set operation at ``i`` joins ``SELECT * FROM t`` to ``SELECT * FROM t``
    (the same table, nothing else in either branch): its columns line up by name."""
    left = _star_from(tokens, i - 1, -1)
    j = i + 1
    while j < len(tokens) and tokens[j].token_type in (TokenType.ALL, TokenType.DISTINCT):
        j += 1
    right = _star_from(tokens, j, 1)
    if left is None or right is None or left[1] != right[1]:
        return False
    before, after = left[0], right[0]
    ends = (TokenType.L_PAREN, TokenType.R_PAREN, *_SET_OPERATIONS)
    return (
        before >= 0
        and (tokens[before].token_type in ends or tokens[before].text.upper() == "MINUS")
        and after < len(tokens)
        and (tokens[after].token_type in ends or tokens[after].text.upper() == "MINUS")
    )


def _renamed(tokens: list[Token], i: int) -> bool:
    """Whether the subquery closed at ``i`` is aliased with column names: ``AS s (a, b)``."""
    j = i + 1
    if j < len(tokens) and tokens[j].token_type == TokenType.ALIAS:
        j += 1
    return (
        j + 1 < len(tokens)
        and tokens[j].token_type in _NAMES
        and tokens[j + 1].token_type == TokenType.L_PAREN
    )


def _tokens(sql: str, dialect: str) -> list[Token] | None:
    """sqlglot's tokens of ``sql``; ``None`` when it cannot tokenize it (then parsed,
    to fail with the parse's own reason)."""
    try:
        return dialect_named(dialect).tokenize(sql)
    except (TokenError, RecursionError):
        return None


#: Below this many readers the pool costs more than it saves: a reader's
#: compiled SQL takes ~2-3 ms of CPU (the consumer scan's own threshold).
_FORK_THRESHOLD = 12
_SPAWN_THRESHOLD = 200

#: What a reader's job does for one upstream: parse its SQL (``PARSE``), decide
#: its stars on tokens first (``STAR_CHECK``, ``needs_star_check``), or nothing:
#: its SQL cannot read the changed columns (``SKIP``, ``cannot_read``).
PARSE, STAR_CHECK, SKIP = "parse", "star check", "skip"

#: One reader's analysis: its compiled SQL, the dialect, and per upstream it
#: reads (a node of another project it depends on, wanted by the run) the
#: relation its SQL names it by and what to do (``PARSE``...); ``None`` when
#: there is nothing to analyse (no compiled SQL, an exposure). One job a node:
#: a reader of several changed upstreams is parsed once for all of them.
_Job = tuple[str, str, tuple[tuple[TableName, str], ...]] | None


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
    trust_unread: bool = True,
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

    ``trust_unread``: a cached analysis (``gate.lineage.analysis_cache``) may
    say a reader reads none of the changed columns; ``False`` (usage-aware
    severity, where that lowers an error) analyses such a reader again.
    """
    from gate.lineage import analysis_cache

    where = analysis_cache.folder() if trust_unread else None
    if where is None:
        return _read_manifest(
            data,
            location,
            dialect,
            wanted,
            columns_of,
            tick,
            workers,
            changed_columns,
            trust_unread,
        )
    key = analysis_cache.manifest_key(data, location, dialect)
    hit = analysis_cache.load_manifest(where, key)
    if hit is not None and _holds(hit[0], wanted, changed_columns, columns_of):
        return [
            ExternalRead(
                source=source,
                consumer=consumer,
                dataset=dataset,
                columns=None if columns is None else frozenset(columns),
                location=place,
            )
            for source, consumer, dataset, columns, place in hit[1]
        ]
    asked_wanted: dict[str, bool] = {}
    asked_changed: dict[str, list[str] | None] = {}

    def wanted_asked(upstream: str) -> bool:
        asked_wanted[upstream] = answer = bool(wanted(upstream))
        return answer

    def changed_asked(upstream: str) -> frozenset[str] | None:
        assert changed_columns is not None
        found = changed_columns(upstream)
        asked_changed[upstream] = None if found is None else sorted(found)
        return found

    asked_columns: dict[TableName, list[str] | None] = {}
    reads = _read_manifest(
        data,
        location,
        dialect,
        wanted_asked,
        columns_of,
        tick,
        workers,
        changed_asked if changed_columns is not None else None,
        trust_unread,
        asked_columns,
    )
    questions: analysis_cache.Questions = (
        sorted(asked_wanted.items()),
        None if changed_columns is None else sorted(asked_changed.items()),
        sorted(asked_columns.items()),
    )
    fields = [
        (
            r.source,
            r.consumer,
            r.dataset,
            None if r.columns is None else sorted(r.columns),
            r.location,
        )
        for r in reads
    ]
    analysis_cache.store_manifest(where, key, questions, fields)
    return reads


def _holds(
    questions: Any,
    wanted: Callable[[str], bool],
    changed_columns: Callable[[str], frozenset[str] | None] | None,
    columns_of: ColumnsOf,
) -> bool:
    """This run answers every question a cached manifest entry recorded the same."""
    from gate.lineage import analysis_cache

    asked_wanted, asked_changed, asked_columns = questions
    if any(bool(wanted(u)) != w for u, w in asked_wanted):
        return False
    if (changed_columns is None) != (asked_changed is None):
        return False
    if changed_columns is not None:
        for upstream, columns in asked_changed:
            found = changed_columns(upstream)
            if (None if found is None else sorted(found)) != columns:
                return False
    tables = [t for t, _a in asked_columns]
    return analysis_cache.answers(columns_of, tables) == asked_columns


def _read_manifest(
    data: bytes,
    location: str,
    dialect: str,
    wanted: Callable[[str], bool],
    columns_of: ColumnsOf,
    tick: Callable[[], object],
    workers: Workers | None,
    changed_columns: Callable[[str], frozenset[str] | None] | None,
    trust_unread: bool,
    asked_columns: dict[TableName, list[str] | None] | None = None,
) -> list[ExternalRead]:
    """``read_manifest`` without its whole-manifest cache; ``asked_columns`` (with a
    cache directory) collects the contracts' columns the readers' analyses asked."""
    from gate.lineage.dbt_manifest import DecodeError, Manifest, Metadata, decode

    try:
        manifest = decode(data)
    except DecodeError as exc:
        raise ManifestError(str(exc)) from None
    if not isinstance(manifest, Manifest) or not isinstance(manifest.nodes, dict):
        raise ManifestError("not a dbt manifest.json (no 'nodes' mapping)")
    metadata = manifest.metadata or None
    if metadata is not None and not isinstance(metadata, Metadata):
        raise ManifestError("'metadata' is not a mapping")
    name = metadata.project_name if metadata is not None else None
    project = name if isinstance(name, str) and name else None
    adapter = metadata.adapter_type if metadata is not None else None
    sql_dialect = _DIALECTS.get(adapter, adapter) if isinstance(adapter, str) else dialect
    nodes = _nodes(manifest)
    if not all(isinstance(n.unique_id, (str, type(None))) for n in nodes):
        raise ManifestError("a node's 'unique_id' is not a string")
    by_id = {n.unique_id: n for n in nodes}
    found: list[tuple[Node, str]] = []
    for node in by_id.values():
        own = node.package_name
        if node.resource_type not in _READERS or (project and own != project):
            continue
        depends_on = node.depends_on or {}
        if not isinstance(depends_on, dict):
            raise ManifestError(f"'depends_on' of {node.unique_id} is not a mapping")
        depends = depends_on.get("nodes") or []
        if not isinstance(depends, list):
            raise ManifestError(f"'depends_on.nodes' of {node.unique_id} is not a list")
        for upstream in depends:
            if not isinstance(upstream, str):
                continue
            parsed = dbt_unique_id(upstream)
            if parsed is None:
                continue
            if own and not isinstance(own, str):  # was a traceback (AttributeError)
                raise ManifestError(f"'package_name' of {node.unique_id} is not a string")
            if parsed[0] == (own or "").lower() or not wanted(upstream):
                continue
            found.append((node, upstream))
    groups: list[tuple[Node, list[str]]] = []  # one a reader node, in order
    for node, upstream in found:
        if groups and groups[-1][0] is node:
            groups[-1][1].append(upstream)
        else:
            groups.append((node, [upstream]))
    how = _Prefilter(changed_columns)
    jobs = [_job(node, ups, sql_dialect, by_id, how) for node, ups in groups]
    wanted_columns = None
    if not trust_unread:
        wanted_columns = [
            tuple(changed_columns(u) if changed_columns else None for u in ups)
            for _node, ups in groups
        ]
    results = _analyse_all(
        jobs, sql_dialect, columns_of, tick, workers, wanted_columns, asked_columns
    )
    columns = [
        read
        for (_node, ups), result in zip(groups, results, strict=True)
        for read in (result if result is not None else [None] * len(ups))
    ]
    return [
        _read(node, upstream, project or node.package_name, location, read)
        for (node, upstream), read in zip(found, columns, strict=True)
    ]


class _Prefilter:
    """What a reader's job does for an upstream, from the columns the run wants of it.

    ``changed_columns`` ``None`` (or its answer ``None``: a removed model):
    every reader is parsed. The patterns are compiled once per set of columns."""

    def __init__(self, changed_columns: Callable[[str], frozenset[str] | None] | None) -> None:
        self._changed = changed_columns
        self._patterns: dict[str, re.Pattern[str] | None] = {}
        self._compiled: dict[frozenset[str], re.Pattern[str] | None] = {}

    def __call__(self, sql: str, upstream: str) -> str:
        if self._changed is None:
            return PARSE
        if upstream not in self._patterns:
            wanted = self._changed(upstream)
            if wanted is not None and wanted not in self._compiled:
                self._compiled[wanted] = _spelt(wanted)
            self._patterns[upstream] = None if wanted is None else self._compiled[wanted]
        spelt = self._patterns[upstream]
        if cannot_read(sql, spelt):
            return SKIP
        return STAR_CHECK if needs_star_check(sql, spelt) else PARSE


def _job(
    node: Node,
    upstreams: list[str],
    dialect: str,
    by_id: dict[Any, Node],
    how: Callable[[str, str], str],
) -> _Job:
    compiled = node.compiled_code
    if not isinstance(compiled, str) or not compiled.strip():
        return None
    if node.resource_type == "exposure":
        return None
    wants = tuple((_relation(by_id.get(u), u), how(compiled, u)) for u in upstreams)
    return (compiled, dialect, wants)


def _load_dialect(dialect: str) -> None:
    """Import the manifest's dialect (ahead of the batch, in every process)."""
    with contextlib.suppress(ValueError):  # an unknown adapter: each reader says so
        dialect_named(dialect)


def _analyse_all(
    jobs: list[_Job],
    dialect: str,
    columns_of: ColumnsOf,
    tick: Callable[[], object],
    workers: Workers | None,
    wanted_columns: list[tuple[frozenset[str] | None, ...]] | None = None,
    asked_columns: dict[TableName, list[str] | None] | None = None,
) -> list[tuple[frozenset[str] | None, ...] | None]:
    """What each job's reader reads of each of its upstreams, in order; in the
    pool when it is worth it (jobs with nothing but ``SKIP`` cost it nothing).

    With a cache directory (``gate.lineage.analysis_cache``), a job analysed
    before is looked up instead, and the others are analysed and stored.
    ``wanted_columns`` (per job, per upstream; usage-aware severity): an entry
    is used only where it says every one of them is read."""
    from gate.lineage import analysis_cache

    where = analysis_cache.folder()
    if where is None:
        return _analyse_jobs(_analyse_one, jobs, dialect, columns_of, tick, workers)
    results: list[tuple[frozenset[str] | None, ...] | None] = [None] * len(jobs)
    missed: list[int] = []
    keys: dict[int, str] = {}
    for i, job in enumerate(jobs):
        if job is None or all(h == SKIP for _u, h in job[2]):
            results[i] = _analyse_one((columns_of, _no_deadline), job)
            continue
        keys[i] = analysis_cache.key(job[0], job[1], job[2])
        hit = analysis_cache.load(where, keys[i])
        if hit is not None and _trusted(hit, columns_of, job, wanted_columns, i):
            results[i] = hit[0]
            if asked_columns is not None:
                asked_columns.update(hit[1])
        else:
            missed.append(i)
    done = _analyse_jobs(
        _analyse_recorded, [jobs[i] for i in missed], dialect, columns_of, tick, workers
    )
    wrote = False
    for i, found in zip(missed, done, strict=True):
        assert found is not None  # a job with work always answers
        out, asked, parsed = found
        results[i] = out
        if asked_columns is not None:
            asked_columns.update(asked)
        if parsed:  # a reader its tokens decided is decided again faster than read back
            wrote |= analysis_cache.store(where, keys[i], out, asked)
    if wrote:
        analysis_cache.prune(where)
    return results


def _trusted(
    hit: tuple[tuple[frozenset[str] | None, ...], list[Any]],
    columns_of: ColumnsOf,
    job: _Job,
    wanted_columns: list[tuple[frozenset[str] | None, ...]] | None,
    i: int,
) -> bool:
    """A cached analysis holds for this run: the contracts' columns it asked are
    unchanged, and (usage-aware) it says the reader reads every changed column
    wherever it says anything: each removed column is graded by its own readers,
    so a read of one (planted) must not stand for the others."""
    from gate.lineage import analysis_cache

    result, asked = hit
    if analysis_cache.answers(columns_of, [t for t, _a in asked]) != asked:
        return False
    if wanted_columns is None or job is None:
        return True
    for (_up, how), read, wanted in zip(job[2], result, wanted_columns[i], strict=True):
        if how == SKIP or read is None:
            continue
        if wanted is None or not wanted <= read:  # "reads some or none": analysed again
            return False
    return True


def _analyse_jobs(
    analyse_one: Callable[[tuple[ColumnsOf, Callable[[], object]], _Job], Any],
    jobs: list[_Job],
    dialect: str,
    columns_of: ColumnsOf,
    tick: Callable[[], object],
    workers: Workers | None,
) -> list[Any]:
    work = sum(job is not None and any(h != SKIP for _u, h in job[2]) for job in jobs)
    if workers is None or work < _FORK_THRESHOLD:
        workers = Workers(1)
    else:
        workers.prepare(_load_dialect, dialect)  # workers already running load it now
        _load_dialect(dialect)
    return workers.map(
        analyse_one,
        (columns_of, tick),
        jobs,
        fork_threshold=_FORK_THRESHOLD,
        spawn_threshold=_SPAWN_THRESHOLD,
    )


class _Recorder:
    """``columns_of`` that remembers what it was asked, for the cache entry."""

    def __init__(self, columns_of: ColumnsOf) -> None:
        self.columns_of = columns_of
        self.asked: dict[TableName, list[str] | None] = {}

    def __call__(self, table: TableName) -> frozenset[str] | None:
        found = self.columns_of(table)
        self.asked[tuple(table)] = None if found is None else sorted(found)
        return found


def _analyse_recorded(
    shared: tuple[ColumnsOf, Callable[[], object]], job: _Job
) -> tuple[
    tuple[frozenset[str] | None, ...] | None, list[tuple[TableName, list[str] | None]], bool
]:
    """``_analyse_one``, with the contracts' columns its analysis asked, and
    whether its SQL was parsed (else its tokens or the text decided it: such
    an entry would cost a cold run a file write to save a warm one ~0.3 ms)."""
    columns_of, tick = shared
    recorder = _Recorder(columns_of)
    out, parsed = _analyse_job((recorder, tick), job)
    return out, sorted(recorder.asked.items()), parsed


def _analyse_one(
    shared: tuple[ColumnsOf, Callable[[], object]], job: _Job
) -> tuple[frozenset[str] | None, ...] | None:
    return _analyse_job(shared, job)[0]


def _analyse_job(
    shared: tuple[ColumnsOf, Callable[[], object]], job: _Job
) -> tuple[tuple[frozenset[str] | None, ...] | None, bool]:
    """What the reader reads of each upstream, and whether its SQL was parsed."""
    columns_of, tick = shared
    tick()
    if job is None:
        return None, False
    sql, dialect, wants = job
    out: list[frozenset[str] | None] = []
    tokens: list[Token] | None = None
    stars_inside: bool | None = None
    analysis: _Analysis = None
    analysed = False
    for upstream, how in wants:
        if how == SKIP:
            out.append(frozenset())
            continue
        try:
            if how == STAR_CHECK:
                if stars_inside is None:
                    tokens = _tokens(sql, dialect)
                    stars_inside = tokens is not None and stars_end_inside(tokens)
                if stars_inside:
                    out.append(frozenset())  # reads none of the changed columns: no parse
                    continue
            if not analysed:
                analysis, analysed = _analysis(sql, dialect, columns_of, tokens), True
            out.append(_read_of(analysis, upstream))
        except ValueError:  # an adapter sqlglot does not know
            out.append(None)
    return tuple(out), analysed


def _read(
    node: Node,
    upstream: str,
    project: str | None,
    location: str,
    columns: frozenset[str] | None,
) -> ExternalRead:
    name = str(node.name or node.unique_id)
    if node.version is not None:
        name = f"{name}.v{node.version}"
    path = node.original_file_path
    return ExternalRead(
        source=f"dbt-mesh:{project or location}",
        consumer=f"{project}.{name}" if project else name,
        dataset=upstream,
        columns=columns,
        location=path if isinstance(path, str) and path else location,
    )
