"""Approval by owners in the Action: reviews through the fake GitHub API on 127.0.0.1.

The base branch's config asks for an approval from ``@carol`` or a member of
``@acme/data`` for every break of ``lake/shop/*``, and the description line
no longer suffices (``acknowledge: approval``). The PR author is ``dev``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from gate.action import reviews
from gate.action.github_api import MAX_PAGES
from gate.action.reviews import MAX_TEAM_LOOKUPS
from tests.action.test_action import (
    ACK,
    BREAKING_ORDERS,
    ORDERS_PATH,
    PR,
    make_pr,
    orders,
    pr_payload,
)
from tests.action.test_action_comment import run_with
from tests.fake_github import FakeGitHub
from tests.gitrepo import GitRepo

POLICY = """\
approvals:
  rules:
    - datasets: ["lake/shop/*"]
      approval: owners
      acknowledge: approval
      approvers: ["@carol", "@acme/data"]
"""


def make(tmp_path: Path, feature_commits: int = 1) -> PR:
    return make_pr(
        tmp_path / "approvals",
        {ORDERS_PATH: BREAKING_ORDERS},
        base_files={ORDERS_PATH: orders(), ".schema-gate.yml": POLICY},
        feature_commits=feature_commits,
    )


@pytest.fixture
def pr(tmp_path: Path) -> PR:
    return make(tmp_path)


def approvals(run) -> list[dict]:
    return [c["approvals"] for c in run.report()["changes"] if c["breaking"]]


def test_no_review_keeps_the_break_blocking_even_with_the_description_line(pr: PR) -> None:
    with FakeGitHub(pull_body=ACK) as api:
        run = run_with(api, pr, payload=pr_payload(pr, body=ACK))
    assert run.code == 1
    assert all(a["missing"] for a in approvals(run))


def test_an_approval_by_a_required_user_on_the_head_commit_clears_it(pr: PR) -> None:
    with FakeGitHub() as api:
        api.add_review("Carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 0, run.stdout
    assert all(a["received"] == ["@carol"] for a in approvals(run))


def test_reviews_are_read_across_pages(pr: PR) -> None:
    with FakeGitHub(page_size=2) as api:
        for i in range(5):
            api.add_review(f"user{i}", "COMMENTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 0
    assert len([r for r in api.requests if r.path.split("?")[0].endswith("/reviews")]) == 3


@pytest.mark.parametrize(
    ("login", "kind"),
    [("dev", "User"), ("alice", "User"), ("carol[bot]", "Bot")],
    ids=["the author", "not an approver", "a bot"],
)
def test_approvals_that_do_not_count(pr: PR, login: str, kind: str) -> None:
    with FakeGitHub() as api:
        api.add_review(login, "APPROVED", pr.head_sha, kind=kind)
        run = run_with(api, pr)
    assert run.code == 1


def test_the_author_cannot_approve_even_when_named_an_approver(tmp_path: Path) -> None:
    pr = make_pr(
        tmp_path / "self",
        {ORDERS_PATH: BREAKING_ORDERS},
        base_files={ORDERS_PATH: orders(), ".schema-gate.yml": POLICY.replace("@carol", "@dev")},
    )
    with FakeGitHub() as api:
        api.add_review("dev", "APPROVED", pr.head_sha)
        assert run_with(api, pr).code == 1


def test_a_dismissed_approval_and_a_later_change_request_do_not_count(pr: PR) -> None:
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        api.add_review("carol", "DISMISSED", pr.head_sha)
        assert run_with(api, pr).code == 1
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        api.add_review("carol", "COMMENTED", pr.head_sha)  # a comment changes nothing
        assert run_with(api, pr, name="ws2").code == 0


def test_changes_requested_by_a_required_approver_blocks_until_they_approve(
    pr: PR,
) -> None:
    with FakeGitHub(teams={"acme/data": {"erin"}}) as api:
        api.add_review("erin", "APPROVED", pr.head_sha)
        api.add_review("carol", "CHANGES_REQUESTED", pr.head_sha)
        run = run_with(api, pr)
        assert run.code == 1
        assert any(m["error"] == "@carol requested changes" for m in approvals(run)[0]["missing"])
        api.add_review("carol", "APPROVED", pr.head_sha)
        assert run_with(api, pr, name="ws2").code == 0


def test_a_team_members_approval_counts_only_when_membership_is_verified(pr: PR) -> None:
    with FakeGitHub(teams={"acme/data": {"erin"}}) as api:
        api.add_review("erin", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 0 and approvals(run)[0]["received"] == ["@acme/data"]
    # The workflow's GITHUB_TOKEN cannot read team members: unverifiable, never approved.
    with FakeGitHub(teams=None) as api:
        api.add_review("erin", "APPROVED", pr.head_sha)
        run = run_with(api, pr, name="ws2")
    assert run.code == 1
    assert "membership of @erin unverifiable" in approvals(run)[0]["note"]


def test_an_api_error_reading_reviews_keeps_the_break_blocking(pr: PR) -> None:
    with FakeGitHub(fail={"/repos/acme/shop/pulls/1/reviews": 403}) as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1
    assert "reviews could not be read" in approvals(run)[0]["note"]


def test_an_approval_carries_over_a_commit_that_changes_nothing_breaking(tmp_path: Path) -> None:
    pr = make(tmp_path, feature_commits=2)  # the break, then a notes.txt commit
    up = GitRepo(pr.tmp / "upstream", init=False)
    before = up.git("rev-parse", "feature~1").strip()
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", before)
        run = run_with(api, pr)
    assert run.code == 0, run.stdout


def test_a_stale_approval_does_not_cover_a_break_added_after_it(tmp_path: Path) -> None:
    pr = make(tmp_path, feature_commits=2)
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.fork_point)  # before any break
        run = run_with(api, pr)
    assert run.code == 1
    assert "is stale" in approvals(run)[0]["note"]


def test_a_pull_request_review_event_re_runs_the_check(pr: PR) -> None:
    """The workflow also runs on pull_request_review (submitted, dismissed): same PR, same gate."""
    from tests.action.test_action import TOKEN, run_action
    from tests.action.test_action_comment import comment_env

    payload = {
        **pr_payload(pr),
        "action": "submitted",
        "review": {"state": "approved", "user": {"login": "carol"}, "commit_id": pr.head_sha},
    }
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        ws = pr.checkout()
        run = run_action(
            ws.path, "pull_request_review", payload, env=comment_env(api), **{"github-token": TOKEN}
        )
    assert run.code == 0, run.stdout
    assert approvals(run)[0]["received"] == ["@carol"]


def test_a_change_request_past_the_team_lookup_bound_keeps_the_break_unapproved(pr: PR) -> None:
    """101 reviewers to look up in ``@acme/data``: the bound (100) is reached before
    erin, a member, whose change request would block. Not looked up is not "no
    request": the break stays unapproved (carol's approval notwithstanding), saying why."""
    with FakeGitHub(teams={"acme/data": {"erin"}}) as api:
        for i in range(MAX_TEAM_LOOKUPS):  # strangers, sorted before erin
            api.add_review(f"a{i:03d}", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("erin", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1, run.stdout
    missing = [m["error"] for m in approvals(run)[0]["missing"]]
    assert any(
        f"more than {MAX_TEAM_LOOKUPS} team memberships to look up" in (e or "")
        and "a change request" in (e or "")
        for e in missing
    ), missing
    lookups = [r for r in api.requests if "/memberships/" in r.path]
    assert len(lookups) == MAX_TEAM_LOOKUPS  # the bound holds: erin is never asked about


def test_change_requests_within_the_bound_still_let_an_approval_through(pr: PR) -> None:
    """The same crowd one short of the bound: every request is looked up, none is a
    member's, and carol's approval clears the break (the bound is not a block)."""
    with FakeGitHub(teams={"acme/data": {"erin"}}) as api:
        for i in range(MAX_TEAM_LOOKUPS):
            api.add_review(f"a{i:03d}", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 0, run.stdout


def test_reviews_past_the_page_bound_count_for_nothing_and_say_so(pr: PR) -> None:
    """More pages of reviews than ``MAX_PAGES``: the later ones (here carol's approval)
    are never read, so no review counts and the note names the bound."""
    with FakeGitHub(page_size=1) as api:
        for i in range(MAX_PAGES):
            api.add_review(f"user{i}", "COMMENTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1
    note = approvals(run)[0]["note"]
    assert f"more than {MAX_PAGES} pages of reviews" in note and "no review counts" in note
    assert len([r for r in api.requests if r.path.split("?")[0].endswith("/reviews")]) == MAX_PAGES


class SlowTeams(FakeGitHub):
    """Each membership lookup takes ``LOOKUP_SECONDS``: the API budget runs out mid-way."""

    def answer(self, method: str, url: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if "/memberships/" in url:
            time.sleep(LOOKUP_SECONDS)
        return super().answer(method, url, body)


LOOKUP_SECONDS = 0.4


def test_a_change_request_left_unchecked_by_the_time_budget_keeps_the_break_unapproved(
    pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget (``TOTAL_SECONDS``, here 2 s) runs out after a few lookups: erin's
    change request is never checked, so carol's approval does not clear the break."""
    monkeypatch.setattr(reviews, "TOTAL_SECONDS", 2.0)
    with SlowTeams(teams={"acme/data": {"erin"}}) as api:
        for i in range(10):  # 10 x 0.4 s of lookups before erin's: past the budget
            api.add_review(f"a{i:03d}", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("erin", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr)
    assert run.code == 1, run.stdout
    missing = [m["error"] or "" for m in approvals(run)[0]["missing"]]
    assert any("budget for API calls ran out" in e and "@erin" in e for e in missing), missing
