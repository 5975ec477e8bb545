"""The merge queue: a ``merge_group`` run judged like the pull request it carries.

GitHub's merge queue runs the required checks on a temporary branch before it
merges. The ``merge_group`` event (action ``checks_requested``; webhook
payload documented at docs.github.com, "Webhook events and payloads",
``merge_group``) carries a ``merge_group`` object with ``head_sha`` (the commit
to check: what actions/checkout checks out), ``head_ref`` (that branch),
``base_sha`` (the group's parent commit) and ``base_ref`` (``refs/heads/main``).
The branch is named ``gh-readonly-queue/<base branch>/pr-<number>-<sha>``
(e.g. ``refs/heads/gh-readonly-queue/main/pr-123-<40 hex>``; GitHub's
"Managing a merge queue" page), one branch per queue entry, at the commit that
entry adds. When GitHub batches several entries into one group ("merge
limits"), the event's branch names only the last of them and ``base_sha`` to
``head_sha`` holds all of them: the others are found from the queue's own
branches (``other_members``: the entries whose commit lies in that range),
never from commit messages.

The acknowledgements come from those pull requests' descriptions, read through
the API: a queue run has no description of its own. A break of the group is
acknowledged when any pull request of the group acknowledges its dataset, and
approved when a review on any of them approves it (docs/github-action.md,
"Batched groups", says why that is the choice and what it allows). Without a token or a
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

from gate.action.fetch import is_sha, validate_sha
from gate.action.github_api import ApiError, GitHub, body_of
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


@dataclass(frozen=True)
class QueuedPull:
    """One pull request of the group, as the API shows it now."""

    number: int
    body: str
    #: its author's login ("" when the answer has none)
    author: str
    #: its head commit ("" when the answer has none: its reviews then count for nothing)
    head_sha: str


def read_pull(api: GitHub, number: int) -> QueuedPull:
    """Pull request ``number`` through the API, or ``UsageError`` (exit 2): fail closed."""
    try:
        pull = api.pull(number)
        body = body_of(pull)
    except ApiError as exc:
        raise UsageError(
            f"merge queue: could not read the description of pull request #{number} "
            f"through the GitHub API ({exc}); its acknowledgements decide this queue "
            "run, so the gate fails closed (re-run the job when the API answers; the "
            "token needs pull-requests: read)"
        ) from None
    user = pull.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    head = pull.get("head")
    sha = head.get("sha") if isinstance(head, dict) else None
    return QueuedPull(
        number,
        body,
        login if isinstance(login, str) else "",
        sha if isinstance(sha, str) and is_sha(sha) else "",
    )


def _need_token(group: MergeGroup, token: str) -> None:
    if not token:
        listed = ", ".join(f"#{n}" for n in group.numbers)
        raise UsageError(
            f"merge queue: the acknowledgements are in the description of pull request "
            f"{listed}, which needs the github-token input (the default github.token, "
            "with pull-requests: read); without it the gate cannot judge this queue run"
        )


def group_pulls(
    group: MergeGroup,
    token: str,
    api: Callable[[], GitHub],
    log: Callable[[str], None],
    numbers: tuple[int, ...] | None = None,
) -> list[QueuedPull]:
    """The group's pull requests (``numbers``, default the named one), read now.

    Fails closed (``UsageError``, exit 2) when one cannot be read: a queue run
    without them would judge every acknowledged change as unacknowledged, or
    worse, be tempted to pass.
    """
    _need_token(group, token)
    out = []
    for number in group.numbers if numbers is None else numbers:
        out.append(read_pull(api(), number))
        log(f"PR description: pull request #{number}'s, from the GitHub API")
    return out


def group_body(
    group: MergeGroup, token: str, api: Callable[[], GitHub], log: Callable[[str], None]
) -> str:
    """The descriptions of the named pull request(s), read now through the API."""
    return "\n\n".join(p.body for p in group_pulls(group, token, api, log))


def other_members(
    group: MergeGroup, refs: list[tuple[str, str]], in_group: Callable[[str], bool]
) -> tuple[int, ...]:
    """The other pull requests batched into this group, from the queue's own branches.

    GitHub keeps one ``gh-readonly-queue/<base>/pr-<n>-<sha>`` branch per queue
    entry, at the commit that entry adds to the ones ahead of it. The entries
    of this group are those whose commit lies between ``base_sha`` (excluded)
    and ``head_sha`` (``in_group``, asked of the checkout's own history): the
    branch names only say which pull request each entry is. Commit messages
    and the commits' associated pull requests are not used (see
    docs/github-action.md, "Batched groups").
    """
    found: set[int] = set()
    for ref, sha in refs:
        match = QUEUE_REF.match(ref)
        if match is None or match["base"] != group.base_branch or not is_sha(sha):
            continue
        number = int(match["number"])
        if number not in group.numbers and number not in found and in_group(sha):
            found.add(number)
    return tuple(sorted(found))


def check_checkout(head: str, group: MergeGroup, is_ancestor: Callable[[str], bool]) -> None:
    """The workspace must hold the queue's head commit: anything else judges another change."""
    if head == group.head_sha or is_ancestor(group.head_sha):
        return
    raise UsageError(
        f"on merge_group the workspace must have the merge group's head "
        f"{group.head_sha[:12]} checked out, but HEAD is {head[:12]} "
        "(actions/checkout with its default ref does that)"
    )
