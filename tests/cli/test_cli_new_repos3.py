"""Patterns met replaying public repositories the gate had never seen (fourth round,
docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public file showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"

ORDERS = (
    "version: 2\nmodels:\n  - name: fct_orders\n"
    "    latest_version: 1\n"
    "    config:\n      contract:\n        enforced: true\n"
    "    columns:\n"
    "      - name: order_id\n        data_type: string\n"
    "      - name: order_total\n        data_type: int\n"
    "    versions:\n"
    "      - v: 2\n        columns:\n          - include: all\n{exclude}"
    "      - v: 1\n{v1_columns}"
)


def _orders(exclude: str = "", v1_columns: str = "") -> str:
    return ORDERS.format(exclude=exclude, v1_columns=v1_columns)


def _dbt_pr(repo: GitRepo, before: str, after: str) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/fct_orders_v1.sql", "select 1 as order_id\n")
    repo.write("models/fct_orders_v2.sql", "select 1 as order_id\n")
    repo.write("models/schema.yml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/schema.yml", after)
    repo.commit("pr")


# christineberger/dbt-snowflake-demo-upstream, models/marts/docs/fct_customer_orders.yml
# (merge 5a72374c): version 2 of an enforced model says `include: all` with
# `exclude: [customer_comment]`, a column only version 1 had declared (and the PR
# drops it there). dbt filters the model's columns through the list and never
# checks that an excluded name exists (dbt_common IncludeExclude.includes), so
# the project parses and builds; the gate refused the file.
def test_an_exclude_naming_no_column_excludes_nothing(cli: Cli, repo: GitRepo) -> None:
    before = _orders(
        v1_columns="        columns:\n          - name: memo\n            data_type: string\n"
    )
    after = _orders(exclude="            exclude: [memo]\n")
    _dbt_pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # v1 lost its own column: the one real break of that PR, now seen.
    assert "column_removed fct_orders.v1.memo" in proc.stdout
    # v2 is unchanged: the exclude removes nothing.
    assert "fct_orders.v2" not in proc.stdout


def test_an_exclude_naming_no_column_keeps_every_column(cli: Cli, repo: GitRepo) -> None:
    """The unknown name changes nothing: v2 keeps order_total, so no break at all."""
    _dbt_pr(repo, _orders(), _orders(exclude="            exclude: [memo]\n"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
