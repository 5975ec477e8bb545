"""The ``approvals:`` section of the config: who must approve a break, and what clears it.

    approvals:
      owners:                       # contract owner names -> GitHub handles
        Sales Team: ["@acme/sales"]
      rules:                        # per dataset-id glob; the last matching rule wins
        - datasets: ["lake/shop/*"]
          approval: consumers       # none | consumers | owners | any-of | all-of
          acknowledge: either       # description | approval | either
          approvers: ["@alice"]

Read from the base side only (gate.approvals.sides): a pull request cannot
name its author an approver nor switch approval off. Without the section,
every dataset is ``approval: none, acknowledge: description``: today's
behaviour exactly (an ``accept-breaking-change:`` line in the description).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from gate.formats.common import describe
from gate.model import ContractError
from gate.yaml_load import YMap

APPROVALS = ("none", "consumers", "owners", "any-of", "all-of")
ACKNOWLEDGE = ("description", "approval", "either")
_KEYS = {"owners", "rules", "allow_bots"}
_RULE_KEYS = {"datasets", "approval", "acknowledge", "approvers"}


@dataclass(frozen=True)
class ApprovalRule:
    datasets: tuple[str, ...]
    approval: str = "none"
    acknowledge: str = "description"
    approvers: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)

    def applies_to(self, dataset_id: str) -> bool:
        return any(fnmatch.fnmatchcase(dataset_id, glob) for glob in self.datasets)


#: What a dataset no rule names gets: today's behaviour.
DEFAULT_RULE = ApprovalRule(datasets=("*",))


@dataclass(frozen=True)
class ApprovalPolicy:
    rules: tuple[ApprovalRule, ...] = ()
    #: Contract owner names (ODCS team, DCS info.owner, dbt meta.owner) -> handles.
    owners: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Whether a bot account's approval counts (the Action; ``[bot]`` logins).
    allow_bots: bool = False

    def rule_for(self, dataset_id: str) -> ApprovalRule:
        """The last rule whose glob matches (like CODEOWNERS), else today's default."""
        for rule in reversed(self.rules):
            if rule.applies_to(dataset_id):
                return rule
        return DEFAULT_RULE

    @property
    def active(self) -> bool:
        return any(r.approval != "none" or r.acknowledge != "description" for r in self.rules)


def normalize(handle: str) -> str:
    """``alice`` -> ``@alice``; handles compare case-insensitively, as GitHub logins do."""
    handle = handle.strip()
    if "@" not in handle:
        handle = "@" + handle
    return handle.lower()


def _handles(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ContractError(
            path, f"{what} must be a list of handles, found {describe(value)}", line
        )
    out = tuple(normalize(v) for v in items)
    # Here: only a config with an approvals: section loads the CODEOWNERS module.
    from gate.approvals.codeowners import valid_owner

    for handle in out:
        if not valid_owner(handle):
            raise ContractError(
                path, f"{what}: {handle!r} is not @user, @org/team or an email", line
            )
    return out


def policy_change_notices(
    base: ApprovalPolicy, head: ApprovalPolicy, source: str | None
) -> list[str]:
    """The notice when HEAD's ``approvals:`` differs from the base's (which applies until merged)."""
    if head == base:
        return []
    return [
        f"this PR changes approvals: in {source}; the base branch's "
        "approval policy applies until it is merged"
    ]


def parse_approvals(value: Any, path: str, line: int | None) -> ApprovalPolicy:
    """The section, validated; every mistake a one-line error naming the key."""
    if value is None:
        return ApprovalPolicy()
    if not isinstance(value, dict):
        raise ContractError(path, f"'approvals' must be a mapping, found {describe(value)}", line)
    unknown = sorted(map(str, set(value) - _KEYS))
    if unknown:
        raise ContractError(
            path,
            f"unknown approvals key '{unknown[0]}'; known keys: {', '.join(sorted(_KEYS))}",
            line,
        )
    allow_bots = value.get("allow_bots", False)
    if not isinstance(allow_bots, bool):
        raise ContractError(path, "'approvals.allow_bots' must be true or false", line)
    raw_owners = value.get("owners") or {}
    if not isinstance(raw_owners, dict):
        raise ContractError(path, "'approvals.owners' must map owner names to handles", line)
    owners = {
        str(name): _handles(
            handles, path, f"approvals.owners.{name}", _key_line(raw_owners, name, line)
        )
        for name, handles in raw_owners.items()
    }
    raw_rules = value.get("rules") or []
    if not isinstance(raw_rules, list):
        raise ContractError(path, "'approvals.rules' must be a list", line)
    rules = tuple(_rule(entry, path, line) for entry in raw_rules)
    return ApprovalPolicy(rules, owners, allow_bots)


def _key_line(mapping: Any, key: Any, default: int | None) -> int | None:
    return mapping.key_line(key) if isinstance(mapping, YMap) else default


def _rule(entry: Any, path: str, line: int | None) -> ApprovalRule:
    if not isinstance(entry, dict):
        raise ContractError(
            path, f"an approvals rule must be a mapping, found {describe(entry)}", line
        )
    where = entry.line if isinstance(entry, YMap) else line
    unknown = sorted(map(str, set(entry) - _RULE_KEYS))
    if unknown:
        raise ContractError(
            path,
            f"unknown approvals rule key '{unknown[0]}'; known keys: {', '.join(sorted(_RULE_KEYS))}",
            where,
        )
    datasets = entry.get("datasets")
    if isinstance(datasets, str):
        datasets = [datasets]
    if (
        not isinstance(datasets, list)
        or not datasets
        or not all(isinstance(d, str) and d for d in datasets)
    ):
        raise ContractError(path, "an approvals rule needs 'datasets' (dataset-id globs)", where)
    approval = entry.get("approval", "none")
    if approval not in APPROVALS:
        raise ContractError(
            path, f"'approval' must be one of {', '.join(APPROVALS)}, found {approval!r}", where
        )
    acknowledge = entry.get("acknowledge", "description")
    if acknowledge not in ACKNOWLEDGE:
        raise ContractError(
            path,
            f"'acknowledge' must be one of {', '.join(ACKNOWLEDGE)}, found {acknowledge!r}",
            where,
        )
    if acknowledge == "approval" and approval == "none":
        raise ContractError(
            path,
            "'acknowledge: approval' needs an 'approval' other than none: nothing could clear a break",
            where,
        )
    approvers = _handles(entry.get("approvers") or [], path, "'approvers'", where)
    return ApprovalRule(tuple(datasets), approval, acknowledge, approvers, where)
