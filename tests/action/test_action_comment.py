"""The sticky PR comment, end to end: ``python -m gate.action`` against a fake GitHub API.

The fake (tests/fake_github.py) is a real HTTP server on 127.0.0.1 that keeps
the pull request's comments between runs, so a test can run the action several
times and look at what a reviewer would see: one comment, created when there
is something to report, updated in place, turned "clean" when the PR is fixed,
never created for a PR that was always clean. Failures (a fork's read-only
token, a 5xx) must leave the verdict alone.

The scenarios follow what bufbuild/buf-action and oasdiff/oasdiff-action do
(read, not copied): a marker per workflow and job, update in place, fall back
to the job summary on forks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from tests.action.test_action import (
    ACK,
    BREAKING_ORDERS,
    ORDERS_COLUMNS,
    ORDERS_PATH,
    PR,
    TOKEN,
    Run,
    make_pr,
    orders,
    pr_payload,
    run_action,
)
from tests.fake_github import FakeGitHub

MARKER = "<!-- schema-contract-gate: schema contract gate/schema-gate -->"
RUN_URL = "https://github.com/acme/shop/actions/runs/4242"
ADDITIVE_ORDERS = orders([*ORDERS_COLUMNS, ("channel", "string")])


def comment_env(api: FakeGitHub, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_API_URL": api.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKFLOW": "schema contract gate",
        "GITHUB_JOB": "schema-gate",
        "GITHUB_RUN_ID": "4242",
        "SCHEMA_GATE_API_TIMEOUT": "5",
        **extra,
    }


def run_with(
    api: FakeGitHub, pr: PR, name: str = "ws", payload: dict[str, Any] | None = None, **inputs: str
) -> Run:
    ws = pr.checkout(name)
    inputs.setdefault("github-token", TOKEN)
    env = comment_env(api)
    return run_action(ws.path, "pull_request", payload or pr_payload(pr), env=env, **inputs)


@pytest.fixture
def breaking(tmp_path: Path) -> PR:
    return make_pr(tmp_path / "breaking", {ORDERS_PATH: BREAKING_ORDERS})


@pytest.fixture
def additive(tmp_path: Path) -> PR:
    return make_pr(tmp_path / "additive", {ORDERS_PATH: ADDITIVE_ORDERS})


def test_a_breaking_pr_gets_one_comment_with_the_report(breaking: PR) -> None:
    with FakeGitHub() as api:
        run = run_with(api, breaking)
    assert run.code == 1, run.stdout + run.stderr
    [post] = api.writes()
    assert post.method == "POST" and post.path == "/repos/acme/shop/issues/1/comments"
    assert post.headers["Authorization"] == f"Bearer {TOKEN}"
    [comment] = api.comments
    body = comment["body"]
    assert body.startswith(MARKER + "\n")
    assert "## Schema contract gate: ❌ failed" in body
    assert "`type_narrowed`" in body and "`column_removed`" in body
    assert "\naccept-breaking-change: " in body  # how to acknowledge
    assert f"]({RUN_URL})" in body and breaking.head_sha[:12] in body
    assert run.outputs["comment-url"] == comment["html_url"]
    assert f"PR comment {comment['id']} created" in run.stdout
    assert TOKEN not in run.everything() and TOKEN not in body


def test_every_run_updates_the_same_comment_in_place(breaking: PR) -> None:
    with FakeGitHub() as api:
        first = run_with(api, breaking, "ws1")
        [created] = api.comments
        # the author acknowledges the break and re-runs: still news, same comment
        api.pull_body = ACK
        second = run_with(api, breaking, "ws2", pr_payload(breaking, body=ACK))
    assert (first.code, second.code) == (1, 0)
    assert [r.method for r in api.writes()] == ["POST", "PATCH"]
    assert api.writes()[1].path == f"/repos/acme/shop/issues/comments/{created['id']}"
    [comment] = api.comments
    assert "✅ ACKED" in comment["body"] and "## Schema contract gate: ✅ passed" in comment["body"]
    assert second.outputs["comment-url"] == created["html_url"]


def test_a_pr_that_becomes_clean_says_so_in_its_comment(breaking: PR, additive: PR) -> None:
    with FakeGitHub() as api:
        run_with(api, breaking)
        # the author drops the breaking part: the same PR now only adds a column
        clean = run_with(api, additive)
    assert clean.code == 0, clean.stdout + clean.stderr
    [comment] = api.comments
    assert [r.method for r in api.writes()] == ["POST", "PATCH"]
    assert comment["body"].startswith(MARKER)
    assert "No breaking changes any more" in comment["body"]
    assert "`type_narrowed`" not in comment["body"]
    assert "Additive changes (1)" in comment["body"]


def test_an_always_clean_pr_never_gets_a_comment(additive: PR) -> None:
    with FakeGitHub() as api:
        for name in ("ws1", "ws2"):
            run = run_with(api, additive, name)
            assert run.code == 0, run.stdout + run.stderr
            assert run.outputs["comment-url"] == ""
    assert api.writes() == [] and api.comments == []
    # it did look for an earlier comment to update, each time
    assert [r.path for r in api.requests if "/comments" in r.path] == [
        "/repos/acme/shop/issues/1/comments?per_page=100"
    ] * 2
    assert "no PR comment: nothing to report" in run.stdout


def test_a_fork_with_a_read_only_token_falls_back_to_the_summary(breaking: PR) -> None:
    with FakeGitHub(fail={"POST": 403, "PATCH": 403}) as api:
        run = run_with(api, breaking, payload=pr_payload(breaking, fork=True))
    assert run.code == 1, run.stdout + run.stderr  # the verdict is the gate's
    assert run.outputs["verdict"] == "fail" and run.outputs["comment-url"] == ""
    assert api.comments == []
    [notice] = [n for n in run.annotations("notice") if "comment" in n.split("::")[1]]
    assert "could not create the PR comment (HTTP 403" in notice
    assert "PR comment not posted" in run.summary and "from a fork" in run.summary
    assert "`type_narrowed`" in run.summary  # the summary is the report
    assert run.verdict_line.startswith("::error title=schema-contract-gate::")


@pytest.mark.parametrize("fail", [{"GET": 503}, {"POST": 502}, {"POST": 500}])
def test_server_errors_warn_and_never_change_the_verdict(
    breaking: PR, fail: dict[str, int]
) -> None:
    with FakeGitHub(fail=fail) as api:
        failing = run_with(api, breaking, "ws1")
        passing = run_with(api, breaking, "ws2", pr_payload(breaking, body=ACK), **{"pr-body": ACK})
    assert (failing.code, passing.code) == (1, 0)
    for run in (failing, passing):
        [warning] = [
            w for w in run.annotations("warning") if "title=schema-contract-gate comment" in w
        ]
        assert f"HTTP {next(iter(fail.values()))}" in warning
        assert "PR comment not updated" in run.summary
        assert "Traceback" not in run.stdout + run.stderr


def test_an_existing_comment_is_found_on_a_later_page(breaking: PR) -> None:
    with FakeGitHub() as api:
        for i in range(120):
            api.add_comment(f"review comment {i}")
        # someone plants the marker in their own comment: it must not be adopted
        forged = api.add_comment(MARKER + "\nlooks official", login="mallory")
        for i in range(100):
            api.add_comment(f"later comment {i}")
        ours = api.add_comment(MARKER + "\nan earlier run", "github-actions[bot]", "Bot")
        for i in range(30):
            api.add_comment(f"latest comment {i}")
        run = run_with(api, breaking)
    assert run.code == 1, run.stdout + run.stderr
    pages = [r.path for r in api.requests if r.method == "GET" and "/comments" in r.path]
    assert len(pages) == 3  # 252 comments, 100 a page, followed through Link rel="next"
    assert pages[1].endswith("page=2") and pages[2].endswith("page=3")
    [patch] = api.writes()
    assert patch.method == "PATCH" and patch.path.endswith(f"/comments/{ours['id']}")
    assert forged["body"] == MARKER + "\nlooks official"
    assert "`type_narrowed`" in ours["body"]


def test_a_next_link_off_the_api_is_not_followed(breaking: PR) -> None:
    """The token goes with every page request, so a page may only point back at the API."""
    with FakeGitHub(page_size=1) as api:
        api.add_comment("first")
        api.add_comment("second")
        real_page = api._page

        def evil_page(query: str) -> tuple[int, Any, dict[str, str]]:
            status, items, headers = real_page(query)
            if "Link" in headers:
                headers["Link"] = '<http://127.0.0.2:9/steal?page=2>; rel="next"'
            return status, items, headers

        api._page = evil_page  # type: ignore[method-assign]
        run = run_with(api, breaking)
    assert run.code == 1
    assert len([r for r in api.requests if "/comments" in r.path and r.method == "GET"]) == 1
    assert [r.method for r in api.writes()] == ["POST"]  # nothing found on page 1: a new one


def test_comment_false_and_no_token_mean_no_comment(breaking: PR) -> None:
    with FakeGitHub() as api:
        off = run_with(api, breaking, "ws1", comment="false")
        no_token = run_with(api, breaking, "ws2", **{"github-token": ""})
    assert (off.code, no_token.code) == (1, 1)
    assert [r for r in api.requests if "/comments" in r.path] == []
    assert "PR comment: off (comment: false)" in off.stdout
    assert "none without a github-token" in no_token.stdout


def test_a_contract_the_pr_broke_is_reported_in_the_comment(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: "dataset: lake/shop/orders\ncolumns: [\n"})
    with FakeGitHub() as api:
        run = run_with(api, pr)
    assert run.code == 2, run.stdout + run.stderr
    [comment] = api.comments
    assert comment["body"].startswith(MARKER)
    assert "could not run" in comment["body"] and ORDERS_PATH in comment["body"]
    assert run.outputs["comment-url"] == comment["html_url"]


def test_every_refused_contract_is_listed_in_the_comment_as_inert_text(tmp_path: Path) -> None:
    evil = "<img src=x onerror=alert(1)></details>|@octocat"
    files = {
        ORDERS_PATH: "dataset: lake/shop/orders\ncolumns: [\n",
        f"soda/contracts/shop/{evil}.yaml": "dataset: lake/shop/evil\ncolumns: [\n",
        "soda/contracts/shop/payments.yaml": (
            # a column name carries the text: an unknown key is only a warning now
            f'dataset: lake/shop/payments\ncolumns:\n  - name: "{evil}"\n    data_type: 1\n'
        ),
    }
    pr = make_pr(tmp_path, files)
    with FakeGitHub() as api:
        run = run_with(api, pr)
    assert run.code == 2, run.stdout + run.stderr
    [comment] = api.comments
    body = comment["body"]
    assert "refused 3 contract files; nothing was compared" in body
    html = MarkdownIt("commonmark").enable("table").render(body.split("\n", 1)[1])
    cells = re.findall(r"<td><code>(.*?)</code></td>", html)
    assert len(cells) == 6  # where and what, for each of the three files
    assert cells[2].startswith(f"{ORDERS_PATH}:3")
    assert all("&lt;img src=x onerror=alert(1)&gt;" in cells[i] for i in (0, 5))
    assert "<img" not in html and html.count("<details>") == html.count("</details>")
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "onerror" not in outside_code and "octocat" not in outside_code


def test_pr_controlled_names_cannot_inject_markup_into_the_comment(tmp_path: Path) -> None:
    evil = "x<img src=x onerror=alert(1)></details>-->"
    pr = make_pr(tmp_path, {ORDERS_PATH: orders([("order_id", "int"), (evil, "string")])})
    with FakeGitHub() as api:
        ws = pr.checkout()
        env = comment_env(api, GITHUB_WORKFLOW="gate --> <img src=x>", GITHUB_JOB="j`[x](y)")
        run = run_action(
            ws.path, "pull_request", pr_payload(pr), env=env, **{"github-token": TOKEN}
        )
    assert run.code == 1, run.stdout + run.stderr
    [comment] = api.comments
    body = comment["body"]
    first = body.split("\n", 1)[0]
    assert first == "<!-- schema-contract-gate: gate -__ _img src_x_/j__x_(y) -->"
    # Names reach the body only as inert code spans: rendered as GitHub does
    # (CommonMark + tables), no tag of theirs survives and nothing leaves <code>.
    html = MarkdownIt("commonmark").enable("table").render(body.split("\n", 1)[1])
    assert "<img" not in html
    assert html.count("<details>") == html.count("</details>")
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "onerror" not in outside_code and "img src" not in outside_code
    # the same run finds its own comment again by that marker
    with FakeGitHub(comments=list(api.comments)) as again:
        rerun = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr),
            env=comment_env(again, GITHUB_WORKFLOW="gate --> <img src=x>", GITHUB_JOB="j`[x](y)"),
            **{"github-token": TOKEN},
        )
    assert rerun.code == 1
    assert [r.method for r in again.writes()] == ["PATCH"]
