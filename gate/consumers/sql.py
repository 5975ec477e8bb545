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

import functools
import itertools
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, ParseError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokens import Token

# sqlglot logs what it cannot walk ("Cannot traverse scope __jinja__ ...", a
# dbt CTE that is one macro call) as WARNING records. With no handler anywhere,
# Python's last-resort handler printed them to the command's stderr: text of
# the pull request's SQL, meaningless in a CI log (the gate reports a reader it
# could not read itself). A handler of sqlglot's own stops that; an application
# that configured logging still receives the records through its root logger.
logging.getLogger("sqlglot").addHandler(logging.NullHandler())

#: A table as written, lower-cased parts: ``("shop", "orders")``.
TableName = tuple[str, ...]
#: The columns a contract gives a table (lower-cased), or ``None`` for an unknown table.
ColumnsOf = Callable[[TableName], "frozenset[str] | None"]

#: Column usages sqlglot can tell apart, in the words reports use.
USAGES = ("selected", "filtered", "joined", "aggregated", "grouped", "ordered", "star", "read")

#: sqlglot parses ~20,000 tokens a second in pure Python; a model is rarely
#: over 2,000. The budget keeps one generated or hostile file from holding up CI.
MAX_TOKENS = 30_000

#: Steps of the gate's own analysis of one file (columns resolved, sources
#: traced, tree nodes visited, reads recorded). Every pass is linear or
#: memoised: the largest of 700 public dbt models measured (105 KB, 7,100
#: tokens) took 14,000 steps, so a file at the token budget needs ~60,000.
#: Past the budget the file is "not analysed (too complex)" rather than a hung
#: check: the backstop for a shape no test has thought of yet (~1-3 s of CPU).
MAX_STEPS = 1_000_000

#: How deep the gate follows ``SELECT *`` through derived tables and CTEs.
_MAX_TRACE = 32


class SqlError(Exception):
    """The text could not be analysed; the message says why, in one line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line if isinstance(line, int) else None


class TooComplex(SqlError):
    """The file needs more analysis steps or tokens than one file may take."""


class Budget:
    """What one consumer file may cost: SQL tokens and analysis steps, shared by
    every SQL text in the file (the ``spark.sql`` strings of one job together)."""

    def __init__(self, tokens: int = MAX_TOKENS, steps: int = MAX_STEPS) -> None:
        self.max_tokens = tokens
        self.max_steps = steps
        self.tokens = tokens
        self.steps = steps

    def take_tokens(self, count: int) -> None:
        self.tokens -= count
        if self.tokens < 0:
            used = self.max_tokens - self.tokens
            raise TooComplex(f"{used} SQL tokens is over the {self.max_tokens}-token limit")

    def step(self, count: int = 1) -> None:
        self.steps -= count
        if self.steps < 0:
            raise TooComplex(
                f"too complex: more than {self.max_steps:,} analysis steps for one file"
            )


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
    # Lazily, in the walk's order: the first identifier is near the top, and
    # unpacking the walk visited every node of a statement for one line number.
    for candidate in itertools.chain((node,), node.find_all(exp.Identifier, exp.Star)):
        line = candidate.meta.get("line") if candidate.meta else None
        if isinstance(line, int):
            return line
    return fallback


def _own_usage(current: exp.Expr) -> str | None:
    """The usage word a node gives the columns inside it, if it gives one."""
    if isinstance(current, exp.AggFunc):
        return "aggregated"
    if isinstance(current, (exp.Where, exp.Having, exp.Qualify)):
        return "filtered"
    if isinstance(current.parent, exp.Join) and current.arg_key in ("on", "using"):
        return "joined"
    if isinstance(current, exp.Group):
        return "grouped"
    if isinstance(current, exp.Order):
        return "ordered"
    return None


class Ancestry:
    """Answers that depend on a node's ancestors, each node's computed once.

    Asking every column of ``a + a + ... + a`` for its innermost clause by
    walking to the scope's root is quadratic (the sum is a chain as deep as it
    is long); remembering each node's answer makes the questions of a whole
    scope linear in its size.
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        #: By (scope root, node): a correlated column is walked up from its
        #: subquery to each scope that counts it, with a different answer.
        self._usage: dict[tuple[int, int], str] = {}
        self._ancestor: dict[int, exp.Expr | None] = {}

    def usage(self, node: exp.Expr, stop: exp.Expr) -> str:
        """The innermost clause ``node`` sits in below ``stop``, as a usage word."""
        path: list[exp.Expr] = []
        current: exp.Expr | None = node
        found = "selected"
        while current is not None and current is not stop:
            known = self._usage.get((id(stop), id(current)))
            if known is not None:
                found = known
                break
            own = _own_usage(current)
            if own is not None:
                found = own
                path.append(current)
                break
            path.append(current)
            current = current.parent
        self.budget.step(len(path) + 1)
        for walked in path:
            self._usage[(id(stop), id(walked))] = found
        # A node with its own word keeps it; one below it inherits it: both are ``found``.
        return found

    def ancestor(self, node: exp.Expr, types: tuple[type, ...]) -> exp.Expr | None:
        """``node.find_ancestor(*types)``, memoised (one fixed ``types`` per instance)."""
        path: list[exp.Expr] = []
        current = node
        found: exp.Expr | None = None
        while True:
            if id(current) in self._ancestor:
                found = self._ancestor[id(current)]
                break
            path.append(current)
            parent = current.parent
            if parent is None or isinstance(parent, types):
                found = parent
                break
            current = parent
        self.budget.step(len(path) + 1)
        for walked in path:
            self._ancestor[id(walked)] = found
        return found


class _Sources:
    """One scope's sources, and which of them offer each column name: asked once
    per scope (on the first unqualified column that needs it), not once per
    column (10,000 columns over 5,000 joined tables)."""

    def __init__(self, resolver: _Resolver, scope: Scope) -> None:
        self.resolver = resolver
        self.selected = {alias: source for alias, (_node, source) in scope.selected_sources.items()}
        resolver.budget.step(len(self.selected))
        self._offering: dict[str, list[str]] | None = None
        self.unknown: list[str] = []

    def offering(self, name: str) -> list[str]:
        """The aliases of the sources known to have a column ``name``."""
        if self._offering is None:
            self._offering = {}
            for alias, source in self.selected.items():
                names = self.resolver.outputs(source)
                self.resolver.budget.step(1 + len(names or ()))
                if names is None:
                    self.unknown.append(alias)
                    continue
                for offered in names:
                    self._offering.setdefault(offered, []).append(alias)
        return self._offering.get(name, [])


class _Resolver:
    """Resolve the columns of one statement's scopes to (table, column) reads.

    Every answer about a source is memoised and every step counts against the
    file's ``Budget``: tracing a column through CTEs that each read the previous
    one twice would otherwise follow 2^depth paths (24 levels never finished).

    Why one class of ~290 lines: the memo, the budget and the ancestry guard
    must be one per statement and shared by every resolution step (a scope's
    columns, a star, a CTE, a subquery); split apart, the steps would lose the
    memo that keeps them linear.
    """

    def __init__(self, columns_of: ColumnsOf, fallback_line: int, budget: Budget) -> None:
        self.columns_of = columns_of
        self.fallback_line = fallback_line
        self.budget = budget
        self.upward = Ancestry(budget)
        self.uses: list[Use] = []
        self._outputs: dict[int, frozenset[str] | None] = {}
        self._names: dict[int, TableName] = {}
        self._traced: dict[tuple[int, str], tuple[TableName, ...]] = {}
        self._columns: dict[int, list[exp.Column]] = {}
        self._external: dict[int, list[exp.Column]] = {}
        self._using_memo: dict[tuple[int, str], tuple[TableName, ...]] = {}
        #: Every statement's scopes, kept so that no id() in a memo is reused.
        self.alive: list[list[Scope]] = []

    def name(self, table: exp.Table) -> TableName:
        key = id(table)
        if key not in self._names:
            self._names[key] = table_name(table)
        return self._names[key]

    def add(self, use: Use) -> None:
        self.budget.step()
        self.uses.append(use)

    # what a source offers

    def outputs(self, source: exp.Table | Scope, depth: int = 0) -> frozenset[str] | None:
        """Column names a source provides, ``None`` when they cannot be known (memoised)."""
        key = id(source)
        if key not in self._outputs:
            self._outputs[key] = self._compute_outputs(source, depth)
        return self._outputs[key]

    def _compute_outputs(self, source: exp.Table | Scope, depth: int) -> frozenset[str] | None:
        self.budget.step()
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
            self.budget.step()
            if _is_star(projection):
                for src in self._star_sources(source, projection):
                    inner = self.outputs(src, depth + 1)
                    if inner is None:
                        return None
                    self.budget.step(len(inner))
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

    def trace(self, source: exp.Table | Scope, name: str, depth: int = 0) -> tuple[TableName, ...]:
        """The tables whose column ``name`` a reference to ``source.name`` reads.

        An explicit projection of a derived table is recorded when its own scope
        is walked, so tracing stops there; only names that pass through a
        ``SELECT *`` are followed to the table underneath. Memoised by (source,
        name), so a CTE read twice is traced once; the answer has no repeats.
        """
        key = (id(source), name)
        known = self._traced.get(key)
        if known is None:
            known = self._traced[key] = self._trace(source, name, depth)
        self.budget.step()
        return known

    def _trace(self, source: exp.Table | Scope, name: str, depth: int) -> tuple[TableName, ...]:
        if isinstance(source, exp.Table):
            known = self.columns_of(self.name(source))
            return (self.name(source),) if known is None or name in known else ()
        if depth > _MAX_TRACE:
            return ()
        found: dict[TableName, None] = {}
        if source.set_operation_scopes:
            for inner in source.set_operation_scopes:
                found.update(dict.fromkeys(self.trace(inner, name, depth + 1)))
            return tuple(found)
        select = source.expression
        if not isinstance(select, exp.Select):
            return ()
        self.budget.step(len(select.selects))
        if any(not _is_star(p) and p.alias_or_name.lower() == name for p in select.selects):
            return ()
        for projection in select.selects:
            if not _is_star(projection):
                continue
            candidates = self._star_sources(source, projection)
            self.budget.step(len(candidates))
            having = [c for c in candidates if name in (self.outputs(c, depth + 1) or ())]
            unknown = [c for c in candidates if self.outputs(c, depth + 1) is None]
            chosen = having or (unknown if len(unknown) == 1 else [])
            for candidate in chosen:
                found.update(dict.fromkeys(self.trace(candidate, name, depth + 1)))
        return tuple(found)

    def source_of(self, sources: _Sources, column: exp.Column) -> exp.Table | Scope | None:
        """The source a column reads, or ``None`` when it cannot be told."""
        selected = sources.selected
        if column.table:
            return selected.get(column.table)  # else an outer scope's column: counted there
        if len(selected) == 1:
            return next(iter(selected.values()))
        having = sources.offering(column.name.lower())
        if len(having) == 1:
            return selected[having[0]]
        if not having and len(sources.unknown) == 1:
            return selected[sources.unknown[0]]
        return None

    # the columns of a scope, in time linear in its size

    def columns(self, scope: Scope) -> list[exp.Column]:
        """``scope.columns`` as sqlglot computes it, without its quadratic walk.

        sqlglot looks up each column's nearest clause with ``find_ancestor``,
        from the column to the root every time: a 4,000-term ``a + a + ...``
        took 12 s. The same rule here asks ``Ancestry.ancestor``, memoised.
        """
        key = id(scope)
        if key in self._columns:
            return self._columns[key]
        raw: list[exp.Column] = []
        for node in scope.walk():
            self.budget.step()
            if (
                node is not scope.expression
                and type(node) is exp.Column
                and not isinstance(node.this, exp.Star)
            ):
                raw.append(node)
        children = (
            *scope.subquery_scopes,
            *scope.udtf_scopes,
            *(s for s in scope.derived_table_scopes if getattr(s, "can_be_correlated", False)),
        )
        external = [c for child in children for c in self.external_columns(child)]
        expression = scope.expression
        named = set(expression.named_selects) if isinstance(expression, exp.Query) else set()
        columns: list[exp.Column] = []
        for column in raw + external:
            ancestor = self.upward.ancestor(column, _COLUMN_CLAUSES)
            if (
                not ancestor
                or column.text("table")
                or isinstance(ancestor, exp.Select)
                or (isinstance(ancestor, exp.Table) and not isinstance(ancestor.this, exp.Func))
                or (
                    isinstance(ancestor, (exp.Order, exp.Cluster, exp.Distinct))
                    and (
                        isinstance(ancestor.parent, (exp.Window, exp.WithinGroup))
                        or not isinstance(ancestor.parent, exp.Select)
                        or column.name not in named
                    )
                )
                or (isinstance(ancestor, exp.Star) and column.arg_key != "except_")
            ):
                columns.append(column)
        self._columns[key] = columns
        return columns

    def external_columns(self, scope: Scope) -> list[exp.Column]:
        """``scope.external_columns``: its columns that name no source of its own."""
        key = id(scope)
        if key in self._external:
            return self._external[key]
        if isinstance(scope.expression, exp.SetOperation) and scope.set_operation_scopes:
            found = [c for s in scope.set_operation_scopes for c in self.external_columns(s)]
        else:
            local = {name for name, _ in scope.references}
            local |= set(getattr(scope, "semi_or_anti_join_tables", ()))
            found = [c for c in self.columns(scope) if c.text("table") not in local]
        self._external[key] = found
        return found

    # one scope

    def scope(self, scope: Scope) -> None:
        stop = scope.expression
        for _alias, (node, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table):
                line = _line(node, self.fallback_line)
                self.add(Use(self.name(source), None, line, "read"))
        select = scope.expression
        if isinstance(select, exp.Select):
            for projection in select.selects:
                if not _is_star(projection):
                    continue
                line = _line(projection, self.fallback_line)
                for source in self._star_sources(scope, projection):
                    for table in self._star_tables(source):
                        self.add(Use(table, "*", line, "star"))
            positional = _positional(scope)
            if positional is not None:  # ``$1``, ``#1``: a column by position, any of them
                line = _line(positional, self.fallback_line)
                for source in self._star_sources(scope, select):
                    for table in self._star_tables(source):
                        self.add(Use(table, "*", line, "star"))
        sources = _Sources(self, scope)
        for column in self._scope_columns(scope):
            self.budget.step()
            if isinstance(column.this, exp.Star):
                continue
            owner = self.source_of(sources, column)
            if owner is None:
                continue
            name = column.name.lower()
            usage = self.upward.usage(column, stop)
            line = _line(column, self.fallback_line)
            tables = self.trace(owner, name)
            self.budget.step(len(tables))
            self.uses += [Use(table, name, line, usage) for table in tables]
        for join in select.args.get("joins") or [] if isinstance(select, exp.Select) else []:
            self._using(scope, join)

    def _using(self, scope: Scope, join: exp.Join) -> None:
        """``JOIN ... USING (id)`` names columns of both sides without a Column node.

        The tables a name reaches through the scope's sources are traced once
        per scope, not once per join: 3,000 ``JOIN t USING (a)`` took minutes.
        """
        for ident in join.args.get("using") or []:
            name = ident.name.lower()
            line = _line(ident, self.fallback_line)
            tables = self._using_tables(scope, name)
            self.budget.step(len(tables))  # before the work: the budget fails fast
            self.uses += [Use(table, name, line, "joined") for table in tables]

    def _using_tables(self, scope: Scope, name: str) -> tuple[TableName, ...]:
        key = (id(scope), name)
        known = self._using_memo.get(key)
        if known is None:
            sources = [source for _node, source in scope.selected_sources.values()]
            self.budget.step(len(sources))
            found: dict[TableName, None] = {}
            for source in sources:
                found.update(dict.fromkeys(self.trace(source, name)))
            known = self._using_memo[key] = tuple(found)
        return known

    def _star_tables(self, source: exp.Table | Scope, depth: int = 0) -> list[TableName]:
        """Tables whose every column a ``*`` over ``source`` selects."""
        if isinstance(source, exp.Table):
            return [self.name(source)]
        return []  # a derived table's own ``*`` is recorded when its scope is walked

    def _scope_columns(self, scope: Scope) -> list[exp.Column]:
        """The scope's columns plus unqualified HAVING/QUALIFY/ORDER BY columns.

        sqlglot leaves those out of ``Scope.columns`` because they may name a
        projection alias; here a name that is not one of the scope's projections
        is a real column read (``HAVING max(discount_code) > 'a'``).
        """
        columns = list(self.columns(scope))
        expression = scope.expression
        if not any(expression.args.get(k) for k in ("having", "qualify", "order")):
            return columns  # nothing sqlglot left out: skip the second walk
        seen = {id(c) for c in columns}
        named = set(expression.named_selects) if isinstance(expression, exp.Query) else set()
        for node in scope.walk():
            self.budget.step()
            if (
                type(node) is exp.Column
                and id(node) not in seen
                and not node.table
                and not isinstance(node.this, exp.Star)
                and node.name not in named
            ):
                columns.append(node)
        return columns


#: The clauses ``Scope.columns`` looks up above each column (sqlglot's own list).
_COLUMN_CLAUSES: tuple[type, ...] = (
    exp.Select,
    exp.Qualify,
    exp.Order,
    exp.Cluster,
    exp.Having,
    exp.Hint,
    exp.Table,
    exp.Star,
    exp.Distinct,
)


def _is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    )


def _positional(scope: Scope) -> exp.Expr | None:
    """The first column reference by position in ``scope`` (Snowflake's ``$1``,
    DuckDB's ``#1``), which names no column: it may read any of the sources'.
    A numbered bind parameter (PostgreSQL's ``$1``) reads the same way here, which
    errs towards a reader. One walk of the scope's own nodes."""
    for node in scope.find_all(exp.PositionalColumn, exp.Parameter):
        if isinstance(node, exp.PositionalColumn) or (
            isinstance(node.this, exp.Literal) and not node.this.is_string
        ):
            return node
    return None


def _queries(statement: exp.Expr) -> Iterator[exp.Expr]:
    """The outermost queries of a statement (CREATE ... AS, INSERT ... SELECT, a SELECT).

    One walk that stops at each query, rather than a walk up from every query.
    """
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Query):
            yield node
            continue
        for value in node.args.values():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expr):
                    stack.append(child)


def analyse(
    text: str,
    dialect: str,
    columns_of: ColumnsOf,
    max_tokens: int = MAX_TOKENS,
    budget: Budget | None = None,
    statements: list[exp.Expr | None] | None = None,
    scopes: dict[int, list[Scope]] | None = None,
    resolved: list[StatementScopes] | None = None,
) -> list[Use]:
    """Every table and column read in ``text`` (one or more statements).

    ``statements``: ``text`` already parsed (``parse``), to be analysed
    without parsing it again (downstream lineage walks the same trees).
    ``scopes``: filled with each outermost query's scopes (sqlglot's order,
    the root last), by ``id()`` of the query, for a caller that asks more of
    the same trees (``gate.lineage.dbt_mesh``) without traversing them again.
    ``resolved``: filled with one ``StatementScopes`` per statement analysed
    (the ``None`` ones skipped), holding this analysis's scopes and memos, for
    downstream lineage (``gate.lineage.flow``) to ask the same resolver rather
    than traverse and resolve the statement a second time.

    Raises ``SqlError`` with a one-line reason when sqlglot cannot parse it, and
    ``TooComplex`` when the text is over the token budget or its analysis over
    the step budget. ``budget`` is the file's, shared by the SQL texts of one
    file; without one, the text gets a budget of its own.
    """
    budget = budget if budget is not None else Budget(tokens=max_tokens)
    if statements is None:
        statements = parse(text, dialect, budget)
    scopes_of = scopes
    uses: list[Use] = []
    try:
        for statement in statements:
            if statement is None:
                continue
            resolver = _Resolver(columns_of, _line(statement, 1), budget)
            for query in _queries(statement):
                walked = traverse_scope(query)
                # The memos are keyed by id(): the scopes must outlive them.
                resolver.alive.append(walked)
                if scopes_of is not None:
                    scopes_of[id(query)] = walked
                for scope in walked:
                    resolver.scope(scope)
            for table in _dml_tables(statement):
                resolver.add(Use(table_name(table), None, _line(table, 1), "read"))
            uses += resolver.uses
            if resolved is not None:
                resolved.append(StatementScopes.of(resolver))
    except RecursionError:
        raise SqlError("nested too deeply for sqlglot") from None
    except OptimizeError as exc:  # a scope sqlglot cannot build (one alias for two tables)
        raise SqlError(f"sqlglot could not resolve its scopes: {str(exc)[:160]}") from None
    return sorted(set(uses), key=lambda u: (u.line, u.table, u.column or "", u.usage))


@functools.lru_cache(maxsize=32)
def dialect_named(name: str) -> Dialect:
    """``Dialect.get_or_raise(name)``, one instance per name: sqlglot builds a new
    one on every call (a settings object; each tokenize or parse makes its own
    tokenizer and parser from it), ~20 us a consumer file. Raises ``ValueError``
    for a dialect sqlglot does not know, every time (an error is not cached)."""
    return Dialect.get_or_raise(name)


def parse(
    text: str, dialect: str, budget: Budget, tokens: list[Token] | None = None
) -> list[exp.Expr | None]:
    """The statements of ``text``, its tokens counted against ``budget``.

    One parser for the consumer scan and for downstream lineage
    (``gate.lineage.flow``): the same errors, the same bounds. ``tokens``:
    ``text`` already tokenized with ``dialect`` (``gate.lineage.dbt_mesh``
    looks at the tokens first), not tokenized again.
    """
    try:
        reader = dialect_named(dialect)
        if tokens is None:
            tokens = reader.tokenize(text)
        budget.take_tokens(len(tokens))
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
    return list(statements)


def _dml_tables(statement: exp.Expr) -> list[exp.Table]:
    """Tables an UPDATE/DELETE/MERGE reads outside any query (its target and USING)."""
    if not isinstance(statement, (exp.Update, exp.Delete, exp.Merge)):
        return []
    return [
        t for t in statement.find_all(exp.Table) if not isinstance(t.parent, (exp.Query, exp.From))
    ]


class StatementScopes:
    """One statement's scopes with the consumer scan's answers about them.

    Downstream lineage (``gate.lineage.flow``) asks the same questions the
    scan asks (which source a column reads, in which clause it sits, what a
    ``*`` selects), so it asks this resolver rather than a second analyser:
    the same memos keep it linear, the same ``Budget`` bounds it.
    ``StatementScopes.of`` takes the scan's own resolver of the statement
    (``analyse(..., resolved=)``): its scopes walked and its answers memoised
    once for both.
    """

    @classmethod
    def of(cls, resolver: _Resolver) -> StatementScopes:
        """The scopes an analysis (``analyse``) walked, with its resolver and memos."""
        made = cls.__new__(cls)
        made._resolver = resolver
        made._sources = {}
        made.budget = resolver.budget
        made.queries = list(resolver.alive)
        return made

    def __init__(self, statement: exp.Expr, columns_of: ColumnsOf, budget: Budget) -> None:
        self._resolver = _Resolver(columns_of, _line(statement, 1), budget)
        self._sources: dict[int, _Sources] = {}
        self.budget = budget
        #: The scopes of each outermost query, innermost first (sqlglot's order).
        self.queries: list[list[Scope]] = []
        try:
            for query in _queries(statement):
                scopes = traverse_scope(query)
                self._resolver.alive.append(scopes)
                self.queries.append(scopes)
        except RecursionError:
            raise SqlError("nested too deeply for sqlglot") from None
        except OptimizeError as exc:
            raise SqlError(f"sqlglot could not resolve its scopes: {str(exc)[:160]}") from None

    def columns(self, scope: Scope) -> list[exp.Column]:
        """The columns the scope itself reads (``Scope.columns`` plus HAVING/ORDER names)."""
        return [c for c in self._resolver._scope_columns(scope) if not isinstance(c.this, exp.Star)]

    def owner(self, scope: Scope, column: exp.Column) -> exp.Table | Scope | None:
        """The source ``column`` reads in ``scope``; ``None`` when it cannot be told."""
        sources = self._sources.get(id(scope))
        if sources is None:
            sources = self._sources[id(scope)] = _Sources(self._resolver, scope)
        return self._resolver.source_of(sources, column)

    def usage(self, column: exp.Expr, scope: Scope) -> str:
        """The innermost clause ``column`` sits in, as a usage word (``USAGES``)."""
        return self._resolver.upward.usage(column, scope.expression)

    @staticmethod
    def positional(scope: Scope) -> exp.Expr | None:
        """The first column ``scope`` reads by position (``#1``, ``$1``), if any."""
        return _positional(scope)

    def star_sources(self, scope: Scope, projection: exp.Expr) -> list[exp.Table | Scope]:
        """The sources a ``*`` or ``t.*`` projection of ``scope`` selects from."""
        return self._resolver._star_sources(scope, projection)

    def outputs(self, source: exp.Table | Scope) -> frozenset[str] | None:
        """The column names a source provides, ``None`` when they cannot be known."""
        return self._resolver.outputs(source)

    def name(self, table: exp.Table) -> TableName:
        return self._resolver.name(table)

    @staticmethod
    def line(node: exp.Expr, fallback: int = 1) -> int:
        return _line(node, fallback)

    @staticmethod
    def is_star(projection: exp.Expr) -> bool:
        return _is_star(projection)
