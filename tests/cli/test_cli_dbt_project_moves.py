"""A dbt project renamed and moved in one PR is the same project.

NYCPlanning/data-engineering (sixth round, docs/precision.md, 05091113) moved
``products/lion`` to ``products/cscl`` and changed its ``name:`` in the same
commit: every enforced model was ``model_renamed`` and the PR was blocked,
though the same rename in place passes. A file moved between two projects that
both live on stays a move of models between projects.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROPS = (
    "version: 2\nmodels:\n  - name: streets\n"
    "    config:\n      contract:\n        enforced: true\n"
    "    columns:\n      - name: street_id\n        data_type: int\n{extra}"
)


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def _lion(repo: GitRepo, root: str = "products/lion") -> None:
    repo.write(f"{root}/dbt_project.yml", _project("lion"))
    repo.write(f"{root}/models/streets.sql", "select 1 as street_id\n")
    repo.write(f"{root}/models/streets.yml", PROPS.format(extra=""))


def _move(repo: GitRepo, old: str, new: str) -> None:
    for name in ("dbt_project.yml", "models/streets.sql", "models/streets.yml"):
        data = (repo.path / old / name).read_text()
        (repo.path / old / name).unlink()
        repo.write(f"{new}/{name}", data)


def test_a_project_renamed_and_moved_at_once_is_the_same_project(cli: Cli, repo: GitRepo) -> None:
    _lion(repo)
    repo.commit("base")
    repo.branch("feature")
    _move(repo, "products/lion", "products/cscl")
    repo.write("products/cscl/dbt_project.yml", _project("cscl"))
    repo.commit("pr: lion becomes cscl")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_renamed" not in proc.stdout


def test_a_column_dropped_in_the_moved_and_renamed_project_is_still_caught(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("products/lion/dbt_project.yml", _project("lion"))
    repo.write("products/lion/models/streets.sql", "select 1 as street_id, 2 as borough\n")
    extra = "      - name: borough\n        data_type: int\n"
    repo.write("products/lion/models/streets.yml", PROPS.format(extra=extra))
    repo.commit("base")
    repo.branch("feature")
    _move(repo, "products/lion", "products/cscl")
    repo.write("products/cscl/dbt_project.yml", _project("cscl"))
    repo.write("products/cscl/models/streets.yml", PROPS.format(extra=""))
    repo.commit("pr: lion becomes cscl and drops borough")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert '"rule": "column_removed"' in proc.stdout
    assert "model_renamed" not in proc.stdout


def test_a_model_moved_into_another_living_project_is_no_project_rename(
    cli: Cli, repo: GitRepo
) -> None:
    _lion(repo)
    repo.write("products/cscl/dbt_project.yml", _project("cscl"))
    repo.write("products/cscl/models/other.sql", "select 1 as x\n")
    repo.write("products/lion/models/keep.sql", "select 1 as k\n")
    repo.commit("base")
    repo.branch("feature")
    for name in ("models/streets.sql", "models/streets.yml"):
        data = (repo.path / "products/lion" / name).read_text()
        (repo.path / "products/lion" / name).unlink()
        repo.write(f"products/cscl/{name}", data)
    repo.commit("pr: streets moves from lion to cscl")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    # Both projects live on: streets now belongs to cscl (readers' ref('lion', ...)
    # break), reported as before this change.
    assert proc.returncode == 1, proc.stdout + proc.stderr
