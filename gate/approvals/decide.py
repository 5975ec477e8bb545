"""Who must approve each break, who did, what is missing; and whether that clears it.

Pure: the inputs are the changes (after the description's acknowledgements),
the base side's approval policy and CODEOWNERS, each dataset's contract owners
and the handles that approved. Every "nobody can approve this" is a
requirement with an ``error``: the break stays blocking and the report says
why (fail closed), never a requirement that is quietly dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gate.approvals.codeowners import LOCATIONS, CodeOwners
from gate.approvals.policy import ApprovalPolicy, ApprovalRule, normalize
from gate.model import Change
from gate.rules import Severity


@dataclass(frozen=True)
class Requirement:
    """One approval needed: any one of ``owners`` satisfies it (GitHub's code owner rule)."""

    why: str
    owners: tuple[str, ...] = ()
    #: Why nobody can satisfy it (an unreadable CODEOWNERS line, an unmapped owner).
    error: str | None = None


@dataclass(frozen=True)
class Approval:
    """One change's approval status, as the reports show it."""

    approval: str
    acknowledge: str
    required: tuple[Requirement, ...]
    received: tuple[str, ...]
    missing: tuple[Requirement, ...]
    approved: bool
    #: Set when approval cannot clear this change at all (``consumer_broken``).
    note: str | None = None

    def to_dict(self) -> dict[str, object]:
        def req(r: Requirement) -> dict[str, object]:
            return {"why": r.why, "owners": list(r.owners), "error": r.error}

        return {
            "approval": self.approval,
            "acknowledge": self.acknowledge,
            "required": [req(r) for r in self.required],
            "received": list(self.received),
            "missing": [req(r) for r in self.missing],
            "approved": self.approved,
            "note": self.note,
        }


@dataclass(frozen=True)
class Reviewed:
    """What the pull request's reviews say about one change (the Action; gate.action.reviews)."""

    #: Handles (users, and teams a member of which approved) whose approval covers it.
    approved: frozenset[str] = frozenset()
    #: Handles whose latest review requests changes: they block until they approve.
    requested_changes: frozenset[str] = frozenset()
    #: Why a review did not count (stale, unverifiable team, API error).
    notes: tuple[str, ...] = ()
    #: Why the reviews cannot be decided at all (a change request past a lookup bound):
    #: each keeps the change unapproved, whoever approved it (fail closed).
    unresolved: tuple[str, ...] = ()


#: (change, the handles that may approve it, whether bots count) -> what the reviews say.
Reviews = Callable[[Change, frozenset[str], bool], Reviewed]


@dataclass(frozen=True)
class Outcome:
    changes: tuple[Change, ...]
    approvals: dict[Change, Approval]


def _blocking_capable(change: Change) -> bool:
    return change.severity in (Severity.ERROR, Severity.WARNING)


def _consumer_requirements(change: Change, codeowners: CodeOwners) -> list[Requirement]:
    paths = sorted({c.path for c in change.consumers})
    if codeowners.errors:
        lines = "; ".join(codeowners.describe_errors())
        return [Requirement("code owners of the consumers", (), f"CODEOWNERS not usable: {lines}")]
    if codeowners.source is None:
        where = ", ".join(LOCATIONS)
        return [
            Requirement("code owners of the consumers", (), f"no CODEOWNERS at the base ({where})")
        ]
    if not paths:
        return [
            Requirement("code owners of the consumers", (), "no in-repo consumer reads this change")
        ]
    out = []
    for path in paths:
        found = codeowners.owners_of(path)
        why = f"code owners of {path}"
        if found.owners:
            why += f" ({codeowners.source}:{found.line})"
            out.append(Requirement(why, tuple(normalize(o) for o in found.owners)))
        else:
            out.append(Requirement(why, (), f"{path} has no code owner in {codeowners.source}"))
    return out


def _owner_requirement(names: Sequence[str], policy: ApprovalPolicy) -> Requirement:
    if not names:
        return Requirement("contract owners", (), "the contract names no owner")
    handles: list[str] = []
    for name in names:
        if name in policy.owners:
            handles += policy.owners[name]
        elif name.startswith("@"):
            handles.append(normalize(name))
        else:
            return Requirement(
                "contract owners",
                (),
                f"contract owner {name!r} maps to no GitHub handle (approvals.owners in the config)",
            )
    return Requirement("contract owners: " + ", ".join(names), tuple(dict.fromkeys(handles)))


def requirements(
    change: Change,
    rule: ApprovalRule,
    policy: ApprovalPolicy,
    codeowners: CodeOwners,
    contract_owners: Sequence[str],
) -> tuple[Requirement, ...]:
    """What ``rule`` asks of this change, each group satisfied by any one of its owners."""
    approvers = [Requirement("approvers in the config", rule.approvers)] if rule.approvers else []
    mode = rule.approval
    groups: list[Requirement] = []
    if mode in ("consumers", "all-of", "any-of"):
        groups += _consumer_requirements(change, codeowners)
    if mode in ("owners", "all-of", "any-of"):
        groups.append(_owner_requirement(contract_owners, policy))
    groups += approvers
    if mode == "any-of":
        usable = [g for g in groups if g.error is None]
        if not usable:
            reasons = "; ".join(g.error or "" for g in groups) or "nobody is named"
            return (Requirement("any one owner", (), reasons),)
        # An unreadable CODEOWNERS could hide who owns a consumer: fail closed.
        broken = [g for g in groups if g.error and g.error.startswith("CODEOWNERS")]
        if broken:
            return tuple(broken)
        owners = tuple(dict.fromkeys(o for g in usable for o in g.owners))
        return (Requirement("any one of: " + "; ".join(g.why for g in usable), owners),)
    if mode in ("consumers", "owners") and rule.approvers:
        # The config's approvers stand in for a source that names nobody.
        named = [g for g in groups if g.error is None]
        return tuple(named)
    return tuple(groups)


def apply(
    changes: Sequence[Change],
    policy: ApprovalPolicy,
    codeowners: CodeOwners,
    contract_owners: Mapping[str, Sequence[str]],
    approved_by: Iterable[str],
    reviews: Reviews | None = None,
) -> Outcome:
    """Each change's approval status, and its ``acknowledged`` as the policy decides it.

    ``acknowledge: description`` leaves today's acknowledgement alone;
    ``approval`` replaces it by the approvals; ``either`` takes both. A
    ``consumer_broken`` finding is never cleared by approval.
    """
    received = {normalize(h) for h in approved_by if h.strip()}
    out: list[Change] = []
    statuses: dict[Change, Approval] = {}
    for change in changes:
        rule = policy.rule_for(change.dataset)
        if rule.approval == "none" and rule.acknowledge == "description":
            out.append(change)
            continue
        if not change.spec.acknowledgeable:
            note = "consumer_broken is cleared by fixing the reader (or accept-consumer-break), never by approval"
            status = Approval(rule.approval, rule.acknowledge, (), (), (), False, note)
            statuses[change] = status
            out.append(change)
            continue
        needed = requirements(
            change, rule, policy, codeowners, contract_owners.get(change.dataset, ())
        )
        candidates = frozenset(o for r in needed for o in r.owners)
        have = set(received)
        notes: tuple[str, ...] = ()
        blocked: list[Requirement] = []
        if reviews is not None and candidates:
            said = reviews(change, candidates, policy.allow_bots)
            have |= said.approved
            notes = said.notes
            blocked = [
                Requirement(f"{who} requested changes", (who,), f"{who} requested changes")
                for who in sorted(said.requested_changes & candidates)
            ] + [Requirement("every change request checked", (), why) for why in said.unresolved]
        missing = tuple(r for r in needed if r.error or not have & set(r.owners)) + tuple(blocked)
        got = tuple(sorted(have & candidates))
        approved = bool(needed) and not missing
        new = change
        if _blocking_capable(change):
            if rule.acknowledge == "approval":
                new = replace(change, acknowledged=approved)
            elif rule.acknowledge == "either":
                new = replace(change, acknowledged=change.acknowledged or approved)
        statuses[new] = Approval(
            rule.approval,
            rule.acknowledge,
            needed,
            got,
            missing,
            approved,
            "; ".join(notes) or None,
        )
        out.append(new)
    return Outcome(tuple(out), statuses)
