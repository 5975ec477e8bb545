"""A key written twice in a dbt file is read as dbt reads it: the last value wins.

NYCPlanning/data-engineering (sixth round, docs/precision.md) kept a properties
file with a column's ``data_type`` written twice from 2024-05 to 2025-11; dbt
built it (dbt 1.10 warns ``DuplicateYAMLKeysDeprecation``; earlier versions say
nothing) and the gate refused every PR that touched it. ``dbt parse`` 1.10.23
on a project with two ``models:`` blocks keeps only the second (checked by
hand: the first block's model loses its contract). Other formats still refuse
a repeated key: their tools differ, and a lost DCS field would be silent.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
ENFORCED = "    config:\n      contract:\n        enforced: true\n"


def _model(name: str, columns: str) -> str:
    return f"  - name: {name}\n{ENFORCED}    columns:\n{columns}"


def _pr(repo: GitRepo, before: str, after: str, project: str = PROJECT) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/orders.sql", "select 1 as order_id, 2 as amount\n")
    repo.write("models/customers.sql", "select 1 as customer_id\n")
    repo.write("models/core.yml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("dbt_project.yml", project)
    repo.write("models/core.yml", after)
    repo.commit("pr")


ORDERS = "      - name: order_id\n        data_type: bigint\n"
AMOUNT = "      - name: amount\n        data_type: int\n"


def test_a_repeated_key_in_a_dbt_file_is_a_warning_not_a_refusal(cli: Cli, repo: GitRepo) -> None:
    before = "version: 2\nmodels:\n" + _model("orders", ORDERS)
    twice = "      - name: order_id\n        data_type: bigint\n        data_type: bigint\n"
    after = "version: 2\nmodels:\n" + _model("orders", twice + AMOUNT)
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/core.yml:10" in proc.stdout  # the repeat, named with its line
    assert "written twice" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_the_last_of_a_repeated_key_is_the_value_compared(cli: Cli, repo: GitRepo) -> None:
    before = "version: 2\nmodels:\n" + _model("orders", ORDERS)
    narrowed = "      - name: order_id\n        data_type: bigint\n        data_type: int\n"
    after = "version: 2\nmodels:\n" + _model("orders", narrowed)
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert '"rule": "type_narrowed"' in proc.stdout


def test_a_second_models_block_replaces_the_first_as_in_dbt(cli: Cli, repo: GitRepo) -> None:
    both = _model("orders", ORDERS) + _model("customers", "      - name: customer_id\n")
    before = "version: 2\nmodels:\n" + both
    after = (
        "version: 2\nmodels:\n"
        + _model("orders", ORDERS)
        + "models:\n"
        + _model("customers", "      - name: customer_id\n")
    )
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main", "--format", "json")
    # dbt builds only the second block's models: orders is no longer declared.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert '"rule": "model_removed"' in proc.stdout
    assert '"dataset": "orders"' in proc.stdout


def test_a_repeated_key_in_dbt_project_yml_is_read_as_dbt_reads_it(cli: Cli, repo: GitRepo) -> None:
    before = "version: 2\nmodels:\n" + _model("orders", ORDERS)
    after = "version: 2\nmodels:\n" + _model("orders", ORDERS + AMOUNT)
    _pr(repo, before, after, project=PROJECT + "profile: shop\nprofile: shop\n")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_repeated_key_in_a_soda_contract_is_still_refused(cli: Cli, repo: GitRepo) -> None:
    repo.write("soda/contracts/orders.yaml", "dataset: orders\ncolumns:\n  - name: id\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "soda/contracts/orders.yaml",
        "dataset: orders\ncolumns:\n  - name: id\n    data_type: int\n    data_type: bigint\n",
    )
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "soda/contracts/orders.yaml:5: invalid YAML: duplicate key 'data_type'" in proc.stderr
