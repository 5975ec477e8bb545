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
#: The queue's branches, listed through the Git database API (merge_queue.other_members).
QUEUE_REFS = "/repos/acme/shop/git/matching-refs/heads/gh-readonly-queue/main/"


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

    def __init__(
        self,
        bodies: dict[int, str | None],
        heads: dict[int, str] | None = None,
        authors: dict[int, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bodies = bodies
        self.heads = heads or {}  # a PR's head sha (its reviews count only with one)
        self.authors = authors or {}

    def answer(self, method: str, url: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        for number, text in self.bodies.items():
            path = f"/repos/{self.repository}/pulls/{number}"
            failed = any(k == method or url.startswith(k) for k in self.fail)
            if method == "GET" and url == path and not failed:
                pull: dict[str, Any] = {"number": number, "body": text, "state": "open"}
                if number in self.heads:
                    pull["head"] = {"sha": self.heads[number], "ref": f"pr-{number}"}
                if number in self.authors:
                    pull["user"] = {"login": self.authors[number], "type": "User"}
                return 200, pull, {}
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
    assert api.reads() == ["/repos/acme/shop/pulls/1", QUEUE_REFS]  # batched PRs: none
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
    assert api.reads() == ["/repos/acme/shop/pulls/2", QUEUE_REFS]


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
    # never PR 1's description: no queue branch says PR 1 is in this group
    assert api.reads() == ["/repos/acme/shop/pulls/2", QUEUE_REFS]


# -- batched groups: several pull requests in one merge group -------------------------


def _batched(pr: PR, third: bool = False) -> tuple[GitRepo, dict[str, str], str]:
    """PR 1, PR 2 (and PR 3, additive) batched into one group from main's tip.

    Each entry has its queue branch on origin and in the fake API, at the
    commit it adds, as GitHub keeps them; the group's head is the last entry's.
    """
    head = _queue_entry_two(pr)
    refs = {
        f"refs/heads/gh-readonly-queue/main/pr-1-{pr.base_sha}": pr.merge_sha,
        f"refs/heads/gh-readonly-queue/main/pr-2-{pr.merge_sha}": head,
        # another base branch's queue, and a branch outside the group: never read
        f"refs/heads/gh-readonly-queue/release/pr-7-{pr.base_sha}": pr.merge_sha,
        f"refs/heads/gh-readonly-queue/main/pr-8-{pr.fork_point}": pr.fork_point,
    }
    if third:
        up = GitRepo(pr.tmp / "upstream", init=False)
        up.git("checkout", "-q", "--detach", head)
        up.write("notes.txt", "PR 3 only touches notes\n")
        parent, head = head, up.commit("Merge pull request #3")
        ref = f"refs/heads/gh-readonly-queue/main/pr-3-{parent}"
        up.git("push", "-q", "origin", f"{head}:{ref}")
        refs[ref] = head
    ws = GitRepo.clone(pr.url, pr.tmp / "ws-batch")
    ws.git("checkout", "-q", "--detach", head)
    return ws, refs, head


def test_a_batched_group_of_two_takes_each_prs_acks(pr: PR) -> None:
    ws, refs, head = _batched(pr)
    payload = group_payload(pr.merge_sha, head, 2)
    payload["merge_group"]["base_sha"] = pr.base_sha  # the group starts at main's tip
    with QueueAPI(BODIES, refs=refs) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="3", acknowledged="3", unacknowledged="0", verdict="pass")
    assert api.reads() == ["/repos/acme/shop/pulls/2", QUEUE_REFS, "/repos/acme/shop/pulls/1"]
    assert "the group also holds pull request #1 (from the queue's branches)" in run.stdout


def test_a_batched_group_of_three_reads_every_description(pr: PR) -> None:
    ws, refs, head = _batched(pr, third=True)
    payload = group_payload(pr.base_sha, head, 3)
    with QueueAPI({**BODIES, 3: "Notes only."}, refs=refs) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
        assert run.code == 0, run.stdout + run.stderr
        assert_outputs(run, breaking="3", acknowledged="3", verdict="pass")
        assert sorted(api.reads()) == sorted(
            [QUEUE_REFS, *(f"/repos/acme/shop/pulls/{n}" for n in (1, 2, 3))]
        )
        # PR 2 without its acknowledgement: PR 1's does not cover customers
        api.bodies[2] = "Drops customers.email (no acknowledgement)."
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="3", acknowledged="2", unacknowledged="1", verdict="fail")


@pytest.mark.parametrize("unreadable", [1, 2, 3], ids=["first PR", "second PR", "named PR"])
def test_a_batched_group_with_an_unreadable_pr_fails_closed(pr: PR, unreadable: int) -> None:
    ws, refs, head = _batched(pr, third=True)
    payload = group_payload(pr.base_sha, head, 3)
    failing = {f"/repos/acme/shop/pulls/{unreadable}": 404}
    with QueueAPI({**BODIES, 3: "Notes only."}, refs=refs, fail=failing) as api:
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert run.outputs["verdict"] == "error"
    assert f"could not read the description of pull request #{unreadable}" in run.verdict_line


def test_an_unlisted_queue_fails_closed(pr: PR) -> None:
    ws, refs, head = _batched(pr)
    with QueueAPI(BODIES, refs=refs, fail={QUEUE_REFS: 403}) as api:
        run = queue_run(ws.path, group_payload(pr.base_sha, head, 2), api, github_token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert "could not list the queue's branches" in run.verdict_line


def test_a_batched_groups_approvals_come_from_its_prs_and_no_author_approves(
    tmp_path: Path,
) -> None:
    """The owners' policy of tests/action/test_action_approvals.py, in a group of two."""
    from tests.action.test_action import orders
    from tests.action.test_action_approvals import POLICY

    files = {ORDERS_PATH: orders(), CUSTOMERS_PATH: customers(), ".schema-gate.yml": POLICY}
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, base_files=files)
    ws, refs, head = _batched(pr)
    payload = group_payload(pr.base_sha, head, 2)
    heads = {1: pr.head_sha, 2: head}

    def queue(authors: dict[int, str]) -> Any:
        with QueueAPI(BODIES, heads=heads, authors=authors, refs=refs) as api:
            api.add_review("carol", "APPROVED", pr.head_sha)  # on PR 1 (the fake's PR)
            return queue_run(ws.path, payload, api, github_token=TOKEN)

    run = queue({1: "dev", 2: "erin"})
    assert run.code == 0, run.stdout + run.stderr  # the description lines alone would not do
    assert_outputs(run, breaking="3", acknowledged="3", verdict="pass")
    changes = [c for c in run.report()["changes"] if c["breaking"]]
    assert all(c["approvals"]["received"] == ["@carol"] for c in changes)
    assert "#2: reviews could not be read" in changes[0]["approvals"]["note"]
    # carol wrote PR 2 of the group: her approval on PR 1 counts for nothing
    run = queue({1: "dev", 2: "carol"})
    assert run.code == 1, run.stdout + run.stderr


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


def test_a_batched_group_keeps_a_break_unapproved_when_a_change_request_went_unchecked(
    tmp_path: Path,
) -> None:
    """As for one pull request (tests/action/test_action_approvals.py): on PR 1, 100
    strangers' change requests spend the team lookups before erin's (a member); carol's
    approval does not clear the group's breaks, and the reason names the PR."""
    from tests.action.test_action import orders
    from tests.action.test_action_approvals import POLICY

    files = {ORDERS_PATH: orders(), CUSTOMERS_PATH: customers(), ".schema-gate.yml": POLICY}
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, base_files=files)
    ws, refs, head = _batched(pr)
    payload = group_payload(pr.base_sha, head, 2)
    heads = {1: pr.head_sha, 2: head}
    authors = {1: "dev", 2: "frank"}
    with QueueAPI(
        BODIES, heads=heads, authors=authors, refs=refs, teams={"acme/data": {"erin"}}
    ) as api:
        for i in range(100):
            api.add_review(f"a{i:03d}", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("erin", "CHANGES_REQUESTED", pr.head_sha)
        api.add_review("carol", "APPROVED", pr.head_sha)
        run = queue_run(ws.path, payload, api, github_token=TOKEN)
    assert run.code == 1, run.stdout + run.stderr
    changes = [c for c in run.report()["changes"] if c["breaking"]]
    assert changes and all(
        any(
            (m["error"] or "").startswith("#1: team @acme/data: more than 100")
            and "@erin" in m["error"]
            for m in c["approvals"]["missing"]
        )
        for c in changes
    )
