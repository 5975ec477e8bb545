"""Reads a contract the pull request adds must not take away from the base's contracts.

In-repo SQL is attributed to the contract whose name agrees longest
(``gate.consumers.names``). A pull request that adds ``db/warehouse/orders``
beside the base's ``orders`` must not make ``select note from warehouse.orders``
a reader of the new contract, or dropping ``orders.note`` breaks a reader and
raises no ``consumer_broken``. Renaming or moving a contract must not turn a
reader of the new name into a broken reader of the old one either.
"""

from __future__ import annotations

import json
from pathlib import Path

from gate.consumers.names import DbtScope, NameIndex, ScopedIndex
from gate.model import Dataset
from tests.gitrepo import GitRepo

ORDERS = """\
dataset: orders
columns:
  - name: order_id
    data_type: bigint
  - name: note
    data_type: string
"""
WITHOUT_NOTE = ORDERS.replace("  - name: note\n    data_type: string\n", "")
WAREHOUSE = "dataset: db/warehouse/orders\ncolumns:\n  - name: id\n    data_type: bigint\n"


def _base(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    return GitRepo.with_pr_branch(tmp_path / "r", files)


def _run(cli, repo: GitRepo) -> tuple[int, dict]:
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _broken(report: dict) -> list[tuple[str, int, str, str | None]]:
    return sorted(
        (c["path"], c["line"], c["dataset"], c["column"])
        for c in report["changes"]
        if c["rule"] == "consumer_broken"
    )


def test_an_added_contract_does_not_hide_a_broken_reader(cli, tmp_path: Path) -> None:
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "sql/report.sql": "select note\nfrom warehouse.orders\n",
        },
    )
    repo.write("soda/contracts/orders.yml", WITHOUT_NOTE)
    repo.write("soda/contracts/wh.yml", WAREHOUSE)
    repo.commit("drop note, add a decoy contract")
    code, report = _run(cli, repo)
    assert code == 1
    assert _broken(report) == [("sql/report.sql", 1, "orders", "note")]
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["severity"] == "error"
    assert [(c["path"], c["line"]) for c in removed["consumers"]] == [("sql/report.sql", 1)]
    assert any(c["rule"] == "model_added" for c in report["changes"])


def test_the_index_gives_added_datasets_only_names_no_other_agrees_with() -> None:
    orders = Dataset(id="orders", path="o.yml", format="soda")
    warehouse = Dataset(id="db/warehouse/orders", path="w.yml", format="soda")
    shipments = Dataset(id="lake/shipments", path="s.yml", format="soda")
    plain = NameIndex([orders, warehouse, shipments])
    assert plain.lookup(("warehouse", "orders")) == {"db/warehouse/orders"}  # longest wins
    index = NameIndex([orders, warehouse, shipments], added={warehouse.id, shipments.id})
    assert index.lookup(("warehouse", "orders")) == {"orders"}
    assert index.claimants(("warehouse", "orders")) == {"db/warehouse/orders"}
    assert index.lookup(("orders",)) == {"orders"}
    assert index.claimants(("orders",)) == {"db/warehouse/orders"}  # a tie
    assert index.lookup(("shop", "orders")) == {"orders"}
    assert index.claimants(("shop", "orders")) == set()
    assert index.lookup(("lake", "shipments")) == {"lake/shipments"}  # no base name agrees
    assert plain.claimants(("warehouse", "orders")) == set()


def test_dbt_scoping_decides_before_an_added_model_loses_a_tie() -> None:
    """finance's ``ref('stg_orders')`` names finance's own model (dbt looks in the
    file's project first), even when this pull request adds its contract and
    platform's contracted ``stg_orders`` is a base dataset agreeing as well."""
    platform = Dataset(id="platform.stg_orders", path="p.yml", format="dbt", project="platform")
    finance = Dataset(id="finance.stg_orders", path="f.yml", format="dbt", project="finance")
    index = NameIndex([platform, finance], added={finance.id})
    in_finance = ScopedIndex(index, DbtScope("finance", frozenset({"stg_orders"})))
    assert in_finance.lookup(("stg_orders",)) == {"finance.stg_orders"}
    assert in_finance.lookup(("platform", "stg_orders")) == {"platform.stg_orders"}
    in_marketing = ScopedIndex(index, DbtScope("marketing"))
    assert in_marketing.lookup(("stg_orders",)) == {"platform.stg_orders"}
    assert in_marketing.claimants(("stg_orders",)) == {"finance.stg_orders"}


def test_a_contract_moved_to_a_longer_name_does_not_break_its_readers(cli, tmp_path: Path) -> None:
    """The PR replaces ``orders`` by ``db/warehouse/orders`` with other columns (the
    diff sees a removal and an addition, not a rename). Every read stays ``orders``'s
    (its name agrees with them all), but those whose name the new contract also
    takes (``warehouse.orders``, ``db.warehouse.orders``, plain ``orders``) name a
    table the HEAD contracts still have: listed under ``model_removed``, never
    ``consumer_broken``. ``shop.orders`` names only the removed one, as before."""
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "sql/a.sql": "select id from warehouse.orders\n",
            "sql/b.sql": "select count(*) from orders\n",
            "sql/c.sql": "select note from db.warehouse.orders\n",
            "sql/d.sql": "select note from shop.orders\n",
        },
    )
    repo.remove("soda/contracts/orders.yml")
    repo.write("soda/contracts/wh.yml", WAREHOUSE)
    repo.commit("move orders to the warehouse")
    code, report = _run(cli, repo)
    assert code == 1
    removed = next(c for c in report["changes"] if c["rule"] == "model_removed")
    assert removed["dataset"] == "orders"
    assert sorted(c["path"] for c in removed["consumers"]) == [
        "sql/a.sql",
        "sql/b.sql",
        "sql/c.sql",
        "sql/d.sql",
    ]
    assert _broken(report) == [("sql/d.sql", 1, "orders", None)]


def test_a_renamed_contract_keeps_the_readers_of_its_new_name(cli, tmp_path: Path) -> None:
    """``shop/orders`` renamed ``db/warehouse/orders`` (same columns: a rename) beside a
    kept ``orders`` that drops ``note``. The reader of ``warehouse.orders`` reads the
    renamed contract, as before the PR it would not have read ``orders`` at all had
    the name existed: the rename's new name is no decoy, so ``orders`` has no reader."""
    shop = ORDERS.replace("dataset: orders", "dataset: shop/orders")
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "soda/contracts/shop.yml": shop,
            "sql/report.sql": "select note from warehouse.orders\n",
        },
    )
    repo.write("soda/contracts/orders.yml", WITHOUT_NOTE)
    repo.write("soda/contracts/shop.yml", shop.replace("shop/orders", "db/warehouse/orders"))
    repo.commit("drop orders.note, rename shop/orders")
    code, report = _run(cli, repo)
    assert code == 1
    rules = {c["rule"] for c in report["changes"]}
    assert {"column_removed", "model_renamed"} <= rules, rules
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["consumers"] == []
    assert _broken(report) == []
    renamed = next(c for c in report["changes"] if c["rule"] == "model_renamed")
    # it reads the new name: not one of the "consumers [that] still read" the old one
    assert renamed["consumers"] == []


def test_a_rename_lists_the_readers_of_the_old_name_not_of_the_new_one(cli, tmp_path: Path) -> None:
    """``model_renamed`` says "consumers still read '<old>'": those are its readers,
    and they break; a reader already on the new name is neither (a public Soda +
    SQLMesh history, Doctacon/databox, listed one under its rename)."""
    shop = ORDERS.replace("dataset: orders", "dataset: shop/orders")
    repo = _base(
        tmp_path,
        {
            "soda/contracts/shop.yml": shop,
            "sql/old.sql": "select note\nfrom shop.orders\n",
            "sql/new.sql": "select note\nfrom shop.orders_v2\n",
        },
    )
    repo.write("soda/contracts/shop.yml", shop.replace("shop/orders", "shop/orders_v2"))
    repo.commit("rename shop/orders")
    code, report = _run(cli, repo)
    assert code == 1
    renamed = next(c for c in report["changes"] if c["rule"] == "model_renamed")
    assert [c["path"] for c in renamed["consumers"]] == ["sql/old.sql"]
    assert [b[0] for b in _broken(report)] == ["sql/old.sql"]


def test_a_rename_onto_a_readers_name_keeps_the_removal_an_error(cli, tmp_path: Path) -> None:
    """The decoy, by rename instead of addition: the PR drops ``orders.note`` and
    renames an unread contract (``misc``) to ``db/warehouse/orders``. The rename's
    new name takes the reader of ``warehouse.orders`` (a renamed contract competes
    as a base one), so ``orders`` is left with no reader; usage-aware severity must
    not then grade the removal a warning: only ``model_renamed`` would stand, and
    acknowledging that harmless-looking rename would pass the pull request."""
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "soda/contracts/misc.yml": "dataset: misc\ncolumns:\n  - name: a\n    data_type: bigint\n",
            "sql/report.sql": "select note\nfrom warehouse.orders\n",
            ".schema-gate.yml": "lineage:\n  usage_aware_severity: true\n",
        },
    )
    repo.write("soda/contracts/orders.yml", WITHOUT_NOTE)
    repo.write("soda/contracts/misc.yml", WAREHOUSE.replace("name: id", "name: a"))
    repo.commit("drop note, rename misc onto the reader's name")
    code, report = _run(cli, repo)
    assert code == 1
    renamed = next(c for c in report["changes"] if c["rule"] == "model_renamed")
    assert (renamed["dataset"], renamed["old_dataset"]) == ("db/warehouse/orders", "misc")
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["severity"] == "error", removed["message"]
    assert any("db/warehouse/orders" in n and "stays an error" in n for n in report["notices"])


def test_a_rename_does_not_hold_back_its_own_removals(cli, tmp_path: Path) -> None:
    """The control: a contract renamed and narrowed in one PR shares its names with
    itself only; with no reader, its column removal is graded as before."""
    shop = ORDERS.replace("dataset: orders", "dataset: shop/orders")
    repo = _base(
        tmp_path,
        {
            "soda/contracts/shop.yml": shop,
            ".schema-gate.yml": "lineage:\n  usage_aware_severity: true\n",
        },
    )
    renamed = WITHOUT_NOTE.replace("dataset: orders", "dataset: shop/orders_v2")
    repo.write("soda/contracts/shop.yml", renamed)
    repo.commit("rename and drop note")
    code, report = _run(cli, repo)
    assert code == 1  # the rename itself
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["severity"] == "warning", removed["message"]


def test_a_table_name_the_pr_adds_to_the_config_keeps_the_removal_an_error(
    cli, tmp_path: Path
) -> None:
    """The decoy, by config: ``consumers.tables`` takes the names of both sides, so
    the PR's own ``misc: [warehouse.orders]`` gives a contract in a changed file a
    longer name than ``orders`` for the reader of ``warehouse.orders``. That reader
    went to ``misc``; ``orders`` had none, and usage-aware severity graded the
    removal of the column it reads a warning: exit 0 on a broken reader."""
    misc = "dataset: misc\ncolumns:\n  - name: a\n    data_type: bigint\n"
    config = "lineage:\n  usage_aware_severity: true\n"
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "soda/contracts/misc.yml": misc,
            "sql/report.sql": "select note\nfrom warehouse.orders\n",
            ".schema-gate.yml": config,
        },
    )
    repo.write("soda/contracts/orders.yml", WITHOUT_NOTE)
    repo.write("soda/contracts/misc.yml", misc + "  - name: b\n    data_type: bigint\n")
    repo.write(".schema-gate.yml", config + "consumers:\n  tables:\n    misc: [warehouse.orders]\n")
    repo.commit("drop note, name misc after the reader's table")
    code, report = _run(cli, repo)
    assert code == 1
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["severity"] == "error", removed["message"]
    assert any("misc" in n and "stays an error" in n for n in report["notices"]), report["notices"]


ODCS_MISC = """\
apiVersion: v3.0.2
kind: DataContract
id: misc-contract
name: misc
status: active
version: 1.0.0
schema:
  - name: NAME
    physicalName: misc_tbl
    properties:
      - name: a
        logicalType: integer
"""


def test_a_name_the_pr_gives_an_existing_contract_does_not_take_a_reader(
    cli, tmp_path: Path
) -> None:
    """The decoy, by a new name on a kept contract: the PR drops ``orders.note`` and
    changes an ODCS object's logical name to ``warehouse.orders`` (its id, the
    physicalName, stays: no change is reported on it). That name is the PR's own,
    as an added contract's is: the reader of ``warehouse.orders`` stays ``orders``'s,
    and breaks. It went to ``misc_tbl``, and usage-aware severity passed it (exit 0)."""
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "contracts/misc.odcs.yaml": ODCS_MISC.replace("NAME", "misc"),
            "sql/report.sql": "select note\nfrom warehouse.orders\n",
            ".schema-gate.yml": "lineage:\n  usage_aware_severity: true\n",
        },
    )
    repo.write("soda/contracts/orders.yml", WITHOUT_NOTE)
    repo.write("contracts/misc.odcs.yaml", ODCS_MISC.replace("NAME", "warehouse.orders"))
    repo.commit("drop note, give misc the reader's table name")
    code, report = _run(cli, repo)
    assert code == 1
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["severity"] == "error", removed["message"]
    assert [(c["path"], c["line"]) for c in removed["consumers"]] == [("sql/report.sql", 1)]
    assert _broken(report) == [("sql/report.sql", 1, "orders", "note")]


def test_a_name_a_kept_contract_already_had_still_competes_as_before() -> None:
    """The control: only names the base side lacked wait for the base's datasets."""
    from gate.consumers.names import added_names

    orders = Dataset(id="orders", path="o.yml", format="soda")
    misc = Dataset(id="misc_tbl", path="m.yml", format="odcs", aliases=("warehouse.orders",))
    renamed = Dataset(id="misc_tbl", path="m.yml", format="odcs", aliases=("lake.orders",))
    new = added_names([orders, misc], [orders, renamed])
    assert new == frozenset({(("lake", "orders"), "misc_tbl")})
    index = NameIndex([orders, misc, orders, renamed], added_names=new)
    assert index.lookup(("warehouse", "orders")) == {"misc_tbl"}  # the base's own name
    assert index.lookup(("lake", "orders")) == {"orders"}  # the PR's new name waits
    assert index.claimants(("lake", "orders")) == {"misc_tbl"}


def test_a_kept_contract_that_takes_a_new_name_keeps_its_own_removals_errors(
    cli, tmp_path: Path
) -> None:
    """The other side of the rule above: the contract that takes the new name
    (``misc_tbl`` now ``warehouse.orders``) and drops ``x`` loses the reader of
    ``warehouse.orders`` to the base's ``orders``; with no reader found, its own
    removal must not be graded a warning (exit 0 on a broken reader)."""
    with_x = ODCS_MISC + "      - name: x\n        logicalType: integer\n"
    repo = _base(
        tmp_path,
        {
            "soda/contracts/orders.yml": ORDERS,
            "contracts/misc.odcs.yaml": with_x.replace("NAME", "misc"),
            "sql/report.sql": "select x\nfrom warehouse.orders\n",
            ".schema-gate.yml": "lineage:\n  usage_aware_severity: true\n",
        },
    )
    head = ODCS_MISC.replace("NAME", "warehouse.orders").replace("1.0.0", "2.0.0")
    repo.write("contracts/misc.odcs.yaml", head)  # a major bump: the removal is announced
    # orders changes too (a column added), so it is one of the run's datasets
    repo.write("soda/contracts/orders.yml", ORDERS + "  - name: extra\n    data_type: string\n")
    repo.commit("rename misc's logical name, drop x")
    code, report = _run(cli, repo)
    assert code == 1
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert removed["dataset"] == "misc_tbl"
    assert removed["severity"] == "error", removed["message"]
    assert any("misc_tbl" in n and "stays an error" in n for n in report["notices"]), report[
        "notices"
    ]
