"""Blast radius through the CLI: real dbt, SQLMesh and PySpark layouts in real git repos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_gate
from tests.consumer_projects import DBT_PROJECT, SQLMESH_PROJECT
from tests.gitrepo import GitRepo

STG = "models/staging/stg_models.yml"


def make(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    return repo


def gate(repo: GitRepo, *args: str, fmt: str = "json") -> tuple[int, dict | str]:
    proc = run_gate(repo.path, "--base", "main", "--format", fmt, *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout) if fmt == "json" else proc.stdout


def drop_column(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {name}")
    return "".join(lines[:start] + lines[start + 2 :])


def change(report: dict, rule: str, column: str | None = None) -> dict:
    return next(c for c in report["changes"] if c["rule"] == rule and c["column"] == column)


@pytest.fixture
def dbt(tmp_path: Path) -> GitRepo:
    return make(tmp_path, DBT_PROJECT)


def test_gitlab_code_quality_lists_the_consumer_files_it_could_not_read(dbt: GitRepo) -> None:
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    dbt.commit("drop discount_code")
    proc = run_gate(dbt.path, "--base", "main", "--head", "feature", "--format", "gitlab")
    assert proc.returncode == 1, proc.stderr
    issues = json.loads(proc.stdout)
    unread = [i for i in issues if i["check_name"] == "consumer_not_analysed"]
    assert [(i["location"]["path"], i["severity"]) for i in unread] == [
        ("models/marts/broken_model.sql", "info")
    ]
    assert unread[0]["description"] == (
        "consumer not analysed: dbt model: unterminated {{ at line 1"
    )
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_dbt_column_removed_names_its_readers_and_breaks_the_one_that_reads_it(
    dbt: GitRepo,
) -> None:
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    dbt.commit("drop discount_code")
    code, report = gate(dbt, "--head", "feature")
    assert code == 1
    removed = change(report, "column_removed", "discount_code")
    assert removed["consumers"] == [
        # select * from {{ ref('stg_orders') }}: a use of every column
        {"path": "models/marts/customers.sql", "line": 12, "object": "customers", "usage": "star"},
        # o.* is a use of every column too; the WHERE reads it by name
        {"path": "models/marts/orders.sql", "line": 2, "object": "orders", "usage": "star"},
        {"path": "models/marts/orders.sql", "line": 7, "object": "orders", "usage": "filtered"},
    ]
    broken = [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert [(c["path"], c["line"], c["dataset"], c["column"]) for c in broken] == [
        ("models/marts/orders.sql", 7, "stg_orders", "discount_code")
    ]
    assert "orders reads column 'stg_orders.discount_code' (filtered)" in broken[0]["message"]
    # the Jinja pre-pass could not read one model: listed, never dropped
    assert report["consumers_not_analysed"] == [
        {
            "path": "models/marts/broken_model.sql",
            "line": None,
            "reason": "dbt model: unterminated {{ at line 1",
        }
    ]
    # a macro mentions stg_orders but is not a consumer (excluded by default)
    assert "macros/" not in json.dumps(report)


def test_refs_joins_and_aggregates_through_ctes(dbt: GitRepo) -> None:
    text = DBT_PROJECT[STG].replace("data_type: bigint", "data_type: int")  # order_total narrowed
    dbt.write(STG, text.replace("      - name: customer_id\n        data_type: int\n", "", 1))
    dbt.commit("narrow order_total, drop customer_id")
    code, report = gate(dbt, "--head", "feature")
    assert code == 1
    narrowed = change(report, "type_narrowed", "order_total")
    assert {(c["path"], c["line"], c["usage"]) for c in narrowed["consumers"]} == {
        ("models/marts/customers.sql", 12, "star"),
        ("models/marts/customers.sql", 19, "aggregated"),  # sum(order_total) in a CTE
        ("models/marts/orders.sql", 2, "star"),
    }
    removed = change(report, "column_removed", "customer_id")
    usages = {(c["path"], c["line"], c["usage"]) for c in removed["consumers"]}
    assert ("models/marts/customers.sql", 17, "selected") in usages
    assert ("models/marts/customers.sql", 21, "grouped") in usages
    assert ("models/marts/orders.sql", 6, "joined") in usages
    # a narrowed type does not break a reader; a removed column does, at each read
    broken = {(c["path"], c["line"]) for c in report["changes"] if c["rule"] == "consumer_broken"}
    assert broken == {
        ("models/marts/customers.sql", 17),
        ("models/marts/customers.sql", 21),
        ("models/marts/orders.sql", 6),
    }
    # stg_customers.customer_id is a different column: the join's other side is not listed
    assert ("models/marts/customers.sql", 31) not in {
        (c["path"], c["line"]) for c in removed["consumers"]
    }


def test_acknowledging_the_contract_does_not_clear_a_broken_consumer(dbt: GitRepo) -> None:
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    dbt.commit("drop discount_code")
    proc = run_gate(dbt.path, "--base", "main", "--head", "feature", "--accept", "stg_orders")
    assert proc.returncode == 1, proc.stdout
    assert "column_removed stg_orders.discount_code" in proc.stdout
    assert "read by models/marts/orders.sql:7 (orders, filtered)" in proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("FAIL: 1 unacknowledged breaking change(s).")
    assert " Fix the in-repo consumer(s) that still read what is gone: " in last
    assert "models/marts/orders.sql:7 (stg_orders.discount_code)" in last
    assert "accept-breaking-change" not in last  # nothing left that a token would clear
    # fixing the consumer in the same PR passes with the acknowledgement
    dbt.write(
        "models/marts/orders.sql",
        DBT_PROJECT["models/marts/orders.sql"].replace(
            "where o.discount_code is not null", "where o.order_total > 0"
        ),
    )
    dbt.commit("stop reading discount_code")
    code, report = gate(dbt, "--head", "feature", "--accept", "stg_orders")
    assert code == 0
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert change(report, "column_removed", "discount_code")["acknowledged"] is True


def test_removed_contract_lists_every_ref_and_breaks_none_while_the_model_stays(
    dbt: GitRepo,
) -> None:
    text = DBT_PROJECT[STG]
    dbt.write(STG, text[: text.index("  - name: stg_customers")])
    dbt.commit("drop the stg_customers contract")
    code, report = gate(dbt, "--head", "feature")
    assert code == 1
    removed = change(report, "model_removed")
    assert {(c["path"], c["line"], c["usage"]) for c in removed["consumers"]} == {
        ("models/marts/customers.sql", 8, "read"),
        ("models/marts/orders.sql", 5, "read"),
    }
    # models/staging/stg_customers.sql still builds the table: its readers still run
    assert [c for c in report["changes"] if c["rule"] == "consumer_broken"] == []
    # deleting the model file too removes the table: every ref breaks
    dbt.remove("models/staging/stg_customers.sql")
    dbt.commit("drop the stg_customers model")
    code, report = gate(dbt, "--head", "feature")
    broken = [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert {(c["path"], c["line"], c["column"]) for c in broken} == {
        ("models/marts/customers.sql", 8, None),
        ("models/marts/orders.sql", 5, None),
    }


def test_markdown_and_github_reports(dbt: GitRepo) -> None:
    dbt.write(STG, DBT_PROJECT[STG].replace("data_type: bigint", "data_type: int"))
    dbt.commit("narrow order_total")
    code, markdown = gate(dbt, "--head", "feature", fmt="markdown")
    assert code == 1
    assert (
        "<details><summary>Who reads this (3 consumer line(s) of 1 change(s))</summary>" in markdown
    )
    assert "  - `models/marts/customers.sql:19` `customers` (`aggregated`)" in markdown
    assert "Consumers not analysed (1)" in markdown
    code, github = gate(dbt, "--head", "feature", fmt="github")
    assert (
        "::notice file=models/marts/customers.sql,line=19,title=consumer of type_narrowed::"
        "customers reads stg_orders.order_total (aggregated)"
    ) in github


def test_consumers_are_parsed_only_to_explain_a_breaking_change(dbt: GitRepo) -> None:
    # an additive change: no consumer is read, so the unreadable model is not mentioned
    dbt.write(STG, DBT_PROJECT[STG] + "      - name: loyalty_tier\n        data_type: string\n")
    dbt.commit("add a column")
    code, report = gate(dbt, "--head", "feature")
    assert code == 0
    assert report["consumers_not_analysed"] == []


def test_only_files_that_mention_a_changed_dataset_are_read(dbt: GitRepo) -> None:
    dbt.write("models/marts/unrelated.sql", "select {{ broken\n")  # unreadable, no changed name
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "customer_name"))
    dbt.commit("drop customer_name; add an unrelated model")
    code, report = gate(dbt, "--head", "feature")
    assert code == 1
    # neither unreadable model mentions stg_customers, so neither is read
    assert report["consumers_not_analysed"] == []
    readers = change(report, "column_removed", "customer_name")["consumers"]
    assert {(c["path"], c["line"], c["usage"]) for c in readers} == {
        ("models/marts/customers.sql", 8, "star"),
        ("models/marts/customers.sql", 26, "selected"),
        ("models/marts/orders.sql", 3, "selected"),
    }


def test_working_tree_and_config(dbt: GitRepo) -> None:
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))  # uncommitted
    code, report = gate(dbt)
    assert code == 1
    assert any(c["rule"] == "consumer_broken" for c in report["changes"])
    # Switching consumers off (a relaxation) applies once on the base branch (gate/policy.py).
    dbt.land(".schema-gate.yml", "consumers: false\n")
    code, report = gate(dbt)
    assert change(report, "column_removed", "discount_code")["consumers"] == []
    assert not any(c["rule"] == "consumer_broken" for c in report["changes"])
    dbt.land(".schema-gate.yml", "rules:\n  consumer_broken: warning\n")
    code, report = gate(dbt, "--accept", "stg_orders")
    assert code == 0
    assert change(report, "consumer_broken", "discount_code")["severity"] == "warning"


def test_bad_consumers_config_is_one_line_exit_2(dbt: GitRepo) -> None:
    dbt.write(".schema-gate.yml", "consumers:\n  sql: models/**/*.sql\n  bogus: 1\n")
    proc = run_gate(dbt.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert ".schema-gate.yml:3: unknown consumers key 'bogus'" in proc.stderr


def test_size_cap_from_config(dbt: GitRepo) -> None:
    dbt.land(".schema-gate.yml", "consumers:\n  max_file_bytes: 300\n")  # a bound: base side
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    dbt.commit("drop, with a small cap")
    code, report = gate(dbt, "--head", "feature")
    reasons = {n["path"]: n["reason"] for n in report["consumers_not_analysed"]}
    assert reasons["models/marts/customers.sql"].endswith("is over the 300-byte limit")
    assert "models/marts/orders.sql" not in reasons  # small enough: still analysed
    assert code == 1


def test_sqlmesh_model_and_pyspark_job_over_soda_contracts(tmp_path: Path) -> None:
    repo = make(tmp_path, SQLMESH_PROJECT)
    repo.write(
        "soda/contracts/orders.yaml",
        SQLMESH_PROJECT["soda/contracts/orders.yaml"].replace(
            "  - name: amount\n    data_type: decimal(12, 2)\n", ""
        ),
    )
    repo.commit("drop amount")
    code, report = gate(repo, "--head", "feature", "--dialect", "duckdb")
    assert code == 1
    removed = change(report, "column_removed", "amount")
    assert removed["consumers"] == [
        {"path": "jobs/refunds.py", "line": 9, "object": "refunds.refunds", "usage": "filtered"},
        {
            "path": "models/customer_revenue.sql",
            "line": 11,
            "object": "sushi.customer_revenue_by_day",
            "usage": "aggregated",
        },
    ]
    broken = {(c["path"], c["line"]) for c in report["changes"] if c["rule"] == "consumer_broken"}
    assert broken == {("jobs/refunds.py", 9), ("models/customer_revenue.sql", 11)}
    assert report["consumers_not_analysed"] == [
        {
            "path": "jobs/refunds.py",
            "line": 13,
            "reason": "spark.sql() with an f-string is not analysed",
        }
    ]


def test_table_names_from_config(tmp_path: Path) -> None:
    files = dict(SQLMESH_PROJECT)
    files["soda/contracts/orders.yaml"] = SQLMESH_PROJECT["soda/contracts/orders.yaml"].replace(
        "lake/sushi/orders", "orders_contract_v1"
    )
    files[".schema-gate.yml"] = "consumers:\n  tables:\n    orders_contract_v1: [sushi.orders]\n"
    repo = make(tmp_path, files)
    repo.write(
        "soda/contracts/orders.yaml",
        files["soda/contracts/orders.yaml"].replace("decimal(12, 2)", "decimal(10, 2)"),
    )
    repo.commit("narrow amount")
    code, report = gate(repo, "--head", "feature")
    assert code == 1
    narrowed = change(report, "type_narrowed", "amount")
    assert [(c["path"], c["line"]) for c in narrowed["consumers"]] == [
        ("jobs/refunds.py", 9),
        ("models/customer_revenue.sql", 11),
    ]
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]


def test_a_consumer_symlink_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "stg_orders.sql"
    outside.parent.mkdir()
    outside.write_text("select discount_code from stg_orders\n")
    repo = GitRepo(tmp_path / "repo")
    for path, text in DBT_PROJECT.items():
        repo.write(path, text)
    repo.symlink("analyses/linked.sql", str(outside))  # on main already, outside model paths
    repo.commit("project with a symlinked analysis")
    repo.branch("feature")
    repo.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))  # working tree
    code, report = gate(repo)
    assert code == 1
    # git grep skips symlinks: the link is not even a candidate
    assert "linked.sql" not in json.dumps(report)
    repo.commit("drop")
    code, report = gate(repo, "--head", "feature")
    assert code == 1
    assert "linked.sql" not in json.dumps(report)  # nor in a commit's tree


def test_many_consumers_parse_in_worker_processes_with_the_same_result(dbt: GitRepo) -> None:
    for i in range(205):  # over every threshold for worker processes (fork or spawn)
        dbt.write(
            f"models/reports/r{i}.sql",
            f"select order_id, discount_code as code_{i}\nfrom {{{{ ref('stg_orders') }}}}\n",
        )
    dbt.commit("205 reports")
    dbt.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    dbt.commit("drop")
    _, pooled = gate(dbt, "--head", "feature", "--jobs", "2")
    _, serial = gate(dbt, "--head", "feature", "--jobs", "1")
    assert pooled["changes"] == serial["changes"]
    broken = [c for c in pooled["changes"] if c["rule"] == "consumer_broken"]
    assert len(broken) == 206  # 205 reports and orders.sql
    assert {c["line"] for c in broken if c["path"].startswith("models/reports/")} == {1}
