"""Plain text for terminals and CI logs: breaking first, then a verdict that says what to do.

Every line passes through ``escape_line`` on its way out (one place), because
dataset, column and file names come from the pull request: a name must not
start a line (a forged ``::error`` or ``::add-mask::`` in a workflow log) or
send escape sequences to the reader's terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gate import rules
from gate.acks import CONSUMER_KEY, Token
from gate.diff import Change
from gate.escapes import LINE_CHARS, shown
from gate.report.approvals import approval_lines
from gate.report.base import Report, arrow
from gate.rules import Severity

if TYPE_CHECKING:
    from gate.smoke.result import SmokeReport


#: What the Actions runner reads as a command at the start of a line (after
#: leading blanks): ``::name ...::`` and the legacy ``##[name ...]``.
_COMMAND_STARTS = ("::", "##[")


def escape_line(line: str) -> str:
    """One line of output, safe for a terminal and for a workflow log.

    Control characters are spelled out, so the line stays one line; a line that
    would still read as a workflow command gets its first character spelled out.
    A line over ``LINE_CHARS`` (a 400 KB name in it) is clipped in the middle
    (``gate.escapes.clip``); ``--format json`` has every value whole.
    """
    line = shown(line, LINE_CHARS)
    stripped = line.lstrip()
    if stripped.startswith(_COMMAND_STARTS):
        indent = line[: len(line) - len(stripped)]
        line = f"{indent}\\x{ord(stripped[0]):02x}{stripped[1:]}"
    return line


def _regraded(change: Change) -> str:
    """Why a change sits in a section its rule does not default to (a policy, a
    ``rules:`` entry or the perspective): a blocking ``column_added`` needs a reason."""
    default = rules.get(change.rule).severity
    if change.severity is default:
        return ""
    return f"  [{change.severity.value} by config; default {default.value}]"


def _location(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


#: Consumers listed per change in the terminal; the JSON report has them all.
_MAX_CONSUMERS = 20


def _consumers(change: Change) -> list[str]:
    """``read by path:line (object, usage)`` lines under a change."""
    lines = [
        f"      read by {_location(c.path, c.line)} ({c.object}, {c.usage})"
        for c in change.consumers[:_MAX_CONSUMERS]
    ]
    extra = len(change.consumers) - _MAX_CONSUMERS
    if extra > 0:
        lines.append(f"      ... and {extra} more consumer(s) (see --format json)")
    return lines


def _external(change: Change) -> list[str]:
    """``read outside the repository by consumer (source, location)`` lines under a change."""
    lines = [
        f"      read outside the repository by {r.consumer} ({r.source}"
        + (f", {r.location})" if r.location else ")")
        for r in change.external[:_MAX_CONSUMERS]
    ]
    extra = len(change.external) - _MAX_CONSUMERS
    if extra > 0:
        lines.append(f"      ... and {extra} more external consumer(s) (see --format json)")
    return lines


#: Downstream paths listed per change in the terminal; the JSON report has them all.
_MAX_DOWNSTREAM = 10


def _downstream(change: Change) -> list[str]:
    """``downstream: a.x -> b.y (path:line) -> c.y (path:line): final output`` lines."""
    lines = []
    for path in change.downstream[:_MAX_DOWNSTREAM]:
        hops = " -> ".join(f"{h.model}.{h.column} ({_location(h.path, h.line)})" for h in path.hops)
        lines.append(f"      downstream: {path.source} -> {hops}: {path.ending()}")
    extra = len(change.downstream) - _MAX_DOWNSTREAM
    if extra > 0:
        lines.append(f"      ... and {extra} more downstream path(s) (see --format json)")
    return lines


def _not_analysed(report: Report) -> list[str]:
    lines = [f"CONSUMERS NOT ANALYSED ({len(report.not_analysed)})"]
    for item in report.not_analysed:
        lines.append(f"  {_location(item.path, item.line)}: {item.reason}")
    return lines


def _smoke(smoke: SmokeReport) -> list[str]:
    """One line per dataset, then every failed or skipped result under it."""
    counts = smoke.counts()
    lines = [
        f"SMOKE TEST ({len(smoke.datasets)} dataset(s) on {smoke.master}"
        + (f", Spark {smoke.spark_version}" if smoke.spark_version else "")
        + f", {smoke.seconds:.1f} s): {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['no_sample']} without sample, {counts['error']} error(s)"
    ]
    for dataset in smoke.datasets:
        status = dataset.status.upper().replace("_", " ")
        where = f" against {dataset.sample} ({dataset.rows} rows)" if dataset.sample else ""
        lines.append(f"  {status:<9} {dataset.dataset}{where}")
        if dataset.error:
            lines.append(f"      {dataset.error}")
        for result in dataset.results:
            if result.status == "passed":
                continue
            column = f".{result.column}" if result.column else ""
            lines.append(
                f"      {result.status}: {result.kind} {result.name}{column}: {result.message}"
            )
            if result.samples and result.samples[0] not in result.message:
                lines.append(f"        e.g. {', '.join(repr(v) for v in result.samples)}")
    return lines


def _names_none(token: Token) -> str:
    if token.key == CONSUMER_KEY:
        return "names no consumer file with a consumer_broken finding"
    return "names no changed dataset"


def render(report: Report) -> str:
    base = report.base_ref + (" (merge-base)" if report.merge_base else "")
    lines = [
        f"schema-contract-gate: {base} {report.base_sha[:12]} -> {report.head_label}",
        f"{report.files_compared} changed contract file(s) compared"
        + (f", data types read as {report.dialect} SQL" if report.dialect else "")
        + (f" ({report.dialect_source})" if report.dialect and report.dialect_source else ""),
    ]
    sections = (
        ("BREAKING", report.blocking, ""),
        ("ACKNOWLEDGED", report.acknowledged, "  [ACKED]"),
        (
            "WARNINGS",
            tuple(
                c
                for c in report.by_severity(Severity.WARNING)
                if not report.blocks(c) and not c.acknowledged
            ),
            "",
        ),
        ("ADDITIVE", report.by_severity(Severity.INFO), ""),
    )
    for title, changes, mark in sections:
        if not changes:
            continue
        lines += ["", f"{title} ({len(changes)})"]
        for change in changes:
            # A dataset-level finding with no value on either side (model_added,
            # model_removed) says it all in its rule id: no "(none) -> (none)".
            shown = "" if change.before is None and change.after is None else f": {arrow(change)}"
            lines.append(f"  {change.rule} {change.target}{shown}{mark}{_regraded(change)}")
            lines.append(f"      {change.message}  ({_location(change.path, change.line)})")
            lines += _consumers(change)
            lines += _downstream(change)
            lines += _external(change)
            lines += [f"      {line}" for line in approval_lines(report.approvals.get(change))]
    if report.unmatched_acknowledgements:
        lines += ["", f"UNMATCHED ACKNOWLEDGEMENTS ({len(report.unmatched_acknowledgements)})"]
        for token in report.unmatched_acknowledgements:
            meant = report.closest(token)
            hint = f" (did you mean '{meant}'?)" if meant else "; check the spelling"
            lines.append(f"  '{token.value}' (from {token.source}) {_names_none(token)}{hint}")
    if report.not_analysed:
        lines += ["", *_not_analysed(report)]
    if report.smoke is not None:
        lines += ["", *_smoke(report.smoke)]
    if report.warnings:
        lines += ["", f"CONTRACT WARNINGS ({len(report.warnings)}): compared anyway"]
        lines += [f"  {w}" for w in report.warnings]
    for notice in report.notices:
        lines += ["", f"note: {notice}"]
    if report.ambiguous_acknowledgements:
        lines += ["", f"AMBIGUOUS ACKNOWLEDGEMENTS ({len(report.ambiguous_acknowledgements)})"]
        for token, candidates in report.ambiguous_acknowledgements:
            lines.append(
                f"  '{token.value}' (from {token.source}) matches {len(candidates)} datasets "
                f"({', '.join(candidates)}) and acknowledges none; write the full id:"
            )
            lines += [f"      accept-breaking-change: {c}" for c in candidates]
    if report.consumer_acknowledgements:
        lines += [
            "",
            "consumer_broken cleared by accept-consumer-break for: "
            + ", ".join(report.consumer_acknowledgements),
        ]
    lines += ["", report.verdict(advice=False)]
    # Pasteable as printed: one line per dataset, nothing before the key.
    if report.blocking:
        lines += list(report.acknowledgement_lines)
    return "\n".join(escape_line(line) for line in lines) + "\n"
