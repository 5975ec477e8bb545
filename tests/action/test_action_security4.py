"""Hostile input to the Action, round four: what the GitHub API answers about
reviews. Runs through the fake GitHub API on 127.0.0.1 (tests/fake_github.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from gate.action import reviews
from tests.action.test_action_approvals import approvals, make
from tests.action.test_action_comment import run_with
from tests.fake_github import FakeGitHub


def team_lookups(api: FakeGitHub) -> int:
    return sum("/memberships/" in r.path for r in api.requests)


def test_thousands_of_approving_strangers_are_not_each_looked_up_in_the_team(tmp_path) -> None:
    """On a public repository anyone may approve a pull request. With a team among
    the approvers, every approving login was looked up in the team, one API call
    each, with no total deadline: 1,000 approvals were 1,000 calls (GITHUB_TOKEN
    allows 1,000 an hour; at GitHub's pace many minutes, at the 10 s per-call
    timeout of a slow API hours). The lookups are bounded; the others are
    unverifiable, never an approval, and the note says so."""
    pr = make(tmp_path)
    with FakeGitHub(teams={"acme/data": {"erin"}}, page_size=100) as api:
        for i in range(1000):
            api.add_review(f"user{i:04}", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
        lookups = team_lookups(api)
    assert run.code == 1, run.stdout
    assert lookups == reviews.MAX_TEAM_LOOKUPS, lookups
    assert "not looked up" in approvals(run)[0]["note"]


def test_a_member_still_approves_beside_a_crowd_of_strangers(tmp_path) -> None:
    pr = make(tmp_path)
    with FakeGitHub(teams={"acme/data": {"erin"}}, page_size=100) as api:
        for i in range(300):
            api.add_review(f"user{i:04}", "APPROVED", pr.head_sha)
        api.add_review("erin", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 0, run.stdout
    assert approvals(run)[0]["received"] == ["@acme/data"]


def test_reading_reviews_has_a_total_deadline(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call reading reviews and teams shares one budget (``TOTAL_SECONDS``), as
    the comment and the check run do; spent, the approvals do not count."""
    monkeypatch.setattr(reviews, "TOTAL_SECONDS", 0.0)
    pr = make(tmp_path)
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1, run.stdout
    assert "reviews could not be read (out of time" in approvals(run)[0]["note"]


def test_a_queue_listing_thousands_of_branches_costs_no_git_per_branch(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge queue's branches come from the API (an answer of up to 16 MiB); each
    branch of this base was asked of git twice (``merge-base --is-ancestor``): 3,000
    branches were 6,000 gits. The group's commits are listed once (``rev-list``)."""
    from gate.action.fetch import Workspace
    from tests.action.test_action import BREAKING_ORDERS, ORDERS_PATH, TOKEN, make_pr
    from tests.action.test_merge_queue import BODIES, QueueAPI, _batched, group_payload, queue_run
    from tests.cost import counting

    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws, refs, head = _batched(pr)
    for n in range(3000):  # other entries of the queue, outside this group
        refs[f"refs/heads/gh-readonly-queue/main/pr-{100 + n}-{pr.fork_point}"] = pr.fork_point
    payload = group_payload(pr.merge_sha, head, 2)
    payload["merge_group"]["base_sha"] = pr.base_sha
    gits = counting(monkeypatch, Workspace, "git")
    with QueueAPI(BODIES, refs=refs) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 0, run.stdout + run.stderr
    assert "the group also holds pull request #1 (from the queue's branches)" in run.stdout
    assert len(gits) < 100, len(gits)


def test_a_page_of_more_reviews_than_asked_for_is_refused(tmp_path) -> None:
    """Reviews are asked 100 a page, up to 50 pages, and each answer may be 16 MiB:
    an API answering pages of a few hundred thousand tiny reviews held them all
    (50 pages of 16 MiB decoded is gigabytes). A page longer than ``per_page`` is not
    GitHub's answer: the reviews are unreadable, no approval counts."""

    class Flooding(FakeGitHub):
        """Answers every reviews page with all of them, whatever ``per_page`` says."""

        def answer(self, method: str, url: str, body: Any) -> tuple[int, Any, dict[str, str]]:
            if method == "GET" and url.split("?")[0].endswith("/reviews"):
                return 200, self.reviews, {}
            return super().answer(method, url, body)

    pr = make(tmp_path)
    with Flooding() as api:
        for i in range(149):
            api.add_review(f"user{i:04}", "COMMENTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1, run.stdout
    assert "reviews could not be read" in approvals(run)[0]["note"]


def test_a_crowd_of_strangers_cannot_hide_a_team_members_change_request(tmp_path) -> None:
    """The lookups are bounded, so approving strangers whose logins sort first used
    them all: a team member's change request was then never looked up and dropped,
    and the required user's approval passed the break. A change request is looked
    up before any approval."""
    pr = make(tmp_path)
    with FakeGitHub(teams={"acme/data": {"zoe"}}, page_size=100) as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        api.add_review("zoe", "CHANGES_REQUESTED", pr.head_sha)
        assert run_with(api, pr).code == 1  # without the crowd, zoe's request blocks
        for i in range(reviews.MAX_TEAM_LOOKUPS + 20):
            api.add_review(f"user{i:04}", "APPROVED", pr.head_sha)
        run = run_with(api, pr, name="ws2")
    assert run.code == 1, run.stdout
    assert any(m["error"] == "@acme/data requested changes" for m in approvals(run)[0]["missing"])
