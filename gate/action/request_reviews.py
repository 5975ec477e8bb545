"""``request-reviews: true``: ask the missing approvers of the blocking breaks for a review.

After the gate has run on a pull request, each blocking break whose approval
is still missing names who could give it (``gate.approvals.decide``). This
asks them, in one ``POST /repos/{o}/{r}/pulls/{n}/requested_reviewers`` with
``reviewers`` (logins) and ``team_reviewers`` (team slugs, without the
organisation: GitHub's API takes the slug of a team of the repository's
organisation). Who is left out, and why:

* the pull request's author (GitHub refuses it, and they never approve their
  own break);
* whoever is already requested (``GET .../requested_reviewers``);
* email owners (a review cannot be requested by address) and teams of another
  organisation than the repository's owner (GitHub cannot request them);
* requirements that nobody can satisfy (an unreadable CODEOWNERS line, an
  unmapped owner) and approvers who requested changes (they have reviewed).

A refusal (422: not a collaborator, 403: a read-only token such as a fork's)
or any other API error is a notice: asking for a review is a courtesy, the
verdict never depends on it. It needs ``pull-requests: write``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.action.github_api import ApiError, GitHub
from gate.approvals.decide import Approval
from gate.model import Change

if TYPE_CHECKING:
    from gate.action.event import PullRequest
    from gate.report.base import Report

#: At most this many users and teams are asked in one run (GitHub's own cap is 15 users).
MAX_REQUESTS = 15


@dataclass(frozen=True)
class Wanted:
    users: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    #: Owners that cannot be asked through the API (emails, other organisations' teams).
    skipped: tuple[str, ...] = ()


def missing_approvers(
    approvals: Mapping[Change, Approval],
    blocking: Iterable[Change],
    author: str,
    org: str,
) -> Wanted:
    """The users and team slugs whose approval the blocking breaks still miss."""
    users: dict[str, None] = {}
    teams: dict[str, None] = {}
    skipped: dict[str, None] = {}
    for change in blocking:
        status = approvals.get(change)
        if status is None or status.approved:
            continue
        for requirement in status.missing:
            if requirement.error is not None:
                continue  # nobody can satisfy it, or the approver already reviewed
            for owner in requirement.owners:
                if not owner.startswith("@"):
                    skipped[owner] = None  # an email address
                    continue
                team_org, slash, slug = owner[1:].partition("/")
                if not slash:
                    if team_org.lower() != author.lower():
                        users[team_org] = None
                elif team_org.lower() == org.lower():
                    teams[slug] = None
                else:
                    skipped[owner] = None
    return Wanted(tuple(users), tuple(teams), tuple(skipped))


def request(api: GitHub, number: int, wanted: Wanted) -> tuple[str, list[str]]:
    """Ask ``wanted`` for a review; a log line and the notices for the report."""
    notices: list[str] = []
    if wanted.skipped:
        notices.append(
            "request-reviews: cannot ask "
            + ", ".join(wanted.skipped)
            + " through the API (an email owner, or a team outside the repository's organisation)"
        )
    if not (wanted.users or wanted.teams):
        return "request-reviews: nobody to ask", notices
    try:
        already_users, already_teams = api.requested_reviewers(number)
    except ApiError as exc:
        notices.append(f"request-reviews: could not read the requested reviewers ({exc})")
        return "request-reviews: not asked", notices
    users = [u for u in wanted.users if u.lower() not in already_users][:MAX_REQUESTS]
    teams = [t for t in wanted.teams if t.lower() not in already_teams][:MAX_REQUESTS]
    if not (users or teams):
        return "request-reviews: every missing approver is already requested", notices
    asked = ", ".join([*(f"@{u}" for u in users), *(f"team {t}" for t in teams)])
    try:
        api.request_reviewers(number, users, teams)
    except ApiError as exc:
        why = {
            422: "GitHub refused them: not collaborators of the repository, or the author",
            403: "the token cannot: it needs pull-requests: write (a fork's token is read-only)",
        }.get(exc.status or 0, "")
        notices.append(
            f"request-reviews: could not request a review from {asked} ({exc}"
            + (f"; {why})" if why else ")")
        )
        return "request-reviews: the request failed", notices
    return f"request-reviews: review requested from {asked}", notices


def ask(
    api: Callable[[], GitHub],
    pull: PullRequest | None,
    event: str,
    token: str,
    payload: dict[str, Any],
    report: Report,
) -> tuple[str, list[str]]:
    """The Action's step: whom to ask after this run, then ``request`` (a log line, notices)."""
    if pull is None or event not in ("pull_request", "pull_request_review"):
        return f"request-reviews: not on a '{event}' event", []
    if not token:
        return "request-reviews: no github-token, nobody asked", []
    from gate.action.reviews import author_of

    owner = pull.repository.split("/")[0]
    wanted = missing_approvers(report.approvals, report.blocking, author_of(payload), owner)
    try:
        return request(api(), pull.number, wanted)
    except ApiError as exc:
        return "request-reviews: not asked", [f"request-reviews: {exc}"]
