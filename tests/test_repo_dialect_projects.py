"""Each dbt project's own dialect, where a repository's projects name different ones.

NYC Planning's data-engineering repository (measured locally, not copied) holds 18
dbt projects with a profile each: 14 on Postgres, 4 on DuckDB. One dialect for the
whole repository read every type there as Spark's, where Postgres' ``int8`` is a
``bigint`` and Spark's a ``tinyint``: ``bigint -> int8`` (no change) blocked as a
narrowing, and ``int8 -> int4`` (a narrowing) passed as a widening.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from gate.git import Repo
from gate.repo_dialect import Found, detect, project_dialect
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _profile(name: str, adapter: str) -> str:
    return f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: {adapter}\n"


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"


def _contract(table: str, type_: str) -> str:
    return f"dataset: lake/{table}\ncolumns:\n  - name: id\n    data_type: {type_}\n"


def test_each_project_has_its_own_dialect(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("products/pluto/dbt_project.yml", _project("pluto"))
    repo.write("products/pluto/profiles.yml", _profile("pluto", "postgres"))
    repo.write("products/lift/dbt_project.yml", _project("lift"))
    repo.write("products/lift/profiles.yml", _profile("lift", "duckdb"))
    repo.write("products/bare/dbt_project.yml", _project("bare"))  # no profile found
    commit = repo.commit("three projects")
    found = detect(Repo(repo.path), commit, [])
    assert found is not None
    assert (found.dialect, found.by_project) == (
        "spark",
        (("products/lift", "duckdb"), ("products/pluto", "postgres")),
    )
    assert found.source == (
        "the default; each dbt project's own profile in its folder: duckdb for 1, postgres for 1"
    )
    assert project_dialect("products/lift/models/a.sql", found) == "duckdb"
    assert project_dialect("products/pluto/models/b.yml", found) == "postgres"
    # in no project of its own: the run's dialect is used (``None``)
    assert project_dialect("products/bare/models/c.sql", found) is None
    assert project_dialect("products/liftoff/x.sql", found) is None
    assert project_dialect("products/lift/x.sql", None) is None


def test_projects_that_agree_have_one_dialect(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    for name in ("a", "b"):
        repo.write(f"{name}/dbt_project.yml", _project(name))
        repo.write(f"{name}/profiles.yml", _profile(name, "postgres"))
    commit = repo.commit("two projects")
    assert detect(Repo(repo.path), commit, []) == Found(
        "postgres", "a/profiles.yml: profile 'a', target 'dev', type postgres"
    )


def test_a_pull_request_is_graded_in_each_projects_dialect(tmp_path: Path, cli: Cli) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("pg/dbt_project.yml", _project("pg"))
    repo.write("pg/profiles.yml", _profile("pg", "postgres"))
    repo.write("duck/dbt_project.yml", _project("duck"))
    repo.write("duck/profiles.yml", _profile("duck", "duckdb"))
    repo.write("pg/contracts/same.yaml", _contract("same", "bigint"))
    repo.write("pg/contracts/narrowed.yaml", _contract("narrowed", "int8"))
    repo.write("duck/contracts/widened.yaml", _contract("widened", "int"))
    repo.commit("base")
    repo.branch("feature")
    repo.write("pg/contracts/same.yaml", _contract("same", "int8"))  # Postgres: bigint
    repo.write("pg/contracts/narrowed.yaml", _contract("narrowed", "int4"))  # bigint -> int
    repo.write("duck/contracts/widened.yaml", _contract("widened", "bigint"))
    repo.commit("types")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    found = sorted((c["dataset"], c["rule"]) for c in report["changes"])
    # Read as Spark: same.yaml bigint -> tinyint (a false block), narrowed.yaml
    # tinyint -> int (a silent widening).
    assert found == [("lake/narrowed", "type_narrowed"), ("lake/widened", "type_widened")]
    assert report["dialect"] == "spark"
    text = cli(repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml").stdout
    assert (
        "data types read as spark SQL (the default; each dbt project's own profile in its"
        " folder: duckdb for 1, postgres for 1)" in text
    )


def test_a_pr_switching_one_projects_warehouse_is_graded_as_before(
    tmp_path: Path, cli: Cli
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("pg/dbt_project.yml", _project("pg"))
    repo.write("pg/profiles.yml", _profile("pg", "postgres"))
    repo.write("duck/dbt_project.yml", _project("duck"))
    repo.write("duck/profiles.yml", _profile("duck", "duckdb"))
    repo.write("pg/contracts/t.yaml", _contract("t", "bigint"))
    repo.commit("base")
    repo.branch("feature")
    repo.write("pg/profiles.yml", _profile("pg", "spark"))  # int8 is a tinyint there
    repo.write("pg/contracts/t.yaml", _contract("t", "int8"))
    repo.commit("switch the warehouse and narrow")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    report = json.loads(proc.stdout)
    # The base's dialects apply (Postgres: no change); the switch is named.
    assert (proc.returncode, report["changes"]) == (0, []), proc.stderr
    assert (
        "this PR changes dialect in the dbt projects' profiles (pg: postgres -> pg: spark);"
        " the base branch's setting applies until it is merged"
    ) in report["notices"]
