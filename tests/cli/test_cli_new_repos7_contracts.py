"""Patterns met replaying public repositories the gate had never seen (seventh
round, docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public file showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

DCS = (
    "dataContractSpecification: 1.1.0\nid: orders\ninfo:\n  title: Orders\n"
    "  version: 1.0.0\n"
    "models:\n  orders:\n    type: table\n    fields:\n"
    "      order_id:\n        type: string\n        required: true\n"
)

WORKFLOW = (
    "name: Data contract\non:\n  push:\n    branches: [main]\njobs:\n  test:\n"
    "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
    "      - run: pip install datacontract-cli\n"
    "      - run: datacontract test datacontract.yaml{extra}\n"
)


# jochenchrist/datacontract-junit-test (commits 18963fba, ac0851a0): a GitHub
# Actions workflow named `.github/workflows/datacontract.yml`, the name
# datacontract-cli's own docs give it (docs/scheduling/github-actions.md). The
# default glob `**/datacontract.yml` matched it, so every PR that edited the
# workflow was refused "not a recognised contract".
def test_a_workflow_named_datacontract_yml_is_not_read_as_a_contract(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("datacontract.yaml", DCS)
    repo.write(".github/workflows/datacontract.yml", WORKFLOW.format(extra=""))
    repo.commit("base")
    repo.branch("feature")
    repo.write(".github/workflows/datacontract.yml", WORKFLOW.format(extra=" --publish x"))
    repo.commit("pr edits the workflow")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["changes"] == []


def test_the_contract_beside_the_workflow_is_still_compared(cli: Cli, repo: GitRepo) -> None:
    repo.write("datacontract.yaml", DCS)
    repo.write(".github/workflows/datacontract.yml", WORKFLOW.format(extra=""))
    repo.commit("base")
    repo.branch("feature")
    repo.write("datacontract.yaml", DCS.replace("type: string", "type: int"))
    repo.write(".github/workflows/datacontract.yml", WORKFLOW.format(extra=" --publish x"))
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert "type_changed" in rules


def test_a_workflow_alone_is_no_contract(cli: Cli, repo: GitRepo) -> None:
    """With only the workflow, there is no contract yet: exit 2 by design, for that reason."""
    repo.write("README.md", "x\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write(".github/workflows/datacontract.yml", WORKFLOW.format(extra=""))
    repo.commit("pr adds the workflow")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2
    assert "no contract file matches" in proc.stderr
    assert "not a recognised contract" not in proc.stderr


SODACL = (
    "checks for orders:\n  - row_count > 0\n  - missing_count(order_id) = 0\n"
    "  - invalid_count(status) = 0:\n      valid values: [NEW, SHIPPED]\n"
)


# ujjwalredd/Supply-Chain, commit ea580d8c: SodaCL scan checks (`checks for
# orders:`) and a Soda data source file under `contracts/`, which a default glob
# matches. The refusal is right (the gate compares Soda *contracts*, `dataset:`),
# but it said "expected ... a Soda contract ('dataset:')" of a file that is Soda's:
# it now says what the file is, and keeps the exclude line.
def test_a_sodacl_checks_file_is_named_as_such(cli: Cli, repo: GitRepo) -> None:
    repo.write("README.md", "x\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yml", SODACL)
    repo.write(
        "contracts/soda_connection.yml",
        "data_source supply_chain_db:\n  type: postgres\n  host: localhost\n",
    )
    repo.commit("pr adds soda checks")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    checks = next(line for line in lines if "contracts/orders.yml" in line)
    assert "SodaCL checks file ('checks for orders')" in checks, checks
    assert '"!contracts/orders.yml"' in checks
    source = next(line for line in lines if "contracts/soda_connection.yml" in line)
    assert "Soda data source configuration ('data_source supply_chain_db')" in source, source
    assert '"!contracts/soda_connection.yml"' in source


# anilsolanki2645/schema-guard, contracts/orders.yaml: a format of the project's own
# (`source:` and `columns:` with `type`/`nullable`). Refused as a Soda contract
# without `dataset:`, with no exclude line: now the line is there too.
def test_a_columns_file_of_another_tool_gets_the_exclude_line(cli: Cli, repo: GitRepo) -> None:
    repo.write("README.md", "x\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "contracts/orders.yaml",
        "source:\n  name: prod_orders\n  type: postgres\n"
        "columns:\n  - name: order_id\n    type: integer\n    nullable: false\n",
    )
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2
    assert "'dataset' is missing: a Soda contract needs 'dataset:'" in proc.stderr
    assert '"!contracts/orders.yaml"' in proc.stderr


SODA_FIXTURES = (
    "dataset: football/main/fixtures\n"
    "checks:\n  - row_count:\n      threshold:\n        must_be_greater_than: 0\n"
    "columns:\n  - name: fixture_id\n    checks:\n      - missing:\n      - duplicate:\n"
    "  - name: league_id\n    checks:\n      - missing:\n"
    "  - name: home_team_name\n    checks:\n      - missing:\n"
)


def _monorepo(repo: GitRepo) -> None:
    """A dbt project in one folder, a Soda v4 contract in another project's
    `soda/contracts/` (not at the repository root)."""
    repo.write(
        "data_modelling/dbt_project.yml",
        "name: football\nversion: '1.0.0'\nconfig-version: 2\nprofile: football\n"
        "model-paths: ['models']\n",
    )
    repo.write("data_modelling/models/stg_fixtures.sql", "select * from raw.fixtures\n")
    repo.write(
        "data_modelling/models/sources.yml",
        "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: fixtures\n",
    )
    repo.write(
        "data_modelling/models/schema.yml",
        "version: 2\nmodels:\n  - name: stg_fixtures\n    columns:\n      - name: fixture_id\n",
    )
    repo.write("football/soda/contracts/fixtures.yaml", SODA_FIXTURES)


# itsbillw/beara_bones: a monorepo whose Soda v4 contract lives in
# `football/soda/contracts/fixtures.yaml` (Soda's docs: "a top level directory
# called soda" per project). The default glob `soda/contracts/**` is root-only, and
# the dbt project's files kept the run from stopping at "no contract": a PR that
# dropped a column from that contract passed, "no contract changes".
def test_a_soda_contract_under_a_projects_soda_contracts_is_compared(
    cli: Cli, repo: GitRepo
) -> None:
    _monorepo(repo)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "football/soda/contracts/fixtures.yaml",
        SODA_FIXTURES.replace("  - name: league_id\n    checks:\n      - missing:\n", ""),
    )
    repo.commit("pr drops league_id")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = {(c["rule"], c["column"]) for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert ("column_removed", "league_id") in found


def test_an_additive_edit_there_passes(cli: Cli, repo: GitRepo) -> None:
    _monorepo(repo)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "football/soda/contracts/fixtures.yaml",
        SODA_FIXTURES + "  - name: away_team_name\n    checks:\n      - missing:\n",
    )
    repo.commit("pr adds a column")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rules = [c["rule"] for c in json.loads(proc.stdout)["changes"]]
    assert rules == ["column_added"]


def _dbt_and_soda(repo: GitRepo, dataset: str) -> None:
    repo.write(
        "dbt/dbt_project.yml",
        "name: energy\nversion: '1.0.0'\nconfig-version: 2\nprofile: energy\n"
        "model-paths: ['models']\n",
    )
    repo.write("dbt/models/stg_generation.sql", "select id, twh from raw.generation\n")
    repo.write(
        "dbt/models/renewable_share.sql",
        "select id, twh * 2 as share from {{ ref('stg_generation') }}\n",
    )
    repo.write(
        "soda/contracts/stg_generation.yml",
        f"dataset: {dataset}\ncolumns:\n  - name: id\n    checks:\n      - missing:\n"
        "  - name: twh\n",
    )


# mohamed-boughattas/renewable-energy-pipeline (a PR edit of ours on it): Soda v4
# contracts of the tables a dbt project builds, `dataset:
# duckdb_ds/data/renewable_energy/main/stg_monthly_generation`. Deleting (or
# renaming) that contract deletes no table: dbt still builds the model, and the
# reader's `ref('stg_monthly_generation')` still resolves. With an unqualified
# dataset name the reader is listed, not broken (the fourth round's rule).
def test_a_deleted_soda_contract_of_a_dbt_model_leaves_its_readers_running(
    cli: Cli, repo: GitRepo
) -> None:
    _dbt_and_soda(repo, "stg_generation")
    repo.commit("base")
    repo.branch("feature")
    repo.remove("soda/contracts/stg_generation.yml")
    repo.commit("pr deletes the contract")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert rules == {"model_removed"}, proc.stdout


def test_the_same_with_a_qualified_soda_dataset(cli: Cli, repo: GitRepo) -> None:
    _dbt_and_soda(repo, "duckdb_ds/data/energy/main/stg_generation")
    repo.commit("base")
    repo.branch("feature")
    repo.remove("soda/contracts/stg_generation.yml")
    repo.commit("pr deletes the contract")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert rules == {"model_removed"}, proc.stdout


ODCS_COLUMNS = (
    "apiVersion: v3.1.0\nkind: DataContract\nid: urn:datacontract:customer-360\n"
    "version: 1.0.0\nname: customer-360\nstatus: active\n"
    "schema:\n  - name: customers\n    physicalName: mart_customer_360\n    columns:\n"
    "      - name: customer_id\n        logicalType: string\n        physicalType: VARCHAR(36)\n"
    "        required: true\n"
    "      - name: lifetime_value\n        logicalType: number\n"
    "        physicalType: DECIMAL(12,2)\n"
)


# Obsidian-Owl/floe, demo/datacontract.yaml ("ODCS v3.1 Data Contract"): its
# table lists the columns under `columns:` (ODCS v2's word), not `properties:`.
# The unknown key was a warning ("the gate does not compare 'columns'"), so the
# table was compared with no column at all: a dropped or narrowed column passed.
# datacontract-cli refuses the file; the gate now refuses it for that reason.
def test_an_odcs_table_with_its_columns_under_columns_is_refused(cli: Cli, repo: GitRepo) -> None:
    repo.write("demo/datacontract.yaml", ODCS_COLUMNS)
    repo.commit("base")
    repo.branch("feature")
    repo.write("demo/datacontract.yaml", ODCS_COLUMNS.replace("DECIMAL(12,2)", "DECIMAL(6,2)"))
    repo.commit("pr narrows lifetime_value")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "demo/datacontract.yaml:10:" in proc.stderr, proc.stderr
    assert "'columns'" in proc.stderr and "'properties'" in proc.stderr, proc.stderr


def test_the_same_table_under_properties_is_compared(cli: Cli, repo: GitRepo) -> None:
    fixed = ODCS_COLUMNS.replace("    columns:\n", "    properties:\n")
    repo.write("demo/datacontract.yaml", fixed)
    repo.commit("base")
    repo.branch("feature")
    repo.write("demo/datacontract.yaml", fixed.replace("DECIMAL(12,2)", "DECIMAL(6,2)"))
    repo.commit("pr narrows lifetime_value")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"] if c["breaking"]}
    assert "type_narrowed" in rules


# Obsidian-Owl/floe: three dbt projects under demo/ share one macro folder,
# `macro-paths: ["../macros"]` (demo/macros, inside the repository). dbt joins the
# path to the project folder and builds them; the gate refused every PR that made
# it read one of the projects (3773427e, c1f26a1c, 444d9efe, ca16e44a): "'../macros'
# must be a folder inside the project".
def test_a_macro_path_shared_by_sibling_projects_is_read(cli: Cli, repo: GitRepo) -> None:
    project = (
        "name: customer_360\nversion: '1.0.0'\nconfig-version: 2\nprofile: c\n"
        "model-paths: ['models']\nmacro-paths: ['../macros']\n"
        "models:\n  customer_360:\n    +contract:\n      enforced: true\n"
    )
    repo.write("demo/customer-360/dbt_project.yml", project)
    repo.write("demo/macros/cents.sql", "{% macro cents(x) %}{{ x }} * 100{% endmacro %}\n")
    repo.write("demo/customer-360/models/customers.sql", "select 1 as id\n")
    repo.write(
        "demo/customer-360/models/schema.yml",
        "version: 2\nmodels:\n  - name: customers\n    columns:\n"
        "      - name: id\n        data_type: integer\n",
    )
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "demo/customer-360/models/schema.yml",
        "version: 2\nmodels:\n  - name: customers\n    columns:\n"
        "      - name: id\n        data_type: integer\n        description: the key\n",
    )
    repo.commit("pr documents a column")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stderr


def test_a_resource_path_out_of_the_repository_is_still_refused(cli: Cli, repo: GitRepo) -> None:
    project = (
        "name: customer_360\nversion: '1.0.0'\nconfig-version: 2\nprofile: c\n"
        "model-paths: ['models']\nmacro-paths: ['../../../macros']\n"
    )
    repo.write("demo/customer-360/dbt_project.yml", project)
    repo.write(
        "demo/customer-360/models/schema.yml",
        "version: 2\nmodels:\n  - name: customers\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: id\n        data_type: integer\n",
    )
    repo.write("demo/customer-360/models/customers.sql", "select 1 as id\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("demo/customer-360/models/customers.sql", "select 2 as id\n")
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert (
        "demo/customer-360/dbt_project.yml:6: 'macro-paths': '../../../macros' must be a "
        "folder inside the project (or beside it, in the repository)" in proc.stderr
    )
