"""What approval reads from the two sides: the base's CODEOWNERS, policy and owners.

Everything that decides who may clear a break comes from the base commit, so
a pull request that edits CODEOWNERS, the ``approvals:`` section or a
contract's owner to name its author gets no say from that edit; the report
gets a notice instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gate.approvals.codeowners import LOCATIONS, CodeOwners, LineError, parse
from gate.approvals.owners import Groups, contract_owners
from gate.approvals.policy import ApprovalPolicy, policy_change_notices
from gate.config import Config
from gate.dbt.projects import ProjectIndex
from gate.git import Repo
from gate.model import Dataset


@dataclass(frozen=True)
class BaseRules:
    policy: ApprovalPolicy
    codeowners: CodeOwners
    notices: tuple[str, ...]


def read_codeowners(repo: Repo, commit: str | None) -> CodeOwners:
    """The first of ``LOCATIONS`` that exists at ``commit``, parsed (GitHub's lookup order)."""
    found = repo.read_optional(commit, list(LOCATIONS))
    for location in LOCATIONS:
        data = found.get(location)
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return CodeOwners(location, (), (LineError(1, "not UTF-8 text"),))
        return parse(text, location)
    return CodeOwners(None)


def base_rules(
    repo: Repo, base_commit: str, head_commit: str | None, base: Config, head: Config
) -> BaseRules:
    """The base side's policy and CODEOWNERS; a notice where HEAD would change them."""
    notices = policy_change_notices(base.approvals, head.approvals, head.source or base.source)
    codeowners = read_codeowners(repo, base_commit)
    if base.approvals.active:
        notices += codeowners_notices(codeowners)
        head_owners = read_codeowners(repo, head_commit)
        if (head_owners.source, head_owners.rules, head_owners.errors) != (
            codeowners.source,
            codeowners.rules,
            codeowners.errors,
        ):
            notices.append(
                f"this PR changes {head_owners.source or codeowners.source}; code owners are read "
                "from the base branch, so the change gives nobody a say in this PR"
            )
    return BaseRules(base.approvals, codeowners, tuple(notices))


#: Unreadable CODEOWNERS lines named one by one before "and N more".
MAX_LINE_NOTICES = 5


def codeowners_notices(codeowners: CodeOwners) -> list[str]:
    """One top-level notice per base-side CODEOWNERS line that cannot be read (file:line: why).

    The changes that need those code owners already say so and stay blocking;
    the notice says it once, where whoever maintains CODEOWNERS looks first.
    """
    lines = codeowners.describe_errors()
    out = [
        f"CODEOWNERS line not usable, so breaks that need its code owners stay blocking: {line}"
        for line in lines[:MAX_LINE_NOTICES]
    ]
    if len(lines) > MAX_LINE_NOTICES:
        out.append(f"CODEOWNERS: {len(lines) - MAX_LINE_NOTICES} more lines not usable")
    return out


def owners_by_dataset(
    repo: Repo,
    base_commit: str,
    datasets: Sequence[Dataset],
    wanted: set[str],
    projects: ProjectIndex | None = None,
) -> dict[str, tuple[str, ...]]:
    """Each wanted dataset's contract owners, from its base-side file.

    ``projects`` (the base side's dbt index) resolves a dbt model's group
    declared in another properties file of its project, read once per project.
    """
    chosen = [d for d in datasets if d.id in wanted]
    files = repo.read_optional(base_commit, sorted({d.path for d in chosen}))

    def groups_of(path: str) -> Groups | None:
        if projects is None:
            return None

        def read() -> Mapping[str, Any]:
            project = projects.locate([path]).get(path)
            return projects.groups(project) if project is not None else {}

        return read

    return {d.id: contract_owners(d, files.get(d.path), groups_of(d.path)) for d in chosen}
