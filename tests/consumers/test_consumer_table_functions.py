"""A ``ref()`` passed to a function in FROM is a read of that model.

Snowflake's ``table(dynamic_table_refresh_boundary({{ ref('x') }}))`` and
``lateral flatten(input => {{ ref('x') }})`` render ``x`` as a function argument:
sqlglot parses it as a column, not a table, so the reader was never seen (a removed
model passed). Now such a ref reads the table, and every column (``*``: its
columns cannot be resolved), so it is listed as a reader of a dropped column but
never made a ``consumer_broken`` for one. Each test builds its own small
repository; nothing is copied.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = (
    "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    "models:\n  shop:\n    +contract: {enforced: true}\n"
)
CONTRACT = (
    "models:\n  - name: orders\n    columns:\n"
    "      - name: id\n        data_type: int\n"
    "      - name: status\n        data_type: string\n"
)
READERS = {
    "boundary": "select *\nfrom table(dynamic_table_refresh_boundary({{ ref('orders') }}))\n",
    "flatten": "select f.value:id as id\nfrom lateral flatten(input => {{ ref('orders') }}) f\n",
    "function": "select id\nfrom table(my_udtf({{ ref('orders') }}))\n",
}


def _base(repo: GitRepo, reader: str) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/orders.sql", "select 1 as id, 'a' as status\n")
    repo.write("models/_orders.yml", CONTRACT)
    repo.write("models/marts/report.sql", reader)
    repo.commit("base")
    repo.branch("feature")


def _report(cli: Cli, repo: GitRepo) -> dict:
    proc = cli(repo.path, "--base", "main", "--format", "json", "--dialect", "snowflake")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_model_removed_breaks_a_reader_through_a_table_function(
    cli: Cli, repo: GitRepo, reader: str
) -> None:
    _base(repo, READERS[reader])
    repo.remove("models/_orders.yml")
    repo.remove("models/orders.sql")
    repo.commit("pr: remove orders")
    data = _report(cli, repo)
    broken = [c for c in data["changes"] if c["rule"] == "consumer_broken"]
    assert [(c["path"], c["line"]) for c in broken] == [("models/marts/report.sql", 2)], data


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_dropped_column_lists_the_reader_but_breaks_nothing(
    cli: Cli, repo: GitRepo, reader: str
) -> None:
    _base(repo, READERS[reader])
    repo.write(
        "models/_orders.yml",
        CONTRACT.replace("      - name: status\n        data_type: string\n", ""),
    )
    repo.commit("pr: drop status")
    data = _report(cli, repo)
    assert not [c for c in data["changes"] if c["rule"] == "consumer_broken"], data
    removed = next(c for c in data["changes"] if c["rule"] == "column_removed")
    assert [(c["path"], c["usage"]) for c in removed["consumers"]] == [
        ("models/marts/report.sql", "star")
    ], removed


# Snowflake's DYNAMIC_TABLE_REFRESH_BOUNDARY(t) in FROM reads t "like a normal table"
# (Sage-Bionetworks/snowflake's marts, measured locally, not copied): its columns
# resolve as t's, so a dropped column it selects breaks it, and one it does not
# select does not.
BOUNDARY = (
    "with base as (\n    select id, status\n"
    "    from dynamic_table_refresh_boundary({{ ref('orders') }})\n)\n"
    "select base.id, base.status from base\n"
)


def test_a_refresh_boundary_reads_the_columns_of_its_table(cli: Cli, repo: GitRepo) -> None:
    _base(repo, BOUNDARY)
    repo.write(
        "models/_orders.yml",
        CONTRACT.replace("      - name: status\n        data_type: string\n", ""),
    )
    repo.commit("pr: drop status")
    data = _report(cli, repo)
    broken = [c for c in data["changes"] if c["rule"] == "consumer_broken"]
    assert [(c["path"], c["line"]) for c in broken] == [("models/marts/report.sql", 2)], data


def test_a_refresh_boundary_reader_of_other_columns_is_not_broken(cli: Cli, repo: GitRepo) -> None:
    _base(repo, BOUNDARY.replace(", status", "").replace(", base.status", ""))
    repo.write(
        "models/_orders.yml",
        CONTRACT.replace("      - name: status\n        data_type: string\n", ""),
    )
    repo.commit("pr: drop status")
    proc = cli(repo.path, "--base", "main", "--format", "json", "--dialect", "snowflake")
    data = json.loads(proc.stdout)
    assert not [c for c in data["changes"] if c["rule"] == "consumer_broken"], data
    removed = next(c for c in data["changes"] if c["rule"] == "column_removed")
    assert removed.get("consumers", []) == [], removed
