"""Soda thresholds: parse them (v4 nested, v3 flat) and decide pass or fail.

Soda v4 nests the threshold::

    - missing:
        threshold:
          metric: percent
          must_be_less_than: 5
          level: warn

v3 writes the same keys beside the check type (``must_be_less_than: 5``) and
spells ranges as a list (``must_be_between: [0, 10]``, bounds included). v4
spells ranges as a mapping (``must_be_between: {greater_than: 0,
less_than_or_equal: 10}``). Both are accepted everywhere. Several single
comparisons (``must_be_greater_than: 0`` and ``must_be_less_than: 10``) must
all hold.

Defaults, as in Soda v4 (soda-core ``ThresholdImpl`` defaults): ``missing``,
``invalid`` and ``duplicate`` must be 0; ``row_count`` must be greater than 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

COMPARATORS = (
    "must_be",
    "must_not_be",
    "must_be_greater_than",
    "must_be_greater_than_or_equal",
    "must_be_less_than",
    "must_be_less_than_or_equal",
)
RANGES = ("must_be_between", "must_be_not_between")
THRESHOLD_KEYS = frozenset((*COMPARATORS, *RANGES))
_RANGE_BOUNDS = frozenset(
    ("greater_than", "greater_than_or_equal", "less_than", "less_than_or_equal")
)


class Unsupported(Exception):
    """A check (or threshold) the smoke test cannot evaluate faithfully."""


@dataclass(frozen=True)
class Bound:
    """One comparison: ``value <op> number``."""

    op: str  # "==", "!=", ">", ">=", "<", "<="
    number: float

    def holds(self, value: float) -> bool:
        if self.op == "==":
            return value == self.number
        if self.op == "!=":
            return value != self.number
        if self.op == ">":
            return value > self.number
        if self.op == ">=":
            return value >= self.number
        if self.op == "<":
            return value < self.number
        return value <= self.number


_OPS = {
    "must_be": "==",
    "must_not_be": "!=",
    "must_be_greater_than": ">",
    "must_be_greater_than_or_equal": ">=",
    "must_be_less_than": "<",
    "must_be_less_than_or_equal": "<=",
}


@dataclass(frozen=True)
class Threshold:
    """When a metric passes: all of ``bounds`` hold, or (``outside``) any of them does."""

    bounds: tuple[Bound, ...]
    text: str  # as a person reads it: "must_be 0", "must_be_between [1, 10]"
    metric: str = "count"  # "count" | "percent"
    level: str = "fail"  # "fail" | "warn"
    outside: bool = False  # must_be_not_between: passes when any bound holds
    default: bool = False  # the check gave none; Soda's default applies

    def passes(self, value: float) -> bool:
        if self.outside:
            return any(bound.holds(value) for bound in self.bounds)
        return all(bound.holds(value) for bound in self.bounds)

    def describe(self) -> str:
        suffix = ", default" if self.default else ""
        level = ", level warn" if self.level == "warn" else ""
        return f"threshold {self.text}{level}{suffix}"


def must_be(number: float, *, metric: str = "count") -> Threshold:
    return Threshold((Bound("==", number),), f"must_be {_fmt(number)}", metric, default=True)


def must_be_greater_than(number: float) -> Threshold:
    return Threshold((Bound(">", number),), f"must_be_greater_than {_fmt(number)}", default=True)


def parse(
    spec: Mapping[str, Any],
    *,
    default: Threshold,
    metric: str | None = None,
    fixed: bool = False,
) -> Threshold:
    """The threshold a check spec declares, or ``default``.

    ``metric`` forces the metric (v3 ``*_percent`` kinds). ``fixed`` checks
    (v3 ``no_missing_values``, ``rows_exist``) take no threshold: one given is
    unsupported rather than silently ignored.
    """
    nested = spec.get("threshold")
    flat = {key: spec[key] for key in spec if key in THRESHOLD_KEYS}
    if nested is not None and flat:
        raise Unsupported("threshold given both nested and beside the check")
    if nested is not None and not isinstance(nested, Mapping):
        raise Unsupported("'threshold' must be a mapping")
    source: Mapping[str, Any] = nested if nested is not None else flat
    unknown = [key for key in source if key not in THRESHOLD_KEYS | {"metric", "level"}]
    if unknown:
        raise Unsupported(f"unsupported threshold option '{unknown[0]}'")
    chosen_metric = metric or _metric(spec.get("metric"), source.get("metric"))
    level = _level(source.get("level", spec.get("level")))
    keys = [key for key in source if key in THRESHOLD_KEYS]
    if fixed:
        if keys:
            raise Unsupported("this check type takes no threshold")
        return _relevel(default, level, chosen_metric)
    if not keys:
        return _relevel(default, level, chosen_metric)
    bounds: list[Bound] = []
    texts: list[str] = []
    outside = False
    for key in keys:
        value = source[key]
        if key in _OPS:
            bounds.append(Bound(_OPS[key], _number(value, key)))
            texts.append(f"{key} {_fmt(_number(value, key))}")
        else:
            if len(keys) > 1:
                raise Unsupported(f"'{key}' cannot be combined with other comparisons")
            range_bounds, text = _range(key, value)
            bounds.extend(range_bounds)
            texts.append(text)
            outside = key == "must_be_not_between"
    return Threshold(tuple(bounds), " and ".join(texts), chosen_metric, level, outside=outside)


def _relevel(default: Threshold, level: str, metric: str) -> Threshold:
    return Threshold(default.bounds, default.text, metric, level, default.outside, default=True)


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


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unsupported(f"'{key}' must be a number, found {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise Unsupported(f"'{key}' must be a finite number")
    return value


def _range(key: str, value: Any) -> tuple[list[Bound], str]:
    inside = key == "must_be_between"
    if isinstance(value, list):  # v3: [low, high], both included
        if len(value) != 2:
            raise Unsupported(f"'{key}' needs two numbers [low, high]")
        low, high = (_number(item, key) for item in value)
        if low > high:
            raise Unsupported(f"'{key}' lower bound {low} is above upper bound {high}")
        text = f"{key} [{_fmt(low)}, {_fmt(high)}]"
        if inside:
            return [Bound(">=", low), Bound("<=", high)], text
        return [Bound("<", low), Bound(">", high)], text
    if isinstance(value, Mapping):  # v4: {greater_than(_or_equal): x, less_than(_or_equal): y}
        unknown = [bound for bound in value if bound not in _RANGE_BOUNDS]
        if unknown:
            raise Unsupported(f"unsupported '{key}' bound '{unknown[0]}'")
        lows = [bound for bound in value if bound.startswith("greater_than")]
        highs = [bound for bound in value if bound.startswith("less_than")]
        if len(lows) != 1 or len(highs) != 1:
            raise Unsupported(f"'{key}' needs one lower and one upper bound")
        bounds = [
            Bound(">" if name.endswith("than") else ">=", _number(value[name], key))
            for name in lows
        ] + [
            Bound("<" if name.endswith("than") else "<=", _number(value[name], key))
            for name in highs
        ]
        parts = ", ".join(f"{name} {_fmt(_number(value[name], key))}" for name in (*lows, *highs))
        return bounds, f"{key} {{{parts}}}"
    raise Unsupported(f"'{key}' must be a list [low, high] or a mapping of bounds")


def _fmt(number: float) -> str:
    if isinstance(number, float) and number.is_integer():
        return str(int(number))
    return str(number)
