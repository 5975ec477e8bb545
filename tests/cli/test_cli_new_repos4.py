"""Patterns met replaying public repositories the gate had never seen (fifth round,
docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public file showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"

TEMPLATED = "\"{{ 2 if target.name == 'uat' else 1 }}\""

CUSTOMERS = (
    "version: 2\nmodels:\n  - name: dim_customers\n"
    "    access: public\n"
    "    latest_version: {latest}\n"
    "{config}"
    "    columns:\n"
    "      - name: customer_id\n        data_type: int\n"
    "{extra}"
    "    versions:\n"
    "      - v: 1\n"
    "      - v: 2\n        config:\n          tags: ['uat']\n"
)

ENFORCED = "    config:\n      contract:\n        enforced: true\n"
SEGMENT = "      - name: segment\n        data_type: string\n"


def _customers(latest: str, config: str = "", extra: str = "") -> str:
    return CUSTOMERS.format(latest=latest, config=config, extra=extra)


def _dbt_pr(repo: GitRepo, before: str, after: str) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/dim_customers_v1.sql", "select 1 as customer_id\n")
    repo.write("models/dim_customers_v2.sql", "select 1 as customer_id\n")
    repo.write("models/orders.sql", "select 1 as order_id\n")
    repo.write(
        "models/orders.yml",
        "version: 2\nmodels:\n  - name: orders\n"
        "    config:\n      contract:\n        enforced: true\n"
        "    columns:\n      - name: order_id\n        data_type: int\n",
    )
    repo.write("models/core.yml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/core.yml", after)
    repo.commit("pr")


# pbarnes-dbt-projects/penny_snowflake_demo, models/marts/core/_core__models.yml
# (merge 501f985d and nine later merges): `latest_version: "{{ 2 if target.name ==
# 'uat' else 1 }}"`. dbt renders Jinja in a properties file's values before it
# reads them (SchemaYamlRenderer renders latest_version), so `dbt parse` picks v1
# or v2 by target; the gate refused every PR touching the file ("latest_version
# {{ ... }} is not one of its versions").
def test_a_templated_latest_version_is_not_refused(cli: Cli, repo: GitRepo) -> None:
    before = _customers("1")
    after = _customers(TEMPLATED, extra="      - name: region\n")
    _dbt_pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "latest_version" in proc.stdout  # said, not silently guessed
    assert "cannot evaluate" in proc.stdout


def test_an_enforced_model_with_a_templated_latest_version_is_still_compared(
    cli: Cli, repo: GitRepo
) -> None:
    before = _customers(TEMPLATED, config=ENFORCED, extra=SEGMENT)
    after = _customers(TEMPLATED, config=ENFORCED)
    _dbt_pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed dim_customers.v1.segment" in proc.stdout
    assert "column_removed dim_customers.v2.segment" in proc.stdout
    # Said once, by HEAD: the base that says the same is not "broken".
    assert proc.stdout.count("cannot evaluate") == 1, proc.stdout
    assert "base version is broken" not in proc.stdout


def test_a_constant_templated_latest_version_names_its_version(cli: Cli, repo: GitRepo) -> None:
    before = _customers("1", config=ENFORCED)
    after = _customers('"{{ 3 }}"', config=ENFORCED)
    _dbt_pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "latest_version 3 is not one of its versions" in proc.stderr


def test_a_variable_latest_version_is_no_label(cli: Cli, repo: GitRepo) -> None:
    _dbt_pr(repo, _customers("1"), _customers('"{{ target.name }}"'))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cannot evaluate" in proc.stdout


DCS = (
    "dataContractSpecification: 1.2.1\nid: esg\n"
    "info:\n  title: ESG\n  version: 1.0.0\n"
    "models:\n  companies:\n    type: table\n    fields:\n"
    "      company_id:\n        type: string\n        required: true\n"
    "{ref}"
    "{definitions}"
)

MAPPINGS = (
    "definitions:\n  variable_mappings:\n    title: Metric to variable mappings\n"
    "    fields:\n      energy_consumed:\n        target: ENERGYUSETOTAL\n"
    "        confidence: 100\n"
)


def _dcs_pr(repo: GitRepo, after: str) -> None:
    repo.write("datacontract.yaml", DCS.format(ref="", definitions=""))
    repo.commit("base")
    repo.branch("feature")
    repo.write("datacontract.yaml", after)
    repo.commit("pr")


# Inspiring-Ming/ESG-Metric-System, datacontract.yaml (ca11127b): a DCS 1.2.1
# contract keeps a lookup table under `definitions:` (metric name -> dataset
# variable, with a confidence) that no field `$ref`s. The DCS schema wants a
# `type` on every definition, so the gate refused the file; but a definition is
# compared only through a local `$ref` (external ones are not resolved), so no
# model or column can change with it: a warning, like `team` or `servers`.
def test_a_definition_no_field_refers_to_is_not_compared(cli: Cli, repo: GitRepo) -> None:
    _dcs_pr(repo, DCS.format(ref="", definitions=MAPPINGS))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "'type' is required in definitions.variable_mappings" in proc.stdout
    assert "does not compare" in proc.stdout


def test_a_definition_a_field_refers_to_is_still_checked(cli: Cli, repo: GitRepo) -> None:
    ref = "      energy:\n        $ref: '#/definitions/variable_mappings'\n"
    _dcs_pr(repo, DCS.format(ref=ref, definitions=MAPPINGS))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "'type' is required in definitions.variable_mappings" in proc.stderr
