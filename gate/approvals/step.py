"""The run's approval step: base-side rules, contract owners, then each change decided."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gate.approvals.policy import policy_change_notices
from gate.dbt.projects import ProjectIndex
from gate.model import Change, Dataset
from gate.side import Side

if TYPE_CHECKING:
    # Imported in approve() once a policy is active: a run without one loads
    # neither the deciding nor the CODEOWNERS modules (issue #26).
    from gate.approvals import decide


@dataclass(frozen=True)
class Approved:
    changes: tuple[Change, ...]
    approvals: dict[Change, decide.Approval] = field(default_factory=dict)
    notices: tuple[str, ...] = ()


def approve(
    base: Side,
    head: Side,
    changes: Sequence[Change],
    base_datasets: Sequence[Dataset],
    approved_by: Sequence[str],
    reviews: decide.Reviews | None = None,
) -> Approved:
    """``changes`` with the approval policy of the base side applied (a no-op by default)."""
    if not base.config.approvals.active:
        # No policy: nothing to decide, so neither the base tip nor CODEOWNERS is read.
        notices = policy_change_notices(
            base.config.approvals, head.config.approvals, head.config.source or base.config.source
        )
        return Approved(tuple(changes), {}, tuple(notices))
    from gate.approvals import decide
    from gate.approvals.sides import base_rules, owners_by_dataset

    # CODEOWNERS as the base branch has it now, like its config (gate.engine reads
    # that at the tip of --base): an old branch must not keep an owner since removed.
    tip = base.repo.resolve(base.ref) if base.ref else base.sha
    rules = base_rules(base.repo, tip, head.commit, base.config, head.config)
    if not rules.policy.active:
        return Approved(tuple(changes), {}, rules.notices)
    owned = {c.dataset for c in changes if rules.policy.rule_for(c.dataset).approval != "none"}
    # The contracts' owners too (a group handed to another team since the PR
    # branched no longer names the old one); a file moved since names no owner.
    projects = (
        base.projects
        if tip == base.sha
        else ProjectIndex(base.repo, tip, "base", fallback=head.projects)
    )
    owners = owners_by_dataset(base.repo, tip, base_datasets, owned, projects) if owned else {}
    outcome = decide.apply(changes, rules.policy, rules.codeowners, owners, approved_by, reviews)
    return Approved(outcome.changes, outcome.approvals, rules.notices)
