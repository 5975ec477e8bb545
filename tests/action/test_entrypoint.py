"""The image's entrypoint outside GitHub Actions: the CLI, never a silent "skipped".

``python -P -m gate.action`` is the Dockerfile's ENTRYPOINT; these run it as a
real process the way ``docker run --rm -v "$PWD:/repo" -w /repo IMAGE ARGS``
does (tests/e2e/test_container.py runs the image itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.test_action import BREAKING_ORDERS, ORDERS_PATH, make_pr
from tests.conftest import gate_env

ACTION_NOTE = "running as the GitHub Action"
CLI_NOTE = "not in GitHub Actions (GITHUB_ACTIONS is not 'true'): running the command line"


def entrypoint(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = gate_env(**env)
    if "GITHUB_ACTIONS" not in env:
        full.pop("GITHUB_ACTIONS", None)  # as under `docker run`, even when CI is GitHub's
    return subprocess.run(
        [sys.executable, "-P", "-m", "gate.action", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_outside_actions_a_breaking_change_exits_1(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    # what a runner leaves behind is no reason to run the Action (only GITHUB_ACTIONS is)
    proc = entrypoint(ws.path, "--base", "origin/main", GITHUB_EVENT_NAME="push")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[0].endswith(f"{CLI_NOTE}, schema-gate --base origin/main")
    assert "column_removed lake/shop/orders.note" in proc.stdout
    assert "skipped" not in proc.stdout + proc.stderr


def test_outside_actions_a_clean_change_exits_0_and_flags_pass_through(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    proc = entrypoint(
        ws.path, "--base", "origin/main", "--accept", "shop.orders", "--format", "json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "pass"
    ws.git("checkout", "-q", "--detach", "origin/main")
    proc = entrypoint(ws.path, "--base", "origin/main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert CLI_NOTE in proc.stderr


def test_outside_actions_help_and_usage_errors_are_the_clis(tmp_path: Path) -> None:
    proc = entrypoint(tmp_path, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: schema-gate")
    assert CLI_NOTE in proc.stderr
    proc = entrypoint(tmp_path, "--no-such-flag")
    assert proc.returncode == 2
    assert "schema-gate: error: unrecognized arguments: --no-such-flag" in proc.stderr
    proc = entrypoint(tmp_path, "--base", "origin/main")  # not a repository: exit 2, not a pass
    assert proc.returncode == 2, proc.stdout + proc.stderr


def test_inside_actions_the_action_runs(tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    proc = entrypoint(
        ws.path, GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="push", GITHUB_WORKSPACE=str(ws.path)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[0].endswith(ACTION_NOTE)
    assert "::notice title=schema-contract-gate skipped::" in proc.stdout  # push without base


def test_a_mounted_repository_of_another_owner_is_trusted_without_config_files(
    tmp_path: Path,
) -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to chown the repository, as a bind mount into the image")
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    subprocess.run(["chown", "-R", "4242:4242", str(ws.path)], check=True)
    global_config = tmp_path / "gitconfig"
    global_config.write_text("[user]\n\tname = Someone\n")
    before = global_config.read_bytes()
    proc = entrypoint(
        ws.path, "--repo", ".", "--base", "origin/main", GIT_CONFIG_GLOBAL=str(global_config)
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dubious ownership" not in proc.stderr
    assert global_config.read_bytes() == before
    foreign = [p for p in [ws.path, *ws.path.rglob("*")] if p.lstat().st_uid != 4242]
    assert foreign == []
