"""Patterns met replaying public repositories the gate had never seen (third round,
docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public file showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

ODCS_HEAD = "apiVersion: v3.0.2\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"

ORDERS = (
    "version: 2\nmodels:\n  - name: fct_orders\n"
    "    config:\n      contract:\n        enforced: true\n"
    "{latest}"
    "    columns:\n"
    "      - name: order_id\n        data_type: string\n"
    "      - name: order_total\n        data_type: {total}\n"
    "{versions}"
)


def _orders(latest: str = "", total: str = "int", versions: str = "") -> str:
    return ORDERS.format(latest=latest, total=total, versions=versions)


def _dbt_pr(repo: GitRepo, before: str, after: str, files: dict[str, str]) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/fct_orders.sql", "select 1 as order_id\n")
    repo.write("models/schema.yml", before)
    repo.commit("base")
    repo.branch("feature")
    for path, text in files.items():
        repo.write(path, text)
    repo.write("models/schema.yml", after)
    repo.commit("pr")


# rahulkokje/dbt-mesh's models/marts/__schema.yml (PR #4, "add model versions"):
# the unversioned enforced model fct_orders gained `latest_version: 1` and
# `versions: [{v: 1, config: {alias: fct_orders}}, {v: 2, ...}]`, its SQL file
# unchanged. dbt reads fct_orders.sql as v1 (the latest version may live in the
# unsuffixed file), ref('fct_orders') still resolves to it and the alias keeps
# the table's name: nothing breaks, yet the gate blocked a model_renamed.
V1_V2 = (
    "    versions:\n"
    "      - v: 1\n        config:\n          alias: fct_orders\n"
    "      - v: 2\n        columns:\n          - include: all\n            exclude: [order_total]\n"
    "          - name: order_amount\n            data_type: decimal(12,2)\n"
)


def test_versioning_an_unversioned_model_is_no_rename(cli: Cli, repo: GitRepo) -> None:
    after = _orders(latest="    latest_version: 1\n", versions=V1_V2)
    _dbt_pr(repo, _orders(), after, {"models/fct_orders_v2.sql": "select 1 as order_id\n"})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_renamed" not in proc.stdout
    assert "model_added fct_orders.v2" in proc.stdout


def test_versioning_an_unversioned_model_still_compares_its_columns(
    cli: Cli, repo: GitRepo
) -> None:
    """The same PR narrowing the column that ref('fct_orders') reads is still a break."""
    after = _orders(latest="    latest_version: 1\n", total="smallint", versions=V1_V2)
    _dbt_pr(repo, _orders(), after, {"models/fct_orders_v2.sql": "select 1 as order_id\n"})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "type_narrowed fct_orders.v1.order_total" in proc.stdout
    assert "model_renamed" not in proc.stdout


def test_unversioning_a_versioned_model_is_still_a_rename(cli: Cli, repo: GitRepo) -> None:
    """The reverse breaks every pinned ref('fct_orders', v=1): still a model_renamed."""
    before = _orders(latest="    latest_version: 1\n", versions="    versions:\n      - v: 1\n")
    _dbt_pr(repo, before, _orders(), {})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_renamed fct_orders" in proc.stdout


# bitol-io/open-data-contract-standard's docs/examples/quality/column-accuracy.odcs.yaml
# (before the v3 examples): an ODCS v2 contract, `kind: DataContract` with no
# `apiVersion` and its tables in a `dataset:` list, was refused as a Soda
# contract ("'dataset' must be a string, found a list"), which hides the reason.
ODCS_V2 = (
    "version: 1.0.0\nkind: DataContract\nuuid: 5358\ntype: tables\nstatus: current\n"
    "dataset:\n  - table: air_quality\n    columns:\n"
    "      - column: value\n        logicalType: number\n"
)
# the same era's adventureworks example: `standardVersion` and `dataset: {tables: [...]}`
ODCS_V2_STANDARD = (
    "version: '1.0.0'\nstandardVersion: '2.2.0'\nuuid: 6aea\nkind: managedDataset\n"
    "dataset:\n  tables:\n    - table: department\n      columns:\n        - column: id\n"
)


def test_odcs_v2_is_refused_as_odcs_v2_not_as_soda(cli: Cli, repo: GitRepo) -> None:
    repo.write("contracts/keep.odcs.yaml", ODCS_HEAD + "schema: []\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/air.odcs.yaml", ODCS_V2)
    repo.write("contracts/works.odcs.yaml", ODCS_V2_STANDARD)
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(
        "schema-gate: error: contracts/air.odcs.yaml:2: an ODCS v2 contract (no 'apiVersion'); "
        "the gate reads ODCS v3 (apiVersion: v3.x, kind: DataContract"
    ), proc.stderr
    assert lines[1].startswith(
        "schema-gate: error: contracts/works.odcs.yaml:2: an ODCS v2 contract (no 'apiVersion'); "
    ), proc.stderr
    assert "'dataset' must be a string" not in proc.stderr


def test_an_odcs_v3_file_missing_its_api_version_is_not_called_v2(cli: Cli, repo: GitRepo) -> None:
    """`kind: DataContract` with a v3 `schema:` list and no `apiVersion` keeps its own message."""
    repo.write("contracts/keep.odcs.yaml", ODCS_HEAD + "schema: []\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/o.odcs.yaml", "kind: DataContract\nid: o\nschema:\n  - name: orders\n")
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert "shaped like an ODCS contract (a 'schema:' list) but without" in proc.stderr
    assert "ODCS v2" not in proc.stderr


def test_versioning_without_the_old_alias_moves_the_table(cli: Cli, repo: GitRepo) -> None:
    """Without ``alias: fct_orders`` dbt builds v1 as ``fct_orders_v1``: ref() readers
    follow, SQL readers of ``fct_orders`` break, so the relation move is reported."""
    after = _orders(latest="    latest_version: 1\n", versions="    versions:\n      - v: 1\n")
    _dbt_pr(repo, _orders(), after, {})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_relation_changed fct_orders.v1" in proc.stdout, proc.stdout
    assert "model_renamed" not in proc.stdout
    # acknowledged by the name its readers know it by
    acked = cli(repo.path, "--base", "main", "--accept", "fct_orders")
    assert acked.returncode == 0, acked.stdout + acked.stderr
    assert "ACKED" in acked.stdout
