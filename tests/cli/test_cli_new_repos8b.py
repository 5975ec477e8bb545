"""Patterns met replaying public Soda, ODCS and DCS repositories the gate had never
seen (eighth round, docs/precision.md). Each test rebuilds, in a real git repo of
its own, the shape one public file showed; nothing of those repositories is
copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

SODA_RECONCILED = (
    "dataset: ds/db/finance/exposures\n"
    "columns:\n"
    "  - name: exposure_id\n"
    "    data_type: varchar\n"
    "  - name: exposure_amount\n"
    "    data_type: decimal\n"
    "reconciliation:\n"
    "  source:\n"
    "    dataset: ds/db/finance/balances\n"
    "  checks:\n"
    "    - metric_diff:\n"
    "        source_expression: SUM(balance_amount)\n"
    "        target_expression: SUM(exposure_amount)\n"
    "        threshold:\n"
    "          must_be_less_than: 1000\n"
)


# sodadata/data-contract-template (commit 2bd3d63c, finance_bcbs239_data_contract.yml):
# Soda's own template reconciles the dataset against a source dataset with a
# top-level `reconciliation:` (Soda v4, its published contract JSON schema). The
# gate warned "not a documented Soda key, so Soda ignores it", which is false:
# Soda runs those checks. The key is Soda's; the gate does not compare it.
def test_a_soda_reconciliation_block_is_no_unknown_key(cli: Cli, repo: GitRepo) -> None:
    path = "soda/contracts/exposures.yaml"
    repo.write(path, SODA_RECONCILED)
    repo.commit("base")
    repo.branch("feature")
    added = "  - name: booked_at\n    data_type: timestamp\nreconciliation:"
    repo.write(path, SODA_RECONCILED.replace("reconciliation:", added))
    repo.commit("pr adds a column")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["warnings"] == []
    assert [(c["rule"], c["column"]) for c in report["changes"]] == [("column_added", "booked_at")]


def test_a_soda_contract_beside_its_reconciliation_is_still_compared(
    cli: Cli, repo: GitRepo
) -> None:
    path = "soda/contracts/exposures.yaml"
    repo.write(path, SODA_RECONCILED)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        path, SODA_RECONCILED.replace("  - name: exposure_amount\n    data_type: decimal\n", "")
    )
    repo.commit("pr drops a column")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert rules == {"column_removed"}


def test_a_near_miss_of_reconciliation_is_refused_like_any_soda_key(
    cli: Cli, repo: GitRepo
) -> None:
    path = "soda/contracts/exposures.yaml"
    repo.write(path, SODA_RECONCILED)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, SODA_RECONCILED.replace("reconciliation:", "reconcilation:"))
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 2
    assert f"{path}:7: unknown key 'reconcilation' (did you mean 'reconciliation'?)" in proc.stderr


ODCS_NO_V = (
    "apiVersion: 3.0.0\nkind: DataContract\nid: 097c8d17\nversion: 2.0.0\nstatus: draft\n"
    "schema:\n  - name: table1\n    properties:\n      - name: id\n        logicalType: string\n"
)


# markogajic1/DataContractExample (commits bb223dd0, aec96301): an ODCS v3 file
# whose `apiVersion: 3.0.0` lacks the `v` every ODCS v3 schema requires
# (`v3.0.0`). Refused, rightly, but "ODCS apiVersion '3.0.0' is not supported;
# the gate reads ODCS v3" read as if v3 were not v3: the message now says what
# to write.
def test_an_odcs_api_version_without_its_v_names_the_spelling(cli: Cli, repo: GitRepo) -> None:
    repo.write("datacontract.yaml", ODCS_NO_V.replace("3.0.0", "v3.0.0", 1))
    repo.commit("base")
    repo.branch("feature")
    repo.write("datacontract.yaml", ODCS_NO_V)
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 2
    assert (
        "datacontract.yaml:1: ODCS apiVersion '3.0.0' lacks its 'v': ODCS v3 writes "
        "apiVersion: v3.0.0" in proc.stderr
    ), proc.stderr


ODCS_NULLS = (
    "apiVersion: v3.0.0\nkind: DataContract\nid: 097c8d17\nversion: 2.0.0\nstatus: draft\n"
    "schema:\n"
    "  - name: table1\n    physicalType: table\n    physicalName: table1\n"
    "    authoritativeDefinitions: null\n    items: null\n"
    "  - name: table2\n    physicalType: table\n    items: null\n"
)


# markogajic1/DataContractExample (datacontract.yaml at aec96301, a generator's
# output): its schema objects carry `items: null` beside no `properties`. ODCS
# says a null is the same as the key left out (its README: "even if it is
# equivalent to not having the field"), so these are tables without columns, not
# a column written one level too high: the PR that fixed its `apiVersion` was
# refused for `items` it does not have.
def test_a_null_column_key_on_an_odcs_table_is_no_column(cli: Cli, repo: GitRepo) -> None:
    repo.write("datacontract.yaml", ODCS_NULLS.replace("v3.0.0", "3.0.0", 1))
    repo.commit("base")
    repo.branch("feature")
    repo.write("datacontract.yaml", ODCS_NULLS)
    repo.commit("pr fixes the apiVersion")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    changes = json.loads(proc.stdout)["changes"]
    assert sorted((c["rule"], c["dataset"]) for c in changes) == [
        ("model_added", "table1"),
        ("model_added", "table2"),
    ]


def test_a_column_key_with_a_value_on_an_odcs_table_is_still_refused(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("datacontract.yaml", ODCS_NULLS)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "datacontract.yaml", ODCS_NULLS.replace("    items: null\n", "    required: true\n", 1)
    )
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 2
    assert "schema[0] 'table1' has 'required' but no 'properties'" in proc.stderr, proc.stderr


SODA_FIRST_FORMAT = (
    "dataset: DIM_CUSTOMER\n"
    "columns:\n"
    "  - name: id\n    data_type: varchar\n    not_null: true\n    unique: true\n"
    "  - name: country\n    data_type: varchar\n    not_null: true\n"
    "    reference:\n      dataset: COUNTRIES\n      column: id\n"
)


# soda-core-contracts 3.1.0-3.2.4 (soda-core's `data_contract_translator.py` at
# v3.2.4) read a column's `not_null`, `unique` and `reference` as checks; 3.3
# replaced them with `checks:` and ignores them since. Met in soda-core's own
# README history while checking the key set: the gate warned "not a documented
# Soda key, so Soda ignores it", false for a file of that format, and a PR
# dropping `not_null: true` would pass silently. The gate still does not compare
# them (Soda today ignores them), but it now says what they were.
def test_soda_first_format_column_keys_are_named_for_what_they_were(
    cli: Cli, repo: GitRepo
) -> None:
    path = "soda/contracts/dim_customer.yml"
    repo.write(path, SODA_FIRST_FORMAT)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, SODA_FIRST_FORMAT.replace("    not_null: true\n    unique: true\n", ""))
    repo.commit("pr drops not_null and unique")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    warnings = {
        w["message"].split(" [")[0]: w["message"] for w in json.loads(proc.stdout)["warnings"]
    }
    assert set(warnings) == {
        "unknown key 'not_null' in columns[1]",
        "unknown key 'reference' in columns[1]",
    }, warnings
    for message in warnings.values():
        assert "soda-core-contracts 3.1-3.2" in message, message
        assert "Soda ignores it" not in message, message
        assert "the gate does not compare it" in message, message


TEMPLATE_PROJECT = (
    "name: '{{DBT_PROJECT_NAME}}'\nversion: '1.0.0'\nprofile: '{{DBT_PROJECT_NAME}}'\n"
    'model-paths: ["models"]\n'
    "models:\n  {{DBT_PROJECT_NAME}}:\n    +materialized: table\n"
)
TEMPLATE_MODELS = (
    "version: 2\nmodels:\n  - name: orders\n    description: Orders.\n"
    "    columns:\n      - name: id\n"
)
SODA_ORDERS = "dataset: orders\ncolumns:\n  - name: id\n    data_type: bigint\n"


def _template_repo(repo: GitRepo, config: str | None = None) -> None:
    repo.write("soda/contracts/orders.yaml", SODA_ORDERS)
    repo.write("skills/bootstrap/templates/dbt_project.yml", TEMPLATE_PROJECT)
    repo.write("skills/bootstrap/templates/models/_models.yml", TEMPLATE_MODELS)
    if config is not None:
        repo.write(".schema-gate.yml", config)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "skills/bootstrap/templates/models/_models.yml",
        TEMPLATE_MODELS.replace("Orders.", "Orders of {{DBT_PROJECT_NAME}}."),
    )
    repo.commit("pr edits the template's properties")


# entropy-data/dataproduct-builder-dbt (1cdd2cdb, a27a9f93, 54c75209) and
# dataproduct-builder-demo (5 commits): a skill ships a dbt project *template*
# whose `dbt_project.yml` keys a level `{{DBT_PROJECT_NAME}}:`, no YAML until
# the skill fills it. A PR touching a file of the template was refused "invalid
# YAML: found an unhashable key", naming neither why nor what to do. It stays
# refused (dbt could not parse that project either), now saying it is a
# template and giving the line that excludes its folder.
def test_a_dbt_project_template_is_refused_with_its_exclude_line(cli: Cli, repo: GitRepo) -> None:
    _template_repo(repo)
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 2
    assert "skills/bootstrap/templates/dbt_project.yml:6: invalid YAML" in proc.stderr
    assert "Jinja markup ('{{' at line 6)" in proc.stderr, proc.stderr
    assert '- "!skills/bootstrap/templates/**"' in proc.stderr, proc.stderr


def test_the_exclude_line_it_gives_lets_the_template_be(cli: Cli, repo: GitRepo) -> None:
    config = (
        "contracts:\n"
        '  - "soda/contracts/**/*.yaml"\n'
        '  - "models/**/*.yml"\n'
        '  - "!skills/bootstrap/templates/**"\n'
    )
    _template_repo(repo, config)
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["changes"] == []
