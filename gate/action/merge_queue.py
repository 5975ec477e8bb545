"""The merge queue: a ``merge_group`` run judged like the pull request it carries.

GitHub's merge queue runs the required checks on a temporary branch before it
merges. The ``merge_group`` event (action ``checks_requested``; webhook
payload documented at docs.github.com, "Webhook events and payloads",
``merge_group``) carries a ``merge_group`` object with ``head_sha`` (the commit
to check: what actions/checkout checks out), ``head_ref`` (that branch),
``base_sha`` (the group's parent commit) and ``base_ref`` (``refs/heads/main``).
The branch is named ``gh-readonly-queue/<base branch>/pr-<number>-<sha>``
(e.g. ``refs/heads/gh-readonly-queue/main/pr-123-<40 hex>``; GitHub's
"Managing a merge queue" page), one branch and one event per queue entry. An
entry's parent is the previous entry's head (or the base branch), so
``base_sha`` to ``head_sha`` is the change of the pull request it names; when
GitHub builds several entries into one group, that branch names the last of
them, and breaking changes of the others need their acknowledgement in it too
(or the queue run fails, never passes unseen).

The acknowledgements come from that pull request's description, read through
the API: a queue run has no description of its own. Without a token or a
readable pull request the run fails closed with exit 2 (the gate could not
establish what was acknowledged: a configuration problem to fix, not a verdict
on the contracts), never "skipped". The branch name is untrusted text; it is
matched whole by a strict pattern (digits only for the number) and nothing
else from it is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from gate.action.fetch import validate_sha
from gate.action.github_api import ApiError, GitHub
from gate.model import UsageError

EVENT = "merge_group"
#: ``refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>``: the whole ref, nothing else.
QUEUE_REF = re.compile(
    r"refs/heads/gh-readonly-queue/"
    r"(?P<base>(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/+-]{1,200}?)"
    r"/pr-(?P<number>[1-9][0-9]{0,9})-(?P<sha>[0-9a-f]{40}|[0-9a-f]{64})\Z",
    re.ASCII,
)


@dataclass(frozen=True)
class MergeGroup:
    EVENT: ClassVar[str] = EVENT

    repository: str
    base_sha: str
    head_sha: str
    head_ref: str
    base_branch: str
    #: the pull requests whose descriptions hold the acknowledgements
    numbers: tuple[int, ...]

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], env: Mapping[str, str]) -> MergeGroup:
        group = payload.get("merge_group")
        if not isinstance(group, dict):
            raise UsageError("the merge_group event payload has no merge_group object")
        head_ref = group.get("head_ref")
        base_branch, number = parse_queue_ref(head_ref)
        base_ref = group.get("base_ref")
        if isinstance(base_ref, str) and base_ref != f"refs/heads/{base_branch}":
            raise UsageError(
                f"merge_group.head_ref names the base branch '{base_branch}' but "
                f"merge_group.base_ref is {_shown(base_ref)}: refusing an inconsistent queue event"
            )
        github_ref = env.get("GITHUB_REF", "")
        if github_ref and github_ref != head_ref:
            raise UsageError(
                f"GITHUB_REF {_shown(github_ref)} is not the queue branch "
                f"{_shown(head_ref)} of the merge_group event"
            )
        repo = payload.get("repository")
        full_name = repo.get("full_name") if isinstance(repo, dict) else None
        return cls(
            repository=full_name
            if isinstance(full_name, str)
            else env.get("GITHUB_REPOSITORY", ""),
            base_sha=validate_sha(group.get("base_sha"), "merge_group.base_sha"),
            head_sha=validate_sha(group.get("head_sha"), "merge_group.head_sha"),
            head_ref=str(head_ref),
            base_branch=base_branch,
            numbers=(number,),
        )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def parse_queue_ref(ref: object) -> tuple[str, int]:
    """The base branch and the pull request number of a queue branch, or ``UsageError``."""
    match = QUEUE_REF.match(ref) if isinstance(ref, str) else None
    if match is None or match["base"].endswith((".", "/", ".lock")):
        raise UsageError(
            f"merge_group.head_ref {_shown(ref)} is not a merge queue branch "
            "(refs/heads/gh-readonly-queue/<base branch>/pr-<number>-<sha>): the pull "
            "request whose description holds the acknowledgements is unknown, so the gate "
            "refuses to judge this queue run"
        )
    return match["base"], int(match["number"])


def group_body(
    group: MergeGroup, token: str, api: Callable[[], GitHub], log: Callable[[str], None]
) -> str:
    """The descriptions of the group's pull requests, read now through the API.

    Fails closed (``UsageError``, exit 2) when one cannot be read: a queue run
    without them would judge every acknowledged change as unacknowledged, or
    worse, be tempted to pass.
    """
    listed = ", ".join(f"#{n}" for n in group.numbers)
    if not token:
        raise UsageError(
            f"merge queue: the acknowledgements are in the description of pull request "
            f"{listed}, which needs the github-token input (the default github.token, "
            "with pull-requests: read); without it the gate cannot judge this queue run"
        )
    bodies = []
    for number in group.numbers:
        try:
            bodies.append(api().pull_body(number))
        except ApiError as exc:
            raise UsageError(
                f"merge queue: could not read the description of pull request #{number} "
                f"through the GitHub API ({exc}); its acknowledgements decide this queue "
                "run, so the gate fails closed (re-run the job when the API answers; the "
                "token needs pull-requests: read)"
            ) from None
        log(f"PR description: pull request #{number}'s, from the GitHub API")
    return "\n\n".join(bodies)


def check_checkout(head: str, group: MergeGroup, is_ancestor: Callable[[str], bool]) -> None:
    """The workspace must hold the queue's head commit: anything else judges another change."""
    if head == group.head_sha or is_ancestor(group.head_sha):
        return
    raise UsageError(
        f"on merge_group the workspace must have the merge group's head "
        f"{group.head_sha[:12]} checked out, but HEAD is {head[:12]} "
        "(actions/checkout with its default ref does that)"
    )
