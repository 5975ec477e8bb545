"""Paths that used to pass silently (issue #9, section 3), each through the CLI in a real repo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.acks import KEY, parse_pr_body
from tests.conftest import run_gate
from tests.gitrepo import GitRepo


def soda(dataset: str, *columns: str) -> str:
    lines = [f"dataset: {dataset}", "columns:"]
    for column in columns:
        name, _, data_type = column.partition(":")
        lines += [f"  - name: {name}", f"    data_type: {data_type or 'string'}"]
    return "\n".join(lines) + "\n"


def feature(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


def gate_json(repo: GitRepo, *args: str) -> tuple[int, dict, str]:
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


# -- globs that match nothing ------------------------------------------------------


def test_a_repository_without_contracts_fails_until_allowed(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"README.md": "no contracts here\n"})
    repo.write("docs/x.md", "still none\n")
    repo.commit("docs")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert "no contract file matches the globs soda/contracts/**/*.yaml" in proc.stderr
    assert "set 'contracts:' in .schema-gate.yml or pass --contracts GLOB" in proc.stderr
    # A relaxation: it applies once on the base branch (gate/policy.py).
    repo.land("pyproject.toml", "[tool.schema-gate]\nallow-empty = true\n")
    code, report, _ = gate_json(repo)
    assert code == 0
    assert any("allow-empty: true" in n for n in report["notices"])


def test_allow_empty_must_be_a_boolean(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"README.md": "x\n", ".schema-gate.yml": "allow-empty: yes\n"})
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "schema-gate: error: .schema-gate.yml:1: 'allow-empty' must be true or false"
    )


# -- ambiguous short acknowledgements -------------------------------------------------


def test_a_short_acknowledgement_naming_two_datasets_acknowledges_neither(tmp_path: Path) -> None:
    repo = feature(
        tmp_path,
        {
            "soda/contracts/bronze/orders.yaml": soda("bronze/shop/orders", "id", "note"),
            "soda/contracts/gold/orders.yaml": soda("gold/shop/orders", "id", "note"),
        },
    )
    repo.write("soda/contracts/bronze/orders.yaml", soda("bronze/shop/orders", "id"))
    repo.write("soda/contracts/gold/orders.yaml", soda("gold/shop/orders", "id"))
    repo.commit("drop note twice")
    code, report, _ = gate_json(repo, "--accept", "shop.orders")
    assert code == 1
    assert not any(c["acknowledged"] for c in report["changes"])
    assert report["ambiguous_acknowledgements"] == [
        {
            "token": "shop.orders",
            "source": "--accept",
            "candidates": ["bronze/shop/orders", "gold/shop/orders"],
        }
    ]
    assert report["unmatched_acknowledgements"] == []
    text = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--accept", "shop.orders")
    assert "'shop.orders' (from --accept) matches 2 datasets (bronze/shop/orders, " in text.stdout
    assert "      accept-breaking-change: gold/shop/orders" in text.stdout
    # The full ids work; a short name that is unique still works too.
    code, report, _ = gate_json(
        repo, "--accept", "bronze/shop/orders", "--accept", "gold/shop/orders"
    )
    assert code == 0


# -- the acknowledgement hint is pasteable -------------------------------------------


def test_the_text_hint_is_one_pasteable_line_per_dataset(tmp_path: Path) -> None:
    repo = feature(
        tmp_path,
        {
            "soda/contracts/a.yaml": soda("lake/shop/orders", "id", "note"),
            "soda/contracts/b.yaml": soda("lake/shop/payments", "id", "note"),
        },
    )
    repo.write("soda/contracts/a.yaml", soda("lake/shop/orders", "id"))
    repo.write("soda/contracts/b.yaml", soda("lake/shop/payments", "id"))
    repo.commit("drop notes")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 1
    tail = proc.stdout.rstrip("\n").splitlines()[-3:]
    assert tail == [
        "FAIL: 2 unacknowledged breaking change(s). If the break is intended, add the "
        "line(s) below to the PR body:",
        f"{KEY}: lake/shop/orders",
        f"{KEY}: lake/shop/payments",
    ]
    # Pasted as printed, the lines acknowledge both datasets.
    body = "\n".join(tail[1:]) + "\n"
    assert [t.value for t in parse_pr_body(body)] == ["lake/shop/orders", "lake/shop/payments"]
    body_file = repo.path.parent / "body.md"
    body_file.write_text(body)
    again = run_gate(
        repo.path, "--base", "main", "--head", "HEAD", "--pr-body-file", str(body_file)
    )
    assert again.returncode == 0, again.stdout


# -- a contract unreadable at the base only --------------------------------------------


def test_a_base_side_error_warns_and_the_fix_is_compared(tmp_path: Path) -> None:
    broken = soda("lake/shop/orders", "id", "note").replace("columns:", "columns: [")
    repo = feature(
        tmp_path,
        {
            "soda/contracts/orders.yaml": broken,
            "soda/contracts/customers.yaml": soda("lake/shop/customers", "id", "email"),
        },
    )
    repo.write("soda/contracts/orders.yaml", soda("lake/shop/orders", "id", "note"))
    repo.write("soda/contracts/customers.yaml", soda("lake/shop/customers", "id"))
    repo.commit("fix orders, drop email")
    code, report, _ = gate_json(repo)
    assert code == 1  # what can be compared still is: customers lost a column
    assert [(c["rule"], c["dataset"]) for c in report["changes"]] == [
        ("column_removed", "lake/shop/customers"),
        ("model_added", "lake/shop/orders"),
    ]
    (warning,) = [n for n in report["notices"] if n.startswith("warning:")]
    assert warning.startswith(
        "warning: the base version of soda/contracts/orders.yaml:3 is unreadable (invalid YAML"
    )
    text = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert "note: warning: the base version of soda/contracts/orders.yaml:3" in text.stdout


def test_a_base_side_schema_error_does_not_block_its_fix(tmp_path: Path) -> None:
    typo = soda("lake/shop/orders", "id", "note").replace("columns:", "column:")
    repo = feature(tmp_path, {"soda/contracts/orders.yaml": typo})
    repo.write("soda/contracts/orders.yaml", soda("lake/shop/orders", "id", "note"))
    repo.commit("fix the key")
    code, report, _ = gate_json(repo)
    assert code == 0
    # At the base the misspelt key hid the columns; fixing it adds them back.
    assert {c["rule"] for c in report["changes"]} == {"column_added"}


def test_a_head_side_error_stays_exit_2(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/orders.yaml": soda("lake/shop/orders", "id")})
    repo.write("soda/contracts/orders.yaml", "dataset: lake/shop/orders\ncolumns: [\n")
    repo.commit("break it")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.startswith("schema-gate: error: soda/contracts/orders.yaml:")


# -- datasets that differ only in case across files ------------------------------------


@pytest.mark.parametrize("unchanged", [False, True], ids=["both-new", "one-unchanged"])
def test_two_files_with_ids_differing_only_in_case_are_refused(
    tmp_path: Path, unchanged: bool
) -> None:
    files = {"soda/contracts/a.yaml": soda("lake/shop/customers", "id")}
    if unchanged:
        files["soda/contracts/lower.yaml"] = soda("lake/shop/orders", "id")
    repo = feature(tmp_path, files)
    if not unchanged:
        repo.write("soda/contracts/lower.yaml", soda("lake/shop/orders", "id"))
    repo.write("soda/contracts/upper.yaml", soda("LAKE/shop/orders", "id"))
    repo.commit("add a case twin")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2, proc.stdout
    assert "is also declared in soda/contracts/" in proc.stderr
    assert "(as '" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# -- renames need overlapping columns ---------------------------------------------------

STAGING = soda(
    "lake/staging/stg_orders",
    "raw_id:bigint",
    "payload:string",
    "ingested_at:timestamp",
    "source_file:string",
    "batch:int",
)
DIMENSION = soda(
    "lake/marts/dim_customer",
    "customer_key:bigint",
    "name:string",
    "ingested_at:timestamp",
    "segment:string",
    "batch:int",
)


def test_a_file_rename_with_disjoint_columns_is_removal_plus_addition(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/stg_orders.yaml": STAGING})
    repo.move("soda/contracts/stg_orders.yaml", "soda/contracts/dim_customer.yaml")
    repo.write("soda/contracts/dim_customer.yaml", DIMENSION)
    repo.commit("replace the staging table")
    status = repo.git("diff", "--name-status", "-M", "main", "HEAD")
    assert status.startswith("R"), status  # git does call it a rename
    _code, report, _ = gate_json(repo)
    assert [c["rule"] for c in report["changes"]] == ["model_removed", "model_added"]


def test_a_file_rename_with_shared_columns_is_a_rename(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/stg_orders.yaml": STAGING})
    repo.move("soda/contracts/stg_orders.yaml", "soda/contracts/orders.yaml")
    repo.write(
        "soda/contracts/orders.yaml",
        STAGING.replace("lake/staging/stg_orders", "lake/marts/orders").replace(
            "source_file", "source_uri"
        ),
    )
    repo.commit("promote")
    _code, report, _ = gate_json(repo)
    rules = [(c["rule"], c["dataset"], c["old_dataset"]) for c in report["changes"]]
    assert ("model_renamed", "lake/marts/orders", "lake/staging/stg_orders") in rules


# -- column renames: the right pair or removal plus addition ---------------------------------


def test_one_column_renamed_in_place_names_the_pair(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/o.yaml": soda("d", "id:bigint", "note", "x:int")})
    repo.write("soda/contracts/o.yaml", soda("d", "id:bigint", "comment", "x:int"))
    repo.commit("rename")
    _code, report, _ = gate_json(repo)
    assert [(c["rule"], c["before"], c["after"]) for c in report["changes"]] == [
        ("column_renamed", "note", "comment")
    ]


def test_two_columns_replaced_are_never_guessed_as_renames(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/o.yaml": soda("d", "id:bigint", "a", "b", "c:int")})
    repo.write("soda/contracts/o.yaml", soda("d", "id:bigint", "x", "y", "c:int"))
    repo.commit("replace two")
    _code, report, _ = gate_json(repo)
    assert sorted((c["rule"], c["column"]) for c in report["changes"]) == [
        ("column_added", "x"),
        ("column_added", "y"),
        ("column_removed", "a"),
        ("column_removed", "b"),
    ]


def test_a_rename_that_moves_the_column_is_removal_plus_addition(tmp_path: Path) -> None:
    repo = feature(tmp_path, {"soda/contracts/o.yaml": soda("d", "id:bigint", "note", "x:int")})
    repo.write("soda/contracts/o.yaml", soda("d", "id:bigint", "x:int", "comment"))
    repo.commit("rename and move")
    _code, report, _ = gate_json(repo)
    assert sorted(c["rule"] for c in report["changes"]) == [
        "column_added",
        "column_removed",
    ]


# -- DCS physical types (review2) ----------------------------------------------------
# datacontract-cli's Snowflake fixture declares ``type: timestamp`` with
# ``config: {snowflakeType: TIMESTAMP_LTZ}``; its SQL export uses the config
# type. The scenario below is written for the gate after reading it.

DCS = """\
dataContractSpecification: 1.1.0
id: orders
info:
  title: Orders
  version: 1.0.0
models:
  orders:
    fields:
      order_total:
        type: number
        config:
          snowflakeType: {total}
      processed_at:
        type: timestamp
        config:
          snowflakeType: {ts}
"""


def test_a_narrowed_dcs_physical_type_blocks_whatever_the_dialect(tmp_path: Path) -> None:
    repo = feature(
        tmp_path, {"datacontract.yaml": DCS.format(total="NUMBER(38,2)", ts="TIMESTAMP_LTZ")}
    )
    repo.write(
        "datacontract.yaml",
        DCS.format(total="NUMBER(12,2)", ts="TIMESTAMP_NTZ").replace("1.0.0", "2.0.0"),
    )
    repo.commit("narrow the Snowflake types")
    for dialect in ("spark", "snowflake"):
        code, report, _ = gate_json(repo, "--dialect", dialect)
        assert code == 1
        found = [(c["rule"], c["column"], c["line"], c["message"]) for c in report["changes"]]
        assert found == [
            ("type_narrowed", "order_total", 9,
             "column 'order_total' snowflake type narrowed: DECIMAL(38,2) -> DECIMAL(12,2)"),
            ("type_changed", "processed_at", 13,
             "column 'processed_at' snowflake type changed: TIMESTAMPLTZ -> TIMESTAMPNTZ"),
            ("version_bumped", None, 5, "contract version 1.0.0 -> 2.0.0"),
        ], dialect  # fmt: skip
    text = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert text.returncode == 1
    assert "type_narrowed orders.order_total" in text.stdout
