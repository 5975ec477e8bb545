"""How many git processes a typical run starts (issue #26): an upper bound, so it
cannot grow unnoticed. A git process costs 2-5 ms of CPU; at K = 1 the run was
18 of them (21 on the working tree) against the floor's 2.

A ``git`` script first on ``PATH`` logs each invocation and hands over to the
real git, so what is counted is every process the gate starts, whoever starts it.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from gate.git import SODA_GLOBS, open_repo
from tests.conftest import gate_env
from tests.git.helpers import C, by_path, contract
from tests.gitrepo import GitRepo

#: The bound after the merges of #26: refs asked in one ``cat-file --batch-check``
#: and pinned for the run, one untracked-file walk instead of three, one path
#: checker (``--batch-check --follow-symlinks``) for the run instead of one per
#: question. 11 with ``--head``, 12-13 on the working tree.
MOST = 13


@pytest.fixture
def feature(tmp_path: Path) -> GitRepo:
    """``main`` with two contracts; ``feature`` (checked out) drops a column of one."""
    repo = GitRepo(tmp_path / "work")
    repo.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    repo.write(f"{C}/customers.yaml", contract("customers"))
    repo.commit("initial")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write(f"{C}/orders.yaml", contract("orders", "id"))  # a dropped column
    repo.commit("drop amount")
    return repo


def _counting(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` logs its first argument to the returned file."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = gate_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env, log


@pytest.mark.parametrize("head", [["--head", "feature"], []], ids=["head", "worktree"])
def test_a_typical_run_starts_few_git_processes(
    feature: GitRepo, cli: Callable[..., object], tmp_path: Path, head: list[str]
) -> None:
    repo = feature
    env, log = _counting(tmp_path)
    result = cli(repo.path, "--base", "main", *head, "--format", "json", env=env)
    assert result.returncode == 1, result.stderr  # type: ignore[attr-defined]
    assert '"breaking": 1' in result.stdout  # type: ignore[attr-defined]
    calls = log.read_text().split()
    assert 0 < len(calls) <= MOST, " ".join(calls)
    assert calls.count("rev-parse") == 1, calls  # --show-toplevel; the refs go in one batch
    assert calls.count("merge-base") == 1, calls
    assert calls.count("ls-files") <= 1, calls  # one untracked walk (none with --head)
    # the refs' batch, the path checker and the blob reader: one process each per run
    assert calls.count("cat-file") == 3, calls


def test_a_bad_base_is_still_refused_as_before(
    feature: GitRepo, cli: Callable[..., object], tmp_path: Path
) -> None:
    repo = feature
    env, _log = _counting(tmp_path)
    result = cli(repo.path, "--base", "nope", "--head", "feature", env=env)
    assert result.returncode == 2  # type: ignore[attr-defined]
    assert "unknown ref 'nope'" in result.stderr  # type: ignore[attr-defined]


def test_pinned_refs_name_one_commit_for_the_run(feature: GitRepo) -> None:
    repo = feature
    with open_repo(repo.path) as r:
        r.pin("HEAD", "main")
        first = r.resolve("HEAD")
        repo.commit("another")  # HEAD moves during the run
        assert r.resolve("HEAD") == first
        assert r.resolve("main") == repo.rev("main")
        assert r.resolve("feature") == repo.head()  # not pinned: asked again


def test_pin_leaves_a_bad_ref_to_resolve(feature: GitRepo) -> None:
    repo = feature
    with open_repo(repo.path) as r:
        r.pin("HEAD", "nope", "HEAD^{tree}", "-x")
        assert r.resolve("HEAD") == repo.head()
        with pytest.raises(Exception, match=r"^unknown ref 'nope'$"):
            r.resolve("nope")
        with pytest.raises(Exception, match="does not name a commit"):
            r.resolve("HEAD^{tree}")
        with pytest.raises(Exception, match="starts with '-'"):
            r.resolve("-x")


def test_untracked_files_are_still_listed_after_the_single_walk(feature: GitRepo) -> None:
    """Each kind of glob the walk's shortcut reads: a suffix, a file name, a folder
    named by a pattern without wildcards (git matches it as a leading folder)."""
    repo = feature
    repo.write(f"{C}/new.yaml", contract("new"))
    repo.write("notes.txt", "not a contract\n")
    repo.write("plain/dbt_project.yml", "name: p\n")
    repo.write("folder/inside/x.json", "{}\n")
    with open_repo(repo.path) as r:
        assert set(by_path(r.changed("main", None, SODA_GLOBS))) == {
            f"{C}/new.yaml",
            f"{C}/orders.yaml",
        }
        assert set(by_path(r.changed("main", None, ["**/dbt_project.yml"]))) == {
            "plain/dbt_project.yml"
        }
        assert set(by_path(r.changed("main", None, ["folder"]))) == {"folder/inside/x.json"}
        assert set(by_path(r.changed("main", None, ["**/*.sql"]))) == set()
        assert set(r.list_files(None, ["**/*.JSON", "folder/**"])) == {"folder/inside/x.json"}
