"""Consumers outside the repository through the CLI: real git, dbt's own manifests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_main
from tests.lineage.mesh_repo import FINANCE, FINANCE_PARSED, MODELS, PROPERTIES, drop, make, serve

MANIFEST = "ci/finance/manifest.json"
WITH_PATH = f"lineage:\n  dbt_manifests: [{MANIFEST}]\n"
REVENUE = {
    "source": "dbt-mesh:jaffle_finance",
    "consumer": "jaffle_finance.fct_revenue",
    "dataset": "model.jaffle_platform.stg_orders",
    "columns": ["amount", "customer_id", "discount_code"],
    "location": "models/fct_revenue.sql",
}


def run(repo, *args: str, fmt: str = "json"):
    proc = run_main(repo.path, "--base", "main", "--head", "feature", "--format", fmt, *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout) if fmt == "json" else proc.stdout


def removed(report: dict, column: str, dataset: str = "stg_orders") -> dict:
    return next(
        c
        for c in report["changes"]
        if c["rule"] == "column_removed" and c["column"] == column and c["dataset"] == dataset
    )


def pr_drops(repo, column: str, dataset_text: str = MODELS) -> None:
    repo.write(PROPERTIES, drop(dataset_text, column))
    repo.commit(f"drop {column}")


def test_a_cross_project_ref_in_a_manifest_at_the_base_names_its_readers(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    pr_drops(repo, "discount_code")
    code, report = run(repo)
    assert code == 1
    change = removed(report, "discount_code")
    assert change["severity"] == "error"
    assert change["consumers"] == []
    # fct_revenue filters on it; customer_orders selects *; the dashboard reads the
    # whole model. orders_by_day reads ordered_at only: not listed.
    assert [r["consumer"] for r in change["external_consumers"]] == [
        "jaffle_finance.customer_orders",
        "jaffle_finance.fct_revenue",
        "jaffle_finance.orders_dashboard",
    ]
    assert REVENUE in change["external_consumers"]
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    _, text = run(repo, fmt="text")
    assert (
        "read outside the repository by jaffle_finance.fct_revenue "
        "(dbt-mesh:jaffle_finance, models/fct_revenue.sql)" in text
    )
    _, markdown = run(repo, fmt="markdown")
    assert "0 consumer line(s), 3 consumer(s) outside the repository of 1 change(s)" in markdown
    assert "outside the repository: `jaffle_finance.fct_revenue`" in markdown


def test_a_column_only_one_reader_reads(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    pr_drops(repo, "ordered_at")
    _, report = run(repo)
    names = [r["consumer"] for r in removed(report, "ordered_at")["external_consumers"]]
    assert "jaffle_finance.orders_by_day" in names
    assert "jaffle_finance.fct_revenue" not in names


def test_a_manifest_without_compiled_sql_reads_every_column(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE_PARSED})
    pr_drops(repo, "ordered_at")
    _, report = run(repo)
    reads = removed(report, "ordered_at")["external_consumers"]
    assert len(reads) == 4 and all(r["columns"] is None for r in reads)


def test_a_manifest_served_on_127_0_0_1(tmp_path: Path) -> None:
    with serve({"/finance/manifest.json": FINANCE}) as (url, hits):
        repo = make(tmp_path / "r", f"lineage:\n  dbt_manifests: [{url}/finance/manifest.json]\n")
        pr_drops(repo, "discount_code")
        _, report = run(repo)
    assert hits == ["/finance/manifest.json"]
    assert REVENUE in removed(report, "discount_code")["external_consumers"]


def test_a_source_that_404s_is_a_warning_naming_it_never_exit_2(tmp_path: Path) -> None:
    with serve({}) as (url, _hits):
        repo = make(tmp_path / "r", f"lineage:\n  dbt_manifests: [{url}/gone.json]\n")
        pr_drops(repo, "discount_code")
        code, report = run(repo)
        _, text = run(repo, fmt="text")
    assert code == 1
    assert removed(report, "discount_code")["external_consumers"] == []
    warning = next(n for n in report["notices"] if "gone.json" in n)
    assert "HTTP 404" in warning and "was not read" in warning
    assert f"note: lineage source {url}/gone.json was not read (HTTP 404" in text


def test_no_breaking_change_fetches_nothing(tmp_path: Path) -> None:
    with serve({"/m.json": FINANCE}) as (url, hits):
        repo = make(tmp_path / "r", f"lineage:\n  dbt_manifests: [{url}/m.json]\n")
        repo.write(PROPERTIES, MODELS + "      - name: note\n        data_type: varchar\n")
        repo.commit("add a column")
        code, report = run(repo)
    assert code == 0 and hits == []
    assert not [n for n in report["notices"] if "lineage" in n]


USAGE_AWARE = WITH_PATH + "  usage_aware_severity: true\n"


def test_usage_aware_grades_an_unread_removal_warning_and_says_on_what_evidence(
    tmp_path: Path,
) -> None:
    repo = make(tmp_path / "r", USAGE_AWARE, {MANIFEST: FINANCE})
    pr_drops(repo, "method")  # stg_payments.method: nobody reads it
    code, report = run(repo)
    change = removed(report, "method", "stg_payments")
    assert code == 0
    assert change["severity"] == "warning"
    assert change["message"].endswith(
        "graded warning (lineage.usage_aware_severity): no reader found in the "
        "repository or in 1 external source"
    )


def test_usage_aware_keeps_a_read_removal_an_error(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", USAGE_AWARE, {MANIFEST: FINANCE})
    pr_drops(repo, "discount_code")
    code, report = run(repo)
    assert code == 1 and removed(report, "discount_code")["severity"] == "error"


def test_usage_aware_is_off_by_default(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    pr_drops(repo, "method")
    code, report = run(repo)
    assert code == 1 and removed(report, "method", "stg_payments")["severity"] == "error"


def test_usage_aware_fails_closed_when_a_source_is_unreachable(tmp_path: Path) -> None:
    with serve({}) as (url, _hits):
        config = (
            f"lineage:\n  dbt_manifests: [{MANIFEST}, {url}/gone.json]\n"
            "  usage_aware_severity: true\n"
        )
        repo = make(tmp_path / "r", config, {MANIFEST: FINANCE})
        pr_drops(repo, "method")
        code, report = run(repo)
    assert code == 1
    assert removed(report, "method", "stg_payments")["severity"] == "error"
    assert any(
        "1 breaking change(s) with no known reader stay errors, because 1 lineage source(s) "
        "could not be read" in n
        for n in report["notices"]
    )


def test_usage_aware_needs_the_in_repo_search(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", "consumers: false\n" + USAGE_AWARE, {MANIFEST: FINANCE})
    pr_drops(repo, "method")
    code, report = run(repo)
    assert code == 1 and removed(report, "method", "stg_payments")["severity"] == "error"


def test_usage_aware_counts_an_in_repo_reader(tmp_path: Path) -> None:
    reader = {"models/payments_report.sql": "select method from {{ ref('stg_payments') }}\n"}
    repo = make(tmp_path / "r", USAGE_AWARE, {MANIFEST: FINANCE, **reader})
    pr_drops(repo, "method")
    code, report = run(repo)
    assert code == 1 and removed(report, "method", "stg_payments")["severity"] == "error"


def test_a_pr_editing_lineage_gets_a_notice_and_the_base_applies(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    # The PR removes the source (and would switch usage-aware on) while dropping a read column.
    repo.write(".schema-gate.yml", "lineage:\n  usage_aware_severity: true\n")
    pr_drops(repo, "discount_code")
    code, report = run(repo)
    assert code == 1
    assert REVENUE in removed(report, "discount_code")["external_consumers"]
    assert (
        "this PR changes lineage: in .schema-gate.yml; the base branch's lineage settings "
        "apply until it is merged"
    ) in report["notices"]


def test_a_pr_cannot_add_a_url_for_the_gate_to_fetch(tmp_path: Path) -> None:
    with serve({"/m.json": FINANCE}) as (url, hits):
        repo = make(tmp_path / "r", None)
        repo.write(".schema-gate.yml", f"lineage:\n  dbt_manifests: [{url}/m.json]\n")
        pr_drops(repo, "discount_code")
        _, report = run(repo)
    assert hits == []
    assert removed(report, "discount_code")["external_consumers"] == []
    assert any("this PR changes lineage:" in n for n in report["notices"])


def test_a_manifest_the_pr_adds_is_not_evidence(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", USAGE_AWARE)
    repo.write(MANIFEST, FINANCE_PARSED)
    pr_drops(repo, "method")
    code, report = run(repo)
    assert code == 1
    warning = next(n for n in report["notices"] if MANIFEST in n)
    assert "this pull request adds it" in warning


def test_a_manifest_the_pr_commits_is_not_evidence_in_the_working_tree_either(
    tmp_path: Path,
) -> None:
    """Attack: the default CLI run compares the working tree (a CI checkout of
    the PR branch). The PR commits an empty-handed manifest where the base
    config expects a CI artifact; the HEAD check was skipped without --head,
    so the PR's own file was the evidence and its removal became a warning
    (exit 0)."""
    repo = make(tmp_path / "r", USAGE_AWARE)
    repo.write(MANIFEST, FINANCE_PARSED)
    pr_drops(repo, "method")
    proc = run_main(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout
    report = json.loads(proc.stdout)
    assert removed(report, "method", "stg_payments")["severity"] == "error"
    warning = next(n for n in report["notices"] if MANIFEST in n)
    assert "this pull request adds it" in warning


def test_an_untracked_artifact_in_the_working_tree_is_read(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH)
    pr_drops(repo, "discount_code")
    (repo.path / "ci" / "finance").mkdir(parents=True)
    (repo.path / MANIFEST).write_bytes(FINANCE)  # downloaded by a CI step, never committed
    _, report = run(repo)
    assert REVENUE in removed(report, "discount_code")["external_consumers"]


def test_a_path_outside_the_repository_is_a_warning(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", "lineage:\n  dbt_manifests: [../outside.json]\n")
    (tmp_path / "outside.json").write_bytes(FINANCE)
    pr_drops(repo, "discount_code")
    code, report = run(repo)
    assert code == 1
    assert removed(report, "discount_code")["external_consumers"] == []
    assert any("../outside.json was not read" in n and "leaves" in n for n in report["notices"])


SPARK_EVENTS = (Path(__file__).parent / "data" / "spark-orders.jsonl").read_bytes()
ENRICHMENT = "spark_jobs/orders_enrichment.execute_insert_into_hadoop_fs_relation_command"
EXPORT = "spark_jobs/orders_export.execute_save_into_data_source_command"


def _jobs(change: dict) -> set[str]:
    return {r["consumer"] for r in change["external_consumers"]}


def test_openlineage_events_at_the_base_name_the_spark_jobs_that_read_a_column(
    tmp_path: Path,
) -> None:
    config = "lineage:\n  openlineage_events: [lineage/events.jsonl]\n"
    repo = make(tmp_path / "r", config, {"lineage/events.jsonl": SPARK_EVENTS})
    pr_drops(repo, "amount")
    code, report = run(repo)
    assert code == 1
    jobs = _jobs(removed(report, "amount"))
    # orders_enrichment's column lineage reads amount; orders_export has no column
    # lineage (it may read any column); customer_orders reads customer_id only.
    assert any(j.startswith(ENRICHMENT) for j in jobs), jobs
    assert any(j.startswith(EXPORT) for j in jobs), jobs
    assert not any("customer_orders" in j for j in jobs), jobs
    assert not [n for n in report["notices"] if "lineage source" in n]
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]


def test_openlineage_events_with_a_broken_line_name_it_and_lower_nothing(tmp_path: Path) -> None:
    config = (
        "lineage:\n  openlineage_events: [lineage/events.jsonl]\n  usage_aware_severity: true\n"
    )
    events = b"{not json\n" + SPARK_EVENTS
    repo = make(tmp_path / "r", config, {"lineage/events.jsonl": events})
    pr_drops(repo, "ordered_at")
    code, report = run(repo)
    change = removed(report, "ordered_at")
    assert any(j.startswith(EXPORT) for j in _jobs(change))
    assert code == 1 and change["severity"] == "error"
    assert any(
        "lineage/events.jsonl: 1 part(s) not read" in n and ":1:" in n for n in report["notices"]
    )


def test_a_lineage_api_on_127_0_0_1_names_the_jobs_that_read_a_mapped_dataset(
    tmp_path: Path,
) -> None:
    import urllib.parse

    from tests.lineage.test_marquez import NAME, NAMESPACE, NODE, lineage_graph

    query = urllib.parse.urlencode({"nodeId": NODE, "depth": 1})
    body = json.dumps(lineage_graph()).encode()
    with serve({f"/api/v1/lineage?{query}": body}) as (url, hits):
        config = (
            f"lineage:\n  openlineage_api: {url}/api/v1\n"
            f"  datasets:\n    stg_orders: ['{NAMESPACE}/{NAME}']\n"
        )
        repo = make(tmp_path / "r", config)
        pr_drops(repo, "discount_code")
        code, report = run(repo)
    assert code == 1
    assert hits == [f"/api/v1/lineage?{query}"]
    assert not [n for n in report["notices"] if "lineage source" in n], report["notices"]
    assert _jobs(removed(report, "discount_code")) == {
        "spark_jobs/orders_enrichment.fct_orders",
        "airflow/exports.orders_to_s3",
    }


def test_a_path_into_dot_git_is_a_warning(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", "lineage:\n  dbt_manifests: [.git/config]\n")
    pr_drops(repo, "discount_code")
    code, report = run(repo)
    assert code == 1
    assert any(".git/config was not read" in n for n in report["notices"])


SHORT_ORDERS = """\
dataset: orders
columns:
  - name: order_id
    data_type: bigint
  - name: note
    data_type: string
"""


def test_a_contract_the_pr_adds_cannot_take_the_readers_of_a_break(tmp_path: Path) -> None:
    """The reader of ``warehouse.orders`` reads the ``orders`` contract; a pull request
    that drops ``note`` and adds a contract ``db/warehouse/orders`` makes the in-repo
    search attribute the reader to the new contract (the longest name wins), so the
    removal had no reader and usage-aware severity graded it a warning."""
    from tests.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "r")
    repo.write("soda/contracts/orders.yml", SHORT_ORDERS)
    repo.write("sql/report.sql", "select note from warehouse.orders\n")
    repo.write(".schema-gate.yml", "lineage:\n  usage_aware_severity: true\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "soda/contracts/orders.yml",
        SHORT_ORDERS.replace("  - name: note\n", "").replace("    data_type: string\n", ""),
    )
    repo.write(
        "soda/contracts/wh.yml",
        "dataset: db/warehouse/orders\ncolumns:\n  - name: id\n    data_type: bigint\n",
    )
    repo.commit("drop note, add a contract")
    proc = run_main(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode == 1, proc.stdout
    report = json.loads(proc.stdout)
    change = next(c for c in report["changes"] if c["rule"] == "column_removed")
    assert change["severity"] == "error"
    assert any(
        "db/warehouse/orders" in n and "this pull request adds" in n for n in report["notices"]
    ), report["notices"]


def test_annotations_and_sarif_name_the_readers_outside_the_repository(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    pr_drops(repo, "discount_code")
    _, github = run(repo, fmt="github")
    [line] = [a for a in github.splitlines() if a.startswith("::error ") and "column_removed" in a]
    assert line.endswith(
        "(outside the repository: jaffle_finance.customer_orders, "
        "jaffle_finance.fct_revenue, jaffle_finance.orders_dashboard)"
    )
    _, sarif = run(repo, fmt="sarif")
    [result] = [
        r
        for r in json.loads(sarif)["runs"][0]["results"]
        if r["ruleId"] == "column_removed" and r["properties"]["column"] == "discount_code"
    ]
    assert result["properties"]["externalConsumers"] == [
        "jaffle_finance.customer_orders (dbt-mesh:jaffle_finance)",
        "jaffle_finance.fct_revenue (dbt-mesh:jaffle_finance)",
        "jaffle_finance.orders_dashboard (dbt-mesh:jaffle_finance)",
    ]
    assert "relatedLocations" not in result  # their code is not in this repository
