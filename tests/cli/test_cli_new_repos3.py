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


ODCS_RIDES = (
    "apiVersion: v3.0.2\nkind: DataContract\nid: rides\nversion: 1.0.0\nstatus: active\n"
    "schema:\n  - name: daily_rides\n    properties:\n"
    "      - name: day\n        logicalType: date\n        required: true\n"
    "      - name: total\n        logicalType: integer\n"
)


def _odcs_of_a_dbt_model(
    repo: GitRepo, model_sql: str | None, properties: tuple[str, str] | None = None
) -> None:
    """An ODCS output-port contract of a dbt model that has no contract of its own,
    and a dbt data test reading the model through ref(); the PR deletes the ODCS file
    (and, when ``model_sql`` is None, the model file too). ``properties``: the
    model's properties file (no contract) at the base and at HEAD."""
    repo.write("pipeline/dbt/dbt_project.yml", PROJECT)
    if properties is not None:
        repo.write("pipeline/dbt/models/mart/_mart.yml", properties[0])
    repo.write("pipeline/dbt/models/mart/daily_rides.sql", "select 1 as day, 2 as total\n")
    repo.write(
        "pipeline/dbt/tests/assert_total.sql",
        "select *\nfrom {{ ref('daily_rides') }}\nwhere total < 0\n",
    )
    repo.write("contracts/rides.odcs.yaml", ODCS_RIDES)
    repo.commit("base")
    repo.branch("feature")
    repo.remove("contracts/rides.odcs.yaml")
    if properties is not None:
        repo.write("pipeline/dbt/models/mart/_mart.yml", properties[1])
    if model_sql is None:
        repo.remove("pipeline/dbt/models/mart/daily_rides.sql")
    else:
        repo.write("pipeline/dbt/models/mart/daily_rides.sql", model_sql)
    repo.commit("pr")


# riolties/data-contracts-lhm (8eb5e9e8, "Clean-Start"): the PR deletes the ODCS
# output-port contract of `radverkehr_tageswerte`, a dbt model (no dbt contract)
# that pipeline/dbt/models/mart/radverkehr_tageswerte.sql still builds; four dbt
# data tests read it through ref(). The contract is gone (model_removed, right),
# but the table is not: the readers still run, yet each was a consumer_broken.
def test_deleting_the_odcs_contract_of_a_dbt_model_breaks_no_reader(
    cli: Cli, repo: GitRepo
) -> None:
    _odcs_of_a_dbt_model(repo, "select 1 as day, 2 as total\n")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_removed daily_rides" in proc.stdout
    assert "consumer_broken" not in proc.stdout
    assert "still builds the table" in proc.stdout


def test_deleting_the_odcs_contract_and_its_dbt_model_breaks_the_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """The model file deleted too: the table is gone and ref() fails, a real break."""
    _odcs_of_a_dbt_model(repo, None)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken daily_rides" in proc.stdout


def test_deleting_the_odcs_contract_of_a_model_its_project_disables_breaks_the_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """``dbt_project.yml`` now disables the model's folder (``+enabled: false``):
    dbt builds nothing there and ref() fails, whatever the model file says."""
    _odcs_of_a_dbt_model(repo, "select 1 as day, 2 as total\n")
    repo.write(
        "pipeline/dbt/dbt_project.yml",
        PROJECT + "models:\n  shop:\n    mart:\n      +enabled: false\n",
    )
    repo.commit("disable the mart folder")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken daily_rides" in proc.stdout


def test_deleting_the_odcs_contract_of_a_disabled_dbt_model_breaks_the_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """The model file now says enabled=false: dbt builds nothing, ref() fails."""
    _odcs_of_a_dbt_model(repo, "{{ config(enabled=false) }}\nselect 1 as day, 2 as total\n")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken daily_rides" in proc.stdout


MART = "version: 2\nmodels:\n  - name: daily_rides\n    description: rides per day\n"


def test_deleting_the_odcs_contract_of_a_model_its_properties_disable_breaks_the_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """The model's properties file (no contract of its own) now says ``config:
    {enabled: false}``: dbt builds nothing, ref() fails, whatever the model file says."""
    disabled = MART + "    config:\n      enabled: false\n"
    _odcs_of_a_dbt_model(repo, "select 1 as day, 2 as total\n", (MART, disabled))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken daily_rides" in proc.stdout


def test_deleting_the_odcs_contract_of_a_model_its_properties_describe_breaks_no_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """The same properties entry, still enabled (its description changes): still built,
    the reader still resolves (the HEAD entry names the model)."""
    _odcs_of_a_dbt_model(
        repo, "select 1 as day, 2 as total\n", (MART, MART.replace("per day", "daily"))
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_removed daily_rides" in proc.stdout
    assert "consumer_broken" not in proc.stdout


def test_deleting_the_odcs_contract_of_an_installed_package_model_breaks_the_reader(
    cli: Cli, repo: GitRepo
) -> None:
    """The only model of that name is in ``dbt_packages/`` (an installed package, not
    the repository's own project): the gate vouches for no table there."""
    _odcs_of_a_dbt_model(repo, None)
    repo.write("pipeline/dbt/dbt_packages/rides/dbt_project.yml", PROJECT.replace("shop", "rides"))
    repo.write(
        "pipeline/dbt/dbt_packages/rides/models/daily_rides.sql", "select 1 as day, 2 as total\n"
    )
    repo.commit("vendored package")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken daily_rides" in proc.stdout
