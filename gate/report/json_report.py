"""Machine-readable report: one JSON object with stable keys (docs/json-report.md)."""

from __future__ import annotations

import json
from typing import Any

from gate.acks import CONSUMER_KEY
from gate.model import Change
from gate.report.base import Report, change_dict


def to_dict(report: Report) -> dict[str, Any]:
    return {
        "version": 1,
        "base": {"ref": report.base_ref, "sha": report.base_sha, "merge_base": report.merge_base},
        "head": {"ref": report.head_ref, "sha": report.head_sha or None},
        "fail_on": report.fail_on.value,
        "dialect": report.dialect or None,
        "dialect_source": report.dialect_source or None,
        "changes": [_with_approval(change_dict(c), report, c) for c in report.changes],
        "acknowledgements": list(report.acknowledgements),
        "consumer_acknowledgements": list(report.consumer_acknowledgements),
        "unmatched_acknowledgements": [
            {"token": t.value, "source": t.source}
            for t in report.unmatched_acknowledgements
            if t.key != CONSUMER_KEY
        ],
        "unmatched_consumer_acknowledgements": [
            {"token": t.value, "source": t.source}
            for t in report.unmatched_acknowledgements
            if t.key == CONSUMER_KEY
        ],
        "ambiguous_acknowledgements": [
            {"token": t.value, "source": t.source, "candidates": list(candidates)}
            for t, candidates in report.ambiguous_acknowledgements
        ],
        "summary": report.summary(),
        "smoke": report.smoke.to_dict() if report.smoke is not None else None,
        "notices": list(report.notices),
        "warnings": [
            {"path": w.path, "line": w.line, "message": w.detail} for w in report.warnings
        ],
        "relaxations": [
            {"file": r.file, "setting": r.setting, "base": r.base, "head": r.head}
            for r in report.relaxations
        ],
        "consumers_not_analysed": [
            {"path": n.path, "line": n.line, "reason": n.reason} for n in report.not_analysed
        ],
        "verdict": "pass" if report.passed else "fail",
        "message": report.verdict(),
        "exit_code": report.exit_code,
    }


def _with_approval(out: dict[str, Any], report: Report, change: Change) -> dict[str, Any]:
    """``approvals``: ``null`` unless the base's policy asks for an approval (gate.approvals)."""
    status = report.approvals.get(change)
    out["approvals"] = status.to_dict() if status is not None else None
    return out


def render(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, sort_keys=False) + "\n"
