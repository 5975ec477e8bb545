"""The merge queue: ``merge_group`` runs judge the queued pull request, never "skipped".

The queue branch is ``refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>``
(GitHub's merge_group payload, see gate/action/merge_queue.py); the tests build
it in a real origin: PR 1's queue entry is main + PR 1 (``merge_sha``), PR 2's
is stacked on it. Acknowledgements come from the named pull request's
description, served by the fake GitHub API (tests/fake_github.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gate.action.merge_queue import parse_queue_ref
from gate.model import UsageError
from tests.action.test_action import (
    ACK,
    BREAKING_ORDERS,
    CUSTOMERS_COLUMNS,
    CUSTOMERS_PATH,
    ORDERS_PATH,
    PR,
    TOKEN,
    assert_outputs,
    customers,
    make_pr,
    run_action,
)
from tests.fake_github import FakeGitHub
from tests.gitrepo import GitRepo

SHA = "ab" * 20


@pytest.fixture
def pr(tmp_path: Path) -> PR:
    """PR 1 drops orders.note and narrows orders.customer_id; its queue entry is main + PR 1."""
    return make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})


def group_payload(
    base_sha: str, head_sha: str, number: int | str = 1, head_ref: Any = None
) -> dict[str, Any]:
    """A ``merge_group`` ``checks_requested`` payload, shaped like GitHub's."""
    ref = f"refs/heads/gh-readonly-queue/main/pr-{number}-{base_sha}"
    return {
        "action": "checks_requested",
        "merge_group": {
            "head_sha": head_sha,
            "head_ref": ref if head_ref is None else head_ref,
            "base_sha": base_sha,
            "base_ref": "refs/heads/main",
            "head_commit": {"id": head_sha, "tree_id": "0" * 40, "message": "Merge pull request"},
        },
        "repository": {"full_name": "acme/shop", "default_branch": "main"},
        "sender": {"login": "github-merge-queue[bot]"},
    }


class QueueAPI(FakeGitHub):
    """The fake API with several pull requests: ``bodies`` maps a number to its description."""

    def __init__(self, bodies: dict[int, str | None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bodies = bodies

    def answer(self, method: str, url: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        for number, text in self.bodies.items():
            path = f"/repos/{self.repository}/pulls/{number}"
            if method == "GET" and url == path and not self.fail:
                return 200, {"number": number, "body": text, "state": "open"}, {}
        return super().answer(method, url, body)

    def reads(self) -> list[str]:
        return [r.path for r in self.requests if r.method == "GET"]


def queue_run(ws: Path, payload: dict[str, Any], api: QueueAPI | None, **inputs: str) -> Any:
    env = {"GITHUB_API_URL": api.url} if api is not None else {}
    return run_action(ws, "merge_group", payload, env=env, comment="true", **inputs)


def test_acks_from_the_queued_pr_pass_the_queue_run(pr: PR) -> None:
    ws = pr.checkout()  # actions/checkout checks out merge_group.head_sha
    with QueueAPI({1: f"Slims orders.\r\n\r\n{ACK}\r\n"}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), api, github_token=TOKEN)
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="2", acknowledged="2", unacknowledged="0", verdict="pass")
    assert "merge queue: pull request #1 into 'main'" in run.stdout
    assert run.report()["base"]["sha"] == pr.base_sha
    assert api.reads() == ["/repos/acme/shop/pulls/1"]
    assert not api.writes()  # no PR comment from a queue run
    assert TOKEN not in run.everything()


def test_the_queued_prs_description_without_an_ack_fails_the_queue_run(pr: PR) -> None:
    ws = pr.checkout()
    with QueueAPI({1: "Slims orders (no acknowledgement)."}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), api, github_token=TOKEN)
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="2", verdict="fail")


def test_the_pr_body_input_still_wins(pr: PR) -> None:
    ws = pr.checkout()
    run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), None, pr_body=ACK)
    assert run.code == 0 and run.outputs["verdict"] == "pass", run.stdout


def _queue_entry_two(pr: PR) -> str:
    """PR 2 (drops customers.email) queued behind PR 1: its queue branch on origin."""
    up = GitRepo(pr.tmp / "upstream", init=False)
    up.git("checkout", "-q", "--detach", pr.merge_sha)
    up.write(CUSTOMERS_PATH, customers([CUSTOMERS_COLUMNS[0], ("country", "string")]))
    head = up.commit("Merge pull request #2")
    up.git("push", "-q", "origin", f"{head}:refs/heads/gh-readonly-queue/main/pr-2-{pr.merge_sha}")
    return head


BODIES = {1: f"{ACK}\n", 2: "accept-breaking-change: shop.customers\n"}


def test_two_prs_in_the_queue_each_entry_takes_its_own_prs_acks(pr: PR) -> None:
    head = _queue_entry_two(pr)
    ws = GitRepo.clone(pr.url, pr.tmp / "ws2", "--depth", "1", "--no-single-branch")
    ws.git("checkout", "-q", "--detach", head)
    with QueueAPI(BODIES) as api:
        # PR 2's entry: its parent is PR 1's entry, so only PR 2's change is judged
        run = queue_run(ws.path, group_payload(pr.merge_sha, head, 2), api, github_token=TOKEN)
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="1", acknowledged="1", verdict="pass")
    assert api.reads() == ["/repos/acme/shop/pulls/2"]


def test_a_group_spanning_two_prs_needs_every_ack_in_the_named_pr(pr: PR) -> None:
    """A batched group from main's tip: PR 1's breaks are not acknowledged by PR 2: fail."""
    head = _queue_entry_two(pr)
    ws = GitRepo.clone(pr.url, pr.tmp / "ws2")
    ws.git("checkout", "-q", "--detach", head)
    payload = group_payload(pr.base_sha, head, 2)
    with QueueAPI(BODIES) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="3", acknowledged="1", unacknowledged="2", verdict="fail")
    assert api.reads() == ["/repos/acme/shop/pulls/2"]  # never PR 1's description


def test_without_a_token_the_queue_run_fails_closed(pr: PR) -> None:
    ws = pr.checkout()
    with QueueAPI({1: ACK}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), api)
    assert run.code == 2, run.stdout + run.stderr
    assert run.outputs["verdict"] == "error"
    assert "needs the github-token input" in run.verdict_line
    assert "skipped" not in run.everything()
    assert api.requests == []


@pytest.mark.parametrize("status", [403, 404, 500])
def test_an_unreadable_pr_fails_the_queue_run_closed(pr: PR, status: int) -> None:
    ws = pr.checkout()
    with QueueAPI({1: ACK}, fail={"GET": status}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), api, github_token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert run.outputs["verdict"] == "error"
    assert "could not read the description of pull request #1" in run.verdict_line
    assert f"HTTP {status}" in run.verdict_line
    assert TOKEN not in run.everything()


@pytest.mark.parametrize(
    "ref",
    [
        f"refs/heads/gh-readonly-queue/main/pr-123abc-{SHA}",
        f"refs/heads/gh-readonly-queue/main/pr--1-{SHA}",
        f"refs/heads/gh-readonly-queue/main/pr-0-{SHA}",
        f"refs/heads/gh-readonly-queue/main/pr-1-{SHA}/../pr-2-{SHA}",
        f"refs/heads/gh-readonly-queue/../pr-1-{SHA}",
        f"refs/heads/gh-readonly-queue/main/pr-\uff11-{SHA}",  # a full-width digit
        f"refs/heads/gh-readonly-queue/main/pr-1-{SHA}\n",
        f"refs/heads/gh-readonly-queue/main/pr-1 -{SHA}",
        f"refs/heads/gh-readonly-queue/main/pr-99999999999-{SHA}",
        "refs/heads/gh-readonly-queue/main/pr-1",
        "refs/heads/main",
        "",
        None,
        17,
    ],
)
def test_malicious_queue_branch_names_are_refused(pr: PR, ref: Any) -> None:
    ws = pr.checkout()
    payload = group_payload(pr.base_sha, pr.merge_sha, head_ref=ref)
    if ref is None:
        del payload["merge_group"]["head_ref"]
    with QueueAPI({1: ACK, 2: ACK, 123: ACK}) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert "is not a merge queue branch" in run.verdict_line
    assert api.requests == []


def test_base_ref_must_match_the_queue_branch(pr: PR) -> None:
    ws = pr.checkout()
    payload = group_payload(pr.base_sha, pr.merge_sha)
    payload["merge_group"]["base_ref"] = "refs/heads/release"
    run = queue_run(ws.path, payload, None, github_token=TOKEN)
    assert run.code == 2 and "inconsistent queue event" in run.verdict_line, run.stdout


def test_the_workspace_must_hold_the_queue_head(pr: PR) -> None:
    ws = pr.checkout()
    ws.git("checkout", "-q", "--detach", pr.base_sha)  # not the group's head
    with QueueAPI({1: ACK}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, pr.merge_sha), api, github_token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert "merge group's head" in run.verdict_line


def test_a_payload_without_a_merge_group_fails_closed(pr: PR) -> None:
    ws = pr.checkout()
    run = queue_run(ws.path, {"action": "checks_requested"}, None, github_token=TOKEN)
    assert run.code == 2 and "no merge_group object" in run.verdict_line, run.stdout


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (f"refs/heads/gh-readonly-queue/main/pr-123-{SHA}", ("main", 123)),
        (f"refs/heads/gh-readonly-queue/release/1.x/pr-7-{SHA}", ("release/1.x", 7)),
        (f"refs/heads/gh-readonly-queue/main/pr-5-{'c' * 64}", ("main", 5)),
    ],
)
def test_queue_branch_names_parse(ref: str, expected: tuple[str, int]) -> None:
    assert parse_queue_ref(ref) == expected
    with pytest.raises(UsageError):
        parse_queue_ref(ref.replace("gh-readonly-queue", "gh-readonly-queues"))
