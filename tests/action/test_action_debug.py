"""``RUNNER_DEBUG=1`` (GitHub's "Re-run with debug logging"): stage timings, files read,
git commands and API requests as ``::debug::`` lines, and nothing of it otherwise.

Runs ``python -m gate.action`` on a shallow checkout (so the action fetches)
against the fake GitHub API on 127.0.0.1, and reads the log the way the runner
does (``runner_commands`` honours ``::stop-commands::``).
"""

from __future__ import annotations

from pathlib import Path

from tests.action.test_action import (
    BREAKING_ORDERS,
    ORDERS_PATH,
    TOKEN,
    C,
    contract,
    make_pr,
    pr_payload,
    run_action,
)
from tests.action.test_action_comment import comment_env
from tests.fake_github import FakeGitHub

EVIL_PATH = f"{C}/shop/evil\n::error title=forged::x.yaml"  # git allows a newline in a path


def test_runner_debug_shows_stages_files_git_and_api(tmp_path: Path) -> None:
    pr = make_pr(
        tmp_path,
        {ORDERS_PATH: BREAKING_ORDERS, EVIL_PATH: contract("lake/shop/evil", [("id", "int")])},
        feature_commits=2,
    )
    ws = pr.checkout(depth=1)
    with FakeGitHub() as api:
        run = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr),
            env=comment_env(api, RUNNER_DEBUG="1"),
            **{"github-token": TOKEN},
        )
    assert run.code == 1, run.stdout + run.stderr
    debug = [c[len("::debug::") :] for c in run.commands if c.startswith("::debug::")]
    text = "\n".join(debug)
    for name in (
        "inputs and event payload",
        "PR description",
        "git: base commit and merge-base",
        "gate run",
        "JSON report",
        "PR comment",
    ):
        assert f"stage {name}: " in text, name
    assert any(line.startswith("total: ") and "exit code 1" in line for line in debug)
    # files read, with the side and size
    assert f"read {ORDERS_PATH} (base, " in text and f"read {ORDERS_PATH} (head, " in text
    assert "Repo.changed: 2 changed contract file(s)" in text
    assert "config: none (defaults)" in text
    # the consumer search (git grep) and the analysis of what it found
    assert "PendingSearch.result: git grep: " in text
    assert "scan_consumers: consumers: " in text
    # git commands, the action's (the fetch of the base) and the gate's (the diff)
    assert "git command: fetch --no-tags" in text and pr.base_sha in text
    assert "git command: diff --raw" in text
    # API requests, never the token
    assert "GET http://127.0.0.1:" in text and "/repos/acme/shop/pulls/1: HTTP 200" in text
    assert "POST http://127.0.0.1:" in text
    assert TOKEN not in run.everything()
    assert "cannot trace" not in text  # every step the debug output promises was found
    # a path with a newline stays one escaped debug line, never a live command
    assert "evil%0A::error title=forged::x.yaml" in text
    assert not [c for c in run.commands if c.startswith("::error title=forged")]


def test_without_runner_debug_there_is_no_debug_output(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    run = run_action(pr.checkout().path, "pull_request", pr_payload(pr), env={"RUNNER_DEBUG": "0"})
    assert run.code == 1
    assert "::debug::" not in run.stdout + run.stderr
    assert "git command" not in run.stdout and "stage " not in run.stdout
