"""Shared fixtures: real temp git repos and the CLI run as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo, git_env

ROOT = Path(__file__).resolve().parent.parent


def gate_env(**extra: str) -> dict[str, str]:
    """The environment the gate runs in: isolated git, no stray acknowledgements."""
    env = git_env()
    env.pop("ACCEPT_BREAKING_CHANGE", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def run_gate(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m gate ARGS`` in ``cwd``, as a user or CI would run it."""
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        env=env or gate_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def gate() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_gate
