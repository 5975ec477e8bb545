"""What one run hands the runner: exit code, verdict, outputs, summary and annotations.

GitHub shows at most 10 annotations of each kind per step, so the change
annotations are budgeted around the action's own notices and verdict line;
what does not fit is counted and pointed to the job summary.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate import __version__
from gate.action.comment import Posted
from gate.escapes import escape_data
from gate.model import ContractError

if TYPE_CHECKING:
    from gate.report.base import Report

# gate.report is imported where a report is rendered: an event with nothing to
# compare (a skip) must not import the renderers, the engine's model or sqlglot.
#: gate.report's exit codes (tests/e2e/test_lazy_imports.py checks they agree).
EXIT_OK = 0
EXIT_ERROR = 2


#: Outputs declared in action.yml.
OUTPUTS = ("breaking", "unacknowledged", "acknowledged", "report", "verdict", "comment-url")
#: GitHub shows 10 annotations of each kind (error, warning, notice) per step.
ANNOTATION_LIMIT = 10
_LEVEL = re.compile(r"::(error|warning|notice)[ :]")


@dataclass
class Outcome:
    exit_code: int
    verdict: str  # pass | fail | error | skipped
    outputs: dict[str, str]
    summary: str
    commands: list[str]


def budget_annotations(report: Report, own: list[str]) -> tuple[list[str], dict[str, int]]:
    """Change annotations capped so that, with ``own`` lines, each kind stays within 10."""
    used: dict[str, int] = {}
    for line in own:
        match = _LEVEL.match(line)
        if match:
            used[match.group(1)] = used.get(match.group(1), 0) + 1
    kept: list[str] = []
    dropped: dict[str, int] = {}
    from gate.report import github as github_report

    for line in github_report.annotations(report):
        match = _LEVEL.match(line)
        level = match.group(1) if match else "notice"
        if used.get(level, 0) < ANNOTATION_LIMIT:
            used[level] = used.get(level, 0) + 1
            kept.append(line)
        else:
            dropped[level] = dropped.get(level, 0) + 1
    return kept, dropped


def _notices(report: Report) -> list[str]:
    return [f"::notice title=schema-contract-gate::{escape_data(n)}" for n in report.notices]


def _comment_lines(posted: Posted | None) -> list[str]:
    if posted is None or not posted.annotation:
        return []
    return [f"::{posted.annotation} title=schema-contract-gate comment::{escape_data(posted.log)}"]


def with_comment(outcome: Outcome, posted: Posted | None) -> Outcome:
    """Add what the comment step did to an outcome without change annotations."""
    if posted is None:
        return outcome
    return dataclasses.replace(
        outcome,
        outputs={**outcome.outputs, "comment-url": posted.url},
        summary=outcome.summary + (f"\n{posted.summary_note}" if posted.summary_note else ""),
        commands=[*_comment_lines(posted), *outcome.commands],
    )


def outcome_of(report: Report, report_path: str, posted: Posted | None = None) -> Outcome:
    """The outcome of a run that judged the changes (``posted``: the comment step, if any)."""
    from gate.report import markdown

    notices = [*_notices(report), *_comment_lines(posted)]
    verdict_level = "notice" if report.passed else "error"
    placeholder = f"::{verdict_level} title=schema-contract-gate::"
    kept, dropped = budget_annotations(report, [placeholder, *notices])
    message = report.verdict()
    if dropped:
        hidden = ", ".join(f"{n} {level}" for level, n in sorted(dropped.items()))
        message += (
            f" ({hidden} annotation(s) not shown: GitHub shows {ANNOTATION_LIMIT} of each kind "
            "per step; the job summary lists every change.)"
        )
    summary = markdown.render(report)
    if dropped:
        summary += (
            f"\n> Annotations: GitHub shows {ANNOTATION_LIMIT} of each kind per step, so "
            f"{sum(dropped.values())} change(s) appear only in this summary.\n"
        )
    footer = f"schema-contract-gate {__version__} · exit code {report.exit_code}"
    if report_path:
        footer += f" · JSON report: `{report_path}`"
    summary += f"\n<sub>{footer}</sub>\n"
    if posted is not None and posted.summary_note:
        summary += f"\n{posted.summary_note}"
    counts = report.summary()
    return Outcome(
        exit_code=report.exit_code,
        verdict="pass" if report.passed else "fail",
        outputs={
            "breaking": str(counts["breaking"]),
            "unacknowledged": str(counts["unacknowledged"]),
            "acknowledged": str(counts["acknowledged"]),
            "report": report_path,
            "verdict": "pass" if report.passed else "fail",
            "comment-url": posted.url if posted is not None else "",
        },
        summary=summary,
        commands=[*kept, *notices, placeholder + escape_data(message)],
    )


def error_report(message: str) -> str:
    """The JSON report of a run that could not judge anything."""
    report = {"version": 1, "verdict": "error", "message": message, "exit_code": EXIT_ERROR}
    return json.dumps(report, indent=2) + "\n"


def error_outcome(message: str, report_path: str) -> Outcome:
    summary = (
        "## Schema contract gate: ⚠️ could not run\n\n"
        f"<pre>{html.escape(message)}</pre>\n\n"
        "The check fails closed: fix the problem above and re-run. "
        "See docs/github-action.md for the inputs and common causes "
        "(shallow clones, refs, contract syntax).\n"
    )
    return Outcome(
        exit_code=EXIT_ERROR,
        verdict="error",
        outputs={
            "breaking": "0",
            "unacknowledged": "0",
            "acknowledged": "0",
            "report": report_path,
            "verdict": "error",
            "comment-url": "",
        },
        summary=summary,
        commands=[f"::error title=schema-contract-gate::{escape_data(message)}"],
    )


def refused_report(errors: Sequence[ContractError]) -> str:
    """The JSON report of a run that refused contract files: the error object plus ``errors``."""
    from gate.report import refused

    return json.dumps(refused.to_dict(errors), indent=2) + "\n"


def refused_outcome(errors: Sequence[ContractError], report_path: str) -> Outcome:
    """Every refused file: an annotation on its line (within GitHub's 10), all in the summary.

    The summary (also the PR comment) has the table of refusals, capped like
    every medium; the verdict line counts the annotations GitHub would drop.
    """
    from gate.report import refused

    outcome = error_outcome(refused.message(errors), report_path)
    kept = refused.annotation_lines(errors, limit=ANNOTATION_LIMIT - 1)  # the verdict is one
    verdict = refused.message(errors)
    hidden = min(len(errors), refused.CAP) - len(kept)
    if hidden > 0:
        verdict += (
            f" ({hidden} refusal annotation(s) not shown: GitHub shows {ANNOTATION_LIMIT} of "
            "each kind per step; the job summary lists them.)"
        )
    summary = (
        "## Schema contract gate: ⚠️ could not run\n\n"
        f"The gate {refused.summary(errors)}.\n\n"
        + "\n".join(refused.markdown_table(errors))
        + "\n\nThe check fails closed: fix the files above and re-run. "
        "See docs/github-action.md for the inputs and common causes.\n"
    )
    return dataclasses.replace(
        outcome,
        summary=summary,
        commands=[*kept, f"::error title=schema-contract-gate::{escape_data(verdict)}"],
    )


def skip_outcome(reason: str) -> Outcome:
    return Outcome(
        exit_code=EXIT_OK,
        verdict="skipped",
        outputs={
            "breaking": "0",
            "unacknowledged": "0",
            "acknowledged": "0",
            "report": "",
            "verdict": "skipped",
            "comment-url": "",
        },
        summary=f"## Schema contract gate: skipped\n\n{html.escape(reason)}\n",
        commands=[f"::notice title=schema-contract-gate skipped::{escape_data(reason)}"],
    )
