"""Scalar types as values the lattice can order: integers, floats, decimals, text, dates, moments.

Split from the lattice because this is the lattice proper: each leaf type
becomes a small value (range, significand bits, digits, length, precision) and
``_widens`` / ``_classify`` decide, per Delta Lake's type widening, whether
every stored value still fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from gate.lattice.change import TypeChange
from gate.lattice.dialects import (
    _BINARIES,
    _DATE_WIDENS_TO,
    _DECIMALS,
    _FIXED_BINARY_DIALECTS,
    _FLOATS,
    _FRACTION_DEFAULT,
    _IMPLIED_LENGTH,
    _INTEGERS,
    _MAX_PRECISION,
    _NATIONAL,
    _NATIONAL_DIALECTS,
    _TEXTS,
    _TIMES,
    _TIMESTAMPS,
    _UNBOUNDED_DECIMAL,
    _ZONED,
    Kind,
    T,
    _lookup,
)
from gate.lattice.parsing import _params
from gate.lattice.spelling import _render_leaf


@dataclass(frozen=True)
class _Int:
    low: int
    high: int
    digits: int


@dataclass(frozen=True)
class _Float:
    bits: int


@dataclass(frozen=True)
class _Decimal:
    precision: int | None  # None: unbounded
    scale: int

    @property
    def integer_digits(self) -> int | None:
        return None if self.precision is None else self.precision - self.scale


@dataclass(frozen=True)
class _Chars:
    binary: bool
    fixed: bool
    length: int | None  # None: unbounded
    national: bool


@dataclass(frozen=True)
class _Date:
    pass


@dataclass(frozen=True)
class _Moment:
    kind: Kind
    precision: int


@dataclass(frozen=True)
class _Other:
    """A type the lattice does not order: equal to itself only."""

    type: exp.DataType
    bare_decimal: bool = False


@dataclass(frozen=True)
class _Invalid:
    """A type the dialect cannot hold (``DECIMAL(50,2)`` in Spark): equal to itself only."""

    type: exp.DataType
    why: str


_Leaf = _Int | _Float | _Decimal | _Chars | _Date | _Moment | _Other | _Invalid


def _leaf(dt: exp.DataType, dialect: str) -> _Leaf:
    kind, params = dt.this, _params(dt)
    numbers = tuple(p for p in params if isinstance(p, int))
    ints = len(numbers) == len(params)
    if kind in _INTEGERS and not params:
        bits, signed, digits = _INTEGERS[kind]
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
        return _Int(low, high, digits)
    if kind in _FLOATS and not params:
        return _Float(_FLOATS[kind])
    if kind in _DECIMALS:
        if not params and dialect in _UNBOUNDED_DECIMAL:
            return _Decimal(None, 0)
        if len(params) == 2 and ints:
            limit = _lookup(_MAX_PRECISION, dialect, kind)
            if params[0] > limit:
                why = f"precision {params[0]} is above {dialect}'s maximum of {limit}"
                return _Invalid(dt, f"{_render_leaf(dt, dialect)} is not a valid type: {why}")
            return _Decimal(numbers[0], numbers[1])
        return _Other(dt, bare_decimal=not params)
    if (kind in _TEXTS or kind in _BINARIES) and len(params) <= 1:
        binary = kind in _BINARIES
        if params == ("MAX",):
            length = None
        elif params and ints:
            length = numbers[0]
        elif params:
            return _Other(dt)
        else:
            length = _lookup(_IMPLIED_LENGTH, dialect, kind)
        fixed = _TEXTS.get(kind, kind is T.BINARY and dialect in _FIXED_BINARY_DIALECTS)
        national = kind in _NATIONAL and dialect in _NATIONAL_DIALECTS
        return _Chars(binary, fixed and (length is not None), length, national)
    if kind is T.DATE and not params:
        return _Date()
    if (kind in _TIMESTAMPS or kind in _TIMES) and len(params) <= 1 and ints:
        return _Moment(kind, numbers[0] if numbers else _FRACTION_DEFAULT.get(dialect, 6))
    return _Other(dt)


def _widens(a: _Leaf, b: _Leaf) -> bool:
    """True when every value of ``a`` is a value of ``b``."""
    match a, b:
        case _Int(), _Int():
            return b.low <= a.low and a.high <= b.high
        case _Int(), _Float():
            return max(-a.low, a.high) <= 2**b.bits
        case _Int(), _Decimal():
            return b.integer_digits is None or b.integer_digits >= a.digits
        case _Float(), _Float():
            return b.bits >= a.bits
        case _Decimal(), _Decimal():
            if b.integer_digits is None or a.integer_digits is None:
                return b.precision is None
            return b.integer_digits >= a.integer_digits and b.scale >= a.scale
        case _Chars(), _Chars():
            return (
                a.binary == b.binary
                and a.national == b.national
                and (a.fixed or not b.fixed)
                and _longer_or_equal(b.length, a.length)
            )
        case _Date(), _Moment():
            return b.kind in _DATE_WIDENS_TO
        case _Moment(), _Moment():
            return a.kind is b.kind and b.precision >= a.precision
    return False


def _longer_or_equal(x: int | None, y: int | None) -> bool:
    return x is None or (y is not None and x >= y)


def _exact(leaf: _Leaf) -> bool:
    return isinstance(leaf, _Int | _Decimal)


def _loss(a: _Leaf, b: _Leaf) -> str:
    """What ``b`` cannot hold of ``a``, for a narrowing in one family."""
    match a, b:
        case _Int(), _Int():
            return "changes signedness" if (a.low < 0) != (b.low < 0) else "loses range"
        case ((_Int() | _Decimal()), (_Int() | _Decimal())):
            digits_a = a.digits if isinstance(a, _Int) else a.integer_digits
            digits_b = b.digits if isinstance(b, _Int) else b.integer_digits
            scale_a = a.scale if isinstance(a, _Decimal) else 0
            scale_b = b.scale if isinstance(b, _Decimal) else 0
            lost = []
            if not _longer_or_equal(digits_b, digits_a):
                lost.append("integer digits")
            if scale_b < scale_a:
                lost.append("scale")
            return "loses " + (" and ".join(lost) if lost else "range")
        case _Float(), _:
            return "loses precision"
        case _Chars(), _Chars():
            if not _longer_or_equal(b.length, a.length):
                return "loses length"
            return "pads values"
        case _Moment(), _Date():
            return "loses time of day"
        case _Moment(), _Moment():
            return "loses fractional seconds"
    return "loses values"


def _classify(a: _Leaf, b: _Leaf) -> tuple[TypeChange, str]:
    if a == b:
        return TypeChange.SAME, ""
    invalid = next((x for x in (b, a) if isinstance(x, _Invalid)), None)
    if invalid is not None:  # never a widening: the engine cannot store the type
        return TypeChange.CHANGED, f"changes type: {invalid.why}"
    if _widens(a, b):
        return TypeChange.WIDENED, "widens"
    if _widens(b, a):
        return TypeChange.NARROWED, _loss(a, b)
    # Neither holds the other: one family still narrows, as each loses values.
    if _exact(a) and _exact(b):
        return TypeChange.NARROWED, _loss(a, b)
    if isinstance(a, _Chars) and isinstance(b, _Chars) and a.binary == b.binary:
        if a.national != b.national:
            return TypeChange.CHANGED, "changes character set"
        return TypeChange.NARROWED, _loss(a, b)
    if isinstance(a, _Int | _Decimal | _Float) and isinstance(b, _Int | _Decimal | _Float):
        return TypeChange.CHANGED, "loses precision"
    if isinstance(a, _Moment) and isinstance(b, _Moment) and {a.kind, b.kind} <= _ZONED:
        return TypeChange.CHANGED, "changes time zone semantics"
    if any(isinstance(x, _Other) and x.bare_decimal for x in (a, b)):
        return TypeChange.CHANGED, "has a DECIMAL of unknown default precision"
    return TypeChange.CHANGED, "changes type"
