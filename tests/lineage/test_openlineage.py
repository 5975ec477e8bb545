"""OpenLineage run events -> the jobs that read a dataset, and which columns (issue #25)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gate.lineage.external import ExternalRead
from gate.lineage.openlineage import (
    LineageSourceError,
    read_events,
    read_events_with_warnings,
)

DATA = Path(__file__).parent / "data"
CORPUS = Path(__file__).parent.parent / "corpus" / "openlineage"

ENRICH = (
    "spark_jobs/orders_enrichment.execute_insert_into_hadoop_fs_relation_command."
    "warehouse_analytics.db_fct_orders"
)
EXPORT = "spark_jobs/orders_export.execute_save_into_data_source_command.exports_orders"
CUSTOMER_ORDERS = (
    "spark_jobs/customer_orders.execute_create_data_source_table_as_select_command."
    "warehouse_analytics.db_customer_orders"
)
STG = "file//warehouse/analytics.db/stg_orders"
STG_HIVE = "file:/warehouse/analytics.stg_orders"
CUSTOMERS = "file//warehouse/analytics.db/customers"
CUSTOMERS_HIVE = "file:/warehouse/analytics.customers"


def table(reads: list[ExternalRead]) -> set[tuple[str, str, frozenset[str] | None]]:
    return {(r.consumer, r.dataset, r.columns) for r in reads}


def event(job: str, inputs: list[Any], outputs: list[Any] | None = None, **extra: Any) -> str:
    """One run event line: datasets as (namespace, name) or full dicts."""
    body = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-20T06:00:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.22.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193a1b2-0000-7000-8000-00000000000a"},
        "job": {"namespace": "jobs", "name": job},
        "inputs": [
            {"namespace": i[0], "name": i[1]} if isinstance(i, tuple) else i for i in inputs
        ],
        "outputs": outputs if outputs is not None else [],
        **extra,
    }
    return json.dumps(body)


def lineage_output(fields: dict[str, list[tuple[str, str, str]]]) -> dict[str, Any]:
    """An output with a columnLineage facet: out column -> [(namespace, name, field)]."""
    return {
        "namespace": "file",
        "name": "/out",
        "facets": {
            "columnLineage": {
                "fields": {
                    out: {
                        "inputFields": [{"namespace": n, "name": d, "field": f} for n, d, f in ins]
                    }
                    for out, ins in fields.items()
                }
            }
        },
    }


def test_spark_shaped_events_give_each_job_its_inputs_and_columns() -> None:
    text = (DATA / "spark-orders.jsonl").read_text()
    result = read_events_with_warnings(text, "spark-orders.jsonl")
    assert result.warnings == ()
    enrich_columns = frozenset({"order_id", "customer_id", "amount", "status"})
    assert table(list(result.reads)) == {
        # Direct and indirect (the filter on status) input columns.
        (ENRICH, STG, enrich_columns),
        (ENRICH, STG_HIVE, enrich_columns),
        # No columnLineage on the output: any column may be read.
        (EXPORT, STG, None),
        (EXPORT, STG_HIVE, None),
        (CUSTOMER_ORDERS, CUSTOMERS, frozenset({"customer_id", "country"})),
        (CUSTOMER_ORDERS, CUSTOMERS_HIVE, frozenset({"customer_id", "country"})),
        # stg_orders is only a join key: the facet's dataset-level list.
        (CUSTOMER_ORDERS, STG, frozenset({"customer_id"})),
        (CUSTOMER_ORDERS, STG_HIVE, frozenset({"customer_id"})),
    }
    first = next(r for r in result.reads if r.consumer == ENRICH and r.dataset == STG)
    assert first.source == "openlineage:spark-orders.jsonl"
    assert first.location == "spark-orders.jsonl:1"
    assert not first.reads_column("discount_code")
    assert first.reads_column("AMOUNT")


def test_read_events_is_the_reads_without_the_warnings() -> None:
    text = (DATA / "spark-orders.jsonl").read_text()
    assert read_events(text, "x") == list(read_events_with_warnings(text, "x").reads)


def test_symlinks_give_the_same_read_under_each_name_primary_first() -> None:
    symlinked = {
        "namespace": "file",
        "name": "/wh/orders",
        "facets": {
            "symlinks": {
                "identifiers": [
                    {"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"},
                    {"name": "orders_legacy", "type": "TABLE"},  # older Spark: no namespace
                ]
            }
        },
    }
    out = lineage_output({"id": [("file", "/wh/orders", "id")]})
    reads = read_events(event("j", [symlinked], [out]), "e.jsonl")
    assert [r.dataset for r in reads] == [
        "file//wh/orders",
        "hive://metastore:9083/sales.orders",
        "orders_legacy",
    ]
    assert {r.columns for r in reads} == {frozenset({"id"})}
    assert {r.consumer for r in reads} == {"jobs/j"}


def test_column_lineage_naming_the_symlink_counts_for_the_input() -> None:
    symlinked = {
        "namespace": "file",
        "name": "/wh/orders",
        "facets": {"symlinks": {"identifiers": [{"namespace": "hive", "name": "s.orders"}]}},
    }
    out = lineage_output({"id": [("hive", "s.orders", "ID")]})
    reads = read_events(event("j", [symlinked], [out]), "e")
    assert table(reads) == {
        ("jobs/j", "file//wh/orders", frozenset({"id"})),
        ("jobs/j", "hive/s.orders", frozenset({"id"})),
    }


def test_many_events_of_one_job_merge_their_columns() -> None:
    lines = [
        event("j", [("pg", "orders")], [lineage_output({"a": [("pg", "orders", "a")]})]),
        event("j", [("pg", "orders")]),  # RUNNING without outputs: neutral
        event("j", [("pg", "orders")], [lineage_output({"b": [("pg", "orders", "b")]})]),
        event("k", [("pg", "orders")], [lineage_output({"c": [("pg", "orders", "c")]})]),
    ]
    reads = read_events("\n".join(lines), "e")
    assert table(reads) == {
        ("jobs/j", "pg/orders", frozenset({"a", "b"})),
        ("jobs/k", "pg/orders", frozenset({"c"})),
    }
    assert next(r for r in reads if r.consumer == "jobs/j").location == "e:1"


def test_one_event_without_column_lineage_makes_the_columns_unknown() -> None:
    lines = [
        event("j", [("pg", "orders")], [lineage_output({"a": [("pg", "orders", "a")]})]),
        event("j", [("pg", "orders")], [{"namespace": "pg", "name": "out"}]),
    ]
    assert table(read_events("\n".join(lines), "e")) == {("jobs/j", "pg/orders", None)}
    # One output with column lineage and one without: unknown as well.
    both = event(
        "j",
        [("pg", "orders")],
        [lineage_output({"a": [("pg", "orders", "a")]}), {"namespace": "pg", "name": "o2"}],
    )
    assert table(read_events(both, "e")) == {("jobs/j", "pg/orders", None)}


def test_an_input_column_lineage_does_not_name_may_be_read_for_any_column() -> None:
    # The job lists pg/lookup as an input but its facet names none of its columns
    # (an emitter that leaves out a join or a filter): the job still reads it, so
    # the gate does not guess "no column", which would let usage-aware severity
    # lower the removal of a column the job filters on.
    out = lineage_output({"a": [("pg", "orders", "a")]})
    reads = read_events(event("j", [("pg", "orders"), ("pg", "lookup")], [out]), "e")
    assert table(reads) == {
        ("jobs/j", "pg/orders", frozenset({"a"})),
        ("jobs/j", "pg/lookup", None),
    }
    lookup = next(r for r in reads if r.dataset == "pg/lookup")
    assert lookup.reads_column("a")
    orders = next(r for r in reads if r.dataset == "pg/orders")
    assert not orders.reads_column("b")


def test_a_deleted_column_lineage_facet_is_no_column_lineage() -> None:
    out = lineage_output({"a": [("pg", "orders", "a")]})
    out["facets"]["columnLineage"]["_deleted"] = True
    assert table(read_events(event("j", [("pg", "orders")], [out]), "e")) == {
        ("jobs/j", "pg/orders", None)
    }


def test_malformed_lines_are_skipped_and_reported_with_their_line() -> None:
    lines = [
        event("good", [("pg", "orders")]),
        '{"eventType": "START", "job": ',  # cut short
        "[1, 2]",
        json.dumps({"eventType": "START", "job": {"namespace": "jobs"}, "inputs": []}),
        "",
        event("bad_input", [{"namespace": "pg"}, ("pg", "customers")]),
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"dataset": {"namespace": "pg", "name": "orders"}}),  # a DatasetEvent
        '{"job": {"namespace": "jobs", "name": "j"}, "inputs": [{"namespace": "pg", "name": 1'
        + "0" * 5000
        + "}]}",
    ]
    result = read_events_with_warnings("\n".join(lines), "events.jsonl")
    assert table(list(result.reads)) == {
        ("jobs/good", "pg/orders", None),
        ("jobs/bad_input", "pg/customers", None),
    }
    assert [w.split(":")[:2] for w in result.warnings] == [
        ["events.jsonl", "2"],
        ["events.jsonl", "3"],
        ["events.jsonl", "4"],
        ["events.jsonl", "6"],
        ["events.jsonl", "7"],
        ["events.jsonl", "9"],
    ]
    assert "not a JSON object" in result.warnings[0]
    assert "no job namespace and name" in result.warnings[2]
    assert "input 0 has no namespace and name" in result.warnings[3]


def test_warnings_are_bounded_and_the_rest_counted() -> None:
    text = "\n".join(["not json"] * 30 + [event("j", [("pg", "t")])])
    result = read_events_with_warnings(text, "e")
    assert len(result.warnings) == 21
    assert result.warnings[-1] == "e: 10 more lines or items skipped"
    assert [r.dataset for r in result.reads] == ["pg/t"]


def test_an_export_larger_than_the_bound_is_refused_as_a_whole() -> None:
    text = event("j", [("pg", "orders")])
    with pytest.raises(LineageSourceError, match=r"^big\.jsonl: .* more than the 100 read"):
        read_events(text, "big.jsonl", max_chars=100)
    assert read_events(text, "big.jsonl", max_chars=len(text)) != []


def test_a_json_array_of_events_is_read_and_items_are_reported_by_index() -> None:
    text = "[\n" + ",\n".join([event("j", [("pg", "orders")]), "3"]) + "\n]"
    result = read_events_with_warnings(text, "events.json")
    assert table(list(result.reads)) == {("jobs/j", "pg/orders", None)}
    assert result.warnings == ("events.json:1: item 1: not a JSON object; skipped",)


def test_a_broken_json_array_is_an_unreadable_source() -> None:
    with pytest.raises(LineageSourceError, match=r"^events\.json:3: not a JSON array"):
        read_events('[\n{"job": 1},\n{oops}\n]', "events.json")


def test_the_openlineage_clients_example_event_pretty_printed() -> None:
    text = (CORPUS / "example_full_event.json").read_text()
    result = read_events_with_warnings(text, "example_full_event.json")
    assert result.warnings == ()
    assert table(list(result.reads)) == {
        (
            "my-scheduler-namespace/myjob.mytask",
            "my-datasource-namespace/instance.schema.table",
            None,
        )
    }


def test_many_events_are_read_in_linear_time() -> None:
    def lines(count: int) -> str:
        return "\n".join(
            event(
                f"job{i % 500}",
                [("pg", f"t{i % 997}")],
                [lineage_output({"a": [("pg", f"t{i % 997}", f"c{i % 13}")]})],
            )
            for i in range(count)
        )

    small, large = lines(1_000), lines(10_000)
    # Linear by the work done, counted, not timed: ten times the events may cost
    # at most twelve times the function calls (Python's and C's), on any load.
    small_calls, _ = _calls(read_events, small, "e")
    large_calls, reads = _calls(read_events, large, "e")
    assert len(reads) == len({(r.consumer, r.dataset) for r in reads})
    assert large_calls <= 12 * small_calls, (small_calls, large_calls)
    # and no hang inside one call (a quadratic C loop counts as one call)
    started = time.process_time()
    read_events(large, "e")
    assert time.process_time() - started < 10


T = TypeVar("T")


def _calls(function: Callable[..., T], *args: object) -> tuple[int, T]:
    """How many functions ``function(*args)`` calls, and what it returns."""
    count = 0

    def profile(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        result = function(*args)
    finally:
        sys.setprofile(None)
    return count, result


def test_lines_end_at_newlines_only_and_a_byte_order_mark_is_ignored() -> None:
    # JSON strings may hold U+2028 unescaped; str.splitlines would cut the event there.
    first = event("j\u2028k", [("pg", "orders")]).replace("\\u2028", "\u2028")
    assert "\u2028" in first
    text = "\ufeff" + first + "\r\n" + event("m", [("pg", "orders")]) + "\r\n"
    result = read_events_with_warnings(text, "e")
    assert result.warnings == ()
    assert {r.consumer for r in result.reads} == {"jobs/j\u2028k", "jobs/m"}


def test_the_files_bytes_are_read_as_utf8_and_bounded_before_decoding() -> None:
    data = (DATA / "spark-orders.jsonl").read_bytes()
    assert read_events(data, "e") == read_events(data.decode(), "e")
    with pytest.raises(LineageSourceError, match=r"^e: 19,880 bytes of OpenLineage events"):
        read_events(data, "e", max_chars=1000)
    with pytest.raises(LineageSourceError, match=r"^bad\.jsonl: not valid UTF-8 \(byte 3\)"):
        read_events(b'{"a\xff": 1}\n', "bad.jsonl")


def test_marquez_events_export_is_read() -> None:
    # GET /api/v1/events/lineage answers {"events": [...], "totalCount": n}
    # (MarquezProject/marquez, OpenLineageResource.getLineageEvents).
    events = [json.loads(event("j", [("pg", "orders")])), 7]
    text = json.dumps({"events": events, "totalCount": 2}, indent=2)
    result = read_events_with_warnings(text, "marquez-events.json")
    assert table(list(result.reads)) == {("jobs/j", "pg/orders", None)}
    assert result.warnings == ("marquez-events.json:1: item 1: not a JSON object; skipped",)
