"""Spark-shaped OpenLineage events from the official client's generated classes, through the gate.

The events are built with ``openlineage-python``'s classes generated from the
spec's JSON schemas and serialised by its ``Serde.to_json``
(tests/lineage/client_events.py); the gate reads them from a JSON Lines export
in the repository and from a Marquez-style events answer served on 127.0.0.1,
in a real git repository, and names the jobs that read a dropped column from
their ``columnLineage``.
"""

from __future__ import annotations

import json
from pathlib import Path

from openlineage.client.serde import Serde

from tests.lineage.client_events import COHORTS, ENRICH, EXPORT, SPARK, json_lines, spark_events
from tests.lineage.mesh_repo import make, serve
from tests.lineage.test_cli_lineage import pr_drops, removed, run

EVENTS = "lineage/events.jsonl"


def _readers(change: dict) -> dict[str, list[str] | None]:
    """Job name (without namespace) -> the columns read, as the report lists them."""
    out: dict[str, list[str] | None] = {}
    for read in change["external_consumers"]:
        namespace, _, job = read["consumer"].partition("/")
        assert namespace == "spark_jobs", read
        out[job] = read["columns"]
    return out


def test_the_export_is_the_clients_own_serialisation() -> None:
    lines = json_lines(spark_events()).decode().splitlines()
    assert len(lines) == 4
    first = json.loads(lines[0])
    assert first["producer"] == SPARK
    assert first["schemaURL"].startswith("https://openlineage.io/spec/2-0-2/OpenLineage.json")
    lineage = first["outputs"][0]["facets"]["columnLineage"]
    assert lineage["_schemaURL"].endswith(
        "ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
    )
    assert lineage["fields"]["discount"]["inputFields"] == [
        {
            "namespace": "hdfs://namenode:8020",
            "name": "/warehouse/analytics.db/stg_orders",
            "field": "discount_code",
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
        }
    ]


def test_a_json_lines_export_names_the_spark_jobs_that_read_the_dropped_column(
    tmp_path: Path,
) -> None:
    config = f"lineage:\n  openlineage_events: [{EVENTS}]\n"
    repo = make(tmp_path / "r", config, {EVENTS: json_lines(spark_events())})
    pr_drops(repo, "amount")
    code, report = run(repo)
    assert code == 1
    assert not [n for n in report["notices"] if "lineage source" in n], report["notices"]
    readers = _readers(removed(report, "amount"))
    # orders_enrichment's columnLineage reads amount (by its HDFS path and its Hive
    # table alike); orders_export has no column lineage, so it may read any column;
    # customer_cohorts' lineage names customer_id and ordered_at only.
    assert readers == {
        ENRICH: ["amount", "discount_code", "order_id", "status"],
        EXPORT: None,
    }
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]


def test_a_marquez_style_events_answer_on_127_0_0_1_is_read_the_same(tmp_path: Path) -> None:
    # GET /api/v1/events/lineage answers {"events": [...], "totalCount": n}
    # (MarquezProject/marquez, OpenLineageResource.getLineageEvents).
    events = [Serde.to_dict(e) for e in spark_events()]
    body = json.dumps({"events": events, "totalCount": len(events)}).encode()
    path = "/api/v1/events/lineage?limit=100"
    with serve({path: body}) as (url, hits):
        repo = make(tmp_path / "r", f"lineage:\n  openlineage_events: ['{url}{path}']\n")
        pr_drops(repo, "ordered_at")
        code, report = run(repo)
    assert hits == [path]
    assert code == 1
    assert not [n for n in report["notices"] if "lineage source" in n], report["notices"]
    assert _readers(removed(report, "ordered_at")) == {
        COHORTS: ["customer_id", "ordered_at"],  # through the metastore table
        EXPORT: None,
    }
