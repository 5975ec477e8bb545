"""Where a column goes inside one SQL model: passed on to an output column, or consumed.

The consumer scan records a column where it is first read from a contracted
table. Downstream lineage needs the rest of the model: does the column reach
the model's output (same name, an alias, a cast: a *pass*), or does a clause
consume it (an aggregate, a filter, a join, a grouping, an expression: an
*end*)? The answers come from the scan's own resolver
(``gate.consumers.sql.StatementScopes``): the same scopes, the same rules for
which source an unqualified column reads, the same budget.

Pure: SQL text in, steps out. A column is followed through CTEs and derived
tables by the names their projections give it; ``SELECT *`` passes every name
on unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from gate.consumers.sql import Budget, ColumnsOf, StatementScopes, TableName, parse, table_name
from gate.model import NotAnalysed

#: The columns of interest of a table as written (empty: none of its columns).
Starts = Callable[[TableName], frozenset[str]]

#: A column of interest: (table as written, column), lower-cased.
Origin = tuple[TableName, str]

#: How deep a column is followed through CTEs and derived tables of one statement.
_MAX_NESTING = 32


@dataclass(frozen=True)
class Step:
    """What one statement does with column ``column`` of ``table``.

    ``output`` is the output column it passes to (``how``: ``same``,
    ``renamed``, ``cast``, ``star``), or ``None`` when a clause consumes it
    (``how`` is the usage word: ``aggregated``, ``filtered``, ``joined``,
    ``grouped``, ``ordered``, or ``derived`` for any other expression).
    ``target`` is the table the statement writes (``CREATE VIEW x AS``,
    ``INSERT INTO x``), ``None`` for the file's own model.
    """

    table: TableName
    column: str
    output: str | None
    how: str
    line: int
    target: TableName | None = None


@dataclass(frozen=True)
class ModelFlow:
    steps: tuple[Step, ...]
    #: Output column names per target (``None``: the file's model), ``None`` if unknown.
    outputs: tuple[tuple[TableName | None, frozenset[str] | None], ...]


def _target(statement: exp.Expr) -> TableName | None:
    """The table a ``CREATE ... AS`` or ``INSERT`` statement writes."""
    if not isinstance(statement, (exp.Create, exp.Insert)):
        return None
    table = statement.this
    if isinstance(table, exp.Schema):
        table = table.this
    return table_name(table) if isinstance(table, exp.Table) else None


def _passed(projection: exp.Expr, column: exp.Column) -> bool | None:
    """``None`` unless ``projection`` only renames or casts ``column``; else whether it casts."""
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    cast = False
    while isinstance(inner, (exp.Cast, exp.Paren)):  # TryCast is a Cast
        cast = cast or isinstance(inner, exp.Cast)
        inner = inner.this
    return cast if inner is column else None


class _Statement:
    """The passes and ends of one statement, its scopes walked innermost first."""

    def __init__(
        self, scopes: StatementScopes, starts: Starts, target: TableName | None, root: Scope
    ) -> None:
        self.scopes = scopes
        #: The scopes whose projections are the statement's output: its outermost
        #: query, and every branch of it when it is a UNION.
        self.roots = {id(root)}
        stack = [root]
        while stack:
            for branch in stack.pop().set_operation_scopes or ():
                self.roots.add(id(branch))
                stack.append(branch)
        self.starts = starts
        self.target = target
        self.steps: list[Step] = []
        #: By scope: output name -> {origin: cast on the way}.
        self._reached: dict[int, dict[str, dict[Origin, bool]]] = {}
        self._projection: dict[int, exp.Expr | None] = {}

    def projection_of(self, column: exp.Column, select: exp.Select) -> exp.Expr | None:
        """The projection of ``select`` that holds ``column`` (memoised walk up)."""
        path: list[exp.Expr] = []
        node: exp.Expr | None = column
        found: exp.Expr | None = None
        while node is not None:
            if id(node) in self._projection:
                found = self._projection[id(node)]
                break
            path.append(node)
            if node.parent is select:
                found = node if node.arg_key == "expressions" else None
                break
            node = node.parent
        self.scopes.budget.step(len(path) + 1)
        for walked in path:
            self._projection[id(walked)] = found
        return found

    def reached(self, scope: Scope, depth: int = 0) -> dict[str, dict[Origin, bool]]:
        key = id(scope)
        if key not in self._reached:
            self._reached[key] = {}  # a guard against a scope reaching itself
            self._reached[key] = self._walk(scope, depth)
        return self._reached[key]

    def _origins(self, source: exp.Table | Scope, name: str, depth: int) -> dict[Origin, bool]:
        if isinstance(source, exp.Table):
            table = self.scopes.name(source)
            return {(table, name): False} if name in self.starts(table) else {}
        if depth > _MAX_NESTING:
            return {}
        return self.reached(source, depth + 1).get(name, {})

    def _walk(self, scope: Scope, depth: int) -> dict[str, dict[Origin, bool]]:
        out: dict[str, dict[Origin, bool]] = {}
        select = scope.expression
        if not isinstance(select, exp.Select):
            for branch in scope.set_operation_scopes or ():
                for name, origins in self.reached(branch, depth + 1).items():
                    out.setdefault(name, {}).update(origins)
            return out
        root = id(scope) in self.roots
        named = {p.alias_or_name.lower() for p in select.selects if not self.scopes.is_star(p)}
        for projection in select.selects:
            if not self.scopes.is_star(projection):
                continue
            line = self.scopes.line(projection)
            for source in self.scopes.star_sources(scope, projection):
                if isinstance(source, exp.Table):
                    table = self.scopes.name(source)
                    offered = {n: {(table, n): False} for n in self.starts(table)}
                else:
                    offered = self.reached(source, depth + 1) if depth <= _MAX_NESTING else {}
                for name, origins in offered.items():
                    if name in named:
                        continue  # an explicit projection of that name wins
                    out.setdefault(name, {}).update(origins)
                    if root:
                        self._record(origins, name, "star", line)
        found: dict[int, dict[Origin, bool]] = {}
        for column in self.scopes.columns(scope):
            self.scopes.budget.step()
            owner = self.scopes.owner(scope, column)
            if owner is None:
                continue
            origins = self._origins(owner, column.name.lower(), depth)
            if not origins:
                continue
            found[id(column)] = origins
            usage = self.scopes.usage(column, scope)
            line = self.scopes.line(column)
            held = self.projection_of(column, select) if usage == "selected" else None
            cast = _passed(held, column) if held is not None else None
            if held is None or cast is None:
                for (table, name), _cast in origins.items():
                    how = "derived" if usage == "selected" else usage
                    self.steps.append(Step(table, name, None, how, line, self.target))
                continue
            output = held.alias_or_name.lower()
            passed = {origin: was or cast for origin, was in origins.items()}
            out.setdefault(output, {}).update(passed)
            if root:
                for origin, was in passed.items():
                    how = "cast" if was else ("renamed" if output != origin[1] else "same")
                    self._record({origin: was}, output, how, line)
        self._positional_reads(scope, depth)
        self._keys_by_position(select, found)
        return out

    def _positional_reads(self, scope: Scope, depth: int) -> None:
        """``SELECT #1`` (DuckDB), ``$1`` (Snowflake): a column named by its position in
        the source, which the gate cannot tell. Every followed column of the scope's
        sources may be the one read: each ends here (``derived``), as the consumer
        scan counts such a query a reader of every column. Before, no step was
        recorded and the path was missed."""
        positional = self.scopes.positional(scope)
        if positional is None:
            return
        line = self.scopes.line(positional)
        for _name, (_node, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table):
                table = self.scopes.name(source)
                origins: list[Origin] = [(table, n) for n in sorted(self.starts(table))]
            elif isinstance(source, Scope) and depth <= _MAX_NESTING:
                reached = self.reached(source, depth + 1)
                origins = [o for found in reached.values() for o in found]
            else:
                continue
            for table, name in origins:
                self.steps.append(Step(table, name, None, "derived", line, self.target))

    def _keys_by_position(self, select: exp.Select, found: dict[int, dict[Origin, bool]]) -> None:
        """``GROUP BY 1`` and ``ORDER BY 2``: the columns of that projection are keys.

        A named ``GROUP BY o.code`` ends a path at the grouping (its column sits in
        the clause), and a named ``ORDER BY o.code`` at the ordering; a position names
        the same key through the projection, so the columns inside that projection
        end there too, at the position's line. So do positions inside ``ROLLUP``,
        ``CUBE`` and ``GROUPING SETS``, and ``GROUP BY ALL`` (DuckDB, Snowflake,
        Databricks) groups by every projection without an aggregate. A position past
        a ``*`` names a column that cannot be told: none is recorded. Before, only
        top-level ``GROUP BY`` positions were read: ``ORDER BY 1`` missed the
        ordering that ``ORDER BY o.code`` records.
        """
        selects = select.selects
        group = select.args.get("group")
        #: (the key, whose line is the step's, else the column's own; usage; position)
        keys: list[tuple[exp.Expr | None, str, int]] = []
        if group is not None:
            if group.args.get("all"):  # sqlglot keeps no line for ``ALL``
                for position, projection in enumerate(selects, 1):
                    if not self.scopes.is_star(projection) and not projection.find(exp.AggFunc):
                        keys.append((None, "grouped", position))
            stack = list(group.expressions)
            for name in ("rollup", "cube", "grouping_sets"):
                stack += group.args.get(name) or []
            while stack:
                self.scopes.budget.step()
                key = stack.pop()
                if isinstance(key, (exp.Rollup, exp.Cube, exp.GroupingSets, exp.Tuple)):
                    stack += key.expressions
                elif isinstance(key, exp.Paren):
                    stack.append(key.this)
                elif isinstance(key, exp.Literal) and key.is_int:
                    keys.append((key, "grouped", int(key.name)))
        order = select.args.get("order")
        for ordered in order.expressions if order is not None else ():
            self.scopes.budget.step()
            key = ordered.this if isinstance(ordered, exp.Ordered) else ordered
            if isinstance(key, exp.Literal) and key.is_int:
                keys.append((key, "ordered", int(key.name)))
        for key, how, position in keys:
            if not 1 <= position <= len(selects):
                continue
            if any(self.scopes.is_star(p) for p in selects[:position]):
                continue
            for column in selects[position - 1].find_all(exp.Column):
                self.scopes.budget.step()
                line = self.scopes.line(key if key is not None else column)
                for table, name in found.get(id(column), {}):
                    self.steps.append(Step(table, name, None, how, line, self.target))

    def subquery(self, scope: Scope, parent: Scope) -> None:
        """A subquery's output is consumed where it sits (``k IN (SELECT c ...)``)."""
        reached = self.reached(scope, depth=1)
        if not reached:
            return
        usage = self.scopes.usage(scope.expression, parent)
        how = "derived" if usage == "selected" else usage
        line = self.scopes.line(scope.expression)
        for origins in reached.values():
            for table, name in origins:
                self.steps.append(Step(table, name, None, how, line, self.target))

    def _record(self, origins: dict[Origin, bool], output: str, how: str, line: int) -> None:
        for table, name in origins:
            self.steps.append(Step(table, name, output, how, line, self.target))


def flow(
    sql: str,
    dialect: str,
    columns_of: ColumnsOf,
    starts: Starts,
    budget: Budget,
    statements: Sequence[exp.Expr | None] | None = None,
    resolved: Sequence[StatementScopes] | None = None,
) -> ModelFlow:
    """The passes and ends of the columns ``starts`` names, in every statement of ``sql``.

    ``statements``: ``sql`` already parsed (``gate.consumers.sql.parse``), as
    the consumer scan has it: the text is then not parsed again. ``resolved``:
    the scan's resolvers of those statements (``analyse(..., resolved=)``, one
    per statement that is not ``None``, in order), with the same ``columns_of``
    and ``budget``: their scopes are not traversed again, their answers not
    computed again.
    Raises ``gate.consumers.sql.SqlError`` (``TooComplex`` past the budget).
    Only the outermost query of a statement makes output columns; a column
    passed through a CTE and consumed in the outer query ends there.
    """
    steps: list[Step] = []
    outputs: dict[TableName | None, frozenset[str] | None] = {}
    if statements is None:
        statements = parse(sql, dialect, budget)
    present = [s for s in statements if s is not None]
    if resolved is not None and len(resolved) != len(present):
        resolved = None  # not this text's: resolved afresh
    for i, statement in enumerate(present):
        target = _target(statement)
        scopes = (
            resolved[i] if resolved is not None else StatementScopes(statement, columns_of, budget)
        )
        for query in scopes.queries:
            if not query:
                continue
            root = query[-1]
            walker = _Statement(scopes, starts, target, root)
            walker.reached(root)
            # Scopes no output depends on (a subquery in a WHERE) still consume columns.
            for scope in query:
                walker.reached(scope, depth=1)
                if scope.is_subquery and scope.parent is not None:
                    walker.subquery(scope, scope.parent)
            steps += walker.steps
            outputs[target] = scopes.outputs(root)
    return ModelFlow(tuple(dict.fromkeys(steps)), tuple(outputs.items()))


@dataclass(frozen=True)
class FileFlow:
    """One file's passes and ends, by the key (dataset id, model name) of the table read.

    ``steps`` are (key, output model, step): the output model is the
    statement's target, else the file's model name (dbt stem, SQLMesh name).
    ``problem`` says why the file could not be followed, when it could not.
    """

    path: str
    steps: tuple[tuple[str, str, Step], ...] = ()
    outputs: tuple[tuple[str, frozenset[str] | None], ...] = ()
    problem: NotAnalysed | None = None


def file_flow(
    path: str,
    model: str,
    sql: str,
    dialect: str,
    keys: Callable[[TableName], set[str]],
    wanted: Mapping[str, frozenset[str]],
    columns_of: ColumnsOf,
    budget: Budget,
    statements: Sequence[exp.Expr | None] | None = None,
    resolved: Sequence[StatementScopes] | None = None,
) -> FileFlow:
    """``flow`` over one model file, its tables named by ``keys``, its steps keyed alike.

    ``wanted``: the columns followed, by key; ``statements``/``resolved`` as
    ``flow`` takes them. Raises as ``flow`` does.
    """

    def starts(table: TableName) -> frozenset[str]:
        found = [wanted.get(k, frozenset()) for k in keys(table)]
        return frozenset().union(*found) if found else frozenset()

    result = flow(sql, dialect, columns_of, starts, budget, statements, resolved)

    def output(target: TableName | None) -> str:
        return ".".join(target) if target else model.lower()

    steps = tuple(
        (key, output(step.target), step)
        for step in result.steps
        for key in sorted(keys(step.table))
        if step.column in wanted.get(key, frozenset())
    )
    outputs = tuple((output(target), names) for target, names in result.outputs)
    return FileFlow(path, steps, outputs)
