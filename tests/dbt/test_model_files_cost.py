"""The properties of changed dbt models are searched once a side per project.

A PR moving many dbt projects (each folder renamed with its project) searched
every project folder's properties for its models' names four times, one
``git grep`` each: the second pair repeated the first for the files the change
implicates. 500 such projects: 2,400 gits, 43 s of wall time under load.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from gate.git.repo import Repo
from tests.cost import counting
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROPS = (
    "version: 2\nmodels:\n  - name: m{i}\n    config:\n      contract:\n        enforced: true\n"
    "    columns:\n      - name: id\n        data_type: int\n"
)


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def test_moving_many_projects_searches_each_folder_once_a_side(
    cli: Cli, repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 20
    for i in range(count):
        repo.write(f"p{i}/dbt_project.yml", _project(f"p{i}"))
        repo.write(f"p{i}/models/m{i}.sql", "select 1 as id\n")
        repo.write(f"p{i}/models/_m.yml", PROPS.format(i=i))
    repo.commit("base")
    repo.branch("feature")
    for i in range(count):
        for name in ("dbt_project.yml", f"models/m{i}.sql", "models/_m.yml"):
            repo.remove(f"p{i}/{name}")
        repo.write(f"q{i}/dbt_project.yml", _project(f"q{i}"))
        repo.write(f"q{i}/models/m{i}.sql", "select 1 as id\n")
        repo.write(f"q{i}/models/_m.yml", PROPS.format(i=i))
    repo.commit("pr: every project moves and takes its folder's name")
    searches = counting(monkeypatch, Repo, "files_containing")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # two project folders (before, after) a project, one search a side each, and
    # a few searches of the run (SQLMesh configs, ...)
    assert len(searches) <= 2 * 2 * count + 8, len(searches)  # 165 before
