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
from collections.abc import Sequence
from typing import Any

from gate.diff import Change
from gate.model import ContractError
from gate.report.base import Report, visible
from gate.report.fingerprints import numbered
from gate.rules import Severity

#: The check_name of a refused contract file (no rule fired: the file was not read).
REFUSED = "contract_refused"


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
        "description": visible(description),
        "check_name": check,
        "fingerprint": fingerprint,
        "severity": level,
        "location": {"path": visible(path), "lines": {"begin": line if line and line > 0 else 1}},
    }


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
    return issues


def render(report: Report) -> str:
    return json.dumps(to_list(report), indent=2) + "\n"


def refused(errors: Sequence[ContractError], cap: int) -> str:
    """A refused run (exit 2): a blocker on each refused file's line, past ``cap`` one count."""
    issues = [
        _issue(
            f"contract refused: {e.detail}",
            REFUSED,
            hashlib.sha256(f"{REFUSED}\0{e.path}\0{e.detail}".encode()).hexdigest()[:32],
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
