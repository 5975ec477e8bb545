"""Exclusions in the working tree's listings (``Changes._listed``).

git 2.39's ``ls-files`` drops every match of a wildcard pathspec when an
exclusion of some lengths is beside it: ``git ls-files -- 'platform/*.yml'
':!.github'`` lists nothing, ``':!.githubxx'`` lists the files (reported on
git's list in January 2021). The gate's own default globs hold ``!.github/**``:
a dbt project renamed in the working tree lost every model (``model_removed``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.git import Repo
from tests.gitrepo import GitRepo

#: Lengths around the positive pattern's: some of these dropped everything.
EXCLUDED = [".github", "abcde", ".gitx", "ab.cd", "abcdef", ".githubxx", "platform/models"]


@pytest.fixture
def tree(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "r")
    repo.write("platform/dbt_project.yml", "name: p\n")
    repo.write("platform/models/_models.yml", "version: 2\n")
    repo.write("platform/gone.yml", "x: 1\n")
    repo.write("legacy/old.yml", "x: 1\n")
    repo.commit("base")
    repo.write("platform/new.yml", "x: 1\n")  # untracked
    (repo.path / "platform/gone.yml").unlink()  # deleted from disk
    return repo


@pytest.mark.parametrize("excluded", EXCLUDED)
def test_an_exclusion_takes_out_what_it_matches_and_nothing_else(
    tree: GitRepo, excluded: str
) -> None:
    listed = Repo(tree.path).list_files(None, ["platform/**/*.yml", f"!{excluded}/**"])
    everything = {"platform/dbt_project.yml", "platform/models/_models.yml", "platform/new.yml"}
    expected = {p for p in everything if not p.startswith(f"{excluded}/")}
    assert set(listed) == expected


def test_an_exclusion_of_untracked_and_tracked_files(tree: GitRepo) -> None:
    listed = Repo(tree.path).list_files(None, ["**/*.yml", "!platform/new.yml", "!legacy/**"])
    assert set(listed) == {"platform/dbt_project.yml", "platform/models/_models.yml"}
