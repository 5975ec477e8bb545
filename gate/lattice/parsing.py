"""A type's text into sqlglot's ``exp.DataType``, strict, with the dialect's defaults filled in.

Split from the lattice so every other part works on one canonical tree: synonyms
are folded (``int4`` is INT), implicit parameters made explicit (Spark
``decimal`` is ``DECIMAL(10,0)``), and anything sqlglot would only half read is
an unknown type (``None``) rather than a silently different one.
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

from gate.lattice.bounds import check_bounds
from gate.lattice.dialects import (
    _DECIMALS,
    _DEFAULT_PARAMS,
    _FLOATS,
    _INTEGERS,
    _NUMBER_INTEGERS,
    _SYNONYMS,
    T,
    _lookup,
    validate_dialect,
)


def parse(text: str, dialect: str = "spark") -> exp.DataType | None:
    """The sqlglot type with dialect defaults filled in; None when unknown.

    Unknown covers junk text, user-defined types and anything sqlglot would
    only half read: ``DataType.build`` silently drops what it cannot parse
    (``array<foo>`` becomes a bare ARRAY), so parsing here is strict.
    """
    parsed = _parse(text, validate_dialect(dialect))
    return parsed.copy() if parsed is not None else None


@functools.lru_cache(maxsize=16384)
def _parse(text: str, dialect: str) -> exp.DataType | None:
    """Shared, never mutated after normalisation: callers get ``parse`` copies."""
    if check_bounds(text) is not None:
        return None  # the formats refuse it with the file and line; never parse it
    try:
        dt = sqlglot.parse_one(text, read=dialect, into=exp.DataType)
    except Exception:  # junk text must not crash the gate: it is an unknown type
        return None
    if not isinstance(dt, exp.DataType):
        return None
    nodes = list(dt.find_all(exp.DataType))
    for node in nodes:
        if node.this in (T.USERDEFINED, T.UNKNOWN) or not _well_formed(node):
            return None
    for node in nodes:
        _normalise(node, dialect)
    return dt


def _well_formed(node: exp.DataType) -> bool:
    """Nested types must carry their parts (sqlglot drops some quietly)."""
    if node.this not in exp.DataType.NESTED_TYPES:
        return True
    for part in node.expressions:
        if isinstance(part, exp.ColumnDef):
            if not isinstance(part.args.get("kind"), exp.DataType):
                return False
        elif not isinstance(part, exp.DataType):
            return False
    return True


def _normalise(node: exp.DataType, dialect: str) -> None:
    """Rewrite one node in place: synonyms first, then implicit parameters."""
    kind = node.this
    if not isinstance(kind, T) or not all(
        isinstance(e, exp.DataTypeParam) for e in node.expressions
    ):
        return  # nested types and ENUM('a', ...) have parts, not parameters
    params = _params(node)
    if kind in _FLOATS and len(params) == 1 and isinstance(params[0], int):
        # FLOAT(p) counts significand bits (SQL standard, MySQL, T-SQL, postgres).
        kind, params = (T.FLOAT if params[0] <= 24 else T.DOUBLE), ()
    kind = _lookup(_SYNONYMS, dialect, kind, kind)
    if kind in _INTEGERS:
        params = ()  # MySQL's INT(11) is a display width, not a range
        if dialect in _NUMBER_INTEGERS:
            kind, params = T.DECIMAL, (38, 0)
    if not params and (default := _lookup(_DEFAULT_PARAMS, dialect, kind)):
        params = default
    if kind in _DECIMALS and len(params) == 1 and isinstance(params[0], int):
        params = (params[0], 0)
    if kind is node.this and params == _params(node):
        return
    node.set("this", kind)
    node.set(
        "expressions",
        [exp.DataTypeParam(this=_literal(p)) for p in params] or None,
    )


def _literal(value: int | str) -> exp.Expression:
    return exp.Literal.number(value) if isinstance(value, int) else exp.Var(this=value)


def _params(node: exp.DataType) -> tuple[int | str, ...]:
    """A leaf's parameters: ints where they are whole numbers, else text."""
    out: list[int | str] = []
    for param in node.expressions:
        if not isinstance(param, exp.DataTypeParam):
            return ()
        value = param.this
        if isinstance(value, exp.Literal) and value.is_int:
            out.append(int(value.this))
        else:
            out.append(value.sql().upper())
    return tuple(out)
