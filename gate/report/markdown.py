"""Markdown for a PR comment or the job summary: a table of what blocks, the rest folded.

Every string that came from the pull request (dataset and column names, types,
paths, tokens, smoke-test values) is rendered by ``code`` and nothing else: a
code span is the one Markdown position where GitHub interprets no HTML, no
emphasis or links, no ``@mention`` and no ``#123`` reference. ``code`` picks
a backtick fence longer than any run inside the text and spells out control
characters, so nothing can close the span or start a new line (a new line
could open a fence, close the ``<details>`` or end a table row). Table rows go
through ``_row``, which escapes ``|`` in every cell (GFM splits rows on it
even inside code spans). The gate's own prose (notices) goes through ``_prose``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gate import lattice as types
from gate import rules
from gate.acks import CONSUMER_KEY
from gate.diff import Change
from gate.escapes import LINE_CHARS, shown
from gate.report.approvals import approval_lines
from gate.report.base import Report, missing_after
from gate.rules import Severity

if TYPE_CHECKING:
    from gate.smoke.result import SmokeReport


def code(text: object) -> str:
    """A PR-controlled string as an inert inline code span (empty text -> "")."""
    if text is None or text == "":
        return ""
    body = shown(str(text))
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith(("`", " ")) or body.endswith(("`", " ")):
        body = f" {body} "  # CommonMark strips one space each side
    return f"{fence}{body}{fence}"


def _row(*cells: str) -> str:
    """One table row; a ``|`` inside a cell (even in a code span) must be escaped."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


#: Inline syntax: emphasis, code, links, images, HTML, entities, table cells.
_INLINE = re.compile(r"([\\`*_\[\]<>&|~!])")


def _prose(text: str) -> str:
    """The gate's own sentences, which may quote PR-controlled globs or paths.

    Newlines are spelled out, so the text stays in its list item; inline syntax
    characters are backslash-escaped, and so is a first character that could
    start a block (``#``, ``>``, ``-``, a fence), so no HTML, link or heading forms.
    """
    text = _INLINE.sub(r"\\\1", shown(text))
    if text and text[0] in "#>+-=:~":
        text = "\\" + text
    elif text and text[0].isdigit():  # "1. " would open an ordered list
        text = f"&#{ord(text[0])};{text[1:]}"
    return text


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
        before = code(change.before) or "—"
        after = code(change.after) or missing_after(change) or "—"
        where = code(f"{change.path}:{change.line}" if change.line else change.path)
        rows.append(
            _row(
                mark,
                code(change.rule),
                code(change.dataset),
                code(change.column),
                f"{before} → {after}",
                where,
            )
        )
    return rows


def _unknown_types(changes: Sequence[Change], report: Report) -> list[str]:
    """What a ``type_unknown`` row cannot say in its cells: the type it probably meant.

    The suggestion is the one the text report's message carries (``types.suggest``);
    only known type names and code spans reach the comment.
    """
    dialect = report.dialect or "spark"
    lines: list[str] = []
    for change in changes:
        if change.spec is not rules.TYPE_UNKNOWN or not change.after:
            continue
        meant = types.suggest(change.after, dialect)
        hint = f"; did you mean {code(meant.upper())}?" if meant else ""
        lines.append(
            f"- {code(change.target)}: {code(change.after)} is not a {code(dialect)} type{hint}"
        )
    if lines:
        lines[:0] = [
            "",
            "Unknown types are compared by spelling only. A real type (an enum, a domain)? "
            "Set `dialect:` to your engine's, or `rules: {type_unknown: off}`.",
            "",
        ]
    return lines


#: Consumers listed per change in a PR comment (GitHub caps comments at 65,536 chars).
_MAX_CONSUMERS = 25
#: Downstream paths listed per change (each names every model on its way).
_MAX_DOWNSTREAM = 10


def _who_reads(report: Report) -> list[str]:
    """A collapsible "Who reads this" list: each explained change and its in-repo readers."""
    explained = [c for c in report.changes if c.consumers or c.external]
    lines: list[str] = []
    if explained:
        total = sum(len(c.consumers) for c in explained)
        outside = sum(len(c.external) for c in explained)
        counted = f"{total} consumer line(s)" + (
            f", {outside} consumer(s) outside the repository" if outside else ""
        )
        lines += [
            "",
            f"<details><summary>Who reads this ({counted} of {len(explained)} change(s))</summary>",
            "",
        ]
        for change in explained:
            lines.append(f"- `{change.rule}` {code(change.target)}")
            for consumer in change.consumers[:_MAX_CONSUMERS]:
                where = f"{consumer.path}:{consumer.line}" if consumer.line else consumer.path
                lines.append(f"  - {code(where)} {code(consumer.object)} ({code(consumer.usage)})")
            extra = len(change.consumers) - _MAX_CONSUMERS
            if extra > 0:
                lines.append(f"  - … and {extra} more (see the JSON report)")
            for read in change.external[:_MAX_CONSUMERS]:
                where = f", {code(read.location)}" if read.location else ""
                lines.append(
                    f"  - outside the repository: {code(read.consumer)} ({code(read.source)}{where})"
                )
            extra = len(change.external) - _MAX_CONSUMERS
            if extra > 0:
                lines.append(f"  - … and {extra} more outside the repository (see the JSON report)")
            for path in change.downstream[:_MAX_DOWNSTREAM]:
                hops = " → ".join(
                    code(f"{h.model}.{h.column}")
                    + f" ({code(f'{h.path}:{h.line}' if h.line else h.path)})"
                    for h in path.hops
                )
                lines.append(f"  - downstream: {code(path.source)} → {hops}: {code(path.ending())}")
            extra = len(change.downstream) - _MAX_DOWNSTREAM
            if extra > 0:
                lines.append(f"  - … and {extra} more downstream path(s) (see the JSON report)")
        lines += ["", "</details>"]
    if report.not_analysed:
        lines += [
            "",
            f"<details><summary>Consumers not analysed ({len(report.not_analysed)})</summary>",
            "",
        ]
        for item in report.not_analysed:
            where = f"{item.path}:{item.line}" if item.line else item.path
            lines.append(f"- {code(where)}: {code(item.reason)}")
        lines += ["", "</details>"]
    return lines


def _smoke(smoke: SmokeReport) -> list[str]:
    """The smoke test: a row per dataset, then a row per failed result."""
    icons = {"passed": "✅", "failed": "❌", "no_sample": "⚪ no sample", "error": "❌ error"}
    lines = [
        f"### Smoke test ({_prose(smoke.master)}"
        + (f", Spark {smoke.spark_version}" if smoke.spark_version else "")
        + f", {smoke.seconds:.1f} s)",
        "",
        "| | Dataset | Sample | Rows | Problems |",
        "|---|---|---|---|---|",
    ]
    for dataset in smoke.datasets:
        failed = sum(r.status == "failed" for r in dataset.results)
        lines.append(
            _row(
                icons.get(dataset.status, code(dataset.status)),
                code(dataset.dataset),
                code(dataset.sample),
                str(dataset.rows) if dataset.rows is not None else "",
                str(failed),
            )
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
            lines.append(_row(code(dataset.dataset), "", "", "error", code(dataset.error), ""))
        for dataset, result in failures:
            examples = ", ".join(code(v) for v in result.samples)
            lines.append(
                _row(
                    code(dataset.dataset),
                    code(f"{result.kind}: {result.name}"),
                    code(result.column),
                    code(result.status),
                    code(result.message),
                    examples,
                )
            )
    return lines


def _fenced(lines: Sequence[str]) -> list[str]:
    """A code block the lines cannot close: its fence outgrows any backtick run."""
    body = [shown(line, LINE_CHARS) for line in lines]
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]


def _approvals(report: Report) -> list[str]:
    """Per break: who must approve, who did, what is missing (gate.approvals)."""
    asked = [c for c in report.changes if c in report.approvals]
    if not asked:
        return []
    lines = ["", "**Approval by owners**", ""]
    for change in asked:
        lines.append(f"- `{change.rule}` {code(change.target)}")
        lines += [f"  - {code(line)}" for line in approval_lines(report.approvals[change])]
    return lines


def render(report: Report) -> str:
    status = "✅ passed" if report.passed else "❌ failed"
    lines = [
        f"## Schema contract gate: {status}",
        "",
        report.verdict(name=code),
        "",
        f"Compared {code(report.base_ref)} ({'merge-base ' if report.merge_base else ''}"
        f"{code(report.base_sha[:12])}) with "
        f"{_prose(report.head_label)}: "
        f"{report.files_compared} changed contract file(s)"
        + (f", data types read as {code(report.dialect)} SQL" if report.dialect else "")
        + (
            f" ({code(report.dialect_source)})."
            if report.dialect and report.dialect_source
            else "."
        ),
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
    lines += _unknown_types([*important, *warnings], report)
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
    lines += _who_reads(report)
    lines += _approvals(report)
    if report.unmatched_acknowledgements:
        lines += ["", "### Acknowledgements that match nothing", ""]
        for t in report.unmatched_acknowledgements:
            meant = report.closest(t)
            hint = f" (did you mean {code(meant)}?)" if meant else ": check the spelling."
            what = (
                "names no consumer file with a `consumer_broken` finding"
                if t.key == CONSUMER_KEY
                else "names no changed dataset"
            )
            lines.append(f"- {code(t.value)} ({_prose(t.source)}) {what}{hint}")
    if report.ambiguous_acknowledgements:
        lines += ["", "### Acknowledgements that name several datasets", ""]
        lines += [
            f"- {code(t.value)} ({_prose(t.source)}) matches "
            + ", ".join(code(c) for c in candidates)
            + " and acknowledges none: write the full id."
            for t, candidates in report.ambiguous_acknowledgements
        ]
    if report.smoke is not None:
        lines += ["", *_smoke(report.smoke)]
    if report.warnings:
        lines += ["", "### Contract warnings (compared anyway)", ""]
        lines += [
            f"- {code(f'{w.path}:{w.line}' if w.line else w.path)}: {code(w.detail)}"
            for w in report.warnings
        ]
    if report.notices:
        lines += ["", "### Notes", ""]
        lines += [f"- {_prose(n)}" for n in report.notices]
    if report.datasets_to_acknowledge:
        lines += [
            "",
            "### How to acknowledge",
            "",
            "If these breaks are intended, coordinate with the consumers and add these lines "
            "to the PR description (one per dataset), then re-run the check:",
            "",
            *_fenced([f"accept-breaking-change: {d}" for d in report.datasets_to_acknowledge]),
        ]
    if report.consumers_to_fix:
        lines += [
            "",
            "### Consumers to fix in this pull request",
            "",
            "An `accept-breaking-change` does not clear these: they read what the HEAD "
            "contract no longer has.",
            "",
        ]
        lines += [
            f"- {code(f'{c.path}:{c.line}')}: {code(c.message)}" for c in report.consumers_to_fix
        ]
        lines += [
            "",
            "If the gate misread a consumer (it still runs at HEAD), vouch for that file in "
            "the PR description, one line per file, then re-run the check:",
            "",
            *_fenced(list(report.consumer_acknowledgement_lines)),
        ]
    if report.consumer_acknowledgements:
        lines += [
            "",
            "### Consumers vouched for",
            "",
            "`consumer_broken` cleared by `accept-consumer-break` for: "
            + ", ".join(code(p) for p in report.consumer_acknowledgements),
        ]
    return "\n".join(lines) + "\n"
