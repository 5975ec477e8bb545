"""Refs: validated, resolved to commits, merge bases, shallow clones.

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.git import SODA_GLOBS, Repo, open_repo
from gate.model import GitError, UsageError
from tests.git.helpers import C, by_path, contract
from tests.gitrepo import GitRepo

# refs


def test_resolve_gives_full_commit_shas(g: GitRepo, repo: Repo) -> None:
    assert repo.resolve("HEAD") == g.head()
    assert repo.resolve("main") == g.head()
    assert repo.resolve(g.head()[:10]) == g.head()


@pytest.mark.parametrize("ref", ["-x", "--output=/tmp/pwned", "-", "--all"])
def test_refs_that_look_like_options_are_refused(repo: Repo, ref: str) -> None:
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.resolve(ref)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.changed(ref, None, SODA_GLOBS)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.changed("HEAD", ref, SODA_GLOBS)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.merge_base("main", ref)


@pytest.mark.parametrize("ref", ["", "  ", "main\nHEAD", "a\0b"])
def test_empty_or_control_character_refs_are_refused(repo: Repo, ref: str) -> None:
    with pytest.raises(UsageError):
        repo.resolve(ref)


def test_unknown_ref(repo: Repo) -> None:
    with pytest.raises(GitError, match=r"^unknown ref 'nope'$"):
        repo.resolve("nope")


def test_shell_syntax_in_a_ref_is_just_an_unknown_ref(g: GitRepo, repo: Repo) -> None:
    with pytest.raises(GitError, match="unknown ref"):
        repo.resolve("$(touch pwned)")
    with pytest.raises(GitError, match="unknown ref"):
        repo.resolve("main;touch pwned")
    assert not (g.path / "pwned").exists()


def test_a_ref_to_a_non_commit_is_refused(g: GitRepo, repo: Repo) -> None:
    for ref in (g.rev(f"HEAD:{C}/orders.yaml"), "HEAD^{tree}", "HEAD:soda"):
        with pytest.raises(GitError, match="does not name a commit"):
            repo.resolve(ref)
    with pytest.raises(GitError, match="unknown ref 'HEAD:nope'"):
        repo.resolve("HEAD:nope")


def test_resolve_follows_a_moving_head(g: GitRepo, repo: Repo) -> None:
    first = repo.resolve("HEAD")
    second = g.commit("another")
    assert first != second
    assert repo.resolve("HEAD") == second


# merge base against base tip


@pytest.fixture
def diverged(g: GitRepo) -> GitRepo:
    """main gains customers.yaml after feature branched; feature edits orders.yaml."""
    g.branch("feature")
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.commit("feature: add amount")
    g.checkout("main")
    g.write(f"{C}/customers.yaml", contract("customers"))
    g.commit("main: add customers")
    g.checkout("feature")
    return g


def test_merge_base_does_not_report_base_additions_as_removed(
    diverged: GitRepo, repo: Repo
) -> None:
    base = repo.merge_base("main", "HEAD")
    assert base == diverged.rev("main~1")
    assert repo.base_commit("main") == base
    changes = repo.changed(base, None, SODA_GLOBS)
    assert [(c.status, c.new_path) for c in changes] == [("M", f"{C}/orders.yaml")]


def test_comparing_to_the_base_tip_sees_base_additions(diverged: GitRepo, repo: Repo) -> None:
    tip = repo.base_commit("main", tip=True)
    assert tip == diverged.rev("main")
    changes = by_path(repo.changed(tip, "HEAD", SODA_GLOBS))
    assert changes[f"{C}/customers.yaml"].status == "D"
    assert changes[f"{C}/orders.yaml"].status == "M"


def test_unrelated_histories_have_no_merge_base(g: GitRepo, repo: Repo) -> None:
    g.git("checkout", "-q", "--orphan", "other")
    g.commit("unrelated root")
    with pytest.raises(GitError, match="histories are unrelated") as err:
        repo.merge_base("main", "other")
    assert "shallow" not in str(err.value)


# shallow clones


@pytest.fixture
def origin(tmp_path: Path) -> GitRepo:
    src = GitRepo(tmp_path / "src")
    src.write(f"{C}/orders.yaml", contract("orders"))
    src.commit("one")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a"))
    src.commit("two")
    src.branch("feature")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a", "b"))
    src.commit("feature one")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a", "b", "c"))
    src.commit("feature two")
    src.checkout("main")
    src.write(f"{C}/customers.yaml", contract("customers"))
    src.commit("main three")
    GitRepo.clone(str(src.path), tmp_path / "origin.git", "--bare")
    return src


def test_a_full_clone_is_not_shallow(origin: GitRepo, tmp_path: Path) -> None:
    clone = GitRepo.clone(f"file://{tmp_path / 'origin.git'}", tmp_path / "full")
    r = open_repo(clone.path)
    assert not r.is_shallow()
    assert r.merge_base("origin/main", "origin/feature") == origin.rev("main~1")


def test_a_base_missing_from_a_shallow_clone_names_the_remedy(
    origin: GitRepo, tmp_path: Path
) -> None:
    url = f"file://{tmp_path / 'origin.git'}"
    clone = GitRepo.clone(url, tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    r = open_repo(clone.path)
    assert r.is_shallow()
    for missing in ("origin/main", origin.rev("main~1")):
        with pytest.raises(GitError, match=f"unknown ref '{missing}'") as err:
            r.resolve(missing)
        assert "shallow" in str(err.value)
        assert "fetch-depth: 0" in str(err.value)
        assert "git fetch --unshallow" in str(err.value)


def test_no_merge_base_in_a_shallow_clone_names_the_remedy(origin: GitRepo, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'origin.git'}"
    clone = GitRepo.clone(url, tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    clone.git("fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    r = open_repo(clone.path)
    with pytest.raises(GitError, match="no merge base") as err:
        r.merge_base("origin/main", "HEAD")
    assert "shallow" in str(err.value)
    assert "fetch-depth: 0" in str(err.value)
    clone.git("fetch", "-q", "--unshallow", "origin")
    assert r.merge_base("origin/main", "HEAD") == origin.rev("main~1")


def test_a_full_sha_is_verified_once_and_a_branch_every_time(g: GitRepo, repo: Repo) -> None:
    first = repo.resolve("main")
    assert repo.resolve(first) == first
    second = g.commit("another")
    assert repo.resolve("main") == second  # a branch may move
    assert repo.resolve(first) == first  # a commit id names the same commit forever
    assert repo.merge_base(first, second) == first
