"""A Marquez-compatible lineage API on 127.0.0.1 that knows one changed dataset and not another."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from tests.lineage.mesh_repo import MODELS, PROPERTIES, drop, make, serve
from tests.lineage.test_cli_lineage import _jobs, removed, run
from tests.lineage.test_marquez import NAME, NAMESPACE, NODE, lineage_graph


def _query(node: str) -> str:
    return "/api/v1/lineage?" + urllib.parse.urlencode({"nodeId": node, "depth": 1})


def test_an_unknown_dataset_is_named_and_the_other_datasets_readers_are_listed(
    tmp_path: Path,
) -> None:
    known = _query(NODE)
    unknown = _query("dataset:pg:payments")
    with serve({known: json.dumps(lineage_graph()).encode()}) as (url, hits):
        config = (
            f"lineage:\n  openlineage_api: {url}/api/v1\n  usage_aware_severity: true\n"
            f"  datasets:\n    stg_orders: ['{NAMESPACE}/{NAME}']\n"
            "    stg_payments: ['pg/payments']\n"
        )
        repo = make(tmp_path / "r", config)
        repo.write(PROPERTIES, drop(drop(MODELS, "discount_code"), "method"))
        repo.commit("drop discount_code and method")
        code, report = run(repo)
    assert sorted(hits) == sorted([known, unknown])
    # the known dataset's readers are listed...
    assert _jobs(removed(report, "discount_code")) == {
        "spark_jobs/orders_enrichment.fct_orders",
        "airflow/exports.orders_to_s3",
    }
    # ...the unknown one is a warning naming it, never exit 2...
    assert code == 1
    warnings = [n for n in report["notices"] if n.startswith("lineage source")]
    assert warnings == [
        f"lineage source {url}/api/v1 does not know dataset pg/payments (HTTP 404 Not Found); "
        "its readers there are unknown, and usage-aware severity lowers nothing on it"
    ]
    # ...and its unread removal is not lowered: its readers are unknown (fail closed)
    payments = removed(report, "method", "stg_payments")
    assert payments["external_consumers"] == []
    assert payments["severity"] == "error"
    assert (
        "lineage.usage_aware_severity: stg_payments.method stays an error: the lineage API "
        "does not know pg/payments"
    ) in report["notices"]


def test_an_unknown_dataset_holds_back_usage_aware_severity_on_that_dataset_only(
    tmp_path: Path,
) -> None:
    graph = lineage_graph()
    # the API knows stg_orders' dataset, and that only its writer touches it
    graph["graph"] = [n for n in graph["graph"] if n["id"] == NODE or n["id"].startswith("job:dbt")]
    graph["graph"][0]["outEdges"] = []
    with serve({_query(NODE): json.dumps(graph).encode()}) as (url, _hits):
        config = (
            f"lineage:\n  openlineage_api: {url}/api/v1\n  usage_aware_severity: true\n"
            f"  datasets:\n    stg_orders: ['{NAMESPACE}/{NAME}']\n"
            "    stg_payments: ['pg/payments']\n"
        )
        repo = make(tmp_path / "r", config)
        repo.write(PROPERTIES, drop(drop(MODELS, "discount_code"), "method"))
        repo.commit("drop discount_code and method")
        code, report = run(repo)
    assert code == 1
    # nobody reads stg_orders.discount_code, and the API was asked: lowered
    orders = removed(report, "discount_code")
    assert orders["external_consumers"] == [] and orders["severity"] == "warning"
    assert orders["message"].endswith(
        "graded warning (lineage.usage_aware_severity): no reader found in the "
        "repository or in 1 external source"
    )
    # the API does not know stg_payments' dataset: its removal stays an error
    assert removed(report, "method", "stg_payments")["severity"] == "error"
    assert not [n for n in report["notices"] if "could not be read" in n]
