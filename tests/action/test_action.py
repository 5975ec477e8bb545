"""The GitHub Action end to end, short of Docker: the action's ``main()`` in-process.

Each test builds what a runner would hand the container: a real "upstream"
repository pushed to a real bare ``origin`` (with ``refs/pull/1/head`` and
``refs/pull/1/merge`` as GitHub keeps them), a workspace checked out the way
``actions/checkout`` does it (full or ``--depth=1``), a realistic event payload
file, ``INPUT_*`` variables with action.yml's defaults, ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY`` files. The live PR-body fetch talks to a real HTTP
server on 127.0.0.1. Then it reads what the runner would read: the outputs
file, the summary, the workflow commands (honouring ``::stop-commands::``) and
the exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, gate_env, run_gate
from tests.gitrepo import GitRepo, git_env

C = "soda/contracts"
ORDERS_PATH = f"{C}/shop/orders.yaml"
CUSTOMERS_PATH = f"{C}/shop/customers.yaml"
TOKEN = "ghs_" + "T0kEn" + secrets.token_hex(12)  # never to be seen in any output
ACK = "accept-breaking-change: shop.orders"


def contract(dataset: str, columns: list[tuple[str, str]]) -> str:
    lines = [f"dataset: {dataset}", "columns:"]
    for name, data_type in columns:
        lines += [f"  - name: {name}", f"    data_type: {data_type}"]
    return "\n".join(lines) + "\n"


ORDERS_COLUMNS = [
    ("order_id", "bigint"),
    ("customer_id", "bigint"),
    ("amount", "decimal(12, 2)"),
    ("note", "string"),
    ("status", "string"),
]
CUSTOMERS_COLUMNS = [("customer_id", "bigint"), ("email", "string")]


def orders(columns: list[tuple[str, str]] | None = None) -> str:
    return contract("lake/shop/orders", ORDERS_COLUMNS if columns is None else columns)


#: The PR: drops `note`, narrows `customer_id`, adds `channel` (2 breaking, 1 additive).
BREAKING_ORDERS = orders(
    [
        ("order_id", "bigint"),
        ("customer_id", "int"),
        ("amount", "decimal(12, 2)"),
        ("status", "string"),
        ("channel", "string"),
    ]
)


# the repositories


@dataclass
class PR:
    """An upstream repository pushed to a bare origin, with one pull request open."""

    tmp: Path
    origin: Path
    fork_point: str
    base_sha: str  # the tip of main when the event fired
    head_sha: str  # the PR branch tip
    merge_sha: str  # refs/pull/1/merge: what actions/checkout checks out
    number: int = 1

    @property
    def url(self) -> str:
        return self.origin.as_uri()

    def checkout(self, name: str = "ws", depth: int | None = None) -> GitRepo:
        """The workspace as actions/checkout leaves it (detached at the merge commit)."""
        ws = GitRepo(self.tmp / name)
        ws.git("remote", "add", "origin", self.url)
        if depth is None:
            ws.git(
                "fetch",
                "-q",
                "--prune",
                "origin",
                "+refs/heads/*:refs/remotes/origin/*",
                "+refs/tags/*:refs/tags/*",
            )
            ws.git("fetch", "-q", "origin", f"+{self.merge_sha}:refs/remotes/pull/1/merge")
        else:
            ws.git(
                "fetch",
                "-q",
                "--no-tags",
                f"--depth={depth}",
                "origin",
                f"+{self.merge_sha}:refs/remotes/pull/1/merge",
            )
        ws.git("checkout", "-q", "--force", "refs/remotes/pull/1/merge")
        assert ws.head() == self.merge_sha
        return ws


def make_pr(
    tmp: Path,
    head_files: dict[str, str],
    *,
    base_files: dict[str, str] | None = None,
    feature_commits: int = 1,
    main_commits: int = 1,
) -> PR:
    """main with the base contracts; a feature branch changing them; main moving on."""
    up = GitRepo(tmp / "upstream")
    for i in range(3):  # some history before the contracts, so a clone can stay shallow
        up.write("history.txt", f"{i}\n")
        up.commit(f"history {i}")
    for path, text in (base_files or {ORDERS_PATH: orders(), CUSTOMERS_PATH: customers()}).items():
        up.write(path, text)
    up.write("README.md", "shop\n")
    fork_point = up.commit("contracts")
    up.branch("feature")
    for path, text in head_files.items():
        if text is None:
            up.remove(path)
        else:
            up.write(path, text)
    up.commit("the change under review")
    for i in range(1, feature_commits):
        up.write("notes.txt", f"feature {i}\n")
        up.commit(f"feature {i}")
    head = up.head()
    up.checkout("main")
    # main moves on after the branch point: a tip comparison would report this
    # new column as removed by the pull request
    up.write(CUSTOMERS_PATH, customers([*CUSTOMERS_COLUMNS, ("country", "string")]))
    up.commit("customers get a country")
    for i in range(1, main_commits):
        up.write("main.txt", f"main {i}\n")
        up.commit(f"main {i}")
    base = up.head()
    up.branch("merge-preview")
    up.git("merge", "-q", "--no-ff", "-m", "Merge pull request #1", "feature")
    merge = up.head()
    origin = tmp / "origin.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(origin)],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    up.git("remote", "add", "origin", origin.as_uri())
    up.git(
        "push",
        "-q",
        "origin",
        "main:refs/heads/main",
        "feature:refs/heads/feature",
        "feature:refs/pull/1/head",
        "merge-preview:refs/pull/1/merge",
    )
    return PR(tmp, origin, fork_point, base, head, merge)


def customers(columns: list[tuple[str, str]] | None = None) -> str:
    return contract("lake/shop/customers", CUSTOMERS_COLUMNS if columns is None else columns)


@pytest.fixture
def pr(tmp_path: Path) -> PR:
    return make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})


# the event payloads, shaped like GitHub's


def pr_payload(
    pr: PR, action: str = "opened", body: str | None = "Drops the note column.", fork: bool = False
) -> dict[str, Any]:
    base_repo = {
        "id": 1,
        "name": "shop",
        "full_name": "acme/shop",
        "private": False,
        "fork": False,
        "owner": {"login": "acme", "type": "Organization"},
        "default_branch": "main",
    }
    head_repo = (
        {**base_repo, "id": 2, "full_name": "contrib/shop", "fork": True, "owner": {"login": "c"}}
        if fork
        else base_repo
    )
    pull = {
        "url": "https://api.github.com/repos/acme/shop/pulls/1",
        "id": 1001,
        "number": pr.number,
        "state": "open",
        "title": "Slim down orders",
        "user": {"login": "contrib" if fork else "dev", "type": "User"},
        "body": body,
        "draft": False,
        "head": {
            "label": ("contrib" if fork else "acme") + ":feature",
            "ref": "feature",
            "sha": pr.head_sha,
            "repo": head_repo,
        },
        "base": {"label": "acme:main", "ref": "main", "sha": pr.base_sha, "repo": base_repo},
        "merge_commit_sha": pr.merge_sha,
    }
    payload: dict[str, Any] = {
        "action": action,
        "number": pr.number,
        "pull_request": pull,
        "repository": base_repo,
        "sender": {"login": pull["user"]["login"]},
    }
    if action == "edited":
        payload["changes"] = {"body": {"from": "the old description"}}
    if action == "synchronize":
        payload["before"] = pr.fork_point
        payload["after"] = pr.head_sha
    return payload


def push_payload(before: str, after: str) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": before,
        "after": after,
        "repository": {"full_name": "acme/shop", "default_branch": "main"},
        "pusher": {"name": "dev"},
        "commits": [],
    }


# running the action


def action_spec() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def input_env(**given: str) -> dict[str, str]:
    """INPUT_* as the runner sets them for a docker action: every input, defaults filled in."""
    env = {}
    for name, spec in action_spec()["inputs"].items():
        default = str(spec.get("default", ""))
        env[f"INPUT_{name.upper()}"] = "" if "${{" in default else default
    for key, value in given.items():
        env[f"INPUT_{key.replace('_', '-').upper()}"] = value
    return env


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT: ``name=value`` lines and ``name<<DELIM`` heredocs."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for item in lines:
                if item == delimiter:
                    break
                value.append(item)
            out[name] = "\n".join(value)
        elif line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def runner_commands(stdout: str) -> list[str]:
    """The lines the runner would act on, honouring ``::stop-commands::TOKEN`` / ``::TOKEN::``."""
    commands: list[str] = []
    stopped: str | None = None
    for raw in stdout.splitlines():
        line = raw.lstrip()
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if line.startswith("::stop-commands::"):
            stopped = line[len("::stop-commands::") :]
            continue
        if line.startswith("::"):
            commands.append(line)
    return commands


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    seconds: float
    commands: list[str] = field(default_factory=list)

    def annotations(self, level: str) -> list[str]:
        return [c for c in self.commands if c.startswith((f"::{level} ", f"::{level}::"))]

    @property
    def verdict_line(self) -> str:
        return self.commands[-1]

    def report(self) -> dict[str, Any]:
        assert self.outputs["report"] == ".schema-gate/report.json"
        return json.loads((self.workspace / self.outputs["report"]).read_text())

    def everything(self) -> str:
        report = self.workspace / ".schema-gate" / "report.json"
        return "\n".join(
            [
                self.stdout,
                self.stderr,
                json.dumps(self.outputs),
                self.summary,
                report.read_text() if report.exists() else "",
            ]
        )


def run_action_process(workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m gate.action`` as the container runs it: a real process."""
    return subprocess.run(
        [sys.executable, "-m", "gate.action"],
        cwd=workspace,  # docker actions start in GITHUB_WORKSPACE
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # only stops a hang: 120 s expired on a CI machine at load 26
    )


def run_action_main(workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The action's ``main()`` in this process, in ``workspace``, with ``env`` as its environment.

    Same answer as :func:`run_action_process` (exit code, stdout, stderr) without an
    interpreter start and the imports per run; see tests/conftest.py's ``run_main``.
    """
    from gate.action.run import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(workspace)  # docker actions start in GITHUB_WORKSPACE
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["gate.action"], code, out.getvalue(), err.getvalue())


def run_action(
    workspace: Path,
    event: str,
    payload: dict[str, Any] | None,
    *,
    env: dict[str, str] | None = None,
    process: bool = False,
    **inputs: str,
) -> Run:
    """The action on ``workspace`` as the runner starts it; ``process=True`` for a real process."""
    tmp = workspace.parent / f"runner-{secrets.token_hex(4)}"
    tmp.mkdir()
    full = gate_env(
        GITHUB_ACTIONS="true",
        CI="true",
        GITHUB_EVENT_NAME=event,
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(tmp / "output"),
        GITHUB_STEP_SUMMARY=str(tmp / "summary"),
        GITHUB_REPOSITORY="acme/shop",
        GITHUB_API_URL="http://127.0.0.1:9",  # nothing listens: tests that fetch set their own
        NO_PROXY="127.0.0.1,localhost",
    )
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        full.pop(proxy, None)
    if payload is not None:
        (tmp / "event.json").write_text(json.dumps(payload))
        full["GITHUB_EVENT_PATH"] = str(tmp / "event.json")
    full.update(input_env(**inputs))
    full.update(env or {})
    start = time.monotonic()
    if process or full.get("RUNNER_DEBUG", "").strip() == "1":
        # RUNNER_DEBUG wraps the gate's functions and adds an audit hook for the
        # rest of the process (gate/action/debug.py): only a real process is clean
        proc = run_action_process(workspace, full)
    else:
        proc = run_action_main(workspace, full)
    seconds = time.monotonic() - start
    output = tmp / "output"
    summary = tmp / "summary"
    return Run(
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=parse_outputs(output.read_text()) if output.exists() else {},
        summary=summary.read_text() if summary.exists() else "",
        workspace=workspace,
        seconds=seconds,
        commands=runner_commands(proc.stdout),
    )


def assert_outputs(run: Run, **expected: str) -> None:
    assert set(run.outputs) == {
        "breaking",
        "unacknowledged",
        "acknowledged",
        "report",
        "verdict",
        "comment-url",
    }
    for key, value in expected.items():
        assert run.outputs[key] == value, (key, run.outputs, run.stdout, run.stderr)


# pull_request events


def test_opened_pr_with_breaking_changes_fails_with_annotations_and_summary(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr))
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="2", acknowledged="0", verdict="fail")
    report = run.report()
    assert report["exit_code"] == 1 and report["verdict"] == "fail"
    # HEAD is the merge commit, so the merge-base is the base tip; main's new
    # customers.country is not "removed" by the PR
    assert report["base"]["sha"] == pr.base_sha
    assert report["base"]["ref"] == "main"  # the payload's branch name, for people
    assert sorted((c["rule"], c["column"]) for c in report["changes"]) == [
        ("column_added", "channel"),
        ("column_removed", "note"),
        ("type_narrowed", "customer_id"),
    ]
    # annotations land on the contract lines
    errors = run.annotations("error")
    narrowed = [e for e in errors if "title=type_narrowed" in e]
    assert narrowed == [
        f"::error file={ORDERS_PATH},line=5,title=type_narrowed::"
        + next(c["message"] for c in report["changes"] if c["rule"] == "type_narrowed")
    ]
    assert any(
        e.startswith(f"::error file={ORDERS_PATH},") and "column_removed" in e for e in errors
    )
    assert any(
        n.startswith(f"::notice file={ORDERS_PATH},line=") and "column_added" in n
        for n in run.annotations("notice")
    )
    assert run.verdict_line.startswith("::error title=schema-contract-gate::FAIL: 2 unacknowledged")
    # the job summary: a table, additive folded, how to acknowledge
    summary = run.summary
    assert summary.startswith("## Schema contract gate: ❌ failed")
    assert f"Compared `main` (merge-base `{pr.base_sha[:12]}`) with HEAD" in summary
    assert "| ❌ | `type_narrowed` | `lake/shop/orders` | `customer_id` | `BIGINT` → `INT` |" in (
        summary
    )
    assert "<details><summary>Additive changes (1)</summary>" in summary
    assert "### How to acknowledge" in summary and "accept-breaking-change: lake/shop/orders" in (
        summary
    )
    # the plain report is in the log too, but inert (inside stop-commands)
    assert "type_narrowed lake/shop/orders.customer_id: BIGINT -> INT" in run.stdout
    assert "no github-token" in summary  # why a re-run would not see edits


def test_acknowledgement_in_the_payload_body_passes(pr: PR) -> None:
    ws = pr.checkout()
    body = f"Retiring the note column.\r\n\r\n- {ACK}\r\n"  # GitHub bodies use CRLF
    run = run_action(ws.path, "pull_request", pr_payload(pr, body=body))
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="0", acknowledged="2", verdict="pass")
    assert "✅ ACKED" in run.summary and "## Schema contract gate: ✅ passed" in run.summary
    assert not run.annotations("error")
    acked = [w for w in run.annotations("warning") if "(ACKED)" in w]
    assert len(acked) == 2
    assert run.verdict_line.startswith("::notice title=schema-contract-gate::PASS: 2 breaking")


def test_edited_event_uses_the_edited_body(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr, "edited", body=ACK))
    assert run.code == 0 and run.outputs["verdict"] == "pass", run.stdout


def test_synchronize_with_an_empty_body_and_config_inputs(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(
        ws.path,
        "pull_request",
        pr_payload(pr, "synchronize", body=None),
        contracts=f"{C}/**/*.yaml\n!{CUSTOMERS_PATH}",
        dialect="spark",
        **{"fail-on": "warning"},
    )
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="2", verdict="fail")
    assert run.report()["fail_on"] == "warning"


def test_accept_input_and_env_acknowledge(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr), accept="shop.orders")
    assert run.code == 0 and run.outputs["acknowledged"] == "2", run.stdout
    run = run_action(
        ws.path,
        "pull_request",
        pr_payload(pr),
        env={"ACCEPT_BREAKING_CHANGE": "lake/shop/orders"},
    )
    assert run.code == 0, run.stdout


def test_accept_consumer_break_in_the_body_the_input_and_the_env(tmp_path: Path) -> None:
    # queries/notes.sql reads the dropped `note`: a consumer_broken that only its
    # own path clears (the contract change needs its own accept-breaking-change)
    reader = "select o.note\nfrom shop.orders as o\n"
    base = {ORDERS_PATH: orders(), CUSTOMERS_PATH: customers(), "queries/notes.sql": reader}
    the_pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, base_files=base)
    ws = the_pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(the_pr, body=ACK))
    assert run.code == 1 and "file=queries/notes.sql,line=1" in run.stdout, run.stdout
    body = f"{ACK}\naccept-consumer-break: queries/notes.sql"
    run = run_action(ws.path, "pull_request", pr_payload(the_pr, body=body))
    assert run.code == 0, run.stdout
    assert run.report()["consumer_acknowledgements"] == ["queries/notes.sql"]
    payload = pr_payload(the_pr, body=ACK)
    run = run_action(
        ws.path, "pull_request", payload, **{"accept-consumer-break": "queries/notes.sql"}
    )
    assert run.code == 0, run.stdout
    run = run_action(
        ws.path, "pull_request", payload, env={"ACCEPT_CONSUMER_BREAK": "queries/notes.sql"}
    )
    assert run.code == 0, run.stdout


def test_pr_body_input_overrides_the_description(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr, body=ACK), **{"pr-body": "no ack"})
    assert run.code == 1, run.stdout
    run = run_action(ws.path, "pull_request", pr_payload(pr), **{"pr-body": ACK})
    assert run.code == 0, run.stdout


def test_underscore_input_names_work_too(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr), env={"INPUT_FAIL_ON": "bogus"})
    assert run.code == 2 and "fail-on must be 'error' or 'warning'" in run.verdict_line


def test_pr_from_a_fork(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    # the fork's branch is not on origin; GitHub keeps the PR under refs/pull/1/*
    subprocess.run(
        ["git", "--git-dir", str(pr.origin), "update-ref", "-d", "refs/heads/feature"],
        env=git_env(),
        check=True,
    )
    ws = pr.checkout(depth=1)
    run = run_action(ws.path, "pull_request", pr_payload(pr, body=ACK, fork=True))
    assert run.code == 0, run.stdout + run.stderr
    assert "from a fork" in run.stdout
    assert run.report()["base"]["sha"] == pr.base_sha


# shallow clones


def is_shallow(repo: GitRepo) -> bool:
    return repo.git("rev-parse", "--is-shallow-repository").strip() == "true"


def test_shallow_merge_checkout_fetches_the_base(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, feature_commits=4, main_commits=3)
    ws = pr.checkout(depth=1)  # actions/checkout's default: one merge commit, no parents
    assert is_shallow(ws)
    run = run_action(ws.path, "pull_request", pr_payload(pr), env={"SCHEMA_GATE_DEEPEN": "1"})
    assert run.code == 1, run.stdout + run.stderr
    assert f"base commit {pr.base_sha[:12]} is not in this clone" in run.stdout
    assert "--deepen=1" in run.stdout  # the merge commit's parents: the base is one of them
    assert "--unshallow" not in run.stdout
    assert run.report()["base"]["sha"] == pr.base_sha
    assert run.outputs["breaking"] == "2"
    assert is_shallow(ws)  # only what was needed


def test_shallow_clone_of_the_pr_head_deepens_until_a_merge_base(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, feature_commits=3, main_commits=2)
    ws = GitRepo.clone(pr.url, tmp_path / "ws", "--depth", "1", "--branch", "feature")
    assert ws.head() == pr.head_sha and is_shallow(ws)
    run = run_action(ws.path, "pull_request", pr_payload(pr), env={"SCHEMA_GATE_DEEPEN": "1,2,3"})
    assert run.code == 1, run.stdout + run.stderr
    assert "--deepen=1" in run.stdout and "--deepen=2" in run.stdout
    assert "--deepen=3" not in run.stdout and "--unshallow" not in run.stdout
    assert run.report()["base"]["sha"] == pr.fork_point
    assert is_shallow(ws)


def test_shallow_clone_unshallows_as_a_last_resort(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, feature_commits=3, main_commits=2)
    ws = GitRepo.clone(pr.url, tmp_path / "ws", "--depth", "1", "--branch", "feature")
    run = run_action(ws.path, "pull_request", pr_payload(pr), env={"SCHEMA_GATE_DEEPEN": "1"})
    assert run.code == 1, run.stdout + run.stderr
    assert "--deepen=1" in run.stdout and "--unshallow" in run.stdout
    assert run.report()["base"]["sha"] == pr.fork_point
    assert not is_shallow(ws)


def test_shallow_clone_without_origin_gives_the_remedy(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout(depth=1)
    ws.git("remote", "set-url", "origin", (tmp_path / "gone.git").as_uri())
    run = run_action(ws.path, "pull_request", pr_payload(pr))
    assert run.code == 2
    assert_outputs(run, verdict="error")
    assert run.verdict_line.startswith("::error title=schema-contract-gate::could not fetch")
    assert "fetch-depth: 0" in run.verdict_line
    assert "could not run" in run.summary and "fetch-depth: 0" in run.summary
    assert run.report() == {
        "version": 1,
        "verdict": "error",
        "message": run.report()["message"],
        "exit_code": 2,
    }


# other events


# merge_group is judged, never skipped: tests/action/test_merge_queue.py
@pytest.mark.parametrize("event", ["push", "schedule", "workflow_dispatch"])
def test_other_events_without_base_are_skipped(pr: PR, event: str) -> None:
    ws = pr.checkout()
    payload = push_payload(pr.fork_point, pr.base_sha) if event == "push" else {}
    run = run_action(ws.path, event, payload if event != "schedule" else None)
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(
        run, breaking="0", unacknowledged="0", acknowledged="0", report="", verdict="skipped"
    )
    assert run.commands == [run.verdict_line]
    assert run.verdict_line.startswith("::notice title=schema-contract-gate skipped::")
    # a merge queue: the PR's own run judged the change, the required check passes
    expected = "merge queue" if event == "merge_group" else "set the base input"
    assert expected in run.verdict_line.lower()
    assert "skipped" in run.summary


def test_workflow_dispatch_with_an_explicit_base(pr: PR) -> None:
    ws = pr.checkout()
    ws.git("checkout", "-q", "--detach", pr.head_sha)
    run = run_action(ws.path, "workflow_dispatch", {"inputs": {}}, base="origin/main")
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", verdict="fail")
    assert run.report()["base"]["sha"] == pr.fork_point
    assert "no github-token" not in run.summary  # no PR, no description to read


def test_push_with_a_base_branch_fetched_on_demand(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = GitRepo.clone(pr.url, tmp_path / "ws", "--depth", "1", "--branch", "feature")
    ws.git("update-ref", "-d", "refs/remotes/origin/HEAD", check=False)
    run = run_action(ws.path, "push", push_payload(pr.fork_point, pr.head_sha), base="main")
    assert run.code == 1, run.stdout + run.stderr
    assert "+refs/heads/main:refs/remotes/origin/main" in run.stdout
    assert run.report()["base"]["sha"] == pr.fork_point


def test_push_of_a_new_branch_is_skipped(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "push", push_payload("0" * 40, pr.head_sha), base="0" * 40)
    assert run.code == 0 and run.outputs["verdict"] == "skipped", run.stdout


# the cap on annotations


def test_more_than_ten_changes_of_a_kind_are_capped_with_a_pointer(tmp_path: Path) -> None:
    wide = [(f"c{i:02d}", "bigint") for i in range(15)]
    slim = [(f"c{i:02d}", "int") for i in range(12)] + [(f"n{i:02d}", "string") for i in range(12)]
    pr = make_pr(
        tmp_path,
        {ORDERS_PATH: contract("lake/shop/orders", slim)},
        base_files={ORDERS_PATH: contract("lake/shop/orders", wide)},
    )
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr))
    assert run.code == 1, run.stdout + run.stderr
    assert run.outputs["breaking"] == "15"  # 12 narrowed + 3 removed
    for level in ("error", "warning", "notice"):
        assert len(run.annotations(level)) <= 10, level
    assert len(run.annotations("error")) == 10  # 9 changes + the verdict
    assert len(run.annotations("notice")) == 10  # 10 of the 12 added columns
    # the notice budget also holds the run's own notice (no github-token)
    assert "6 error" in run.verdict_line and "3 notice" in run.verdict_line
    assert "job summary lists every change" in run.verdict_line
    # the summary has them all
    assert run.summary.count("| ❌ |") == 15
    assert "<details><summary>Additive changes (12)</summary>" in run.summary
    assert "appear only in this summary" in run.summary


# errors: exit 2, verdict=error, one ::error:: line


def test_broken_contract_is_exit_2(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: "dataset: lake/shop/orders\ncolumns: [\n"})
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr))
    assert run.code == 2, run.stdout + run.stderr
    assert_outputs(run, verdict="error", breaking="0")
    errors = run.annotations("error")
    # the refusal lands on its line; the verdict is the same one line as ever
    assert errors == [
        f"::error file={ORDERS_PATH},line=3,title=contract refused::invalid YAML: "
        "did not find expected node content",
        f"::error title=schema-contract-gate::{ORDERS_PATH}:3: invalid YAML: "
        "did not find expected node content",
    ]
    assert errors[-1] == run.verdict_line
    assert "Traceback" not in run.stdout + run.stderr
    report = run.report()
    assert report["verdict"] == "error"
    assert report["errors"] == [
        {
            "path": ORDERS_PATH,
            "line": 3,
            "message": "invalid YAML: did not find expected node content",
        }
    ]


#: Three contracts a PR breaks in three different ways, and what each refusal says.
THREE_BROKEN = {
    ORDERS_PATH: "dataset: lake/shop/orders\ncolumns: [\n",
    f"{C}/shop/payments.yaml": contract("lake/shop/payments", [("id", "bigint")]).replace(
        "    data_type: bigint\n", "    data_type: bigint\n    optinal: true\n"
    ),
    f"{C}/shop/refunds.yaml": "dataset: lake/shop/refunds\ncolumns:\n  - name: id\n    data_type: 42\n",
}
THREE_REFUSALS = [
    (ORDERS_PATH, 3, "invalid YAML: did not find expected node content"),
    (
        f"{C}/shop/payments.yaml",
        5,
        "unknown key 'optinal' in columns[0] (did you mean 'optional'?) [Soda column keys]",
    ),
    (f"{C}/shop/refunds.yaml", 4, "column 'id': 'data_type' must be a string, found a number"),
]


def test_every_contract_the_pr_broke_is_refused_in_one_run(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, THREE_BROKEN)
    run = run_action(pr.checkout().path, "pull_request", pr_payload(pr))
    assert run.code == 2, run.stdout + run.stderr
    assert_outputs(run, verdict="error", breaking="0")
    verdict = "refused 3 contract files; nothing was compared"
    assert run.annotations("error") == [
        *(
            f"::error file={path},line={line},title=contract refused::{message}"
            for path, line, message in THREE_REFUSALS
        ),
        f"::error title=schema-contract-gate::{verdict}",
    ]
    # the log lists them as the CLI does; the summary has a row each
    for path, line, message in THREE_REFUSALS:
        assert f"schema-contract-gate: error: {path}:{line}: {message}" in run.stdout
        assert f"| `{path}:{line}` | `{message}` |" in run.summary
    assert f"The gate {verdict}." in run.summary
    report = run.report()
    assert report["message"] == verdict and report["exit_code"] == 2
    assert report["errors"] == [
        {"path": path, "line": line, "message": message} for path, line, message in THREE_REFUSALS
    ]
    assert report["errors_total"] == 3


def test_refusals_beyond_githubs_ten_annotations_are_counted_and_all_in_the_summary(
    tmp_path: Path,
) -> None:
    broken = {
        f"{C}/bad/b{i:02d}.yaml": f"dataset: lake/bad/b{i:02d}\ncolumns: [\n" for i in range(12)
    }
    pr = make_pr(tmp_path, broken)
    run = run_action(pr.checkout().path, "pull_request", pr_payload(pr))
    assert run.code == 2, run.stdout + run.stderr
    errors = run.annotations("error")
    assert len(errors) == 10  # GitHub shows 10 per step: 9 refusals and the verdict
    assert [e.split(",", 1)[0] for e in errors[:9]] == [
        f"::error file={C}/bad/b{i:02d}.yaml" for i in range(9)
    ]
    assert errors[-1] == run.verdict_line
    assert "refused 12 contract files; nothing was compared (3 refusal annotation(s) not shown" in (
        run.verdict_line
    )
    for i in range(12):
        assert f"| `{C}/bad/b{i:02d}.yaml:3` |" in run.summary
    assert len(run.report()["errors"]) == 12


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("--upload-pack=touch /tmp/pwned", "starts with '-'"),
        ("no-such-branch", "is 'no-such-branch' a branch of this repository?"),
        ("main..feature", "unknown ref"),
    ],
)
def test_bad_base_input_is_exit_2(pr: PR, base: str, expected: str) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", pr_payload(pr), base=base)
    assert run.code == 2, run.stdout + run.stderr
    assert run.outputs["verdict"] == "error"
    assert expected in run.verdict_line, run.verdict_line


@pytest.mark.parametrize(
    "sha", ["abc; rm -rf /", "--output=/tmp/x", "HEAD", "A" * 40, None, 42, "f" * 39]
)
def test_untrusted_payload_shas_are_validated(pr: PR, sha: Any) -> None:
    ws = pr.checkout()
    payload = pr_payload(pr)
    payload["pull_request"]["base"]["sha"] = sha
    run = run_action(ws.path, "pull_request", payload)
    assert run.code == 2
    assert "pull_request.base.sha is not a full commit sha" in run.verdict_line


def test_payload_problems_are_exit_2(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(ws.path, "pull_request", None)
    assert run.code == 2 and "GITHUB_EVENT_PATH is not set" in run.verdict_line
    run = run_action(ws.path, "pull_request", {"action": "opened"})
    assert run.code == 2 and "no pull_request object" in run.verdict_line


def test_not_a_repository_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    pr_like = {"number": 1, "pull_request": {"base": {"sha": "a" * 40}, "head": {"sha": "b" * 40}}}
    run = run_action(tmp_path / "empty", "pull_request", pr_like)
    assert run.code == 2 and "not a git repository" in run.verdict_line
    assert run.outputs["verdict"] == "error"


def test_pull_request_target_refuses_a_base_branch_checkout(pr: PR) -> None:
    ws = pr.checkout()
    ws.git("checkout", "-q", "--detach", pr.base_sha)  # what checkout does on pull_request_target
    run = run_action(ws.path, "pull_request_target", pr_payload(pr))
    assert run.code == 2
    assert "use `on: pull_request`" in run.verdict_line.lower()
    ws.git("checkout", "-q", "--detach", pr.head_sha)  # checking out the head explicitly works
    run = run_action(ws.path, "pull_request_target", pr_payload(pr))
    assert run.code == 1, run.stdout


# the live PR body: a real HTTP server on 127.0.0.1


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.requests.append((self.path, dict(self.headers.items())))
        self.server.respond(self)

    def reply(self, status: int, body: Any, delay: float = 0.0) -> None:
        if delay:
            time.sleep(delay)
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (the timeout test)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, respond: Callable[[_Handler], None]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.respond = respond
        self.requests: list[tuple[str, dict[str, str]]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class fake_github:
    """``with fake_github(respond) as server:`` a GitHub REST stand-in on a free port."""

    def __init__(self, respond: Callable[[_Handler], None]) -> None:
        self.server = _Server(respond)

    def __enter__(self) -> _Server:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def with_api(server: _Server, **extra: str) -> dict[str, str]:
    return {"GITHUB_API_URL": server.url, **extra}


def test_rerun_reads_the_current_body_from_the_api(pr: PR) -> None:
    ws = pr.checkout()
    current = {"number": 1, "body": f"Now acknowledged.\r\n\r\n{ACK}\r\n", "state": "open"}
    with fake_github(lambda h: h.reply(200, current)) as server:
        # the replayed payload still has the old body without the acknowledgement
        run = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr, body="old body"),
            env=with_api(server),
            comment="false",  # the PR comment is tests/action/test_action_comment.py's
            **{"github-token": TOKEN},
        )
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, acknowledged="2", unacknowledged="0", verdict="pass")
    assert "it changed since this run's event" in run.stdout
    [(path, headers)] = server.requests
    headers = {name.lower(): value for name, value in headers.items()}
    assert path == "/repos/acme/shop/pulls/1"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert TOKEN not in run.everything()
    assert "T0kEn" not in run.everything()


def test_api_body_without_ack_fails_even_if_the_payload_had_one(pr: PR) -> None:
    """The current description wins: an acknowledgement removed after the event is gone."""
    ws = pr.checkout()
    with fake_github(lambda h: h.reply(200, {"number": 1, "body": None})) as server:
        run = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr, body=ACK),
            env=with_api(server),
            **{"github-token": TOKEN},
        )
    assert run.code == 1, run.stdout


@pytest.mark.parametrize(
    ("respond", "reason"),
    [
        (lambda h: h.reply(403, {"message": "Resource not accessible by integration"}), "HTTP 403"),
        (lambda h: h.reply(404, {"message": "Not Found"}), "HTTP 404"),
        (lambda h: h.reply(200, {"body": "late " + ACK}, delay=3.0), "no answer within 0.5s"),
        (lambda h: h.reply(200, ["not", "a", "pull"]), "not a pull request"),
    ],
    ids=["403", "404", "timeout", "garbage"],
)
def test_api_failures_fall_back_to_the_payload_body_with_a_notice(
    pr: PR, respond: Callable[[_Handler], None], reason: str
) -> None:
    ws = pr.checkout()
    with fake_github(respond) as server:
        run = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr, body=ACK, fork=True),
            env=with_api(server, SCHEMA_GATE_API_TIMEOUT="0.5"),
            **{"github-token": TOKEN},
        )
    assert run.code == 0, run.stdout + run.stderr  # the payload's acknowledgement counts
    assert run.outputs["verdict"] == "pass"
    [notice] = [n for n in run.annotations("notice") if "could not read the current PR" in n]
    assert reason in notice and "event payload" in notice
    assert "could not read the current PR description" in run.summary
    assert server.requests and server.requests[0][1]["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in run.everything()
    # no retry loop behind the fallback (counted, not timed): each API path asked once
    asked = [path for path, _headers in server.requests]
    assert "/repos/acme/shop/pulls/1" in asked and len(asked) == len(set(asked)), asked


def test_unreachable_api_falls_back(pr: PR) -> None:
    ws = pr.checkout()
    run = run_action(
        ws.path, "pull_request", pr_payload(pr, body=ACK), **{"github-token": TOKEN}
    )  # GITHUB_API_URL points at a closed port
    assert run.code == 0, run.stdout + run.stderr
    assert any("cannot reach the API" in n for n in run.annotations("notice"))
    assert TOKEN not in run.everything()


# security


def test_names_from_the_pr_cannot_forge_workflow_commands(tmp_path: Path) -> None:
    evil = '"x\\n::warning file=evil.yaml::forged\\n##[error]v1 ::add-mask::y %0A"'
    head = orders([*ORDERS_COLUMNS, (evil, "string")])
    pr = make_pr(tmp_path, {ORDERS_PATH: head})
    ws = pr.checkout()
    payload = pr_payload(pr)
    payload["pull_request"]["base"]["ref"] = "main`<img src=x>`"  # a legal branch name
    run = run_action(ws.path, "pull_request", payload)
    assert run.code == 0, run.stdout + run.stderr
    assert "<img" not in run.summary and run.report()["base"]["ref"] == pr.base_sha
    assert "forged" in run.stdout  # it is printed (in the plain report) ...
    for command in run.commands:  # ... but the runner acts only on our own, escaped lines
        assert re.match(r"::(error|warning|notice)( [a-z]+=[^:]*)?::", command), command
        assert "\n" not in command
    assert not [c for c in run.commands if "evil.yaml" in c.split("::")[1]]
    [added] = [c for c in run.annotations("notice") if "column_added" in c]
    assert "%0A::warning" in added and "%250A" in added


def test_workspace_owned_by_another_user_is_trusted_without_touching_git_config(
    tmp_path: Path,
) -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to chown the workspace, as in the Docker action")
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, feature_commits=2)
    ws = pr.checkout(depth=1)
    subprocess.run(["chown", "-R", "4242:4242", str(ws.path)], check=True)
    global_config = tmp_path / "gitconfig"
    global_config.write_text("[user]\n\tname = Runner\n")
    before = global_config.read_bytes()
    env = {"GIT_CONFIG_GLOBAL": str(global_config)}
    # without the action's safe.directory, git refuses the repository
    cli = run_gate(ws.path, "--base", "HEAD", env=gate_env(**env))
    assert cli.returncode == 2 and "dubious ownership" in cli.stderr
    run = run_action(ws.path, "pull_request", pr_payload(pr), env=env)
    assert run.code == 1, run.stdout + run.stderr
    assert run.report()["base"]["sha"] == pr.base_sha
    assert global_config.read_bytes() == before
    # what root fetched and wrote belongs to the checkout's owner again
    foreign = [
        str(p)
        for p in [ws.path, *ws.path.rglob("*")]
        if p.lstat().st_uid != 4242 or p.lstat().st_gid != 4242
    ]
    assert foreign == []


def test_container_entrypoint_never_imports_from_the_workspace(tmp_path: Path) -> None:
    """A PR that commits gate/ (or pandas.py) must not run code in the container."""
    repo = GitRepo(tmp_path / "ws")
    marker = tmp_path / "pwned"
    for module in ("gate/__init__.py", "gate/action.py"):
        repo.write(module, f"open({str(marker)!r}, 'w').close()\n")
    repo.commit("a trap")
    dockerfile = (ROOT / "Dockerfile").read_text()
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.M).group(1))
    assert entrypoint[0] == "python" and entrypoint[-2:] == ["-m", "gate.action"]
    assert re.search(r"^\s*PYTHONSAFEPATH=1", dockerfile, re.M)
    # GITHUB_ACTIONS: the Action mode (outside Actions the entrypoint runs the CLI)
    env = gate_env(GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="push", GITHUB_WORKSPACE=str(repo.path))
    proc = subprocess.run(
        [sys.executable, *entrypoint[1:]], cwd=repo.path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()
    # the threat is real: without -P the workspace's gate/ wins
    subprocess.run([sys.executable, "-m", "gate.action"], cwd=repo.path, env=env, check=False)
    assert marker.exists()


def test_the_token_does_not_reach_child_processes(pr: PR, tmp_path: Path) -> None:
    """git (and Spark) inherit the environment; the token input is removed from it first."""
    ws = pr.checkout()
    spy = tmp_path / "spy"
    hooks = tmp_path / "bin"
    hooks.mkdir()
    fake_git = hooks / "git"
    real_git = shutil.which("git")
    fake_git.write_text(
        f'#!/bin/sh\nenv >> {shlex.quote(str(spy))}\nexec {shlex.quote(str(real_git))} "$@"\n'
    )
    fake_git.chmod(0o755)
    run = run_action(
        ws.path,
        "pull_request",
        pr_payload(pr, body=ACK),
        env={"PATH": f"{hooks}{os.pathsep}{os.environ['PATH']}"},
        **{"github-token": TOKEN},
    )
    assert run.code == 0, run.stdout + run.stderr
    seen = spy.read_text()
    assert "GIT_CONFIG_KEY_0=safe.directory" in seen
    assert TOKEN not in seen


# outputs and summary details


def test_outputs_file_is_appended_in_github_format(pr: PR, tmp_path: Path) -> None:
    ws = pr.checkout()
    out = tmp_path / "out"
    out.write_text("earlier=step\n")
    run = run_action(ws.path, "pull_request", pr_payload(pr), env={"GITHUB_OUTPUT": str(out)})
    text = out.read_text()
    assert text.startswith("earlier=step\n")
    assert parse_outputs(text) == {
        "earlier": "step",
        "breaking": "2",
        "unacknowledged": "2",
        "acknowledged": "0",
        "report": ".schema-gate/report.json",
        "verdict": "fail",
        "comment-url": "",
    }
    assert run.code == 1
    # the report folder ignores itself, so it never shows in git status
    assert ws.git("status", "--porcelain", "--untracked-files=all").strip() == ""


def test_summary_limit_closes_open_details() -> None:
    from gate.action import limit_summary

    text = "## head\n<details>\n" + "| row |\n" * 200_000
    cut = limit_summary(text, limit=10_000)
    assert len(cut.encode()) < 10_500
    assert cut.count("<details>") == cut.count("</details>") == 1
    assert "report was cut here" in cut
    assert limit_summary("short\n") == "short\n"


# the files around the action


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_dockerfile_passes_hadolint() -> None:
    proc = subprocess.run(
        [_tool("hadolint"), "--failure-threshold", "info", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["Dockerfile", "smoke.Dockerfile"])
def test_dockerfile_shape(name: str) -> None:
    text = (ROOT / name).read_text()
    # The image is the base image plus what the stages add: its last FROM is the
    # base, or the slim stage, itself FROM the base (the smoke image repeats the slim
    # image's instructions so that it is built on its cached layers).
    froms = re.findall(r"^FROM (\S+)(?: AS (\S+))?$", text, re.M)
    stages = {alias: image for image, alias in froms if alias}
    last = froms[-1][0]
    assert last == "${BASE_IMAGE}" or stages.get(last) == "${BASE_IMAGE}", froms
    # the slim image has no Java; the smoke image has the JRE and Spark's settings
    # (SPARK_LOCAL_IP is in the shared slim ENV too, where it is harmless without Spark)
    assert ("jre-headless" in text) == (name == "smoke.Dockerfile")
    assert re.search(r"^\s*SPARK_LOCAL_IP=127\.0\.0\.1", text, re.M)
    assert not re.search(r"^(USER|WORKDIR)\b", text, re.M)  # GitHub: root, GITHUB_WORKSPACE
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    for line in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):
        for source in line.split():
            assert (ROOT / source).exists(), source
            top = source.split("/")[0]
            assert f"!{top}" in ignore or f"!{top}/" in ignore, source


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        ("vendor.github-actions", "action.yml"),
        ("vendor.github-workflows", "examples/github/schema-gate.yml"),
    ],
)
def test_action_and_workflow_validate_against_schemastore(schema: str, path: str) -> None:
    proc = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", schema, str(ROOT / path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _runs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from _runs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _runs(item)


def test_no_pr_text_is_interpolated_into_a_script() -> None:
    files = [ROOT / "action.yml", *sorted((ROOT / "examples" / "github").glob("*.yml"))]
    assert len(files) >= 2
    for path in files:
        for script in _runs(yaml.safe_load(path.read_text())):
            assert "github.event.pull_request.body" not in script, path
            assert not re.search(r"\$\{\{[^}]*github\.(event|head_ref)", script), (path, script)


def test_example_workflow_is_what_the_docs_promise() -> None:
    text = (ROOT / "examples" / "github" / "schema-gate.yml").read_text()
    workflow = yaml.safe_load(text)
    on = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(on) == {"pull_request", "merge_group"}
    assert on["pull_request"]["types"] == ["opened", "synchronize", "reopened", "edited"]
    assert workflow["permissions"] == {}
    # two jobs: the set-up guard, then the gate, which waits for it
    assert list(workflow["jobs"]) == ["check-setup", "schema-gate"]
    guard, job = workflow["jobs"]["check-setup"], workflow["jobs"]["schema-gate"]
    assert job["needs"] == "check-setup"
    assert guard["permissions"] == {"contents": "read"}
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "checks": "write"}
    assert "checks: write # one check run with the verdict and every annotation" in text
    steps = job["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    assert checkout["with"]["persist-credentials"] is False
    assert any(s.get("uses", "").startswith("your-org/schema-contract-gate@") for s in steps)
    assert "pull_request_target" in text  # the comment explaining why not


@pytest.mark.parametrize(
    ("uses", "fails"),
    [
        (None, True),  # left as is
        ("acme/schema-contract-gate@" + "1" * 40, False),
        ("acme/schema-contract-gate@" + "0" * 40, True),  # the owner, not the sha
        ("your-org/schema-contract-gate@" + "1" * 40, True),  # the sha, not the owner
    ],
    ids=["placeholder", "replaced", "owner-only", "sha-only"],
)
def test_the_example_workflows_guard_job_names_the_placeholder(
    tmp_path: Path, uses: str | None, fails: bool
) -> None:
    """check-setup's script, run by bash on a copy of the workflow as the runner would."""
    text = (ROOT / "examples" / "github" / "schema-gate.yml").read_text()
    placeholder = "\n        uses: your-org/schema-contract-gate@" + "0" * 40 + " # v1.0.0"
    assert text.count(placeholder) == 1
    if uses is not None:
        text = text.replace(placeholder, f"\n        uses: {uses} # v1.0.0")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "schema-gate.yml").write_text(text)
    [script] = [
        s["run"] for s in yaml.safe_load(text)["jobs"]["check-setup"]["steps"] if "run" in s
    ]
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_WORKFLOW_REF": "acme/shop/.github/workflows/schema-gate.yml@refs/pull/1/merge",
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (proc.returncode == 1) is fails, proc.stdout + proc.stderr
    if fails:
        assert "::error file=.github/workflows/schema-gate.yml," in proc.stdout
        assert "replace <owner> in uses:" in proc.stdout
    else:
        assert proc.returncode == 0 and proc.stdout == ""


def test_inputs_and_outputs_agree_across_action_code_and_docs() -> None:
    from gate.action import INPUTS, OUTPUTS

    spec = action_spec()
    assert tuple(spec["inputs"]) == INPUTS
    assert tuple(spec["outputs"]) == OUTPUTS
    assert spec["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert spec["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert not any(item.get("required") for item in spec["inputs"].values())
    docs = (ROOT / "docs" / "github-action.md").read_text()
    for name in (*INPUTS, *OUTPUTS):
        assert f"| `{name}` |" in docs, name
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use it in GitHub Actions", 1)[1].split("\n## ", 1)[0]
    assert "docs/github-action.md" in section and "schema-contract-gate@v1" in section


def test_pre_commit_hook_runs_the_gate_in_worktree_mode(tmp_path: Path) -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert hook["stages"] == ["pre-push"]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "schema-gate" and "--base" in entry and "origin/main" in entry
    assert "--head" not in entry  # the working tree, as the developer is about to push it
    # run it as pre-commit would, in a clone with an origin/main
    pr = make_pr(tmp_path, {ORDERS_PATH: orders()})
    clone = GitRepo.clone(pr.url, tmp_path / "dev")
    clone.write(ORDERS_PATH, BREAKING_ORDERS)  # not even committed yet
    proc = run_gate(clone.path, *entry[1:], *hook.get("args", []))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "type_narrowed" in proc.stdout


@pytest.mark.spark
def test_smoke_test_runs_in_the_action_with_the_images_spark_settings(tmp_path: Path) -> None:
    from tests.spark_fixtures import java_missing, pyspark_missing

    reason = pyspark_missing() or java_missing()
    if reason:
        pytest.skip(reason)
    sample = "order_id,customer_id,amount,status,channel\n1,99999999999,1.50,paid,web\n"
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS, "samples/lake.shop.orders.csv": sample})
    ws = pr.checkout()
    dockerfile = (ROOT / "smoke.Dockerfile").read_text()
    spark_ip = re.search(r"^\s*SPARK_LOCAL_IP=(\S+)", dockerfile, re.M).group(1)
    run = run_action(
        ws.path,
        "pull_request",
        pr_payload(pr, body=ACK),
        env={"SPARK_LOCAL_IP": spark_ip, "PYTHONSAFEPATH": "1"},
        process=True,  # the image's process environment and a JVM of its own
        **{"smoke-test": "true", "sample-data": "samples"},
    )
    # the break is acknowledged, but the narrowed id does not hold the sample's value
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, acknowledged="2", unacknowledged="0", verdict="fail")
    assert run.report()["smoke"]["failed"] is True
    assert "the smoke test failed" in run.verdict_line
    assert "Smoke test" in run.summary
    [smoke] = [a for a in run.annotations("error") if "title=smoke coercion" in a]
    assert smoke.startswith(f"::error file={ORDERS_PATH},line=5,")  # the customer_id line
    assert "'99999999999'" in smoke
