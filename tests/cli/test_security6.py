"""Hostile pull requests, round six: fail-open paths in the newest readers (each
dbt project's own dialect, exclusions, ``../`` resource paths) and inputs of a few
KB that should not take seconds. Each test commits the attack to a real git
repository and runs the CLI in-process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _profile(name: str, adapter: str) -> str:
    return f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: {adapter}\n"


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"


def _contract(type_: str) -> str:
    return f"dataset: lake/x\ncolumns:\n  - name: id\n    data_type: {type_}\n"


def _rules(proc: CompletedProcess[str]) -> list[tuple[str, str | None, str | None]]:
    report = json.loads(proc.stdout)
    return sorted((c["rule"], c["before"], c["after"]) for c in report["changes"])


def test_a_contract_moved_into_another_warehouses_project_keeps_its_old_types(
    cli: Cli, repo: GitRepo
) -> None:
    """Each dbt project is graded in its own dialect, and a pair was graded in the
    dialect of its HEAD path only. A PR moving a Postgres contract into the
    Databricks project read the base's ``int8`` (Postgres: BIGINT) as Spark's
    TINYINT: ``bigint -> smallint`` passed as a widening, exit 0. The base side's
    types are read in the base path's dialect."""
    repo.write("pg/dbt_project.yml", _project("pg"))
    repo.write("pg/profiles.yml", _profile("pg", "postgres"))
    repo.write("sp/dbt_project.yml", _project("sp"))
    repo.write("sp/profiles.yml", _profile("sp", "databricks"))
    repo.write("pg/contracts/x.yaml", _contract("int8"))
    repo.commit("base")
    repo.branch("feature")
    repo.move("pg/contracts/x.yaml", "sp/contracts/x.yaml")
    repo.write("sp/contracts/x.yaml", _contract("smallint"))
    repo.commit("pr: move into the Spark project and narrow")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _rules(proc) == [("type_narrowed", "BIGINT", "SMALLINT")]
    # The other way round: Spark's ``int8`` (TINYINT) moved to Postgres as smallint widens.
    repo.checkout("main")
    repo.branch("back")
    repo.move("pg/contracts/x.yaml", "sp/contracts/x.yaml")
    repo.commit("the contract lives in the Spark project")
    repo.branch("pr2")
    repo.move("sp/contracts/x.yaml", "pg/contracts/x.yaml")
    repo.write("pg/contracts/x.yaml", _contract("int2"))
    repo.commit("pr: move into the Postgres project as int2")
    proc = cli(
        repo.path, "--base", "back", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _rules(proc) == [("type_widened", "TINYINT", "SMALLINT")]


def _dbt(cols: tuple[str, ...]) -> str:
    return (
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n"
        + "".join(f"      - name: {c}\n        data_type: int\n" for c in cols)
    )


def test_a_project_folder_named_with_a_leading_bang_is_no_exclusion(
    cli: Cli, repo: GitRepo
) -> None:
    """Folders of a dbt project are written into git globs (``<root>/**/*.yml``) with
    their glob characters escaped, but a leading ``!`` was left as it was: the
    folder ``!shop`` made ``!shop/**/*.yml``, an *exclusion*. Its own properties
    files were taken out of every listing and search built from it, and the
    run stopped on "no contract globs given" (exit 2) for a repository dbt
    builds; beside another project, the folder's files silently vanished from
    the listing. The ``!`` is escaped as a literal."""
    project = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    repo.write("!shop/dbt_project.yml", project)
    repo.write("!shop/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("!shop/models/_m.yml", _dbt(("id", "amount")))
    repo.write("!shop/models/reader.sql", "select amount from {{ ref('orders') }}\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("!shop/models/orders.sql", "select 1 as id\n")
    repo.write("!shop/models/_m.yml", _dbt(("id",)))
    repo.commit("pr: drop amount")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [r for r, _b, _a in _rules(proc)] == ["column_removed", "consumer_broken"]
