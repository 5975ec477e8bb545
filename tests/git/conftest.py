"""Fixtures of the git tests: a small repository with one contract, opened as a ``Repo``."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.git import Repo, open_repo
from tests.git.helpers import C, contract
from tests.gitrepo import GitRepo


@pytest.fixture
def g(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write(f"{C}/orders.yaml", contract("orders"))
    repo.write("README.md", "hello\n")
    repo.commit("initial")
    return repo


@pytest.fixture
def repo(g: GitRepo) -> Repo:
    with open_repo(g.path) as r:
        yield r
