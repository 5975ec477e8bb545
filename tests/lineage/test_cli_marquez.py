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
        "its readers there are not listed, and usage-aware severity lowers nothing in this run"
    ]
    # ...and its unread removal is not lowered: its readers are unknown (fail closed)
    payments = removed(report, "method", "stg_payments")
    assert payments["external_consumers"] == []
    assert payments["severity"] == "error"
    assert any(
        "stay errors, because 1 lineage source(s) could not be read" in n for n in report["notices"]
    )
