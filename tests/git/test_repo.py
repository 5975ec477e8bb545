"""Opening a repository: git itself says where its top is.

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gate.git import open_repo
from gate.model import GitError
from tests.cost import git_calls
from tests.git.helpers import C
from tests.gitrepo import GitRepo

# opening


def test_open_repo_finds_the_top_from_a_subdirectory(g: GitRepo) -> None:
    r = open_repo(g.path / C)
    assert r.root.resolve() == g.path.resolve()


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(GitError, match=r"^not a git repository: .*plain$"):
        open_repo(plain)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        open_repo(tmp_path / "nope")


def test_bare_repository_is_refused(tmp_path: Path) -> None:
    GitRepo(tmp_path / "src").commit("x")
    GitRepo.clone(str(tmp_path / "src"), tmp_path / "bare.git", "--bare")
    with pytest.raises(GitError, match="not a git working tree"):
        open_repo(tmp_path / "bare.git")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_dubious_ownership_names_the_safe_directory_fix(
    g: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no machine-wide safe.directory
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    os.chown(g.path, 65534, 65534)
    with pytest.raises(GitError, match="dubious ownership") as err:
        open_repo(g.path / C)
    assert f"safe.directory {g.path}" in str(err.value)


def test_folders_holding_a_file_name_at_a_commit_and_in_the_working_tree(tmp_path) -> None:
    """What the exposure search is scoped to (#26): a superset of the folders that
    hold the name, at a commit (one tree walk) and in the working tree: clean
    (HEAD's tree and the untracked files) or not (the index, so a tracked file
    deleted from disk still counts, and a staged one counts)."""
    from gate.git import open_repo
    from tests.gitrepo import GitRepo

    g = GitRepo(tmp_path / "r")
    g.write("dbt_project.yml", "name: a\n")
    g.write("nested/dbt/dbt_project.yml", "name: b\n")
    g.write("nested/dbt/models/x.yml", "version: 2\n")
    g.write("other/not_dbt_project.yml", "x: 1\n")
    commit = g.commit("projects")
    with open_repo(g.path) as repo:
        assert repo.folders_holding(commit, "dbt_project.yml") == ["", "nested/dbt"]
        assert repo.folders_holding(None, "dbt_project.yml") == ["", "nested/dbt"]
    g.write("untracked/dbt_project.yml", "name: c\n")
    with open_repo(g.path) as repo:  # clean: HEAD's tree, and the untracked file
        assert repo.folders_holding(None, "dbt_project.yml") == ["", "nested/dbt", "untracked"]
        assert repo.folders_holding(commit, "dbt_project.yml") == ["", "nested/dbt"]
    g.remove("nested/dbt/dbt_project.yml")
    g.write("staged/dbt_project.yml", "name: d\n")
    g.git("add", "staged/dbt_project.yml")
    with open_repo(g.path) as repo:  # not clean: the index (deleted still counts)
        assert repo.folders_holding(None, "dbt_project.yml") == [
            "",
            "nested/dbt",
            "staged",
            "untracked",
        ]


def test_named_finds_each_file_of_a_name_whatever_its_folder(tmp_path) -> None:
    """``Repo.named`` (one ``ls-tree`` walk, searched with ``bytes.find``, #26):
    the root, nested folders, a symlink (its mode), git's order; never a longer
    name that ends the same, a folder of that name, or a name with a tab in it."""
    from gate.git import open_repo
    from tests.gitrepo import GitRepo

    g = GitRepo(tmp_path / "r")
    g.write("dbt_project.yml", "a\n")
    g.write("a/b/dbt_project.yml", "b\n")
    g.write("a-b/dbt_project.yml", "c\n")
    g.write("x/my_dbt_project.yml", "d\n")
    g.write("dbt_project.yml.bak", "e\n")
    g.write("y/dbt_project.yml/inner.txt", "f\n")
    g.write("z/t\tdbt_project.yml", "g\n")
    g.write("profiles.yml", "h\n")
    g.symlink("l/dbt_project.yml", "../dbt_project.yml")
    commit = g.commit("names")
    with open_repo(g.path) as repo:
        found = repo.named(commit, ["dbt_project.yml", "profiles.yml"])
    assert found == {
        "a-b/dbt_project.yml": "100644",
        "a/b/dbt_project.yml": "100644",
        "dbt_project.yml": "100644",
        "l/dbt_project.yml": "120000",
        "profiles.yml": "100644",
    }
    assert list(found) == sorted(found, key=str.encode)


def test_named_at_a_second_commit_agrees_with_its_own_walk(tmp_path) -> None:
    """A second commit is answered from the first one's walk plus ``git diff-tree``
    between the two (#26: the run walked 10,000 entries twice): the same answer
    as that commit's own walk, in the same order, with one ``ls-tree`` in all."""
    from gate.git import open_repo
    from tests.gitrepo import GitRepo

    g = GitRepo(tmp_path / "r")
    g.write("dbt_project.yml", "a\n")
    g.write("gone/dbt_project.yml", "b\n")
    g.write("moved/dbt_project.yml", "c\n")
    g.write("kept/dbt_project.yml", "d\n")
    g.write("linked/dbt_project.yml", "e\n")
    g.write("edited/profiles.yml", "f\n")
    g.write("folder/dbt_project.yml", "g\n")
    first = g.commit("first")
    g.remove("gone/dbt_project.yml")
    g.move("moved/dbt_project.yml", "there/dbt_project.yml")
    g.remove("linked/dbt_project.yml")
    g.symlink("linked/dbt_project.yml", "../dbt_project.yml")  # a type change
    g.write("edited/profiles.yml", "f2\n")
    g.write("new/deep/dbt_project.yml", "h\n")
    g.write("new/my_dbt_project.yml", "i\n")
    g.remove("folder/dbt_project.yml")
    g.write("folder/dbt_project.yml/inner.txt", "j\n")  # now a folder of that name
    g.write("a-b/profiles.yml", "k\n")
    second = g.commit("second")
    names = ["dbt_project.yml", "profiles.yml"]
    with open_repo(g.path) as repo:
        alone = repo.named(second, names)
    with open_repo(g.path) as repo:
        calls = git_calls(repo)
        at_first = repo.named(first, ["dbt_project.yml"])
        at_second = repo.named(second, names)
        again = repo.named(first, names)
    assert at_second == alone
    assert list(at_second) == list(alone)  # git's order
    assert alone == {
        "a-b/profiles.yml": "100644",
        "dbt_project.yml": "100644",
        "edited/profiles.yml": "100644",
        "kept/dbt_project.yml": "100644",
        "linked/dbt_project.yml": "120000",
        "new/deep/dbt_project.yml": "100644",
        "there/dbt_project.yml": "100644",
    }
    assert "gone/dbt_project.yml" in at_first and "folder/dbt_project.yml" in at_first
    assert again == {**at_first, "edited/profiles.yml": "100644"}
    assert [c[0] for c in calls] == ["ls-tree", "diff-tree"]


def test_folders_holding_at_a_second_commit_reads_no_index(tmp_path) -> None:
    """The exposure scope at HEAD when the run walked the base tip (#26): that walk
    plus one plain ``git diff`` of the two commits (no pathspec, no index read:
    ``diff-tree`` read the 50,000-entry index, 10 ms of CPU), the same folders as
    HEAD's own walk: additions, deletions, moves, a type change, a folder of the name."""
    from gate.git import open_repo
    from tests.gitrepo import GitRepo

    g = GitRepo(tmp_path / "r")
    for folder in ("", "gone", "moved", "kept", "linked", "folder"):
        g.write(f"{folder}/dbt_project.yml".lstrip("/"), "name: a\n")
    g.write("x/my_dbt_project.yml", "name: b\n")
    first = g.commit("first")
    g.remove("gone/dbt_project.yml")
    g.move("moved/dbt_project.yml", "there/dbt_project.yml")
    g.remove("linked/dbt_project.yml")
    g.symlink("linked/dbt_project.yml", "../dbt_project.yml")
    g.remove("folder/dbt_project.yml")
    g.write("folder/dbt_project.yml/inner.txt", "c\n")
    g.write("new/deep/dbt_project.yml", "name: d\n")
    g.write("y/my_dbt_project.yml", "name: e\n")
    second = g.commit("second")
    with open_repo(g.path) as repo:
        alone = repo.folders_holding(second, "dbt_project.yml")
    with open_repo(g.path) as repo:
        calls = git_calls(repo)
        repo.named(first, ["dbt_project.yml"])
        assert repo.folders_holding(second, "dbt_project.yml") == alone
    assert alone == ["", "kept", "linked", "new/deep", "there"]
    assert [c[0] for c in calls] == ["ls-tree", "diff"]
