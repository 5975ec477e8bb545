"""Markdown for a PR comment or the job summary: a table of what blocks, the rest folded."""

from __future__ import annotations

from collections.abc import Sequence

from gate.diff import Change
from gate.report.base import Report
from gate.rules import Severity


def _cell(text: str | None) -> str:
    """Table-safe text: PR-controlled names must not break out of the table."""
    if text is None or text == "":
        return ""
    escaped = (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )
    return "`" + escaped.replace("`", "'").replace("\n", " ") + "`"


def _table(changes: Sequence[Change], report: Report) -> list[str]:
    rows = [
        "| | Rule | Dataset | Column | Before → After | Where |",
        "|---|---|---|---|---|---|",
    ]
    for change in changes:
        if change.acknowledged:
            mark = "✅ ACKED"
        elif report.blocks(change):
            mark = "❌"
        elif change.severity is Severity.WARNING:
            mark = "⚠️"
        else:
            mark = "🟢"
        before = _cell(change.before) or "—"
        after = _cell(change.after) or ("removed" if change.rule.endswith("_removed") else "—")
        where = _cell(f"{change.path}:{change.line}" if change.line else change.path)
        rows.append(
            f"| {mark} | `{change.rule}` | {_cell(change.dataset)} | {_cell(change.column)} "
            f"| {before} → {after} | {where} |"
        )
    return rows


def render(report: Report) -> str:
    status = "✅ passed" if report.passed else "❌ failed"
    lines = [
        f"## Schema contract gate: {status}",
        "",
        f"{report.verdict()}",
        "",
        f"Compared `{report.base_ref}` ({'merge-base ' if report.merge_base else ''}"
        f"`{report.base_sha[:12]}`) with {report.head_label}: "
        f"{report.files_compared} changed contract file(s).",
    ]
    important = [c for c in report.changes if report.blocks(c) or c.acknowledged]
    if important:
        lines += ["", "### Breaking changes", "", *_table(important, report)]
    warnings = [
        c
        for c in report.by_severity(Severity.WARNING)
        if not report.blocks(c) and not c.acknowledged
    ]
    if warnings:
        lines += ["", "### Warnings", "", *_table(warnings, report)]
    additive = report.by_severity(Severity.INFO)
    if additive:
        lines += [
            "",
            f"<details><summary>Additive changes ({len(additive)})</summary>",
            "",
            *_table(additive, report),
            "",
            "</details>",
        ]
    if report.unmatched_acknowledgements:
        lines += ["", "### Acknowledgements that match nothing", ""]
        lines += [
            f"- {_cell(t.value)} ({t.source}) names no changed dataset: check the spelling."
            for t in report.unmatched_acknowledgements
        ]
    if report.smoke is not None:
        from gate.report.smoke_markdown import render_smoke_markdown

        lines += ["", *render_smoke_markdown(report.smoke)]
    if report.blocking:
        lines += [
            "",
            "### How to acknowledge",
            "",
            "If these breaks are intended, coordinate with the consumers and add these lines "
            "to the PR description (one per dataset), then re-run the check:",
            "",
            "```",
            *[f"accept-breaking-change: {d}" for d in report.datasets_to_acknowledge],
            "```",
        ]
    return "\n".join(lines) + "\n"
