"""Which tables and columns a SQL text reads, resolved through sqlglot's scopes.

Why not ``sqlglot.optimizer.qualify``: it raises ``OptimizeError`` on the first
column it cannot find ("Unknown column", "could not be resolved") and on every
ambiguous unqualified column, and a consumer that reads a column the contract
no longer has is exactly the case the gate must report, not give up on. So the
gate walks sqlglot's scopes (``traverse_scope``) itself and asks the contracts'
columns (a ``MappingSchema`` built from the base and HEAD contracts) only to
decide which source an unqualified column belongs to. Tables no contract
describes stay unknown: their columns are never guessed.

Line numbers come from the tokens sqlglot keeps on identifiers (``meta``), so a
use is anchored where it is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope

#: A table as written, lower-cased parts: ``("shop", "orders")``.
TableName = tuple[str, ...]
#: The columns a contract gives a table (lower-cased), or ``None`` for an unknown table.
ColumnsOf = Callable[[TableName], "frozenset[str] | None"]

#: Column usages sqlglot can tell apart, in the words reports use.
USAGES = ("selected", "filtered", "joined", "aggregated", "grouped", "ordered", "star", "read")

#: sqlglot parses ~20,000 tokens a second in pure Python; a model is rarely
#: over 2,000. The budget keeps one generated or hostile file from holding up CI.
MAX_TOKENS = 30_000

#: How deep the gate follows ``SELECT *`` through derived tables and CTEs.
_MAX_TRACE = 32


class SqlError(Exception):
    """The text could not be analysed; the message says why, in one line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line if isinstance(line, int) else None


@dataclass(frozen=True)
class Use:
    """One read of a table (``column`` is ``None``) or of one of its columns.

    ``column`` is ``"*"`` for ``SELECT *`` over the table: a use of every column.
    ``line`` is 1-based within the analysed text.
    """

    table: TableName
    column: str | None
    line: int
    usage: str


def table_name(table: exp.Table) -> TableName:
    """``catalog.db.name`` of a table reference, lower-cased, empty parts dropped."""
    parts = [table.catalog, table.db, table.name]
    return tuple(p.lower() for p in parts if p)


def _line(node: exp.Expr, fallback: int) -> int:
    this = node.args.get("this")
    if isinstance(this, exp.Identifier) and isinstance(this.meta.get("line"), int):
        return this.meta["line"]  # the common case: a column's or a table's own name
    for candidate in (node, *node.find_all(exp.Identifier, exp.Star)):
        line = candidate.meta.get("line") if candidate.meta else None
        if isinstance(line, int):
            return line
    return fallback


def _usage(node: exp.Expr, stop: exp.Expr) -> str:
    """The innermost clause a column sits in, as a usage word."""
    current: exp.Expr | None = node
    while current is not None and current is not stop:
        parent = current.parent
        if isinstance(current, exp.AggFunc):
            return "aggregated"
        if isinstance(current, (exp.Where, exp.Having, exp.Qualify)):
            return "filtered"
        if isinstance(parent, exp.Join) and current.arg_key in ("on", "using"):
            return "joined"
        if isinstance(current, exp.Group):
            return "grouped"
        if isinstance(current, exp.Order):
            return "ordered"
        current = parent
    return "selected"


class _Resolver:
    """Resolve the columns of one statement's scopes to (table, column) reads."""

    def __init__(self, columns_of: ColumnsOf, fallback_line: int) -> None:
        self.columns_of = columns_of
        self.fallback_line = fallback_line
        self.uses: list[Use] = []
        self._outputs: dict[int, frozenset[str] | None] = {}
        self._names: dict[int, TableName] = {}

    def name(self, table: exp.Table) -> TableName:
        key = id(table)
        if key not in self._names:
            self._names[key] = table_name(table)
        return self._names[key]

    # what a source offers

    def outputs(self, source: exp.Table | Scope, depth: int = 0) -> frozenset[str] | None:
        """Column names a source provides, ``None`` when they cannot be known (memoised)."""
        key = id(source)
        if key not in self._outputs:
            self._outputs[key] = self._compute_outputs(source, depth)
        return self._outputs[key]

    def _compute_outputs(self, source: exp.Table | Scope, depth: int) -> frozenset[str] | None:
        if isinstance(source, exp.Table):
            return self.columns_of(self.name(source))
        if depth > _MAX_TRACE:
            return None
        if source.set_operation_scopes:
            return self.outputs(source.set_operation_scopes[0], depth + 1)
        select = source.expression
        if not isinstance(select, exp.Select):
            return None
        names: set[str] = set()
        for projection in select.selects:
            if _is_star(projection):
                for src in self._star_sources(source, projection):
                    inner = self.outputs(src, depth + 1)
                    if inner is None:
                        return None
                    names |= inner
            else:
                names.add(projection.alias_or_name.lower())
        return frozenset(names)

    def _star_sources(self, scope: Scope, projection: exp.Expr) -> list[exp.Table | Scope]:
        if isinstance(projection, exp.Column) and projection.table:
            source = scope.sources.get(projection.table)
            return [source] if source is not None else []
        return [source for _node, source in scope.selected_sources.values()]

    # tracing a column to the tables that hold it

    def trace(self, source: exp.Table | Scope, name: str, depth: int = 0) -> list[TableName]:
        """The tables whose column ``name`` a reference to ``source.name`` reads.

        An explicit projection of a derived table is recorded when its own scope
        is walked, so tracing stops there; only names that pass through a
        ``SELECT *`` are followed to the table underneath.
        """
        if isinstance(source, exp.Table):
            known = self.columns_of(self.name(source))
            return [self.name(source)] if known is None or name in known else []
        if depth > _MAX_TRACE:
            return []
        if source.set_operation_scopes:
            return [t for s in source.set_operation_scopes for t in self.trace(s, name, depth + 1)]
        select = source.expression
        if not isinstance(select, exp.Select):
            return []
        if any(not _is_star(p) and p.alias_or_name.lower() == name for p in select.selects):
            return []
        found: list[TableName] = []
        for projection in select.selects:
            if not _is_star(projection):
                continue
            candidates = self._star_sources(source, projection)
            having = [c for c in candidates if name in (self.outputs(c, depth + 1) or ())]
            unknown = [c for c in candidates if self.outputs(c, depth + 1) is None]
            chosen = having or (unknown if len(unknown) == 1 else [])
            for candidate in chosen:
                found += self.trace(candidate, name, depth + 1)
        return found

    def source_of(self, scope: Scope, column: exp.Column) -> exp.Table | Scope | None:
        """The source a column reads, or ``None`` when it cannot be told."""
        selected = {alias: source for alias, (_node, source) in scope.selected_sources.items()}
        if column.table:
            return selected.get(column.table)  # else an outer scope's column: counted there
        if len(selected) == 1:
            return next(iter(selected.values()))
        name = column.name.lower()
        offers = {alias: self.outputs(source) for alias, source in selected.items()}
        having = [alias for alias, names in offers.items() if names is not None and name in names]
        if len(having) == 1:
            return selected[having[0]]
        unknown = [alias for alias, names in offers.items() if names is None]
        if not having and len(unknown) == 1:
            return selected[unknown[0]]
        return None

    # one scope

    def scope(self, scope: Scope) -> None:
        stop = scope.expression
        for _alias, (node, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table):
                line = _line(node, self.fallback_line)
                self.uses.append(Use(self.name(source), None, line, "read"))
        select = scope.expression
        if isinstance(select, exp.Select):
            for projection in select.selects:
                if not _is_star(projection):
                    continue
                line = _line(projection, self.fallback_line)
                for source in self._star_sources(scope, projection):
                    for table in self._star_tables(source):
                        self.uses.append(Use(table, "*", line, "star"))
        for column in _scope_columns(scope):
            if isinstance(column.this, exp.Star):
                continue
            owner = self.source_of(scope, column)
            if owner is None:
                continue
            name = column.name.lower()
            usage = _usage(column, stop)
            line = _line(column, self.fallback_line)
            for table in self.trace(owner, name):
                self.uses.append(Use(table, name, line, usage))
        for join in select.args.get("joins") or [] if isinstance(select, exp.Select) else []:
            self._using(scope, join)

    def _using(self, scope: Scope, join: exp.Join) -> None:
        """``JOIN ... USING (id)`` names columns of both sides without a Column node."""
        for ident in join.args.get("using") or []:
            name = ident.name.lower()
            line = _line(ident, self.fallback_line)
            for _alias, (_node, source) in scope.selected_sources.items():
                for table in self.trace(source, name):
                    self.uses.append(Use(table, name, line, "joined"))

    def _star_tables(self, source: exp.Table | Scope, depth: int = 0) -> list[TableName]:
        """Tables whose every column a ``*`` over ``source`` selects."""
        if isinstance(source, exp.Table):
            return [self.name(source)]
        return []  # a derived table's own ``*`` is recorded when its scope is walked


def _scope_columns(scope: Scope) -> list[exp.Column]:
    """``scope.columns`` plus unqualified HAVING/QUALIFY/ORDER BY columns.

    sqlglot leaves those out of ``Scope.columns`` because they may name a
    projection alias; here a name that is not one of the scope's projections
    is a real column read (``HAVING max(discount_code) > 'a'``).
    """
    columns = list(scope.columns)
    expression = scope.expression
    if not any(expression.args.get(k) for k in ("having", "qualify", "order")):
        return columns  # nothing sqlglot left out: skip the second walk
    seen = {id(c) for c in columns}
    named = set(expression.named_selects) if isinstance(expression, exp.Query) else set()
    for node in scope.walk():
        if (
            type(node) is exp.Column
            and id(node) not in seen
            and not node.table
            and not isinstance(node.this, exp.Star)
            and node.name not in named
        ):
            columns.append(node)
    return columns


def _is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    )


def _queries(statement: exp.Expr) -> Iterator[exp.Expr]:
    """The outermost queries of a statement (CREATE ... AS, INSERT ... SELECT, a SELECT)."""
    if isinstance(statement, exp.Query):
        yield statement
        return
    for query in statement.find_all(exp.Query):
        parent = query.parent
        while parent is not None and not isinstance(parent, exp.Query):
            parent = parent.parent
        if parent is None:
            yield query


def analyse(
    text: str, dialect: str, columns_of: ColumnsOf, max_tokens: int = MAX_TOKENS
) -> list[Use]:
    """Every table and column read in ``text`` (one or more statements).

    Raises ``SqlError`` with a one-line reason when sqlglot cannot parse it or
    the text is over the token budget.
    """
    try:
        reader = Dialect.get_or_raise(dialect)
        tokens = reader.tokenize(text)
        if len(tokens) > max_tokens:
            raise SqlError(f"{len(tokens)} SQL tokens is over the {max_tokens}-token limit")
        statements = reader.parser().parse(tokens, text)
    except ParseError as exc:
        error = exc.errors[0] if exc.errors else {}
        description = str(error.get("description") or exc).splitlines()[0]
        description = re.sub(r"<Token token_type: [^,]+, text: ([^,]*),.*?>", r"'\1'", description)
        raise SqlError(
            f"sqlglot could not parse it: {description[:160]}", error.get("line")
        ) from None
    except TokenError as exc:
        raise SqlError(f"sqlglot could not tokenize it: {str(exc)[:160]}") from None
    except RecursionError:
        raise SqlError("nested too deeply for sqlglot") from None
    uses: list[Use] = []
    try:
        for statement in statements:
            if statement is None:
                continue
            resolver = _Resolver(columns_of, _line(statement, 1))
            for query in _queries(statement):
                for scope in traverse_scope(query):
                    resolver.scope(scope)
            for table in _dml_tables(statement):
                resolver.uses.append(Use(table_name(table), None, _line(table, 1), "read"))
            uses += resolver.uses
    except RecursionError:
        raise SqlError("nested too deeply for sqlglot") from None
    return sorted(set(uses), key=lambda u: (u.line, u.table, u.column or "", u.usage))


def _dml_tables(statement: exp.Expr) -> list[exp.Table]:
    """Tables an UPDATE/DELETE/MERGE reads outside any query (its target and USING)."""
    if not isinstance(statement, (exp.Update, exp.Delete, exp.Merge)):
        return []
    return [
        t for t in statement.find_all(exp.Table) if not isinstance(t.parent, (exp.Query, exp.From))
    ]
