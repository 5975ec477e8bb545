"""Row-level conditions as small expression trees: SQL text with parameters, or a Column.

Why not PySpark ``Column`` objects throughout: on a local session every
``Column`` method is a Py4J round trip to the JVM, and a dataset's aggregation
(every coercion, ``missing``, ``invalid`` and NOT NULL rule of a contract) took
about 1,450 of them, ~0.1 s per dataset before Spark ran anything. The same
aggregation as one ``spark.sql(text, args=...)`` query costs a few dozen round
trips, and Spark analyses the text faster than the Column tree (measured:
docs/smoke-test.md).

Why that is safe: the SQL text holds only what the gate makes itself (backtick-
quoted identifiers checked against ``_IDENTIFIER``: the positional ``c0``,
``t0`` names the readers give every column; function names and types from the
fixed tables below). Every value that comes from a contract (valid values,
regexes, bounds, lengths) becomes a named parameter marker (``:p0``) bound by
Spark as a literal, never spliced into the text, so a value like
``x' OR 1=1 --`` is compared as that string. Contract types never reach the
text either: each cast to a contract type is a column of the projected frame
(``Bound.typed_name``), built with ``Column.try_cast``.

The same tree renders as a ``Column`` (``to_column``) for the steps that stay
on the DataFrame API (the quarantine's per-row labels, duplicate keys), so a
rule is written once and both routes evaluate the same condition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Expr",
    "Params",
    "any_of",
    "call",
    "col",
    "lit",
    "to_column",
    "to_sql",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Functions a rule may call: SQL name -> ``pyspark.sql.functions`` name.
_FUNCTIONS = {
    "coalesce": "coalesce",
    "count_if": "count_if",
    "length": "length",
    "to_json": "to_json",
    "try_parse_json": "try_parse_json",
}

#: Types a rule may cast to by name (contract types go through the projection).
_TYPES = {"string": "STRING", "double": "DOUBLE"}

_COMPARISONS = {"eq": "=", "ne": "!=", "lt": "<", "gt": ">"}


@dataclass(frozen=True)
class Expr:
    """One node: ``op`` and its operands (other nodes or plain values)."""

    op: str
    args: tuple[Any, ...]

    # The Column methods the rules use, with the same names and meaning.
    def isNull(self) -> Expr:
        return Expr("isnull", (self,))

    def isNotNull(self) -> Expr:
        return Expr("isnotnull", (self,))

    def isin(self, values: list[Any]) -> Expr:
        return Expr("in", (self, tuple(values)))

    def rlike(self, pattern: str) -> Expr:
        return Expr("rlike", (self, pattern))

    def cast(self, type_name: str) -> Expr:
        return Expr("cast", (self, _type(type_name)))

    def try_cast(self, type_name: str) -> Expr:
        return Expr("try_cast", (self, _type(type_name)))

    def __and__(self, other: Expr) -> Expr:
        return Expr("and", (self, other))

    def __or__(self, other: Expr) -> Expr:
        return Expr("or", (self, other))

    def __invert__(self) -> Expr:
        return Expr("not", (self,))

    def __lt__(self, other: Any) -> Expr:
        return Expr("lt", (self, _operand(other)))

    def __gt__(self, other: Any) -> Expr:
        return Expr("gt", (self, _operand(other)))

    def __eq__(self, other: Any) -> Expr:  # type: ignore[override]
        return Expr("eq", (self, _operand(other)))

    def __ne__(self, other: Any) -> Expr:  # type: ignore[override]
        return Expr("ne", (self, _operand(other)))

    def __hash__(self) -> int:
        return hash((self.op, self.args))

    def __bool__(self) -> bool:
        raise TypeError("an Expr has no truth value: combine conditions with & | ~")


def _type(name: str) -> str:
    if name.lower() not in _TYPES:
        raise ValueError(f"not a type rules may cast to by name: {name!r}")
    return name.lower()


def _operand(value: Any) -> Expr:
    return value if isinstance(value, Expr) else lit(value)


def col(name: str) -> Expr:
    """A column of the frame, by a gate-made name (``c0``, ``t3``, the corrupt-record column)."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not a gate-made column name: {name!r}")
    return Expr("col", (name,))


def lit(value: Any) -> Expr:
    """A value: a parameter marker in SQL text, ``F.lit`` in a Column."""
    return Expr("lit", (value,))


def call(function: str, *args: Any) -> Expr:
    """One of the allowed functions over expressions (plain values become literals)."""
    if function not in _FUNCTIONS:
        raise ValueError(f"not a function rules may call: {function!r}")
    return Expr("call", (function, *[_operand(arg) for arg in args]))


def any_of(conditions: list[Expr]) -> Expr:
    """True when any condition is true; NULL counts as false (``coalesce(c, false)``)."""
    if not conditions:
        return lit(False)
    out = call("coalesce", conditions[0], False)
    for condition in conditions[1:]:
        out = out | call("coalesce", condition, False)
    return out


class Params:
    """The named parameters of one query: every value gets its own marker."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def marker(self, value: Any) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = value
        return f":{name}"


def to_sql(expr: Expr, params: Params) -> str:
    """The expression as Spark SQL text; its values go into ``params``."""
    op, args = expr.op, expr.args
    if op == "col":
        return f"`{args[0]}`"
    if op == "lit":
        return params.marker(args[0])
    if op == "isnull":
        return f"({to_sql(args[0], params)} IS NULL)"
    if op == "isnotnull":
        return f"({to_sql(args[0], params)} IS NOT NULL)"
    if op == "not":
        return f"(NOT {to_sql(args[0], params)})"
    if op in ("and", "or"):
        return f"({to_sql(args[0], params)} {op.upper()} {to_sql(args[1], params)})"
    if op in _COMPARISONS:
        return f"({to_sql(args[0], params)} {_COMPARISONS[op]} {to_sql(args[1], params)})"
    if op == "in":
        if not args[1]:  # ``x IN ()`` is no SQL; an empty list matches nothing
            return "false"
        markers = ", ".join(params.marker(value) for value in args[1])
        return f"({to_sql(args[0], params)} IN ({markers}))"
    if op == "rlike":
        return f"({to_sql(args[0], params)} RLIKE {params.marker(args[1])})"
    if op in ("cast", "try_cast"):
        return f"{op.upper()}({to_sql(args[0], params)} AS {_TYPES[args[1]]})"
    if op == "call":
        inner = ", ".join(to_sql(arg, params) for arg in args[1:])
        return f"{args[0]}({inner})"
    raise ValueError(f"unknown expression: {op}")


def to_column(expr: Expr) -> Any:
    """The expression as a PySpark ``Column`` (one JVM round trip per node locally)."""
    from pyspark.sql import functions as F

    op, args = expr.op, expr.args
    if op == "col":
        return F.col(args[0])
    if op == "lit":
        return F.lit(args[0])
    if op == "isnull":
        return to_column(args[0]).isNull()
    if op == "isnotnull":
        return to_column(args[0]).isNotNull()
    if op == "not":
        return ~to_column(args[0])
    if op == "and":
        return to_column(args[0]) & to_column(args[1])
    if op == "or":
        return to_column(args[0]) | to_column(args[1])
    if op in _COMPARISONS:
        left, right = to_column(args[0]), to_column(args[1])
        if op == "eq":
            return left == right
        if op == "ne":
            return left != right
        return left < right if op == "lt" else left > right
    if op == "in":
        if not args[1]:
            return F.lit(False)
        return to_column(args[0]).isin(list(args[1]))
    if op == "rlike":
        return to_column(args[0]).rlike(args[1])
    if op == "cast":
        return to_column(args[0]).cast(args[1])
    if op == "try_cast":
        return to_column(args[0]).try_cast(args[1])
    if op == "call":
        return getattr(F, _FUNCTIONS[args[0]])(*[to_column(arg) for arg in args[1:]])
    raise ValueError(f"unknown expression: {op}")
