"""Plain text for terminals and CI logs: breaking first, then a verdict that says what to do."""

from __future__ import annotations

from gate.report.base import Report, arrow
from gate.rules import Severity


def _location(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


def render(report: Report) -> str:
    base = report.base_ref + (" (merge-base)" if report.merge_base else "")
    lines = [
        f"schema-contract-gate: {base} {report.base_sha[:12]} -> {report.head_label}",
        f"{report.files_compared} changed contract file(s) compared",
    ]
    sections = (
        ("BREAKING", report.blocking, ""),
        ("ACKNOWLEDGED", report.acknowledged, "  [ACKED]"),
        (
            "WARNINGS",
            tuple(
                c
                for c in report.by_severity(Severity.WARNING)
                if c not in report.blocking and not c.acknowledged
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
            lines.append(f"  {change.rule} {change.target}: {arrow(change)}{mark}")
            lines.append(f"      {change.message}  ({_location(change.path, change.line)})")
    if report.unmatched_acknowledgements:
        lines += ["", f"UNMATCHED ACKNOWLEDGEMENTS ({len(report.unmatched_acknowledgements)})"]
        for token in report.unmatched_acknowledgements:
            lines.append(
                f"  '{token.value}' (from {token.source}) names no changed dataset; check the spelling"
            )
    if report.smoke is not None:
        from gate.report.smoke_text import render_smoke

        lines += ["", *render_smoke(report.smoke)]
    for notice in report.notices:
        lines += ["", f"note: {notice}"]
    lines += ["", report.verdict()]
    return "\n".join(lines) + "\n"
