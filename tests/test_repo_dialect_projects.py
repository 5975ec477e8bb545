"""Each dbt project's own dialect (``gate.repo_dialect.project_dialects``).

NYC Planning's data-engineering repository (measured locally, not copied) holds 18
dbt projects with a profile each: 14 on Postgres, 4 on DuckDB. ``detect`` has no one
answer for it (a notice, then Spark for every file); per project, each has one.
"""

from __future__ import annotations

from pathlib import Path

from gate.git import Repo
from gate.repo_dialect import detect, dialect_of, project_dialects
from tests.gitrepo import GitRepo


def _profile(name: str, adapter: str) -> str:
    return f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: {adapter}\n"


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"


def test_each_project_has_its_own_dialect(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("products/pluto/dbt_project.yml", _project("pluto"))
    repo.write("products/pluto/profiles.yml", _profile("pluto", "postgres"))
    repo.write("products/lift/dbt_project.yml", _project("lift"))
    repo.write("products/lift/profiles.yml", _profile("lift", "duckdb"))
    repo.write("products/bare/dbt_project.yml", _project("bare"))  # no profile found
    commit = repo.commit("three projects")
    gate_repo = Repo(repo.path)
    notices: list[str] = []
    assert detect(gate_repo, commit, notices) is None and notices  # no one answer
    found = project_dialects(gate_repo, commit, [])
    assert {root: f.dialect for root, f in found.items()} == {
        "products/pluto": "postgres",
        "products/lift": "duckdb",
    }
    assert dialect_of("products/lift/models/a.sql", found, "spark") == "duckdb"
    assert dialect_of("products/pluto/models/b.yml", found, "spark") == "postgres"
    assert dialect_of("products/bare/models/c.sql", found, "spark") == "spark"
    assert dialect_of("products/liftoff/x.sql", found, "spark") == "spark"
