"""Markdown for a PR comment or the job summary: a table of what blocks, the rest folded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gate.diff import Change
from gate.report.base import Report
from gate.rules import Severity

if TYPE_CHECKING:
    from gate.smoke.result import SmokeReport


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


def _smoke(smoke: SmokeReport) -> list[str]:
    """The smoke test: a row per dataset, then a row per failed result."""
    icons = {"passed": "✅", "failed": "❌", "no_sample": "⚪ no sample", "error": "❌ error"}
    lines = [
        f"### Smoke test ({smoke.master}"
        + (f", Spark {smoke.spark_version}" if smoke.spark_version else "")
        + f", {smoke.seconds:.1f} s)",
        "",
        "| | Dataset | Sample | Rows | Problems |",
        "|---|---|---|---|---|",
    ]
    for dataset in smoke.datasets:
        failed = sum(r.status == "failed" for r in dataset.results)
        lines.append(
            f"| {icons.get(dataset.status, dataset.status)} | {_cell(dataset.dataset)} "
            f"| {_cell(dataset.sample)} | {dataset.rows if dataset.rows is not None else ''} "
            f"| {failed} |"
        )
    failures = [
        (dataset, result)
        for dataset in smoke.datasets
        for result in dataset.results
        if result.status != "passed"
    ]
    errors = [d for d in smoke.datasets if d.error]
    if failures or errors:
        lines += [
            "",
            "| Dataset | Check | Column | Status | What | Examples |",
            "|---|---|---|---|---|---|",
        ]
        for dataset in errors:
            lines.append(f"| {_cell(dataset.dataset)} | | | error | {_cell(dataset.error)} | |")
        for dataset, result in failures:
            examples = ", ".join(_cell(v) for v in result.samples)
            lines.append(
                f"| {_cell(dataset.dataset)} | `{result.kind}: {result.name}` | {_cell(result.column)} "
                f"| {result.status} | {_cell(result.message)} | {examples} |"
            )
    return lines


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
        lines += ["", *_smoke(report.smoke)]
    if report.notices:
        lines += ["", "### Notes", ""]
        lines += [f"- {n.replace('<', '&lt;').replace('>', '&gt;')}" for n in report.notices]
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
