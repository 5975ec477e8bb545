"""The pre-commit hook, run by real ``pre-commit try-repo`` exactly as docs/github-action.md says.

pre-commit builds the hook's own virtualenv from this repository (``pip install .``
from PyPI, as for any user), then runs it in a developer's clone that has an
``origin/main``. The hook declares ``stages: [pre-push]``, so ``try-repo`` needs
``--hook-stage pre-push``; without it pre-commit finds no hook to run, which is
checked too so the documented flag stays necessary and sufficient.
Skipped only when pre-commit is not installed (it is in the ``test`` extra).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.test_action import BREAKING_ORDERS, ORDERS_PATH, customers, orders
from tests.conftest import ROOT
from tests.gitrepo import GitRepo, git_env

DOCS = ROOT / "docs" / "github-action.md"


def _documented_try_repo() -> list[str]:
    """The ``pre-commit try-repo`` command in the docs, as an argument list."""
    match = re.search(r"^(pre-commit try-repo .+)$", DOCS.read_text(), re.M)
    assert match, "docs/github-action.md shows no `pre-commit try-repo` command"
    return shlex.split(match.group(1))


def _pre_commit(
    clone: GitRepo, home: Path, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = git_env()
    env.pop("PYTHONPATH", None)  # the hook must run from its own installed virtualenv
    env.pop("ACCEPT_BREAKING_CHANGE", None)
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", **extra)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=clone.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )


def test_try_repo_runs_the_hook_as_documented(tmp_path: Path) -> None:
    pytest.importorskip(
        "pre_commit", reason="pre-commit is not installed (pip install -e '.[test]')"
    )
    documented = _documented_try_repo()
    assert documented[:3] == [
        "pre-commit",
        "try-repo",
        "https://github.com/your-org/schema-contract-gate",
    ]
    assert documented[3] == "schema-contract-gate"
    flags = documented[4:]
    assert "--hook-stage" in flags and flags[flags.index("--hook-stage") + 1] == "pre-push"

    upstream = GitRepo(tmp_path / "upstream")
    upstream.write(ORDERS_PATH, orders())
    upstream.write("soda/contracts/shop/customers.yaml", customers())
    upstream.commit("contracts")
    origin = tmp_path / "origin.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(upstream.path), str(origin)], env=git_env(), check=True
    )
    clone = GitRepo.clone(origin.as_uri(), tmp_path / "dev")
    clone.write(ORDERS_PATH, BREAKING_ORDERS)  # a breaking edit, not even committed
    home = tmp_path / "pre-commit-home"

    # this checkout of the project stands in for the GitHub URL
    run = _pre_commit(clone, home, "try-repo", str(ROOT), *documented[3:])
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "schema contract gate" in output and "Failed" in output
    assert "type_narrowed" in output and "column_removed" in output
    assert "origin/main (merge-base)" in output

    # acknowledged on the command line: the same hook passes
    run = _pre_commit(
        clone,
        home,
        "try-repo",
        str(ROOT),
        *documented[3:],
        ACCEPT_BREAKING_CHANGE="lake/shop/orders",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout

    # without the documented stage flag there is nothing to run
    without = [a for a in documented[3:] if a not in ("--hook-stage", "pre-push")]
    run = _pre_commit(clone, home, "try-repo", str(ROOT), *without)
    assert run.returncode != 0
    assert "No hook with id `schema-contract-gate` in stage `pre-commit`" in run.stdout + run.stderr
    assert os.listdir(home)  # pre-commit really built an environment
