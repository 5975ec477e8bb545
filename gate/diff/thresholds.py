"""Thresholds as sets of passing metric values, so two thresholds can be ordered.

``mustBeLessThan: 10`` passes the metric values below 10; ``mustNotBeBetween:
[0, 10]`` passes everything outside. Each threshold becomes a union of
intervals, several thresholds on one check intersect, and two checks compare
by which metric values one passes that the other does not: exact for unions
of intervals, because membership can only change at an endpoint. Counts are
whole numbers, so ``> 5`` and ``>= 6`` pass the same values.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

#: Threshold keys of DCS/ODCS and Soda (v3 top level, v4 under ``threshold``).
OPS = {
    "mustbe": "==",
    "must_be": "==",
    "mustnotbe": "!=",
    "must_not_be": "!=",
    "mustbegreaterthan": ">",
    "must_be_greater_than": ">",
    "mustbegreaterorequalto": ">=",
    "mustbegreaterthanorequalto": ">=",
    "must_be_greater_than_or_equal": ">=",
    "must_be_greater_than_or_equal_to": ">=",
    "mustbelessthan": "<",
    "must_be_less_than": "<",
    "mustbelessorequalto": "<=",
    "mustbelessthanorequalto": "<=",
    "must_be_less_than_or_equal": "<=",
    "must_be_less_than_or_equal_to": "<=",
    "mustbebetween": "between",
    "must_be_between": "between",
    "mustnotbebetween": "not between",
    "must_not_be_between": "not between",
    "must_be_not_between": "not between",  # soda-core's own spelling (v3 and v4 parsers)
}
#: An interval: (low, low_strict, high, high_strict); None is unbounded.
Interval = tuple["Decimal | None", bool, "Decimal | None", bool]


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None  # .nan / .inf order nothing


def intervals(op: str, value: Any) -> list[Interval] | None:
    """The metric values that pass ``op value``; None when unreadable."""
    if op in ("between", "not between"):
        if isinstance(value, Mapping):  # Soda v4: {greater_than_or_equal: 0, less_than: 10}
            low = high = None
            low_strict = high_strict = False
            for key, bound in value.items():
                number = _number(bound)
                if number is None:
                    return None
                if str(key).startswith("greater"):
                    low, low_strict = number, not str(key).endswith(("equal", "equal_to"))
                else:
                    high, high_strict = number, not str(key).endswith(("equal", "equal_to"))
        elif isinstance(value, list) and len(value) == 2:
            low, high = _number(value[0]), _number(value[1])
            if low is None or high is None:
                return None
            low_strict = high_strict = False
        else:
            return None
        inside: Interval = (low, low_strict, high, high_strict)
        if op == "between":
            return [inside]
        outside: list[Interval] = []
        if low is not None:
            outside.append((None, False, low, not low_strict))
        if high is not None:
            outside.append((high, not high_strict, None, False))
        return outside
    number = _number(value)
    if number is None:
        return None
    table: dict[str, list[Interval]] = {
        "==": [(number, False, number, False)],
        "!=": [(None, False, number, True), (number, True, None, False)],
        ">": [(number, True, None, False)],
        ">=": [(number, False, None, False)],
        "<": [(None, False, number, True)],
        "<=": [(None, False, number, False)],
    }
    return table[op]


def intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo1, ls1, hi1, hs1 in a:
        for lo2, ls2, hi2, hs2 in b:
            if lo1 is None or (lo2 is not None and lo2 > lo1):
                lo, ls = lo2, ls2
            elif lo2 is None or lo1 > lo2:
                lo, ls = lo1, ls1
            else:
                lo, ls = lo1, ls1 or ls2
            if hi1 is None or (hi2 is not None and hi2 < hi1):
                hi, hs = hi2, hs2
            elif hi2 is None or hi1 < hi2:
                hi, hs = hi1, hs1
            else:
                hi, hs = hi1, hs1 or hs2
            out.append((lo, ls, hi, hs))
    return out


def _contains(intervals: list[Interval], x: Decimal) -> bool:
    for lo, ls, hi, hs in intervals:
        if lo is not None and (x < lo or (ls and x == lo)):
            continue
        if hi is not None and (x > hi or (hs and x == hi)):
            continue
        return True
    return False


def _samples(a: list[Interval], b: list[Interval], whole: bool) -> list[Decimal]:
    """Points where membership can change: exact for unions of intervals."""
    ends = sorted({e for lo, _ls, hi, _hs in a + b for e in (lo, hi) if e is not None})
    if not ends:
        return [Decimal(0)]
    points = {ends[0] - 1, ends[-1] + 1, *ends}
    if whole:
        points |= {e + d for e in ends for d in (-1, 1)}
        return sorted(p for p in points if p == p.to_integral())
    points |= {(x + y) / 2 for x, y in itertools.pairwise(ends)}
    return sorted(points)


def order(old: list[Interval], new: list[Interval], whole: bool) -> str | None:
    """``tightened``/``loosened``/``both`` for the passing metric values, None if equal."""
    lost = gained = False
    for x in _samples(old, new, whole):
        a, b = _contains(old, x), _contains(new, x)
        lost |= a and not b
        gained |= b and not a
    if lost and gained:
        return "both"
    if lost:
        return "tightened"
    if gained:
        return "loosened"
    return None
