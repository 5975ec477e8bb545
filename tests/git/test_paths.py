"""Path safety: file access stays inside the repository (and out of ``.git``).

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.git import SODA_GLOBS, FileChange, Repo
from gate.model import UsageError
from tests.git.helpers import C, contract
from tests.gitrepo import GitRepo


def test_worktree_paths_may_not_escape_the_repository(
    g: GitRepo, repo: Repo, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    g.symlink(f"{C}/leak.yaml", str(secret))
    g.symlink(f"{C}/leak2.yaml", "../../../secret.txt")
    g.symlink(f"{C}/git-config.yaml", "../../.git/config")
    g.symlink(f"{C}/alias.yaml", "orders.yaml")
    for bad in ("../secret.txt", str(secret), f"{C}/leak.yaml", f"{C}/leak2.yaml"):
        with pytest.raises(UsageError, match="outside the repository"):
            repo.safe_path(bad)
        with pytest.raises(UsageError, match="outside the repository"):
            repo.read_worktree(bad)
    for bad in (".git/config", f"{C}/git-config.yaml"):
        with pytest.raises(UsageError, match=r"\.git"):
            repo.read_worktree(bad)
    assert repo.read_worktree(f"{C}/alias.yaml") == contract("orders").encode()
    assert repo.safe_path(str(g.path / "README.md")) == (g.path / "README.md").resolve()
    assert repo.safe_path("data/sample.csv") == (g.path / "data/sample.csv").resolve()
    with pytest.raises(UsageError, match="cannot read"):
        repo.read_worktree("data/sample.csv")
    with pytest.raises(UsageError, match="not a regular file"):
        repo.read_worktree(C)
    os.mkfifo(g.path / C / "fifo.yaml")
    with pytest.raises(UsageError, match="not a regular file"):
        repo.read_worktree(f"{C}/fifo.yaml")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(["..", ".", "a", "b", "out", "git", ".git", ""]), max_size=8))
def test_safe_path_never_returns_a_path_outside_the_root(
    g: GitRepo, repo: Repo, tmp_path: Path, parts: list[str]
) -> None:
    if not (g.path / "out").is_symlink():
        (g.path / "a" / "b").mkdir(parents=True)
        g.symlink("out", str(tmp_path))
        g.symlink("a/git", "../.git")
    raw = "/".join(parts)
    root = g.path.resolve()
    try:
        result = repo.safe_path(raw)
    except UsageError:
        return
    assert result == root or root in result.parents
    assert ".git" not in result.relative_to(root).parts


def test_an_escaping_symlink_in_the_worktree_is_refused_when_read(
    g: GitRepo, repo: Repo, tmp_path: Path
) -> None:
    (tmp_path / "outside.yaml").write_text(contract("outside"))
    g.symlink(f"{C}/outside.yaml", str(tmp_path / "outside.yaml"))
    (change,) = repo.changed("HEAD", None, SODA_GLOBS)
    assert change == FileChange("A", None, f"{C}/outside.yaml", None, None)
    with pytest.raises(UsageError, match="outside the repository"):
        repo.read_worktree(change.new_path or "")
