"""Hostile input to the Action, round four: what the GitHub API answers about
reviews. Runs through the fake GitHub API on 127.0.0.1 (tests/fake_github.py).
"""

from __future__ import annotations

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
