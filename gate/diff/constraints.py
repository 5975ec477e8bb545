"""Value constraints and whole enums of a column pair: did the allowed values shrink or grow?

A constraint that allows fewer values (a higher ``minimum``, a new ``pattern``,
``uniqueItems`` switched on) is ``constraint_tightened``: existing producers may
write values the contract now refuses. One that allows more is
``constraint_relaxed``: consumers may see values they never saw. A changed
``pattern`` is compared as a language (gate/diff/regex_lang.py): a strict subset is
tightened, a strict superset relaxed, the same language spelt differently says
nothing, and anything else, or a pattern the automata cannot decide in their
budget, is ``constraint_changed``. A changed ``format`` is ``constraint_changed``.

Bounds are compared by meaning, not spelling: ``minimum: 0`` and
``exclusiveMinimum: -1`` on an integer column, or ``maximum: 2025-01-01`` and
``exclusiveMaximum: 2025-01-02`` on a date, allow the same values and say
nothing. A date or timestamp bound is ordered as a date.

The whole-enum rules live here too, because an enum is the tightest constraint:
declaring one on a free column is ``enum_declared``, dropping it is
``enum_removed``, and single values removed or added are ``enum_value_*``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from gate import rules
from gate.diff import regex_lang
from gate.diff.emitter import DatasetPair
from gate.model import Column
from gate.rules import Rule

#: (rule, message, before, after) for one column.
Finding = tuple[Rule, str, "str | None", "str | None"]

_INTEGER = re.compile(
    r"^(tinyint|smallint|int|integer|bigint|long|short|byte|decimal\(\d+,\s*0\))$"
)

#: lower-bound keys, upper-bound keys (inclusive first) per group.
_BOUNDS = {
    "lower bound": (("minimum", False), ("exclusiveMinimum", True)),
    "upper bound": (("maximum", False), ("exclusiveMaximum", True)),
}
_COUNTS_LOWER = ("minLength", "minItems", "minProperties")
_COUNTS_UPPER = ("maxLength", "maxItems", "maxProperties")
_UNORDERED = ("pattern", "format")


def _ordinal(value: Any) -> Decimal | dt.datetime | None:
    """A bound as something orderable: a number, or a date/timestamp in UTC."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = Decimal(str(value))
        return number if number.is_finite() else None
    if not isinstance(value, str):
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        pass
    else:
        return number if number.is_finite() else None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class _Bound:
    """One side of the allowed range: ``value`` and whether it is excluded."""

    value: Decimal | dt.datetime
    strict: bool


def _step(value: Decimal | dt.datetime, type_text: str) -> Decimal | dt.timedelta | None:
    """The gap between neighbouring values when the domain is discrete, else None."""
    if isinstance(value, Decimal) and _INTEGER.match(type_text) and value == value.to_integral():
        return Decimal(1)
    if isinstance(value, dt.datetime) and type_text == "date":
        return dt.timedelta(days=1)
    return None


def _bound(
    constraints: Mapping[str, Any], keys: tuple[tuple[str, bool], ...], lower: bool, type_text: str
) -> _Bound | str | None:
    """The tightest bound the keys declare, made inclusive on discrete domains.

    Returns ``"?"`` when a bound is written but cannot be ordered.
    """
    best: _Bound | None = None
    for key, strict in keys:
        if key not in constraints:
            continue
        value = _ordinal(constraints[key])
        if value is None:
            return "?"
        step = _step(value, type_text)
        if strict and step is not None:
            value, strict = (value + step, False) if lower else (value - step, False)  # type: ignore[operator]
        candidate = _Bound(value, strict)
        if best is None or _tighter(candidate, best, lower):
            best = candidate
    return best


def _tighter(a: _Bound, b: _Bound, lower: bool) -> bool:
    """True when bound ``a`` allows strictly fewer values than ``b``."""
    try:
        if a.value != b.value:
            return a.value > b.value if lower else a.value < b.value  # type: ignore[operator]
    except TypeError:  # a number against a date: not comparable
        return False
    return a.strict and not b.strict


def _spell(constraints: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    parts = [f"{key} {constraints[key]}" for key in keys if key in constraints]
    return ", ".join(parts) or None


def _compare_bounds(
    old: Mapping[str, Any], new: Mapping[str, Any], type_text: str
) -> list[Finding]:
    findings: list[Finding] = []
    for group, keyed in _BOUNDS.items():
        lower = group == "lower bound"
        keys = tuple(key for key, _strict in keyed)
        before, after = _spell(old, keys), _spell(new, keys)
        if before == after:
            continue
        a = _bound(old, keyed, lower, type_text)
        b = _bound(new, keyed, lower, type_text)
        if isinstance(a, str) or isinstance(b, str):  # "?": a bound it cannot read
            findings.append((rules.CONSTRAINT_CHANGED, f"{group} changed", before, after))
        elif a is None or b is None:
            tightened = a is None
            findings.append(_directed(tightened, group, before, after))
        elif a != b:
            undecided = not _tighter(a, b, lower) and not _tighter(b, a, lower)
            if undecided:
                findings.append((rules.CONSTRAINT_CHANGED, f"{group} changed", before, after))
            else:
                findings.append(_directed(_tighter(b, a, lower), group, before, after))
    return findings


def _directed(tightened: bool, what: str, before: str | None, after: str | None) -> Finding:
    if tightened:
        return (rules.CONSTRAINT_TIGHTENED, f"{what} allows fewer values", before, after)
    return (rules.CONSTRAINT_RELAXED, f"{what} allows more values", before, after)


def _pattern(x: str, y: str, full_match_too: bool) -> Finding | None:
    """A changed ``pattern`` by the languages of both patterns; None when the same."""
    before, after = f"pattern {x}", f"pattern {y}"
    moved = regex_lang.compare(x, y, full_match_too)
    if moved == "":
        return None
    if moved == regex_lang.TIGHTENED:
        return (rules.CONSTRAINT_TIGHTENED, "pattern accepts fewer values", before, after)
    if moved == regex_lang.RELAXED:
        return (rules.CONSTRAINT_RELAXED, "pattern accepts more values", before, after)
    why = (
        "each accepts values the other refuses"
        if moved == regex_lang.CHANGED
        else "the gate cannot tell which allows more"
    )
    return (rules.CONSTRAINT_CHANGED, f"pattern changed; {why}", before, after)


def compare(
    old: Column, new: Column, type_text: str, full_match_too: bool = False
) -> list[Finding]:
    """Every constraint finding between two versions of one column.

    ``full_match_too``: a pattern may be matched against the whole value, not
    searched in it (Soda hands it to the warehouse; see gate/diff/regex_lang.py).
    """
    a, b = dict(old.constraints), dict(new.constraints)
    if a == b:
        return []
    type_text = type_text.lower().replace(" ", "")
    findings = _compare_bounds(a, b, type_text)
    if a.get("uniqueItems") != b.get("uniqueItems"):
        findings.append(
            _directed(
                bool(b.get("uniqueItems")),
                "uniqueItems",
                f"uniqueItems {bool(a.get('uniqueItems'))}".lower(),
                f"uniqueItems {bool(b.get('uniqueItems'))}".lower(),
            )
        )
    # One walk for every key compared by value: a lower count tightens when it
    # grows, an upper one when it shrinks; an unordered one (pattern, format)
    # has no direction once both sides declare it.
    keyed = [
        *((key, "lower") for key in _COUNTS_LOWER),
        *((key, "upper") for key in _COUNTS_UPPER),
        *((key, None) for key in _UNORDERED),
    ]
    for key, order in keyed:
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        before = None if x is None else f"{key} {x}"
        after = None if y is None else f"{key} {y}"
        if x is None or y is None:
            findings.append(_directed(x is None, key, before, after))
        elif key == "pattern" and isinstance(x, str) and isinstance(y, str):
            found = _pattern(x, y, full_match_too)
            if found:
                findings.append(found)
        elif order is None or isinstance(x, str) or isinstance(y, str):
            findings.append(
                (
                    rules.CONSTRAINT_CHANGED,
                    f"{key} changed; the gate cannot tell which allows more",
                    before,
                    after,
                )
            )
        else:
            findings.append(_directed((y > x) if order == "lower" else (y < x), key, before, after))
    return findings


def _values(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def compare_enum(old: Column, new: Column) -> Finding | None:
    """An enum declared on a free column, or dropped altogether."""
    if old.enum is None and new.enum is not None:
        return (
            rules.ENUM_DECLARED,
            f"now only allows {_values(new.enum)}; producers writing other values fail",
            "any value",
            _values(new.enum),
        )
    if old.enum is not None and new.enum is None:
        return (
            rules.ENUM_REMOVED,
            "no longer restricts its values; consumers may see any value",
            _values(old.enum),
            "any value",
        )
    return None


def enum_values(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    """Single allowed values removed from or added to an enum both sides declare."""
    if old.enum is None or new.enum is None:
        return
    # Set lookups: an enum may hold tens of thousands of values (a lookup in the
    # other side's tuple per value took minutes for 45,000 of them).
    before, after = set(old.enum), set(new.enum)
    gone = [v for v in old.enum if v not in after]
    came = [v for v in new.enum if v not in before]
    if gone:
        pair.emit(
            rules.ENUM_VALUE_REMOVED,
            f"column '{name}' no longer allows {_values(gone)}",
            column=name,
            line=new.line,
            before=_values(old.enum),
            after=_values(new.enum),
        )
    if came:
        pair.emit(
            rules.ENUM_VALUE_ADDED,
            f"column '{name}' now also allows {_values(came)}",
            column=name,
            line=new.line,
            before=_values(old.enum),
            after=_values(new.enum),
        )


def constraints(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    """The whole-enum and constraint findings of one column pair."""
    found = compare_enum(old, new)
    findings = ([found] if found else []) + compare(
        old,
        new,
        pair.type_text(new) or "",
        # Soda's regex runs in the warehouse: a search or a whole-value match.
        full_match_too="soda" in (pair.old.format, pair.new.format),
    )
    for rule, message, before, after in findings:
        pair.emit(
            rule,
            f"column '{name}' {message}",
            column=name,
            line=new.line,
            before=before,
            after=after,
        )
