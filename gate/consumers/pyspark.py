"""PySpark jobs, read with Python's ``ast``: the code is parsed, never executed.

Understood:

- ``spark.sql("...")`` with a string literal (or a name bound once to a string
  literal in the same file): the SQL is analysed like a ``.sql`` file, its lines
  mapped back into the ``.py`` file;
- ``spark.table("t")`` and ``spark.read.table("t")``: a read of table ``t``,
  followed through method chains and through plain names assigned from them
  (``orders = spark.table("shop.orders")``);
- on such a DataFrame: ``select``/``groupBy``/``orderBy``/``drop`` string
  arguments, ``col("x")``/``F.col("x")``/``df["x"]`` anywhere in a method's
  arguments, ``filter``/``where``/``selectExpr`` SQL strings, ``join(on=...)``.

A dbt Python model (a module-level ``def model(dbt, session)``) reads what
``dbt.ref("m")``, ``dbt.ref("pkg", "m")``, ``dbt.ref("m", v=2)`` and
``dbt.source("s", "t")`` return (named as the Jinja pre-pass names them:
``m``, ``pkg.m``, ``m_v2``, ``s.t``): such a call starts a DataFrame like
``spark.table``, and is also a read of every column (``*``, usage ``star``:
listed, never broken), unless the call is narrowed at once by a ``select``
whose arguments all name their columns. As dbt-core's parser does, every call
spelled ``dbt.ref``/``dbt.source`` counts, in any function of the file.

An f-string or a computed string passed to ``spark.sql`` cannot be read
without running the code: it is reported as not analysed, with its line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from gate.consumers.names import split_name
from gate.consumers.sql import Ancestry, Budget, SqlError, TableName, TooComplex, Use

#: DataFrame method -> how it uses the columns named in its arguments.
_METHODS = {
    "select": "selected",
    "selectExpr": "selected",
    "withColumn": "selected",
    "withColumnRenamed": "selected",
    "drop": "selected",
    "filter": "filtered",
    "where": "filtered",
    "groupBy": "grouped",
    "groupby": "grouped",
    "group_by": "grouped",  # Snowpark's spelling
    "agg": "aggregated",
    "orderBy": "ordered",
    "sort": "ordered",
    "order_by": "ordered",  # Snowpark's spelling
    "join": "joined",
    "dropDuplicates": "grouped",
}
_SQL_STRING_METHODS = {"filter", "where", "selectExpr"}
_COLUMN_FUNCTIONS = {"col", "column"}
_AGG_FUNCTIONS = {
    "sum",
    "avg",
    "mean",
    "min",
    "max",
    "count",
    "count_distinct",
    "countDistinct",
    "first",
    "last",
    "collect_list",
    "collect_set",
    "stddev",
    "variance",
}


@dataclass(frozen=True)
class PyUse:
    """A use found in a Python file, with the enclosing function as its object."""

    use: Use
    object: str


SqlAnalyser = Callable[[str], list[Use]]


def _str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


#: Methods that, called straight on ``dbt.ref()``, leave only the columns they name
#: (not ``groupBy``: its ``agg({"amount": "sum"})`` reads columns this does not see).
_NARROWING = {"select"}


def dbt_contexts(tree: ast.Module) -> frozenset[str]:
    """``{"dbt"}`` when the module defines ``def model(...)``, a dbt Python model; else empty.

    dbt-core's parser (``dbt/parser/models.py``) takes every call spelled
    ``dbt.ref``/``dbt.source`` anywhere in the file, whatever function it sits in,
    and refuses a ``model`` whose first argument is not named ``dbt``: so the
    name ``dbt`` is what is followed, in every function of the file."""
    if any(isinstance(n, ast.FunctionDef) and n.name == "model" for n in tree.body):
        return frozenset({"dbt"})
    return frozenset()


def _version(node: ast.Call) -> str | None:
    """``v=2`` / ``version="2"`` of a ``dbt.ref`` call; ``""`` without one; None if unreadable."""
    found = ""
    for keyword in node.keywords:
        if keyword.arg not in ("v", "version"):
            return None
        value = keyword.value
        if not isinstance(value, ast.Constant) or isinstance(value.value, bool):
            return None
        if not isinstance(value.value, (int, float, str)):
            return None
        found = str(value.value)
    return found


def dbt_table(node: ast.AST, contexts: frozenset[str]) -> tuple[TableName, int] | None:
    """The relation a ``dbt.ref(...)``/``dbt.source(...)`` call names, as the Jinja
    pre-pass names it (``gate.consumers.jinja``), with the line of its first argument."""
    if not contexts or not isinstance(node, ast.Call):
        return None
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in ("ref", "source")
        and isinstance(func.value, ast.Name)
        and func.value.id in contexts
    ):
        return None
    names = [_str(a) for a in node.args]
    if not names or len(names) > 2 or any(n is None or not n.strip() for n in names):
        return None
    parts = [n for n in names if n is not None]
    if func.attr == "source":
        if len(parts) != 2 or node.keywords:
            return None
    else:
        version = _version(node)
        if version is None:
            return None
        if version:
            parts[-1] = f"{parts[-1]}_v{version}"
    # Split as the SQL side splits the rendered ``{{ ref('a.b') }}`` (``a.b``: two parts).
    return split_name(".".join(parts)), node.args[0].lineno


def _names_its_columns(node: ast.AST) -> bool:
    """Whether a ``select`` argument names every column it reads: a string (not ``*``),
    or ``col("x")``/``F.col("x")``, optionally ``.alias(...)``-ed."""
    text = _str(node)
    if text is not None:
        return text.strip() != "*"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "alias"
    ):
        node = node.func.value
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    column = _str(node.args[0])
    return name in _COLUMN_FUNCTIONS and column is not None and column.strip() != "*"


class _Visitor(ast.NodeVisitor):
    """One walk of a PySpark job or dbt Python model, recording the columns it reads.

    Why one class of this size: ``ast.NodeVisitor`` dispatches to ``visit_*`` methods
    of one object, and they share one state (the names bound to a table, the string
    constants, the enclosing function, the step budget) that each visit reads and
    updates; split across classes, that state would travel between them as
    arguments at every node. The column and SQL readers below are small methods of
    that state, not a second job.
    """

    def __init__(
        self,
        analyse_sql: SqlAnalyser,
        module: str,
        budget: Budget,
        contexts: frozenset[str] = frozenset(),
    ) -> None:
        self.analyse_sql = analyse_sql
        self.budget = budget
        self.module = module
        #: The dbt context's names (``dbt_contexts``): empty unless a dbt Python model.
        self.contexts = contexts
        #: ``dbt.ref()`` calls narrowed at once by a ``select`` naming its columns.
        self.narrowed: set[int] = set()
        self.function: list[str] = []
        self.tables: dict[str, tuple[TableName, int]] = {}
        self.strings: dict[str, ast.Constant | None] = {}
        self.uses: list[PyUse] = []
        self.problems: list[tuple[int, str]] = []
        #: ``frame["x"] = ...`` statements run unconditionally (directly in a function's
        #: or the module's body), by ``id()``: after one, ``frame["x"]`` is the frame's own.
        self.unconditional: set[int] = set()
        #: Frame name -> the columns such statements made: later reads are not upstream's.
        self.made: dict[str, set[str]] = {}

    @property
    def object(self) -> str:
        if self.contexts and self.function[:1] == ["model"]:
            return self.module  # a dbt Python model: the model is the consumer
        return ".".join([self.module, *self.function])

    # scopes

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function.append(node.name)
        self.unconditional.update(id(s) for s in node.body if isinstance(s, ast.Assign))
        made = self.made
        self.made = {}  # one function's frames: another's ``frame`` is not this one
        self.generic_visit(node)
        self.made = made
        self.function.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.function.append(node.name)
        self.generic_visit(node)
        self.function.pop()

    # bindings

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if not isinstance(target, ast.Name):
                continue
            table = self.root_table(node.value)
            if table is not None:
                self.tables[target.id] = table
            elif target.id in self.strings or _str(node.value) is None:
                self.strings[target.id] = None  # bound twice, or not a literal: unknown
            else:
                self.strings[target.id] = node.value  # type: ignore[assignment]
        self.generic_visit(node)  # the value first: ``frame["x"] = frame["x"] * 2`` reads x
        for target in node.targets:
            if isinstance(target, ast.Name):  # rebound: what it made is forgotten
                self.made.pop(target.id, None)
            else:
                self.made_column(target, node)

    def made_column(self, target: ast.AST, node: ast.Assign) -> None:
        """``frame["x"] = ...`` run unconditionally makes ``x`` the frame's own; a
        ``frame = ...`` rebinding starts over (``root_table`` binds it afresh)."""
        name = _str(target.slice) if isinstance(target, ast.Subscript) else None
        frame = target.value if isinstance(target, ast.Subscript) else None
        if name is not None and isinstance(frame, ast.Name) and id(node) in self.unconditional:
            self.made.setdefault(frame.id, set()).add(name.lower())

    def root_table(self, node: ast.AST) -> tuple[TableName, int] | None:
        """The table a DataFrame expression starts from, if it starts from one."""
        while True:
            dbt = dbt_table(node, self.contexts)
            if dbt is not None:
                return dbt
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "table" and node.args and _str(node.args[0]) is not None:
                    name = _str(node.args[0]) or ""
                    parts = tuple(p.strip("`").lower() for p in name.split(".") if p)
                    return parts, node.args[0].lineno
                node = node.func.value
            elif isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Name):
                return self.tables.get(node.id)
            else:
                return None

    # calls

    def is_dbt_call(self, node: ast.Call) -> bool:
        """A ``dbt.ref(...)``/``dbt.source(...)`` call of a dbt Python model, readable or not."""
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in ("ref", "source")
            and isinstance(func.value, ast.Name)
            and func.value.id in self.contexts
        )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dbt = dbt_table(node, self.contexts)
        if dbt is not None:
            self.add(dbt[0], None, dbt[1], "read")
            if id(node) not in self.narrowed:
                self.add(dbt[0], "*", dbt[1], "star")  # its columns cannot all be told
        elif self.is_dbt_call(node) and isinstance(func, ast.Attribute):
            # Which relation it reads is not known (dbt wants literal names): fail closed.
            reason = f"dbt.{func.attr}() with arguments other than string literals is not analysed"
            self.problems.append((node.lineno, reason))
        elif isinstance(func, ast.Attribute):
            if (
                func.attr in _NARROWING
                and dbt_table(func.value, self.contexts) is not None
                and (node.args or node.keywords)
                and not node.keywords
                and all(_names_its_columns(a) for a in node.args)
            ):
                self.narrowed.add(id(func.value))
            if func.attr == "sql" and node.args:
                self.spark_sql(node)
            elif func.attr == "table" and node.args and _str(node.args[0]) is not None:
                table = self.root_table(node)
                if table is not None:
                    self.add(table[0], None, table[1], "read")
            elif func.attr in _METHODS:
                table = self.root_table(func.value)
                if table is not None:
                    self.method(table[0], func.attr, node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        name = _str(node.slice)
        # ``pdf["x"] = ...`` (pandas, a dbt Python model's ``to_pandas()``) makes ``x``: no read.
        if name is not None and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            table = self.tables.get(node.value.id)
            if table is not None and name.lower() not in self.made.get(node.value.id, ()):
                self.add(table[0], name.lower(), node.lineno, "selected")
        self.generic_visit(node)

    def spark_sql(self, node: ast.Call) -> None:
        arg = node.args[0]
        if isinstance(arg, ast.Name) and self.strings.get(arg.id) is not None:
            arg = self.strings[arg.id]  # type: ignore[assignment]
        text = _str(arg)
        if text is None:
            if isinstance(arg, (ast.JoinedStr, ast.BinOp, ast.Call, ast.Name)):
                what = "an f-string" if isinstance(arg, ast.JoinedStr) else "a computed string"
                self.problems.append((node.lineno, f"spark.sql() with {what} is not analysed"))
            return
        try:
            found = self.analyse_sql(text)
        except TooComplex:
            raise  # the file's budget is spent: the whole file is not analysed
        except SqlError as exc:
            line = arg.lineno + (exc.line - 1 if exc.line else 0)
            self.problems.append((line, f"spark.sql() string: {exc}"))
            return
        for use in found:
            self.uses.append(
                PyUse(Use(use.table, use.column, arg.lineno + use.line - 1, use.usage), self.object)
            )

    def method(self, table: TableName, method: str, node: ast.Call) -> None:
        usage = _METHODS[method]
        args = list(node.args) + [k.value for k in node.keywords if k.arg in (None, "on", "cols")]
        if method == "join":
            args = node.args[1:2] + [k.value for k in node.keywords if k.arg == "on"]
        elif method in ("withColumn", "withColumnRenamed"):
            args = node.args[1:2] if method == "withColumn" else node.args[:1]
        for arg in args:
            items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
            for item in items:
                text = _str(item)
                if text is not None:
                    if method in _SQL_STRING_METHODS:
                        self.sql_expression(table, text, item.lineno, usage)
                    elif text == "*":
                        self.add(table, "*", item.lineno, "star")
                    elif method != "agg":
                        self.add(table, text.lower(), item.lineno, usage)
                    continue
                self.column_calls(table, item, usage)

    def column_calls(self, table: TableName, node: ast.AST, usage: str) -> None:
        """``col("x")``, ``F.sum("x")``, ``df["x"]`` inside a method's argument."""
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call) or not sub.args:
                continue
            name = (
                sub.func.attr
                if isinstance(sub.func, ast.Attribute)
                else getattr(sub.func, "id", "")
            )
            text = _str(sub.args[0])
            if text is None:
                continue
            if name in _COLUMN_FUNCTIONS:
                self.add(table, text.lower(), sub.args[0].lineno, usage)
            elif name in _AGG_FUNCTIONS:
                self.add(table, text.lower(), sub.args[0].lineno, "aggregated")
            elif name == "expr":
                self.sql_expression(table, text, sub.args[0].lineno, usage)

    def sql_expression(self, table: TableName, text: str, line: int, usage: str) -> None:
        try:
            reader = Dialect.get_or_raise(None)
            tokens = reader.tokenize(text)
            self.budget.take_tokens(len(tokens))  # the file's budget: TooComplex ends it
            parsed = reader.parser().parse(tokens, text)[0]
            if parsed is None:
                raise ParseError("empty")
            columns = list(parsed.find_all(exp.Column))
        except (ParseError, TokenError, RecursionError):
            self.problems.append((line, f"expression {text[:40]!r} could not be parsed"))
            return
        ancestry = Ancestry(self.budget)  # keyed by id(): one per parsed tree
        for column in columns:
            self.budget.step()
            if isinstance(column.this, exp.Star):
                self.add(table, "*", line, "star")
            else:
                inner = usage
                if ancestry.ancestor(column, (exp.AggFunc,)) is not None:
                    inner = "aggregated"
                self.add(table, column.name.lower(), line, inner)

    def add(self, table: TableName, column: str | None, line: int, usage: str) -> None:
        self.budget.step()
        self.uses.append(PyUse(Use(table, column, line, usage), self.object))


def analyse(
    text: str, module: str, analyse_sql: SqlAnalyser, budget: Budget | None = None
) -> tuple[list[PyUse], list[tuple[int, str]]]:
    """(uses, problems) of one Python file; ``SyntaxError`` and ``MemoryError``
    (CPython's parser gives up on ``x = ------...1`` with one) propagate, and
    ``TooComplex`` once the file's ``budget`` is spent."""
    tree = ast.parse(text)
    visitor = _Visitor(
        analyse_sql, module, budget if budget is not None else Budget(), dbt_contexts(tree)
    )
    # Bindings first, so a DataFrame used in a function defined above its assignment resolves.
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    table = visitor.root_table(node.value)
                    if table is not None:
                        visitor.tables[target.id] = table
    visitor.visit(tree)
    unique = sorted(set(visitor.uses), key=lambda u: (u.use.line, u.use.table, u.use.column or ""))
    return unique, visitor.problems
