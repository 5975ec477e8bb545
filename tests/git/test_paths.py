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


def test_a_glob_ending_in_a_star_and_a_literal_becomes_a_one_star_pathspec() -> None:
    """``P/**/*S`` (P, S literal) is handed to git as ``:(top)P/*S``, which git
    matches by comparing the tail (issue #26: ``**/*.sql`` over 50,000 files took
    32 ms of git's CPU, ``*.sql`` 18); anything else stays a glob."""
    from gate.git.paths import pathspecs

    globs = ["**/*.sql", "models/**/*.yml", "!**/target/**", "a/*.yml", "**/dbt_project.yml"]
    globs += ["x[1]/**/*.sql", "**/*.y?l", "**/**/*.yml", "*.yml", "a/**/b/*.yml"]
    assert pathspecs(globs) == [
        ":(top)*.sql",
        ":(top)models/*.yml",
        ":(top,glob,exclude)**/target/**",
        ":(top,glob)a/*.yml",
        ":(top,glob)**/dbt_project.yml",
        ":(top,glob)x[1]/**/*.sql",
        ":(top,glob)**/*.y?l",
        ":(top,glob)**/**/*.yml",
        ":(top,glob)*.yml",
        ":(top,glob)a/**/b/*.yml",
    ]


@pytest.mark.parametrize(
    "variable", [None, "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_LITERAL_PATHSPECS"]
)
def test_one_star_pathspecs_list_what_the_globs_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str | None
) -> None:
    """The same files as git's own ``:(top,glob)`` matching, at a commit, between two
    commits and in the working tree, at the root, deep down, under a folder named
    like a match, with a star in a name; whatever ``GIT_*_PATHSPECS`` the caller
    exported (``GIT_LITERAL_PATHSPECS=1`` made every glob list nothing before)."""
    g = GitRepo(tmp_path / "r")
    paths = ["a.sql", ".sql", "b/.sql", "b/c.sql", "b/c.SQL", "b/x y.sql", "d.sql/e.txt"]
    paths += ["d.sql/f.sql", "g/h/i/j.sql", "sqlx", "k/l.sqlx", "w/*.sql", "target/r.sql"]
    paths += [f"{C}/a.yaml", f"{C}/x/y/z.yaml", "soda/a.yaml", "soda/contracts.yaml"]
    paths += ["soda/contractsx/q.yaml", "p/target/q.sql"]
    for path in paths:
        g.write(path, "select 1\n")
    first = g.commit("first")
    g.write("n/new.sql", "select 2\n")
    g.write(f"{C}/n/new.yaml", "select 2\n")
    second = g.commit("second")
    g.write("u.sql", "untracked\n")
    g.write(f"{C}/u/v.yaml", "untracked\n")
    cases = [["**/*.sql", "!**/target/**"], [f"{C}/**/*.yaml"], ["**/*"], ["**/*.SQL"]]
    expected = []
    for globs in cases:
        specs = [f":(top,glob,exclude){p[1:]}" if p[0] == "!" else f":(top,glob){p}" for p in globs]
        listed = g.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *specs)
        changed = g.git("diff", "-z", "--name-only", first, second, "--", *specs)
        expected.append((set(listed.split("\0")) - {""}, set(changed.split("\0")) - {""}))
    assert all(listed and changed for listed, changed in expected[:3])
    if variable:
        monkeypatch.setenv(variable, "1")
    for globs, (listed, changed) in zip(cases, expected, strict=True):
        with Repo(g.path) as repo:
            assert set(repo.list_files(None, globs)) == listed, globs
            between = repo.changed(first, second, globs)
            assert {c.new_path or c.old_path for c in between} == changed, globs
