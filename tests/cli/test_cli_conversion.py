"""A contract converted between formats in one pull request is one contract.

A Soda contract replaced by an ODCS or DCS contract of the same table, or DCS by
ODCS, used to read as ``model_removed`` + ``model_added`` (the same id) or
``model_renamed`` (Soda v4's qualified ``dataset``) plus flag changes that were
only spelling: a false block. It is paired by the table it names and compared
as any pair, in one vocabulary (gate/diff/conversion.py): a faithful conversion
passes, a column it drops or a type it narrows is still reported, and a check
with no counterpart is reported as the format's own rule says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

SODA = "soda/contracts/orders.yml"
ODCS = "contracts/orders.odcs.yaml"
DCS = "contracts/orders.datacontract.yaml"

#: name, type, not null, unique, allowed values, minimum
Spec = tuple[str, str, bool, bool, tuple[str, ...], int | None]
COLUMNS: list[Spec] = [
    ("order_id", "bigint", True, True, (), None),
    ("amount", "decimal(12,2)", False, False, (), 0),
    ("status", "varchar(20)", False, False, ("open", "closed"), None),
    ("note", "string", False, False, (), None),
]


#: Each type as ODCS's logical type and DCS's type keys say it.
LOGICAL = {"bigint": "integer", "int": "integer", "decimal(12,2)": "number"}
LOGICAL |= {"varchar(20)": "string", "string": "string"}
DCS_TYPES = {
    "bigint": ["type: long"],
    "int": ["type: int"],
    "decimal(12,2)": ["type: decimal", "precision: 12", "scale: 2"],
    "varchar(20)": ["type: varchar", "maxLength: 20"],
    "string": ["type: string"],
}


def soda(columns: list[Spec], dataset: str = "postgres_ds/shop/public/orders") -> str:
    """Soda v4: not null and unique as checks, allowed values and minimum as validity."""
    lines = [f"dataset: {dataset}", "columns:"]
    for name, data_type, required, unique, values, minimum in columns:
        lines += [f"  - name: {name}", f"    data_type: {data_type}"]
        checks = []
        if required:
            checks.append("      - missing:")
        if unique:
            checks.append("      - duplicate:")
        if values:
            checks += ["      - invalid:", f"          valid_values: [{', '.join(values)}]"]
        if minimum is not None:
            checks += ["      - invalid:", f"          valid_min: {minimum}"]
        if checks:
            lines += ["    checks:", *checks]
    lines += ["checks:", "  - row_count:", "      threshold:", "        must_be_greater_than: 0"]
    return "\n".join(lines) + "\n"


def odcs(columns: list[Spec], rows: int = 0) -> str:
    lines = [
        "apiVersion: v3.0.2",
        "kind: DataContract",
        "id: orders-contract",
        "version: 1.0.0",
        "status: active",
        "schema:",
        "  - name: orders",
        "    properties:",
    ]
    for name, data_type, required, unique, values, minimum in columns:
        lines += [f"      - name: {name}", f"        logicalType: {LOGICAL[data_type]}"]
        lines.append(f"        physicalType: {data_type}")
        if required:
            lines.append("        required: true")
        if unique:
            lines.append("        unique: true")
        if values:
            lines += ["        quality:", "          - rule: validValues"]
            lines.append(f"            validValues: [{', '.join(values)}]")
        if minimum is not None:
            lines += ["        logicalTypeOptions:", f"          minimum: {minimum}"]
    lines += ["    quality:", "      - rule: rowCount", f"        mustBeGreaterThan: {rows}"]
    return "\n".join(lines) + "\n"


def dcs(columns: list[Spec]) -> str:
    lines = [
        "dataContractSpecification: 1.1.0",
        "id: orders-contract",
        "info:",
        "  title: Orders",
        "  version: 1.0.0",
        "models:",
        "  orders:",
        "    fields:",
    ]
    for name, data_type, required, unique, values, minimum in columns:
        lines += [f"      {name}:", *(f"        {line}" for line in DCS_TYPES[data_type])]
        if required:
            lines.append("        required: true")
        if unique:
            lines.append("        unique: true")
        if values:
            lines.append(f"        enum: [{', '.join(values)}]")
        if minimum is not None:
            lines.append(f"        minimum: {minimum}")
    lines += ["    quality:", "      - type: library", "        metric: rowCount"]
    lines.append("        mustBeGreaterThan: 0")
    return "\n".join(lines) + "\n"


def convert(
    repo: GitRepo, cli: Cli, before: tuple[str, str], after: tuple[str, str]
) -> tuple[int, list[tuple[str, str | None]], dict]:
    repo.write(*before)
    repo.commit("contract")
    repo.branch("feature")
    repo.remove(before[0])
    repo.write(*after)
    repo.commit("converted")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    return proc.returncode, sorted((c["rule"], c["column"]) for c in data["changes"]), data


def test_the_same_table_in_another_format_is_no_change(cli: Cli, repo: GitRepo) -> None:
    """Soda v4 (a qualified dataset) -> ODCS: before, model_renamed plus
    required_added/required_removed for what each format says by default."""
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, odcs(COLUMNS)))
    assert (code, rules) == (0, [])


def test_soda_v3_of_the_same_id_to_dcs_is_no_change(cli: Cli, repo: GitRepo) -> None:
    """Same id in two formats: before, model_removed plus model_added."""
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS, "orders")), (DCS, dcs(COLUMNS)))
    assert (code, rules) == (0, [])


def test_dcs_to_odcs_is_no_change(cli: Cli, repo: GitRepo) -> None:
    code, rules, _ = convert(repo, cli, (DCS, dcs(COLUMNS)), (ODCS, odcs(COLUMNS)))
    assert (code, rules) == (0, [])


@pytest.mark.parametrize(
    ("before", "after"),
    [((SODA, soda), (ODCS, odcs)), ((SODA, soda), (DCS, dcs)), ((DCS, dcs), (ODCS, odcs))],
    ids=["soda-odcs", "soda-dcs", "dcs-odcs"],
)
def test_a_conversion_that_drops_a_column_blocks_on_the_column(
    cli: Cli, repo: GitRepo, before: tuple, after: tuple
) -> None:
    code, rules, data = convert(
        repo, cli, (before[0], before[1](COLUMNS)), (after[0], after[1](COLUMNS[:-1]))
    )
    # DCS and ODCS both carry the contract's version: 1.0.0 on both sides.
    versioned = [("version_not_bumped", None)] if before[0] == DCS else []
    assert (code, rules) == (1, [("column_removed", "note"), *versioned])
    assert data["changes"][0]["path"] == after[0]


def test_a_conversion_that_narrows_a_type_reports_it(cli: Cli, repo: GitRepo) -> None:
    narrowed = [("order_id", "int", True, True, (), None), *COLUMNS[1:]]
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, odcs(narrowed)))
    assert (code, rules) == (1, [("type_narrowed", "order_id")])


def test_a_check_with_no_counterpart_is_still_reported(cli: Cli, repo: GitRepo) -> None:
    """Soda's missing and duplicate checks without ``required``/``unique`` at HEAD:
    ``check_removed`` as a Soda edit would say, and no flag is invented."""
    loose = [("order_id", "bigint", False, False, (), None), *COLUMNS[1:]]
    _, rules, data = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, odcs(loose)))
    assert rules == [("check_removed", "order_id"), ("check_removed", "order_id")]
    assert {c["before"] for c in data["changes"]} == {"missing", "duplicate"}


def test_a_flag_dropped_in_the_conversion_is_reported(cli: Cli, repo: GitRepo) -> None:
    loose = [("order_id", "bigint", False, False, (), None), *COLUMNS[1:]]
    code, rules, _ = convert(repo, cli, (ODCS, odcs(COLUMNS)), (SODA, soda(loose)))
    assert (code, rules) == (1, [("required_removed", "order_id"), ("unique_removed", "order_id")])


def test_allowed_values_changed_in_the_conversion_are_reported(cli: Cli, repo: GitRepo) -> None:
    fewer = [*COLUMNS[:2], ("status", "varchar(20)", False, False, ("open",), None), COLUMNS[3]]
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, odcs(fewer)))
    assert (code, rules) == (1, [("enum_value_removed", "status")])


def test_a_threshold_changed_in_the_conversion_is_reported(cli: Cli, repo: GitRepo) -> None:
    _, rules, data = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, odcs(COLUMNS, rows=10)))
    assert rules == [("check_changed", None)]
    assert data["changes"][0]["direction"] == "tightened"


def test_two_candidates_for_one_table_pair_with_neither(cli: Cli, repo: GitRepo) -> None:
    """Two Soda contracts of ``orders`` (two schemas) and one ODCS ``orders``: no guess."""
    repo.write("soda/contracts/a.yml", soda(COLUMNS, "pg/shop/staging/orders"))
    repo.write("soda/contracts/b.yml", soda(COLUMNS[:2], "pg/shop/public/orders"))
    repo.commit("two")
    repo.branch("feature")
    repo.remove("soda/contracts/a.yml")
    repo.remove("soda/contracts/b.yml")
    repo.write(ODCS, odcs(COLUMNS[2:]))
    repo.commit("converted")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    rules = sorted((c["rule"], c["dataset"]) for c in json.loads(proc.stdout)["changes"])
    assert rules == [
        ("model_added", "orders"),
        ("model_removed", "pg/shop/public/orders"),
        ("model_removed", "pg/shop/staging/orders"),
    ]


DBT_PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\n"
DBT_MODEL = """\
version: 2
models:
  - name: orders
    config:
      contract: {enforced: true}
    columns:
      - name: order_id
        data_type: bigint
"""


def test_beside_a_dbt_model_of_the_table_the_conversion_is_still_one_contract(
    cli: Cli, repo: GitRepo
) -> None:
    """The two-layer pattern: the dbt model stays, its ODCS contract becomes DCS."""
    repo.write("dbt_project.yml", DBT_PROJECT)
    repo.write("models/orders.sql", "select 1 as order_id\n")
    repo.write("models/schema.yml", DBT_MODEL)
    code, rules, _ = convert(repo, cli, (ODCS, odcs(COLUMNS)), (DCS, dcs(COLUMNS[:-1])))
    assert (code, rules) == (1, [("column_removed", "note"), ("version_not_bumped", None)])


def test_a_dbt_model_is_never_paired_with_a_contract(cli: Cli, repo: GitRepo) -> None:
    """An enforced dbt model replaced by an ODCS contract: the model is gone."""
    repo.write("dbt_project.yml", DBT_PROJECT)
    repo.write("models/orders.sql", "select 1 as order_id\n")
    code, rules, _ = convert(repo, cli, ("models/schema.yml", DBT_MODEL), (ODCS, odcs(COLUMNS[:1])))
    assert (code, rules) == (1, [("model_added", None), ("model_removed", None)])


def test_a_metric_named_each_formats_way_pairs_and_compares(cli: Cli, repo: GitRepo) -> None:
    """Soda ``missing`` with a threshold and ODCS ``nullValues``: one check, tightened."""
    before = soda(COLUMNS[1:]).replace(
        "checks:\n  - row_count:",
        "    checks:\n      - missing:\n          threshold:\n            must_be_less_than: 10\n"
        "checks:\n  - row_count:",
        1,
    )
    after = odcs(COLUMNS[1:]).replace(
        "    quality:\n      - rule: rowCount",
        "        quality:\n          - metric: nullValues\n            mustBeLessThan: 5\n"
        "    quality:\n      - rule: rowCount",
        1,
    )
    code, rules, data = convert(repo, cli, (SODA, before), (ODCS, after))
    assert (code, rules) == (0, [("check_changed", "note")])  # a warning by default
    assert data["changes"][0]["direction"] == "tightened"
    assert (
        data["changes"][0]["message"] == "check 'null_values' on column 'note' changed (tightened)"
    )


DCS_CUSTOM = """\
dataContractSpecification: 1.2.1
id: urn:datacontract:test
info: {title: Test, version: 1.0.0}
models:
  events:
    fields:
      event_id:
        type: string
        required: true
        quality:
          - type: custom
            engine: dqx
            specification:
              criticality: error
              check: {function: is_not_null}
"""
ODCS_CUSTOM = """\
apiVersion: v3.1.0
kind: DataContract
id: urn:datacontract:test
version: 1.0.0
status: active
schema:
  - name: events
    properties:
      - name: event_id
        logicalType: string
        physicalType: string
        required: true
        quality:
          - type: custom
            engine: dqx
            implementation:
              criticality: {level}
              check: {{function: is_not_null}}
"""


def test_a_custom_checks_specification_is_odcs_implementation(cli: Cli, repo: GitRepo) -> None:
    """datacontract-cli's own DCS -> ODCS migration (its commit dc5975a0, the dqx
    fixtures) writes DCS ``specification`` as ODCS ``implementation``: 31 checks read
    as removed plus added until the two names were one."""
    code, rules, _ = convert(
        repo, cli, (DCS, DCS_CUSTOM), (ODCS, ODCS_CUSTOM.format(level="error"))
    )
    assert (code, rules) == (0, [])


def test_a_custom_check_changed_in_the_conversion_is_reported(cli: Cli, repo: GitRepo) -> None:
    _, rules, data = convert(repo, cli, (DCS, DCS_CUSTOM), (ODCS, ODCS_CUSTOM.format(level="warn")))
    assert rules == [("check_changed", "event_id")]  # paired by kind, what it checks moved
    assert data["changes"][0]["direction"] == "undetermined"


def _odcs_on(schema: str) -> str:
    """The ODCS contract of ``COLUMNS`` with one Postgres server on ``schema``."""
    server = "servers:\n  - server: prod\n    type: postgres\n    database: shop\n"
    return odcs(COLUMNS).replace("schema:\n", f"{server}    schema: {schema}\nschema:\n", 1)


def test_a_conversion_that_moves_the_table_to_another_schema_is_not_a_pair(
    cli: Cli, repo: GitRepo
) -> None:
    """Soda's ``postgres_ds/shop/staging/orders`` replaced by an ODCS contract of
    ``orders`` on the server's schema ``public``: another table, so the old one's
    readers lose it (``model_removed``), where pairing by the table's name alone
    passed the move."""
    staging = soda(COLUMNS, "postgres_ds/shop/staging/orders")
    code, rules, _ = convert(repo, cli, (SODA, staging), (ODCS, _odcs_on("public")))
    assert code == 1
    assert {"model_removed", "model_renamed"} & {rule for rule, _ in rules}


def test_a_conversion_that_names_the_same_schema_pairs(cli: Cli, repo: GitRepo) -> None:
    """The same conversion with the server's schema written in another case."""
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, _odcs_on("PUBLIC")))
    assert (code, rules) == (0, [])


def _odcs_on_bigquery(table: str) -> str:
    """The ODCS contract of ``COLUMNS`` naming ``table``, served from BigQuery."""
    server = "servers:\n  - server: prod\n    type: bigquery\n    project: acme\n"
    text = odcs(COLUMNS).replace("schema:\n", f"{server}    dataset: shop\nschema:\n", 1)
    return text.replace("  - name: orders\n", f"  - name: {table}\n", 1)


def test_a_conversion_that_changes_the_tables_case_on_bigquery_is_a_rename(
    cli: Cli, repo: GitRepo
) -> None:
    """Soda's ``Orders`` converted to an ODCS ``orders`` served from BigQuery, whose
    table names are case-sensitive: another table, so its readers break. Pairing by
    the case-folded name passed it as a faithful conversion."""
    code, rules, _ = convert(
        repo, cli, (SODA, soda(COLUMNS, "Orders")), (ODCS, _odcs_on_bigquery("orders"))
    )
    assert (code, rules) == (1, [("model_renamed", None)])


def test_a_conversion_in_the_tables_own_case_on_bigquery_pairs(cli: Cli, repo: GitRepo) -> None:
    code, rules, _ = convert(
        repo, cli, (SODA, soda(COLUMNS, "orders")), (ODCS, _odcs_on_bigquery("orders"))
    )
    assert (code, rules) == (0, [])


def test_a_conversion_that_moves_the_table_to_another_database_is_not_a_pair(
    cli: Cli, repo: GitRepo
) -> None:
    """Soda's ``postgres_ds/shop/public/orders`` replaced by an ODCS contract of
    ``orders`` on database ``analytics``, schema ``public`` (every Postgres database
    has one): another table. Comparing the schemas alone passed the move."""
    moved = _odcs_on("public").replace("database: shop", "database: analytics")
    code, rules, _ = convert(repo, cli, (SODA, soda(COLUMNS)), (ODCS, moved))
    assert code == 1
    assert {"model_removed", "model_renamed"} & {rule for rule, _ in rules}


def test_a_conversion_beside_a_dbt_model_added_in_the_same_pr_is_one_contract(
    cli: Cli, repo: GitRepo
) -> None:
    """ODCS -> DCS while the PR also adds the enforced dbt model of the table (the
    two-layer pattern begins): the dbt model is new, the contract is one. Counting
    the dbt model among the formats the id gained left the conversion unpaired:
    ``model_removed`` of a contract that is still there, a false block."""
    repo.write("dbt_project.yml", DBT_PROJECT)
    repo.write("models/orders.sql", "select 1 as order_id\n")
    repo.write(ODCS, odcs(COLUMNS))
    repo.commit("contract")
    repo.branch("feature")
    repo.remove(ODCS)
    repo.write(DCS, dcs(COLUMNS))
    repo.write("models/schema.yml", DBT_MODEL)
    repo.commit("converted, and the model enforced")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rules = sorted((c["rule"], c["path"]) for c in json.loads(proc.stdout)["changes"])
    assert rules == [("model_added", "models/schema.yml")], rules
