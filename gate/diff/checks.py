"""Checks of a dataset or column pair: identify each by what it asserts, then compare.

A check is the same check when it asserts the same thing: its kind, its
columns and the options that change *what* is measured (a query, a filter, a
``where``). Its name, id, description, schedule, method, tags and owner are
metadata: renaming a check or giving it an id is not a removal. A threshold
(``mustBeLessThan``, Soda ``must_be_between``, dbt ``error_if``), its unit and
its severity are what the check *demands*: when only they changed, the pair is
one ``check_changed`` finding with a direction:

- the set of metric values that pass shrank: **tightened** (producers may fail);
- it grew: **loosened** (consumers get a weaker guarantee);
- both, or the gate cannot order the change (another unit, another query):
  reported for both sides.

Counts (rows, missing, invalid, duplicates) are whole numbers, so
``mustBeGreaterThan: 5`` and ``mustBeGreaterOrEqualTo: 6`` are the same check
(the threshold vocabulary and its interval arithmetic live in gate/check_thresholds.py,
shared with the smoke test).
Allowed values (``valid_values``, ``accepted_values``, ``validValues``) and
value constraints (Soda ``valid_min``...) a check carries are compared as the
column's enum and constraints (gate/diff/constraints.py), not here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gate import rules
from gate.check_thresholds import (
    GE,
    GT,
    LE,
    LT,
    OPS,
    Interval,
    combine,
    intersect,
    intervals,
    number,
    order,
    outer_range,
)
from gate.diff import regex_lang
from gate.diff.emitter import DatasetPair
from gate.model import Check

#: Options that document a check without changing what it asserts.
METADATA = frozenset(
    {
        "name",
        "id",
        "description",
        "tags",
        "schedule",
        "scheduler",
        "method",
        "dimension",
        "businessimpact",
        "customproperties",
        "authoritativedefinitions",
        "qualifier",
        "attributes",
        "meta",
        "store_failures",
        "enabled",
        "limit",
        "alias",
        "type",
        "metric",
        "rule",
    }
)

#: Options carried into the column's enum or constraints, compared there.
CARRIED = frozenset(
    {
        "valid_values",
        "values",
        "validvalues",
        "accepted_values",
        "valid_min",
        "valid_max",
        "valid_length",
        "valid_min_length",
        "valid_max_length",
        "valid_format",
        "valid_regex_sql",
        "properties",
    }
)

#: dbt package tests whose arguments are the column's value constraints (see formats/dbt.py).
CARRIED_BY_TEST = {
    "accepted_range": frozenset({"min_value", "max_value", "inclusive"}),
    "expect_column_values_to_be_between": frozenset({"min_value", "max_value", "strictly"}),
    "expect_column_value_lengths_to_be_between": frozenset({"min_value", "max_value"}),
    "expect_column_values_to_match_regex": frozenset({"regex"}),
}


def carried(kind: str) -> frozenset[str]:
    """The options of a check of ``kind`` compared as enum or constraints, lower case."""
    return CARRIED | CARRIED_BY_TEST.get(kind.rsplit(".", 1)[-1], frozenset())


#: Set-valued options: more entries mean more rows fail (tighter).
SETS = {"missing_values": "missing_values", "missingvalues": "missing_values",
        "invalid_values": "invalid_values", "invalidvalues": "invalid_values"}  # fmt: skip

#: Soda options whose regex marks rows invalid or missing: a pattern that accepts
#: more values makes more rows fail (tighter). ``*_format`` counts only as v4's
#: ``{name, regex}`` mapping; v3's named formats (``email``) stay part of the identity.
REGEXES = {"invalid_regex_sql": "invalid_regex_sql", "invalid_regex": "invalid_regex_sql",
           "invalid_format": "invalid_format", "missing_regex_sql": "missing_regex_sql",
           "missing_regex": "missing_regex_sql", "missing_format": "missing_format"}  # fmt: skip

_UNITS = {"%": "percent", "percent": "percent", "percentage": "percent", "rows": "count",
          "count": "count", "row": "count"}  # fmt: skip
#: Kinds whose metric is a whole number when counted in rows.
_COUNTED = re.compile(
    r"(null|missing|invalid|duplicate|row_?count|rows_exist|unique|not_null|accepted|"
    r"relationships|no_|_count$)"
)
_DUPLICATE = re.compile(r"duplicate|unique_combination")
_DBT_CONDITION = re.compile(r"^\s*(==|=|!=|<>|>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$")

#: Kinds that assert the same thing: ODCS ``nullValues`` is ``missingValues`` without markers.
_ALIASES = {"null_values": "missing_values"}


@dataclass(frozen=True)
class Semantics:
    """What one check asserts, split into identity and demands."""

    identity: str
    check_id: str | None
    passing: tuple[Interval, ...] | None  # None: no threshold (the format's default)
    threshold: str  # as written, for the report
    unit: str
    severity: str
    sets: tuple[tuple[str, frozenset[str]], ...]
    columns: tuple[str, ...]
    patterns: tuple[tuple[str, str], ...] = ()  # REGEXES, compared as languages

    @property
    def demands(self) -> tuple[Any, ...]:
        return (self.passing, self.unit, self.severity, self.sets, self.patterns)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def semantics(check: Check) -> Semantics:
    """Split a check's options into what identifies it and what it demands."""
    spec: dict[str, Any] = dict(check.spec)
    config = spec.pop("config", None)
    severity = "error"
    dbt_condition: str | None = None
    rest: dict[str, Any] = {}
    if isinstance(config, Mapping):  # dbt test config: severity, error_if, where...
        for key, value in config.items():
            low = str(key).lower()
            if low == "severity":
                severity = "warning" if str(value).lower().startswith("warn") else "error"
            elif low == "error_if":
                dbt_condition = str(value)
            elif low in ("warn_if",) or low in METADATA:
                continue
            else:
                rest[f"config.{key}"] = value
    threshold_items: list[tuple[str, Any]] = []
    unit = "count"
    sets: dict[str, frozenset[str]] = {}
    patterns: dict[str, str] = {}
    threshold = spec.pop("threshold", None)
    if isinstance(threshold, Mapping):  # Soda v4
        for key, value in threshold.items():
            if str(key).lower() == "metric":
                unit = _UNITS.get(str(value).lower(), str(value).lower())
            elif str(key).lower() in OPS:
                threshold_items.append((str(key).lower(), value))
            else:
                rest[f"threshold.{key}"] = value
    arguments = spec.pop("arguments", None)
    if isinstance(arguments, Mapping):
        for key, value in arguments.items():
            low = str(key).lower()
            if low in SETS and isinstance(value, list):
                sets[SETS[low]] = frozenset(str(v) for v in value)
            elif low not in CARRIED:
                rest[f"arguments.{key}"] = value
    elif arguments is not None:
        rest["arguments"] = arguments
    check_id: str | None = None
    carried_keys = carried(check.kind)
    for key, value in spec.items():
        low = str(key).lower()
        if low == "id" and isinstance(value, (str, int)):
            check_id = str(value)
        elif low == "severity":
            severity = "warning" if str(value).lower().startswith("warn") else "error"
        elif low == "unit":
            unit = _UNITS.get(str(value).lower(), str(value).lower())
        elif low in OPS:
            threshold_items.append((low, value))
        elif low in SETS and isinstance(value, list):
            sets[SETS[low]] = frozenset(str(v) for v in value)
        elif low in REGEXES and _regex(low, value) is not None:
            patterns[REGEXES[low]] = str(_regex(low, value))
        elif low == "description" and check.kind == "text":
            rest[str(key)] = value  # a text check *is* its description
        elif low in METADATA or low in carried_keys or low == "columns":
            continue
        else:
            rest[str(key)] = value
    passing: list[Interval] | None = None
    written: list[str] = []
    for key, value in threshold_items:
        found = intervals(OPS[key], value)
        written.append(f"{key} {value}")
        if found is None:
            rest[f"threshold:{key}"] = value  # unreadable: part of the identity
            continue
        passing = found if passing is None else intersect(passing, found)
    singles = [(OPS[key], number(value)) for key, value in threshold_items]
    single = [(op, bound) for op, bound in singles if op in (GT, GE, LT, LE) and bound is not None]
    if len(single) == len(threshold_items) and outer_range(single):
        passing = combine(
            single
        )  # Soda v3: either side of the pair passes, as the smoke test reads it
    if dbt_condition is not None:
        written.append(f"error_if {dbt_condition}")
        match = _DBT_CONDITION.match(dbt_condition)
        if match is None:
            rest["config.error_if"] = dbt_condition
        else:
            op = {"=": "==", "<>": "!="}.get(match.group(1), match.group(1))
            failing = {"==": "!=", "!=": "==", ">": "<=", ">=": "<", "<": ">=", "<=": ">"}[op]
            passing = intervals(failing, match.group(2))
    kind = _ALIASES.get(check.kind, check.kind)
    if kind == "missing_values":  # nulls always count as missing; markers add to them
        sets.setdefault("missing_values", frozenset())
    identity = f"{kind}|{','.join(check.columns)}|{_canonical(rest)}"
    return Semantics(
        identity=identity,
        check_id=check_id,
        passing=tuple(passing) if passing is not None else None,
        threshold=", ".join(written),
        unit=unit,
        severity=severity,
        sets=tuple(sorted(sets.items())),
        columns=check.columns,
        patterns=tuple(sorted(patterns.items())),
    )


def _regex(key: str, value: Any) -> str | None:
    """The regex of an invalid/missing option: a ``*_regex`` string or v4's ``{regex: ...}``."""
    if isinstance(value, Mapping):
        value = value.get("regex")
    elif key.endswith("_format"):
        return None  # v3: a named format, not a regex
    return value if isinstance(value, str) else None


def describe(check: Check, meaning: Semantics) -> str:
    """``kind (threshold, unit, severity, sets)``: one side of ``old -> new``."""
    parts = [meaning.threshold] if meaning.threshold else []
    if meaning.unit != "count":
        parts.append(f"unit {meaning.unit}")
    if meaning.severity != "error":
        parts.append(f"severity {meaning.severity}")
    for name, values in meaning.sets:
        parts.append(f"{name} [{', '.join(sorted(values))}]")
    for name, pattern in meaning.patterns:
        parts.append(f"{name} {pattern}")
    if meaning.columns and len(meaning.columns) > 1:
        parts.append(f"columns {', '.join(meaning.columns)}")
    return f"{check.kind} ({'; '.join(parts)})" if parts else check.kind


def direction(old: Semantics, new: Semantics, kind: str) -> str | None:
    """How the demands moved: tightened, loosened, both or undetermined.

    None when they did not move at all (``> 5`` and ``>= 6`` on a count).
    """
    if old.identity != new.identity:
        if _DUPLICATE.search(kind) and old.columns != new.columns:
            a, b = set(old.columns), set(new.columns)
            same_rest = old.identity.split("|", 2)[2] == new.identity.split("|", 2)[2]
            if same_rest and a < b:
                return "loosened"  # unique over more columns is a weaker promise
            if same_rest and b < a:
                return "tightened"
        return "undetermined"
    if old.unit != new.unit:
        return "undetermined"
    moves: set[str] = set()
    whole = old.unit == "count" and bool(_COUNTED.search(kind))
    if old.passing != new.passing:
        # No threshold means "the check fails on any bad row": the format's default of 0.
        default: list[Interval] = [(Decimal(0), False, Decimal(0), False)]
        old_passing = list(old.passing) if old.passing is not None else default
        new_passing = list(new.passing) if new.passing is not None else default
        moved = order(old_passing, new_passing, whole)
        if moved:
            moves.add(moved)
    if old.severity != new.severity:
        moves.add("loosened" if new.severity == "warning" else "tightened")
    old_sets, new_sets = dict(old.sets), dict(new.sets)
    for name in set(old_sets) | set(new_sets):
        a_set, b_set = old_sets.get(name, frozenset()), new_sets.get(name, frozenset())
        if b_set > a_set:
            moves.add("tightened")  # more markers or denied values: more rows fail
        elif b_set < a_set:
            moves.add("loosened")
        elif a_set != b_set:
            moves.add("both")
    old_patterns, new_patterns = dict(old.patterns), dict(new.patterns)
    for name in set(old_patterns) | set(new_patterns):
        was, now = old_patterns.get(name), new_patterns.get(name)
        if was == now:
            continue
        if was is None or now is None:
            moves.add("tightened" if was is None else "loosened")
            continue
        # A pattern that accepts more values marks more rows invalid or missing.
        moved = regex_lang.compare(was, now, full_match_too=True)  # Soda: the warehouse's match
        if moved != "":
            inverse = {regex_lang.RELAXED: "tightened", regex_lang.TIGHTENED: "loosened"}
            moves.add(inverse.get(moved or "", "both"))
    if not moves:
        return None
    if len(moves) == 1:
        return moves.pop()
    return "both"


#: direction -> the side it can break (rules.SIDES).
BREAKS = {"tightened": "producers", "loosened": "consumers", "both": "both", "undetermined": "both"}


@dataclass(frozen=True)
class Pairing:
    removed: list[Check]
    added: list[Check]
    changed: list[tuple[Check, Check, str]]  # old, new, direction (see ``direction``)


def _take(items: list[Check], wanted: Check) -> bool:
    for index, item in enumerate(items):
        if item is wanted:
            del items[index]
            return True
    return False


def pair(old_checks: Sequence[Check], new_checks: Sequence[Check]) -> Pairing:
    """Unchanged checks drop out; the rest pair by id, then by identity, then by kind.

    Each step pairs only what is unambiguous (one candidate on each side), in
    declaration order for equal checks, so reordering nameless checks says nothing.
    """
    meaning = {id(c): semantics(c) for c in (*old_checks, *new_checks)}

    def full(check: Check) -> tuple[str, tuple[Any, ...]]:
        return (meaning[id(check)].identity, meaning[id(check)].demands)

    # Unchanged checks first, in order: a bucket per exact meaning keeps it linear.
    pool: dict[tuple[str, tuple[Any, ...]], list[Check]] = {}
    for check in new_checks:
        pool.setdefault(full(check), []).append(check)
    gone: set[int] = set()
    for check in old_checks:
        bucket = pool.get(full(check))
        if bucket:
            gone.update((id(check), id(bucket.pop(0))))
    old_left = [c for c in old_checks if id(c) not in gone]
    new_left = [c for c in new_checks if id(c) not in gone]
    changed: list[tuple[Check, Check, str]] = []

    def by(key: Callable[[Check], Any]) -> None:
        olds: dict[Any, list[Check]] = {}
        news: dict[Any, list[Check]] = {}
        for c in old_left:
            if key(c) is not None:
                olds.setdefault(key(c), []).append(c)
        for c in new_left:
            if key(c) is not None:
                news.setdefault(key(c), []).append(c)
        for value, group in olds.items():
            if len(group) == 1 and len(news.get(value, [])) == 1:
                old, new = group[0], news[value][0]
                _take(old_left, old)
                _take(new_left, new)
                moved = direction(meaning[id(old)], meaning[id(new)], new.kind)
                if moved is not None:  # same demands, spelled differently: unchanged
                    changed.append((old, new, moved))

    by(lambda c: meaning[id(c)].check_id)
    by(lambda c: meaning[id(c)].identity)
    by(lambda c: (_ALIASES.get(c.kind, c.kind), c.columns))
    by(lambda c: c.kind if _DUPLICATE.search(c.kind) else None)
    return Pairing(old_left, new_left, changed)


def carries_values(check: Check) -> bool:
    """True when the check holds allowed values or value constraints of its column."""

    def keys(mapping: Mapping[str, Any]) -> Iterable[str]:
        for key, value in mapping.items():
            yield str(key).lower()
            if isinstance(value, Mapping) and str(key).lower() == "arguments":
                yield from (str(k).lower() for k in value)

    return any(key in carried(check.kind) - {"properties"} for key in keys(check.spec))


def checks(
    pair: DatasetPair,
    old_checks: Sequence[Check],
    new_checks: Sequence[Check],
    column: str | None,
    anchor: int | None = None,
    values_changed: bool = False,
) -> None:
    """The check family over one dataset's (``column`` None) or one column's checks."""
    paired = _pair_checks(old_checks, new_checks)
    removed, added = paired.removed, paired.added
    if values_changed:
        # A check that only carries the enum or the constraints came or went
        # with them: the enum/constraint finding already says what changed, once.
        removed = [c for c in removed if not carries_values(c)]
        added = [c for c in added if not carries_values(c)]
    where = f"column '{column}'" if column else f"dataset '{pair.new.id}'"
    for check in removed:
        pair.emit(
            rules.CHECK_REMOVED,
            f"check '{check.kind}' on {where} was removed",
            column=column,
            line=anchor,
            before=describe(check, semantics(check)),
        )
    for old, new, moved in paired.changed:
        before = describe(old, semantics(old))
        after = describe(new, semantics(new))
        if before == after:  # the difference is in what it measures: show the kind only
            before, after = f"{old.kind} (before)", f"{new.kind} (now)"
        pair.emit(
            rules.CHECK_CHANGED,
            f"check '{new.kind}' on {where} changed ({moved})",
            column=column,
            line=new.line if new.line is not None else anchor,
            before=before,
            after=after,
            breaks=BREAKS[moved],
            direction=moved,
        )
    for check in added:
        pair.emit(
            rules.CHECK_ADDED,
            f"check '{check.kind}' on {where} was added",
            column=column,
            line=check.line,
            after=describe(check, semantics(check)),
        )


#: The check pairing under a name the handler's ``pair`` argument does not shadow.
_pair_checks = pair
