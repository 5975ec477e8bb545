"""Check thresholds: one vocabulary for the diff and the smoke test.

A threshold says which metric values pass a check: ``must_be_less_than: 10``
passes the values below 10, ``must_be_not_between: [0, 10]`` everything
outside. The diff (gate/diff/checks.py) asks how two thresholds order; the
smoke test (gate/smoke/) asks whether one metric value passes. Both read the
same spellings into the same value here, so they cannot drift apart again
(they did: the diff knew ``must_not_be_between``, the smoke test soda-core's
``must_be_not_between``, and a changed Soda range was ``undetermined``).

The value is a union of intervals (``Interval``), the set of passing metric
values. Several comparisons on one check intersect; two checks order by which
values one passes that the other does not: exact for unions of intervals,
because membership can only change at an endpoint. Counts are whole numbers,
so ``> 5`` and ``>= 6`` pass the same values.

Spellings, as soda-core's own parsers read them (soda-core v4
``contract_yaml.THRESHOLD_COMPARISON_KEYS``, v3.5
``soda/contracts/check.py`` ``AbstractCheck.threshold_keys``):

- Soda v4, under ``threshold:``: ``must_be``, ``must_not_be``,
  ``must_be_greater_than``, ``must_be_greater_than_or_equal``,
  ``must_be_less_than``, ``must_be_less_than_or_equal``, ``must_be_between``,
  ``must_be_not_between``. Ranges are mappings of ``greater_than(_or_equal)``
  and ``less_than(_or_equal)``. For ``must_be_not_between`` the two bounds
  name the passing sides (``{less_than: 1, greater_than: 3}`` passes below 1
  or above 3), and soda-core refuses a range whose greater bound is not above
  its less bound.
- Soda v3 data contracts, beside the check: the same words, but
  ``must_be_greater_than_or_equal_to`` / ``must_be_less_than_or_equal_to``,
  and ranges as ``[low, high]`` lists, bounds included. ``must_not_be_between``
  appears only in v3's JSON schema; its parser rejects it (``Invalid
  threshold``) and v4 does not know it. The diff still reads it (a contract
  that says so means it); the smoke test refuses it, as Soda would.
- DCS/ODCS: ``mustBe``, ``mustNotBe``, ``mustBeGreaterThan``,
  ``mustBeGreaterOrEqualTo``, ``mustBeLessThan``, ``mustBeLessOrEqualTo``,
  ``mustBeBetween``, ``mustNotBeBetween`` (and the ``...ThanOrEqualTo``
  variants), compared lower case.

Pure: no I/O, no imports from the rest of the gate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

EQ, NE, GT, GE, LT, LE = "==", "!=", ">", ">=", "<", "<="
BETWEEN, NOT_BETWEEN = "between", "not between"

#: Soda v4 comparison keys (nested under ``threshold``), and their comparison.
SODA_V4 = {
    "must_be": EQ,
    "must_not_be": NE,
    "must_be_greater_than": GT,
    "must_be_greater_than_or_equal": GE,
    "must_be_less_than": LT,
    "must_be_less_than_or_equal": LE,
    "must_be_between": BETWEEN,
    "must_be_not_between": NOT_BETWEEN,
}
#: Soda v3 data-contract spellings that v4 dropped (beside the check).
SODA_V3_ONLY = {
    "must_be_greater_than_or_equal_to": GE,
    "must_be_less_than_or_equal_to": LE,
}
#: In v3's JSON schema, refused by its parser and unknown to v4; read by the diff only.
SCHEMA_ONLY = {"must_not_be_between": NOT_BETWEEN}
#: DCS/ODCS keys, lower case.
DATA_CONTRACT = {
    "mustbe": EQ,
    "mustnotbe": NE,
    "mustbegreaterthan": GT,
    "mustbegreaterorequalto": GE,
    "mustbegreaterthanorequalto": GE,
    "mustbelessthan": LT,
    "mustbelessorequalto": LE,
    "mustbelessthanorequalto": LE,
    "mustbebetween": BETWEEN,
    "mustnotbebetween": NOT_BETWEEN,
}
#: Every spelling the diff reads (lower case) -> its comparison.
OPS: dict[str, str] = {**DATA_CONTRACT, **SODA_V4, **SODA_V3_ONLY, **SCHEMA_ONLY}
#: The keys the smoke test evaluates beside a check (v3 flat form; v4's words too).
FLAT_KEYS = frozenset((*SODA_V4, *SODA_V3_ONLY))
#: The keys the smoke test evaluates under ``threshold:`` (v4 nested form).
NESTED_KEYS = frozenset(SODA_V4)
RANGES = frozenset(key for key, op in OPS.items() if op in (BETWEEN, NOT_BETWEEN))
#: Bounds of a v4 range mapping.
RANGE_BOUNDS = frozenset(
    ("greater_than", "greater_than_or_equal", "less_than", "less_than_or_equal")
)


#: Metric values between two ends: (low, low_strict, high, high_strict); None is
#: unbounded, strict excludes the end. A plain tuple: equal intervals hash alike.
Interval = tuple["Decimal | None", bool, "Decimal | None", bool]


#: A threshold's passing values: a union of intervals.
Passing = Sequence[Interval]


class Unsupported(Exception):
    """A check (or threshold) the smoke test cannot evaluate faithfully."""


# -- the set of passing values ----------------------------------------------------------


def number(value: Any) -> Decimal | None:
    """A finite number as written (0.1 is 0.1), or None: booleans, text, .nan, .inf."""
    if isinstance(value, bool):
        return None
    try:
        found = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return found if found.is_finite() else None


def comparison(op: str, bound: Decimal) -> list[Interval]:
    """The values that pass ``value <op> bound`` for a single comparison."""
    table: dict[str, list[Interval]] = {
        EQ: [(bound, False, bound, False)],
        NE: [(None, False, bound, True), (bound, True, None, False)],
        GT: [(bound, True, None, False)],
        GE: [(bound, False, None, False)],
        LT: [(None, False, bound, True)],
        LE: [(None, False, bound, False)],
    }
    return table[op]


def _outside(inside: Interval) -> list[Interval]:
    low, low_strict, high, high_strict = inside
    out: list[Interval] = []
    if low is not None:
        out.append((None, False, low, not low_strict))
    if high is not None:
        out.append((high, not high_strict, None, False))
    return out


def not_between(greater: Interval) -> list[Interval]:
    """``must_be_not_between`` as a mapping, ``greater`` holding (G, strict, L, strict).

    soda-core reads the bounds as the passing sides: below the less bound or
    above the greater one, which is a range only when the greater bound is
    above the less one (soda-core refuses the rest). A mapping written the
    other way round (``{greater_than: 0, less_than: 10}``) is read as the range
    excluded, which is what its author evidently meant; the smoke test refuses it.
    """
    g, g_strict, l_, l_strict = greater
    if g is not None and l_ is not None and g > l_:
        return [(None, False, l_, l_strict), (g, g_strict, None, False)]
    return _outside(greater)


def intervals(op: str, value: Any) -> list[Interval] | None:
    """The metric values that pass ``op value``; None when unreadable (the diff's reader)."""
    if op in (BETWEEN, NOT_BETWEEN):
        if isinstance(value, Mapping):  # Soda v4: {greater_than_or_equal: 0, less_than: 10}
            low = high = None
            low_strict = high_strict = False
            for key, bound in value.items():
                found = number(bound)
                if found is None:
                    return None
                strict = not str(key).endswith(("equal", "equal_to"))
                if str(key).startswith("greater"):
                    low, low_strict = found, strict
                else:
                    high, high_strict = found, strict
            written: Interval = (low, low_strict, high, high_strict)
            return [written] if op == BETWEEN else not_between(written)
        if isinstance(value, list) and len(value) == 2:  # v3, DCS, ODCS: [low, high], included
            low, high = number(value[0]), number(value[1])
            if low is None or high is None:
                return None
            inside: Interval = (low, False, high, False)
            return [inside] if op == BETWEEN else _outside(inside)
        return None
    found = number(value)
    return None if found is None else comparison(op, found)


def outer_range(comparisons: Sequence[tuple[str, Decimal]]) -> bool:
    """A lower bound above an upper one: Soda v3 reads the pair as an outer range.

    soda-core v3.5 (``soda/contracts`` ``Threshold.get_sodacl_threshold``)
    turns ``must_be_greater_than: 25`` with ``must_be_less_than_or_equal: 10``
    into ``not between (10 and 25``: below-or-at 10 *or* above 25 passes,
    where "both hold" would pass nothing.
    """
    lows = [bound for op, bound in comparisons if op in (GT, GE)]
    highs = [bound for op, bound in comparisons if op in (LT, LE)]
    return len(comparisons) == 2 and len(lows) == 1 and len(highs) == 1 and lows[0] > highs[0]


def combine(comparisons: Sequence[tuple[str, Decimal]]) -> list[Interval]:
    """The values passing several single comparisons on one check: all of them hold,
    except Soda v3's outer range (``outer_range``), where either side passes."""
    if outer_range(comparisons):
        return [part for op, bound in comparisons for part in comparison(op, bound)]
    passing: list[Interval] | None = None
    for op, bound in comparisons:
        found = comparison(op, bound)
        passing = found if passing is None else intersect(passing, found)
    return passing or []


def intersect(a: Passing, b: Passing) -> list[Interval]:
    """Values passing both (several comparisons on one check must all hold)."""
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


def contains(passing: Iterable[Interval], x: Decimal) -> bool:
    """True when ``x`` is one of the passing values."""
    for lo, ls, hi, hs in passing:
        if lo is not None and (x < lo or (ls and x == lo)):
            continue
        if hi is not None and (x > hi or (hs and x == hi)):
            continue
        return True
    return False


def _samples(a: Passing, b: Passing, whole: bool) -> list[Decimal]:
    """Points where membership can change: exact for unions of intervals."""
    ends = sorted({e for lo, _ls, hi, _hs in (*a, *b) for e in (lo, hi) if e is not None})
    if not ends:
        return [Decimal(0)]
    points = {ends[0] - 1, ends[-1] + 1, *ends}
    if whole:
        points |= {e + d for e in ends for d in (-1, 1)}
        return sorted(p for p in points if p == p.to_integral())
    points |= {(x + y) / 2 for x, y in itertools.pairwise(ends)}
    return sorted(points)


def order(old: Passing, new: Passing, whole: bool) -> str | None:
    """``tightened``/``loosened``/``both`` for the passing metric values, None if equal.

    ``whole``: the metric is a count, so only whole numbers matter.
    """
    lost = gained = False
    for x in _samples(old, new, whole):
        a, b = contains(old, x), contains(new, x)
        lost |= a and not b
        gained |= b and not a
    if lost and gained:
        return "both"
    if lost:
        return "tightened"
    if gained:
        return "loosened"
    return None


# -- a check's threshold, as the smoke test evaluates it --------------------------------


@dataclass(frozen=True)
class Threshold:
    """A check's threshold: its passing values and how a person reads it."""

    passing: tuple[Interval, ...]
    text: str  # as a person reads it: "must_be 0", "must_be_between [1, 10]"
    metric: str = "count"  # "count" | "percent"
    level: str = "fail"  # "fail" | "warn"
    default: bool = False  # the check gave none; Soda's default applies

    def passes(self, value: float) -> bool:
        """Does a metric value pass? Floats compare as written (0.1 is 0.1); NaN never passes."""
        if isinstance(value, float):
            if math.isnan(value):
                return False
            exact = Decimal(repr(value)) if math.isfinite(value) else Decimal(value)
        else:
            exact = Decimal(value)
        return contains(self.passing, exact)

    def order(self, new: Threshold, *, whole: bool) -> str | None:
        """How ``new`` moved from this one: ``tightened``/``loosened``/``both``, None if equal.

        Another metric (count against percent) cannot be ordered: ``undetermined``.
        """
        if self.metric != new.metric:
            return "undetermined"
        return order(self.passing, new.passing, whole)

    def describe(self) -> str:
        suffix = ", default" if self.default else ""
        level = ", level warn" if self.level == "warn" else ""
        return f"threshold {self.text}{level}{suffix}"


def must_be(value: float, *, metric: str = "count") -> Threshold:
    """Soda's default for missing, invalid and duplicate checks (``must_be 0``)."""
    passing = comparison(EQ, _exact(value, "must_be"))
    return Threshold(tuple(passing), f"must_be {_fmt(value)}", metric, default=True)


def must_be_greater_than(value: float) -> Threshold:
    """Soda's default for row_count (``must_be_greater_than 0``)."""
    passing = comparison(GT, _exact(value, "must_be_greater_than"))
    return Threshold(tuple(passing), f"must_be_greater_than {_fmt(value)}", default=True)


def parse(
    spec: Mapping[str, Any],
    *,
    default: Threshold,
    metric: str | None = None,
    fixed: bool = False,
) -> Threshold:
    """The threshold a Soda check spec declares (v4 nested or v3 flat), or ``default``.

    ``metric`` forces the metric (v3 ``*_percent`` kinds). ``fixed`` checks
    (v3 ``no_missing_values``, ``rows_exist``) take no threshold: one given is
    unsupported rather than silently ignored. Anything soda-core would not
    evaluate the same way raises ``Unsupported`` with a one-line reason.
    """
    nested = spec.get("threshold")
    flat = {key: spec[key] for key in spec if key in FLAT_KEYS}
    if nested is not None and flat:
        raise Unsupported("threshold given both nested and beside the check")
    if nested is not None and not isinstance(nested, Mapping):
        raise Unsupported("'threshold' must be a mapping")
    source: Mapping[str, Any] = nested if nested is not None else flat
    known = NESTED_KEYS if nested is not None else FLAT_KEYS
    unknown = [key for key in source if key not in known | {"metric", "level"}]
    if unknown:
        raise Unsupported(f"unsupported threshold option '{unknown[0]}'")
    chosen_metric = metric or _metric(spec.get("metric"), source.get("metric"))
    level = _level(source.get("level", spec.get("level")))
    keys = [key for key in source if key in known]
    if fixed and keys:
        raise Unsupported("this check type takes no threshold")
    if not keys:
        return Threshold(default.passing, default.text, chosen_metric, level, default=True)
    ranged = [key for key in keys if key in RANGES]
    if ranged and len(keys) > 1:
        raise Unsupported(f"'{ranged[0]}' cannot be combined with other comparisons")
    if ranged:
        passing, text = _range(ranged[0], source[ranged[0]])
        return Threshold(tuple(passing), text, chosen_metric, level)
    comparisons = [(OPS[key], _exact(source[key], key)) for key in keys]
    joint = " or " if outer_range(comparisons) else " and "
    text = joint.join(f"{key} {_fmt(source[key])}" for key in keys)
    return Threshold(tuple(combine(comparisons)), text, chosen_metric, level)


def _metric(*values: Any) -> str:
    for value in values:
        if value is None:
            continue
        if value in ("count", "percent"):
            return str(value)
        raise Unsupported(f"unsupported metric {value!r} (count or percent)")
    return "count"


def _level(value: Any) -> str:
    if value is None:
        return "fail"
    if isinstance(value, str) and value.lower() in ("fail", "warn"):
        return value.lower()
    raise Unsupported(f"unsupported threshold level {value!r} (fail or warn)")


def _exact(value: Any, key: str) -> Decimal:
    """A threshold number as written; the smoke test refuses anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unsupported(f"'{key}' must be a number, found {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise Unsupported(f"'{key}' must be a finite number")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _range(key: str, value: Any) -> tuple[list[Interval], str]:
    inside = OPS[key] == BETWEEN
    if isinstance(value, list):  # v3: [low, high], both included
        if len(value) != 2:
            raise Unsupported(f"'{key}' needs two numbers [low, high]")
        low, high = (_exact(item, key) for item in value)
        if low > high:
            raise Unsupported(f"'{key}' lower bound {value[0]} is above upper bound {value[1]}")
        text = f"{key} [{_fmt(value[0])}, {_fmt(value[1])}]"
        listed: Interval = (low, False, high, False)
        return ([listed] if inside else _outside(listed)), text
    if isinstance(value, Mapping):  # v4: {greater_than(_or_equal): x, less_than(_or_equal): y}
        unknown = [bound for bound in value if bound not in RANGE_BOUNDS]
        if unknown:
            raise Unsupported(f"unsupported '{key}' bound '{unknown[0]}'")
        lows = [bound for bound in value if bound.startswith("greater_than")]
        highs = [bound for bound in value if bound.startswith("less_than")]
        if len(lows) != 1 or len(highs) != 1:
            raise Unsupported(f"'{key}' needs one lower and one upper bound")
        (g_key,), (l_key,) = lows, highs
        greater, less = _exact(value[g_key], key), _exact(value[l_key], key)
        written: Interval = (greater, g_key == "greater_than", less, l_key == "less_than")
        parts = ", ".join(f"{name} {_fmt(value[name])}" for name in (g_key, l_key))
        text = f"{key} {{{parts}}}"
        if inside:
            return [written], text
        if greater <= less:  # soda-core: "Invalid not between threshold range"
            raise Unsupported(
                f"'{key}' greater bound {_fmt(value[g_key])} must be above its less bound "
                f"{_fmt(value[l_key])} (the bounds name the passing sides)"
            )
        return not_between(written), text
    raise Unsupported(f"'{key}' must be a list [low, high] or a mapping of bounds")


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
