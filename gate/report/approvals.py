"""Who must approve each break and who is missing, in words every report shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: a run without a policy never loads the deciding module
    from gate.approvals.decide import Approval, Requirement


def _who(req: Requirement) -> str:
    if req.error:
        return f"{req.why}: nobody can approve ({req.error})"
    return f"{req.why}: one of {', '.join(req.owners)}"


def approval_lines(status: Approval | None) -> list[str]:
    """Plain lines (no markup) for one change; empty when no approval is asked."""
    if status is None:
        return []
    if status.note:
        return [f"approval: {status.note}"]
    head = f"approval ({status.approval}, acknowledge: {status.acknowledge}): "
    head += "approved" if status.approved else "missing"
    lines = [head]
    lines += [f"needs {_who(r)}" for r in status.required]
    if status.received:
        lines.append("approved by " + ", ".join(status.received))
    lines += [f"missing {_who(r)}" for r in status.missing]
    return lines
