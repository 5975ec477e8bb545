"""The smoke test's findings as one-line results: numbers, offending values, verdicts.

Split from the runner so the wording of every result lives in one place and
stays pure Python (no Spark): the runner's planning decides *what* is counted,
these functions say what the counts mean to a reader. Offending values come
from a pull request's sample data, so ``shown`` escapes control characters and
cuts long values before they reach a message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gate.check_thresholds import Threshold
from gate.model import Check, Column
from gate.smoke import checkspec
from gate.smoke.checkspec import CheckPlan
from gate.smoke.result import FAILED, PASSED, SKIPPED, WARNED, SmokeResult
from gate.smoke.schema import TargetType


def count(number: int) -> str:
    return f"{number:,}"


def percent(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") + "%"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(values: Sequence[Any]) -> tuple[str, ...]:
    """Offending values for one-line messages: control characters escaped, long ones cut."""
    out: list[str] = []
    for value in values:
        text = "NULL" if value is None else str(value)
        text = _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)
        out.append(text if len(text) <= 60 else text[:57] + "...")
    return tuple(out)


def quoted(samples: Sequence[str]) -> str:
    return ", ".join("'" + sample.replace("'", "\\'") + "'" for sample in samples)


def plural(number: int, one: str, many: str) -> str:
    return one if number == 1 else many


def skipped(check: Check, message: str) -> SmokeResult:
    return SmokeResult(
        "check",
        check.kind,
        ",".join(check.columns) or None,
        SKIPPED,
        message,
        line=check.line,
    )


def malformed(what: str, number: int, samples: list[str], rows: int) -> SmokeResult:
    """Records of a ``what`` (CSV, JSON) sample that do not parse."""
    if number == 0:
        return SmokeResult(
            "schema",
            "malformed_record",
            None,
            PASSED,
            f"all {count(rows)} {what} records parse",
        )
    values = shown(samples or [])
    reason = " (wrong number of fields, or a quote not closed)" if what == "CSV" else ""
    return SmokeResult(
        "schema",
        "malformed_record",
        None,
        FAILED,
        f"{count(number)} of {count(rows)} records are not valid {what}{reason}: {quoted(values)}",
        failed_rows=number,
        samples=values,
    )


def coercion(
    column: Column,
    target: TargetType,
    rule_message: str,
    number: int,
    samples: list[str],
    nonnull: int,
) -> SmokeResult:
    """Values of ``column`` its contract type ``target`` cannot hold."""
    declared = (
        f" (declared '{target.declared}')"
        if target.declared.replace(" ", "").lower() != target.label.replace(" ", "").lower()
        else ""
    )
    if number == 0:
        return SmokeResult(
            "coercion",
            target.name,
            column.name,
            PASSED,
            f"all {count(nonnull)} non-null values fit {target.label}{declared}",
            failed_rows=0,
            line=column.line,
        )
    values = shown(samples or [])
    noun = plural(number, "value is", "values are")
    return SmokeResult(
        "coercion",
        target.name,
        column.name,
        FAILED,
        f"{count(number)} {noun} {rule_message}{declared}: {quoted(values)}",
        failed_rows=number,
        samples=values,
        line=column.line,
    )


def not_null(column: Column, number: int, rows: int) -> SmokeResult:
    """A required (NOT NULL) column: the sample must have a value in every row."""
    if number == 0:
        message = f"no NULL in {count(rows)} rows of required column '{column.name}'"
    else:
        message = (
            f"{count(number)} of {count(rows)} rows have no value in required "
            f"(NOT NULL) column '{column.name}'"
        )
    return SmokeResult(
        "coercion",
        "not_null",
        column.name,
        FAILED if number else PASSED,
        message,
        failed_rows=number,
        line=column.line,
    )


def verdict(threshold: Threshold, value: float) -> str:
    if threshold.passes(value):
        return PASSED
    return WARNED if threshold.level == "warn" else FAILED


def row_count(plan: CheckPlan, rows: int) -> SmokeResult:
    status = verdict(plan.threshold, rows)
    return SmokeResult(
        "check",
        plan.name,
        None,
        status,
        f"{count(rows)} {plural(rows, 'row', 'rows')} ({plan.threshold.describe()})",
        line=plan.check.line,
    )


def counted(plan: CheckPlan, rows: int, number: int, samples: list[str] | None) -> SmokeResult:
    """A ``missing`` or ``invalid`` check: ``number`` of ``rows`` break it."""
    share = number * 100.0 / rows if rows else 0.0
    value = share if plan.threshold.metric == "percent" else number
    status = verdict(plan.threshold, value)
    values = shown(samples or []) if plan.family == checkspec.INVALID else ()
    percent_metric = plan.threshold.metric == "percent"
    details = [f"{count(number)} {plural(number, 'row', 'rows')}"] if percent_metric else []
    if plan.family == checkspec.MISSING:
        what = f"{plural(rows, 'row is', 'rows are')} missing"
    else:
        what = f"{plural(rows, 'row has', 'rows have')} an invalid value"
        details.append(plan.validity.describe())
    details.append(plan.threshold.describe())
    amount = percent(share) if percent_metric else count(number)
    message = f"{amount} of {count(rows)} {what} ({'; '.join(details)})"
    if values:
        message += f": {quoted(values)}"
    return SmokeResult(
        "check",
        plan.name,
        ",".join(plan.columns),
        status,
        message,
        failed_rows=number,
        samples=values,
        line=plan.check.line,
    )


def duplicate(
    plan: CheckPlan, rows: int, considered: int, duplicates: int, samples: list[str]
) -> SmokeResult:
    """A ``duplicate`` check: ``duplicates`` rows repeat a key among ``considered``."""
    base = considered if len(plan.columns) == 1 else rows
    share = duplicates * 100.0 / base if base else 0.0
    value = share if plan.threshold.metric == "percent" else duplicates
    status = verdict(plan.threshold, value)
    values = shown(samples)
    among = (
        f"{count(considered)} non-missing values"
        if len(plan.columns) == 1
        else f"{count(rows)} rows"
    )
    key = "values" if len(plan.columns) == 1 else f"({', '.join(plan.columns)})"
    lead = (
        f"{percent(share)} duplicates ({count(duplicates)} rows)"
        if plan.threshold.metric == "percent"
        else f"{count(duplicates)} duplicate {plural(duplicates, 'row', 'rows')}"
    )
    message = f"{lead} among {among} ({plan.threshold.describe()})"
    if values:
        message += f"; repeated {key}: {quoted(values)}"
    return SmokeResult(
        "check",
        plan.name,
        ",".join(plan.columns),
        status,
        message,
        failed_rows=duplicates,
        samples=values,
        line=plan.check.line,
    )
