"""The pull request's reviews as approvals of its breaking changes (issue #23).

What counts: a review in state APPROVED by a handle the policy asks for (a
user, or an active member of a required team), not by the pull request's
author, not dismissed, not by a bot unless ``approvals.allow_bots``. Each
user's latest APPROVED / CHANGES_REQUESTED / DISMISSED review wins (a
COMMENTED review changes nothing, as on GitHub); a latest CHANGES_REQUESTED
by a required approver blocks.

Which breaks an approval approved: a review names the commit it was given on
(``commit_id``). On the head commit it covers every change. On an earlier
commit, the gate is run again at that commit (same base) and the approval
covers the changes whose fingerprints that run found: it carries over a
commit that changes nothing breaking, and not over one that adds or alters a
break. This is the fail-closed source: it is derived from git alone. The
sticky comment's recorded fingerprints were rejected: a comment is written
through a token the gate does not control, and a missing or edited comment
would have to be trusted. A commit the checkout cannot resolve, or more
distinct commits than ``MAX_COMMITS``, makes those approvals not count, with a
note saying so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gate.action.github_api import ApiError, GitHub
from gate.action.merge_queue import QueuedPull
from gate.approvals.decide import Reviewed
from gate.approvals.fingerprint import fingerprint
from gate.model import Change

#: Earlier commits the gate re-runs at to carry approvals over (each is one gate run).
MAX_COMMITS = 5
#: Team memberships looked up (one API call each): anyone may approve a pull request
#: on a public repository, so a crowd of approving strangers would cost a call each.
MAX_TEAM_LOOKUPS = 100
#: Seconds for every API call reading reviews and teams, from the first one on.
TOTAL_SECONDS = 60.0
_STATES = {"APPROVED", "CHANGES_REQUESTED", "DISMISSED"}

#: A commit -> the fingerprints of its breaking changes (``None``: it cannot be read).
Fingerprints = Callable[[str], "frozenset[str] | None"]


@dataclass(frozen=True)
class Review:
    login: str
    state: str
    commit_id: str
    bot: bool


def latest_reviews(raw: list[dict[str, Any]]) -> dict[str, Review]:
    """Each user's latest deciding review (lower-cased login -> review), oldest first in."""
    latest: dict[str, Review] = {}
    for item in raw:
        raw_user = item.get("user")
        user: dict[str, Any] = raw_user if isinstance(raw_user, dict) else {}
        login = user.get("login")
        state = item.get("state")
        if not isinstance(login, str) or not login or state not in _STATES:
            continue
        commit = item.get("commit_id") if isinstance(item.get("commit_id"), str) else ""
        bot = user.get("type") == "Bot" or login.endswith("[bot]")
        latest[login.lower()] = Review(login, str(state), str(commit), bot)
    return latest


@dataclass
class ReviewSource:
    """``gate.approvals.decide.Reviews`` over the REST API, read once and cached."""

    api: GitHub
    number: int
    author: str
    head_sha: str
    fingerprints_at: Fingerprints
    #: Other logins that never approve here (the authors of a merge group's other PRs).
    others: frozenset[str] = frozenset()
    _latest: dict[str, Review] | None = None
    _error: str | None = None
    _at: dict[str, frozenset[str] | None] = field(default_factory=dict)
    _teams: dict[tuple[str, str, str], bool | None] = field(default_factory=dict)

    def _load(self) -> dict[str, Review]:
        if self._latest is None and self._error is None:
            if self.api.deadline is None:
                self.api.deadline = time.monotonic() + TOTAL_SECONDS
            try:
                self._latest = latest_reviews(self.api.reviews(self.number))
            except ApiError as exc:
                self._error = f"reviews could not be read ({exc}): no review counts"
        return self._latest or {}

    def _covers(self, review: Review, change: Change) -> tuple[bool, str | None]:
        if review.commit_id == self.head_sha:
            return True, None
        if review.commit_id not in self._at:
            if len(self._at) >= MAX_COMMITS:
                return False, f"@{review.login}'s approval on {review.commit_id[:12]} not checked"
            self._at[review.commit_id] = self.fingerprints_at(review.commit_id)
        found = self._at[review.commit_id]
        if found is None:
            return False, f"@{review.login}'s approval is on a commit the checkout cannot read"
        if fingerprint(change) in found:
            return True, None
        return False, (
            f"@{review.login}'s approval on {review.commit_id[:12]} is stale: "
            "this break is new or changed since"
        )

    def _member(self, team: str, login: str) -> tuple[bool | None, str | None]:
        """(membership, or ``None`` when unknown; why no answer was asked for or got).

        The second item is set when a bound stopped the lookup: ``MAX_TEAM_LOOKUPS``
        spent, or the API budget (``TOTAL_SECONDS``) run out before or during it.
        A 403 or 404 (a token that cannot read teams, or no member) is not a stop.
        """
        org, _, slug = team.lstrip("@").partition("/")
        key = (org, slug, login.lower())
        if key not in self._teams:
            if len(self._teams) >= MAX_TEAM_LOOKUPS:
                return None, f"more than {MAX_TEAM_LOOKUPS} team memberships to look up"
            member = self.api.team_member(org, slug, login)
            deadline = self.api.deadline
            if member is None and deadline is not None and time.monotonic() >= deadline:
                return None, f"the {TOTAL_SECONDS:g} s budget for API calls ran out"
            self._teams[key] = member
        return self._teams[key], None

    def __call__(self, change: Change, candidates: frozenset[str], allow_bots: bool) -> Reviewed:
        latest = self._load()
        if self._error is not None:
            return Reviewed(notes=(self._error,))
        teams = sorted(c for c in candidates if c.startswith("@") and "/" in c)
        approved: set[str] = set()
        requested: set[str] = set()
        notes: list[str] = []
        unresolved: list[str] = []
        # Change requests first: the bounded team lookups (``MAX_TEAM_LOOKUPS``) are
        # never all spent on approvals, so a crowd of them cannot hide a request. A
        # request the bound (or the time budget) left unchecked keeps the change
        # unapproved (``Reviewed.unresolved``): it may be a member's.
        ordered = sorted(latest.items(), key=lambda kv: (kv[1].state != "CHANGES_REQUESTED", kv[0]))
        for key, review in ordered:
            if key == self.author.lower() or key in self.others:
                continue  # the author never approves their own break
            if review.bot and not allow_bots:
                continue
            handles = {f"@{key}"} & candidates
            for team in teams if review.state != "DISMISSED" else ():
                member, stopped = self._member(team, review.login)
                if member:
                    handles.add(team)
                elif stopped and review.state == "CHANGES_REQUESTED":
                    # Not looked up is not "no request": a member's would block.
                    unresolved.append(
                        f"team {team}: {stopped}; a change request by @{review.login} "
                        "could not be checked, so no approval counts"
                    )
                elif stopped:
                    notes.append(
                        f"team {team}: {stopped}; the other reviewers were not looked up "
                        "(never an approval)"
                    )
                elif member is None:
                    notes.append(
                        f"team {team}: membership of @{review.login} unverifiable "
                        "(the token cannot read team members)"
                    )
            if not handles:
                continue
            if review.state == "CHANGES_REQUESTED":
                requested |= {f"@{key}"} if f"@{key}" in candidates else handles
            elif review.state == "APPROVED":
                covers, why = self._covers(review, change)
                if covers:
                    approved |= handles
                elif why:
                    notes.append(why)
        return Reviewed(
            frozenset(approved),
            frozenset(requested),
            tuple(dict.fromkeys(notes)),
            tuple(dict.fromkeys(unresolved)),
        )


@dataclass
class GroupReviews:
    """A merge group's reviews: each of its pull requests' ``ReviewSource``, together.

    A break of the group counts as approved when a review on any of its pull
    requests approves it (the queue cannot tell which PR added which break:
    docs/github-action.md, "Batched groups"); a change request on any of them
    blocks. No author of a pull request in the group approves anything in it.
    """

    sources: tuple[ReviewSource, ...]

    def __call__(self, change: Change, candidates: frozenset[str], allow_bots: bool) -> Reviewed:
        said = [source(change, candidates, allow_bots) for source in self.sources]
        return Reviewed(
            frozenset().union(*(r.approved for r in said)),
            frozenset().union(*(r.requested_changes for r in said)),
            tuple(
                dict.fromkeys(
                    f"#{source.number}: {note}"
                    for source, r in zip(self.sources, said, strict=True)
                    for note in r.notes
                )
            ),
            tuple(
                dict.fromkeys(
                    f"#{source.number}: {why}"
                    for source, r in zip(self.sources, said, strict=True)
                    for why in r.unresolved
                )
            ),
        )


def author_of(payload: dict[str, Any]) -> str:
    """The pull request author's login from the event payload ("" when absent)."""
    pull = payload.get("pull_request")
    user = pull.get("user") if isinstance(pull, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else ""


def group_reviews(
    api: GitHub, queued: Sequence[QueuedPull], fingerprints: Fingerprints
) -> GroupReviews:
    """Every pull request of a merge group as one review source; no author approves.

    A pull request whose answer names no head commit or no author adds no
    reviews: which commit its approvals cover, or who may not approve, is unknown.
    """
    authors = frozenset(p.author.lower() for p in queued if p.author)
    return GroupReviews(
        tuple(
            ReviewSource(api, p.number, p.author, p.head_sha, fingerprints, authors)
            for p in queued
            if p.head_sha and p.author
        )
    )
