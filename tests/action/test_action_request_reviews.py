"""``request-reviews: true``: the Action asks the missing approvers, through the fake API.

The base branch's policy (tests/action/test_action_approvals.py) asks ``@carol``
or a member of ``@acme/data`` to approve every break of ``lake/shop/*``; the
PR author is ``dev`` and the repository is ``acme/shop``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.test_action import PR, make_pr
from tests.action.test_action_approvals import POLICY, make
from tests.action.test_action_comment import run_with
from tests.fake_github import FakeGitHub

PATH = "/repos/acme/shop/pulls/1/requested_reviewers"


@pytest.fixture
def pr(tmp_path: Path) -> PR:
    return make(tmp_path)


def posts(api: FakeGitHub) -> list[dict]:
    return [r.body for r in api.requests if r.method == "POST" and r.path == PATH]


def test_the_missing_approvers_are_asked_users_and_team_slugs(pr: PR) -> None:
    with FakeGitHub() as api:
        run = run_with(api, pr, **{"request-reviews": "true"})
    assert run.code == 1, run.stdout  # asking changes no verdict
    assert posts(api) == [{"reviewers": ["carol"], "team_reviewers": ["data"]}]
    assert "request-reviews: review requested from @carol, team data" in run.stdout
    assert api.requested_users == ["carol"] and api.requested_teams == ["data"]


def test_off_by_default(pr: PR) -> None:
    with FakeGitHub() as api:
        run = run_with(api, pr)
    assert run.code == 1
    assert not [r for r in api.requests if r.path.startswith(PATH)]


def test_who_is_already_requested_is_not_asked_again(pr: PR) -> None:
    with FakeGitHub(requested_users=["Carol"]) as api:
        run_with(api, pr, **{"request-reviews": "true"})
    assert posts(api) == [{"reviewers": [], "team_reviewers": ["data"]}]
    with FakeGitHub(requested_users=["carol"], requested_teams=["data"]) as api:
        run = run_with(api, pr, name="ws2", **{"request-reviews": "true"})
    assert posts(api) == []
    assert "every missing approver is already requested" in run.stdout


def test_the_author_is_never_asked(tmp_path: Path) -> None:
    from tests.action.test_action import BREAKING_ORDERS, ORDERS_PATH, orders

    policy = POLICY.replace('"@carol", "@acme/data"', '"@dev", "@Erin", "@other/team", "x@y.org"')
    pr = make_pr(
        tmp_path / "self",
        {ORDERS_PATH: BREAKING_ORDERS},
        base_files={ORDERS_PATH: orders(), ".schema-gate.yml": policy},
    )
    with FakeGitHub() as api:
        run = run_with(api, pr, **{"request-reviews": "true"})
    assert posts(api) == [{"reviewers": ["erin"], "team_reviewers": []}]
    [notice] = [n for n in run.report()["notices"] if n.startswith("request-reviews")]
    assert "@other/team, x@y.org" in notice  # another org's team and an email cannot be asked


def test_nobody_is_asked_once_the_break_is_approved(pr: PR) -> None:
    with FakeGitHub() as api:
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_with(api, pr, **{"request-reviews": "true"})
    assert run.code == 0
    assert posts(api) == []
    assert "request-reviews: nobody to ask" in run.stdout


@pytest.mark.parametrize(
    ("api_kwargs", "expected"),
    [
        ({"collaborators": set()}, "HTTP 422"),  # GitHub: only collaborators can be asked
        ({"fail": {PATH: 403}}, "HTTP 403"),  # a fork's read-only token
        ({"fail": {PATH: 500}}, "HTTP 500"),
    ],
    ids=["422", "403", "500"],
)
def test_a_refusal_is_a_notice_never_a_failure(pr: PR, api_kwargs: dict, expected: str) -> None:
    with FakeGitHub(**api_kwargs) as api:
        run = run_with(api, pr, **{"request-reviews": "true"})
    assert run.code == 1, run.stdout  # the break's verdict, not 2
    assert run.outputs["verdict"] == "fail"
    [notice] = [n for n in run.report()["notices"] if n.startswith("request-reviews")]
    assert expected in notice
    assert api.requested_users == []


def test_a_bad_value_is_a_usage_error(pr: PR) -> None:
    with FakeGitHub() as api:
        run = run_with(api, pr, **{"request-reviews": "yes"})
    assert run.code == 2
    assert "request-reviews must be true or false" in run.verdict_line
