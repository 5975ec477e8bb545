"""GitLab Code Quality JSON (``artifacts:reports:codequality``): docs/report-formats.md.

One issue per finding: ``description``, ``check_name`` (the rule id),
``fingerprint`` (stable across commits, so the merge request widget shows new
and fixed issues), ``severity`` and ``location.path``/``lines.begin``. GitLab
has no suppression: an acknowledged finding stays in, as ``info``, its
description saying so.

Escaping happens here, once for the medium: strings are spelled out with
``visible`` (no control character reaches GitLab's widget) and quoted by the
JSON encoder.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from gate.diff import Change
from gate.escapes import shown
from gate.model import ContractError
from gate.report.base import Report
from gate.report.fingerprints import numbered
from gate.rules import Severity

#: The check_name of a refused contract file (no rule fired: the file was not read).
REFUSED = "contract_refused"
#: A schema problem that did not stop the comparison (docs/formats/validation.md).
WARNING = "contract_warning"
#: A candidate consumer file the gate could not read (docs/impact.md).
NOT_ANALYSED = "consumer_not_analysed"


def severity(change: Change, report: Report) -> str:
    """blocker: it fails the run; info: acknowledged or additive; minor: a warning."""
    if report.blocks(change):
        return "blocker"
    if change.acknowledged or change.severity is Severity.INFO:
        return "info"
    return "minor"


def _issue(
    description: str, check: str, fingerprint: str, level: str, path: str, line: int | None
) -> dict[str, Any]:
    return {
        "description": shown(description),
        "check_name": check,
        "fingerprint": fingerprint,
        "severity": level,
        "location": {"path": shown(path), "lines": {"begin": line if line and line > 0 else 1}},
    }


def _fingerprint(check: str, path: str, detail: str, repeat: int = 0) -> str:
    """Stable across commits (no line number); ``repeat`` tells identical entries apart."""
    key = f"{check}\0{path}\0{detail}" + (f"\0{repeat}" if repeat else "")
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _unsaid(report: Report) -> list[dict[str, Any]]:
    """What SARIF carries as notifications and has a file: without it the widget hides it.

    A contract warning (a part the gate does not compare broke its schema) and an
    unread consumer file are the reviewer's to see where the findings are; notices
    with no file (an unmatched acknowledgement, a CODEOWNERS problem) have no place
    in Code Quality's shape and stay with the exit code and the text report.
    """
    entries = [
        (WARNING, "minor", f"contract warning: {w.detail}", w.path, w.line, w.detail)
        for w in report.warnings
    ] + [
        (NOT_ANALYSED, "info", f"consumer not analysed: {n.reason}", n.path, n.line, n.reason)
        for n in report.not_analysed
    ]
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for check, level, description, path, line, detail in entries:
        repeat = seen[check, path, detail]
        seen[check, path, detail] += 1
        fingerprint = _fingerprint(check, path, detail, repeat)
        issues.append(_issue(description, check, fingerprint, level, path, line))
    return issues


def to_list(report: Report) -> list[dict[str, Any]]:
    issues = []
    for change, fingerprint in numbered(report.changes):
        acked = " (ACKED: acknowledged in the pull request)" if change.acknowledged else ""
        issues.append(
            _issue(
                f"{change.rule}: {change.target}: {change.message}{acked}",
                change.rule,
                fingerprint,
                severity(change, report),
                change.path,
                change.line,
            )
        )
    return issues + _unsaid(report)


def render(report: Report) -> str:
    return json.dumps(to_list(report), indent=2) + "\n"


def refused(errors: Sequence[ContractError], cap: int) -> str:
    """A refused run (exit 2): a blocker on each refused file's line, past ``cap`` one count."""
    issues = [
        _issue(
            f"contract refused: {e.detail}",
            REFUSED,
            _fingerprint(REFUSED, e.path, e.detail),
            "blocker",
            e.path,
            e.line,
        )
        for e in errors[:cap]
    ]
    if len(errors) > cap:
        rest = errors[cap]
        issues.append(
            _issue(
                f"... and {len(errors) - cap} more refused (the first {cap} are listed)",
                REFUSED,
                hashlib.sha256(f"{REFUSED}\0more".encode()).hexdigest()[:32],
                "blocker",
                rest.path,
                rest.line,
            )
        )
    return json.dumps(issues, indent=2) + "\n"
