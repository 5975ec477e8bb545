"""The smoke test on a real local Spark: every check type fails on bad data and passes on good.

One SparkSession serves the whole module (``tests.spark_fixtures.spark``);
contracts are parsed by the gate's own Soda parser and samples are real files
in a temporary repository.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gate.limits import Limits
from gate.model import UsageError
from gate.smoke import SmokeSettings, checks, readers, run_smoke, runner
from gate.smoke.limit_errors import LimitExceeded
from gate.smoke.runner import PARALLEL_ENV, SMALL_SAMPLE_BYTES
from tests.spark_fixtures import (
    by_id,
    check_repo,
    comparable,
    datasets_in,
    find,
    spark,  # noqa: F401  (the session fixture)
    write_files,
)

pytestmark = pytest.mark.spark


def smoke(root: Path, contracts: list[str], session: Any, **settings: Any) -> Any:
    return run_smoke(datasets_in(root, *contracts), root, SmokeSettings(**settings), spark=session)


@pytest.fixture(scope="module")
def checks_report(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    root, datasets = check_repo(tmp_path_factory.mktemp("checks"))
    report = run_smoke(datasets, root, SmokeSettings(), spark=spark)
    return by_id(report)


# -- Soda v4 checks ------------------------------------------------------------------------

V4_EXPECTED = [
    ("missing", "id", 1),
    ("duplicate", "id", 1),
    ("missing", "email", 1),  # 'N/A' is a missing value
    ("invalid", "email", 2),  # 'bad-email'; 'N/A' too: missing_values was on the other check
    ("invalid", "size", 1),  # valid_values
    ("invalid", "price", 2),  # valid_min / valid_max
    ("invalid", "code", 2),  # valid_length
    ("invalid", "code2", 2),  # valid_min_length / valid_max_length
    ("invalid", "flag", 1),  # invalid_values
    ("missing", "nick", 2),  # metric: percent, must_be_less_than 50
    ("duplicate", "a,b", 1),  # columns: [a, b]
]


@pytest.mark.parametrize(("name", "column", "failed_rows"), V4_EXPECTED)
def test_v4_check_fails_on_bad_data(
    checks_report: dict[str, Any], name: str, column: str, failed_rows: int
) -> None:
    result = find(checks_report["v4_fail"], name, column, kind="check")
    assert (result.status, result.failed_rows) == ("failed", failed_rows), result.message
    assert result.line is not None


@pytest.mark.parametrize(("name", "column", "failed_rows"), V4_EXPECTED)
def test_v4_check_passes_on_good_data(
    checks_report: dict[str, Any], name: str, column: str, failed_rows: int
) -> None:
    result = find(checks_report["v4_pass"], name, column, kind="check")
    assert result.status == "passed", result.message


def test_v4_messages_and_samples(checks_report: dict[str, Any]) -> None:
    failing = checks_report["v4_fail"]
    assert failing.status == "failed" and failing.rows == 3
    missing = find(failing, "missing", "id")
    assert missing.message == "1 of 3 rows are missing (threshold must_be 0, default)"
    size = find(failing, "invalid", "size")
    assert size.samples == ("XL",)
    assert "valid_values [S, M, L]" in size.message
    price = find(failing, "invalid", "price")
    assert price.samples == ("-5.00", "150.00")  # compared as DECIMAL(10,2), shown as such
    nick = find(failing, "missing", "nick")
    assert nick.message.startswith("66.67% of 3 rows are missing (2 rows;")
    pair = find(failing, "duplicate", "a,b")
    assert pair.samples == ("(1, 1)",)
    rows = find(failing, "row_count")
    assert rows.status == "failed"
    assert "must_be_between {greater_than_or_equal 4, less_than 100}" in rows.message
    assert find(checks_report["v4_pass"], "row_count").status == "passed"
    assert checks_report["v4_pass"].status == "passed"


# -- Soda v3 checks ------------------------------------------------------------------------

V3_EXPECTED = [
    ("no_missing_values", "id", "failed", 1),
    ("no_duplicate_values", "id", "failed", 1),
    ("missing_count", "email", "failed", 1),
    ("no_invalid_values", "email", "failed", 2),  # valid_format: email (named format)
    ("invalid_count", "size", "failed", 1),
    ("invalid_percent", "price", "failed", 2),
    ("no_invalid_values", "code", "failed", 2),  # valid_regex_sql
    ("missing_percent", "nick", "failed", 2),
    ("duplicate_count", "grp", "failed", 2),
    ("duplicate_percent", "grp2", "failed", 2),
    ("no_duplicate_values", "a,b", "failed", 1),
]


@pytest.mark.parametrize(("name", "column", "status", "failed_rows"), V3_EXPECTED)
def test_v3_check_fails_on_bad_data(
    checks_report: dict[str, Any], name: str, column: str, status: str, failed_rows: int
) -> None:
    result = find(checks_report["v3_fail"], name, column, kind="check")
    assert (result.status, result.failed_rows) == (status, failed_rows), result.message


@pytest.mark.parametrize(("name", "column", "status", "failed_rows"), V3_EXPECTED)
def test_v3_check_passes_on_good_data(
    checks_report: dict[str, Any], name: str, column: str, status: str, failed_rows: int
) -> None:
    result = find(checks_report["v3_pass"], name, column, kind="check")
    assert result.status == "passed", result.message


def test_row_count_checks_in_both_spellings(checks_report: dict[str, Any]) -> None:
    empty = checks_report["rows_empty"]
    assert [(r.name, r.status) for r in empty.results if r.kind == "check"] == [
        ("row_count", "failed"),  # v4 default: must be greater than 0
        ("rows_exist", "failed"),
        ("row_count", "failed"),  # v3 must_be_between [2, 10]
    ]
    ok = checks_report["rows_ok"]
    assert [r.status for r in ok.results if r.kind == "check"] == ["passed"] * 3
    assert empty.rows == 0 and ok.rows == 3


# -- coercion: the silent int -> NULL incident -----------------------------------------------


def test_values_that_would_turn_null_are_counted_with_samples(
    checks_report: dict[str, Any],
) -> None:
    coerce = checks_report["coerce"]
    qty = find(coerce, "cast_to_int", "qty")
    assert qty.message == "3 values are not valid INT: '', '12a', 'x'"
    assert (qty.status, qty.failed_rows, qty.samples) == ("failed", 3, ("", "12a", "x"))
    price = find(coerce, "cast_to_decimal", "price")  # decimal overflow: DECIMAL(5,2) < 1000
    assert (price.failed_rows, price.samples) == (2, ("1234.5", "99999"))
    day = find(coerce, "cast_to_date", "day")  # date parse failures
    assert day.samples == ("05/01/2024", "2024-02-30", "2024-13-01")
    code = find(coerce, "cast_to_varchar", "code")  # VARCHAR(3) length exceeded
    assert (code.failed_rows, code.samples) == (1, ("abcd",))
    assert "longer than VARCHAR(3)" in code.message
    assert find(coerce, "cast_to_json", "payload").samples == ("{bad",)
    assert find(coerce, "cast_to_uuid", "uid").samples == ("not-a-uuid",)
    at = find(coerce, "cast", "at")
    assert at.status == "skipped" and "TIME" in at.message
    big = find(coerce, "cast_to_bigint", "big")
    assert big.status == "passed" and big.message == "all 4 non-null values fit BIGINT"
    assert not [r for r in coerce.results if r.column == "label" and r.kind == "coercion"]


# -- schema ----------------------------------------------------------------------------------

SCHEMA_FILES = {
    "s/extra.yaml": "dataset: extra\ncolumns:\n  - name: id\n  - name: name\n",
    "s/extra.sample.csv": "id,name,extra\n1,a,x\n",
    "s/missing.yaml": "dataset: missing\ncolumns:\n  - name: id\n  - name: name\n  - name: age\n",
    "s/missing.sample.csv": "id,name\n1,a\n",
    "s/optional.yaml": (
        "dataset: optional\ncolumns:\n  - name: id\n  - name: discount\n    optional: true\n"
    ),
    "s/optional.sample.csv": "id\n1\n",
    "s/case.yaml": "dataset: case\ncolumns:\n  - name: id\n  - name: Amount\n",
    "s/case.sample.csv": "id,amount\n1,2\n",
    "s/casedata.yaml": (
        "dataset: casedata\ncolumns:\n  - name: id\nchecks:\n"
        "  - schema:\n      allow_extra_columns: true\n"
    ),
    "s/casedata.sample.jsonl": '{"id": 1, "ID": 2}\n',
    "s/allow.yaml": (
        "dataset: allow\ncolumns:\n  - name: id\n    data_type: int\nchecks:\n"
        "  - schema:\n      allow_extra_columns: true\n"
    ),
    "s/allow.sample.csv": "id,extra\n1,x\n",
    "s/notype.yaml": "dataset: notype\ncolumns:\n  - name: a\n  - name: b\n",
    "s/notype.sample.csv": "a,b\nanything,12a\n",
}


@pytest.fixture(scope="module")
def schema_report(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    root = write_files(tmp_path_factory.mktemp("schema"), SCHEMA_FILES)
    contracts = sorted(path for path in SCHEMA_FILES if path.endswith(".yaml"))
    return by_id(smoke(root, contracts, spark))


@pytest.mark.parametrize(
    ("dataset", "status", "finding", "column"),
    [
        ("extra", "failed", "extra_column", "extra"),
        ("missing", "failed", "missing_column", "age"),
        ("optional", "passed", "missing_column", "discount"),
        ("case", "failed", "case_clash", "Amount"),
        ("casedata", "failed", "case_clash", "ID"),
        ("allow", "passed", "schema", None),
        ("notype", "passed", "schema", None),
    ],
)
def test_schema_enforcement(
    schema_report: dict[str, Any], dataset: str, status: str, finding: str, column: str | None
) -> None:
    outcome = schema_report[dataset]
    assert outcome.status == status, [r.to_dict() for r in outcome.results]
    result = find(outcome, finding, column, kind="schema")
    assert result.status == status


def test_columns_without_a_type_are_only_checked_for_presence(
    schema_report: dict[str, Any],
) -> None:
    assert [r for r in schema_report["notype"].results if r.kind == "coercion"] == []
    assert find(schema_report["allow"], "cast_to_int", "id").status == "passed"


# -- thresholds, warn level, unsupported checks ----------------------------------------------

THRESHOLDS = """\
dataset: {id}
columns:
  - name: id
  - name: x
    checks:
{checks}
"""

THRESHOLD_CHECKS = """\
      - missing:
          threshold: {must_not_be: 2}
      - missing:
          threshold: {must_be_greater_than_or_equal: 2}
      - missing:
          threshold: {must_be_less_than_or_equal: 1}
      - missing:
          threshold:
            must_be_not_between: {less_than: 1, greater_than: 3}
      - missing:
          threshold: {must_be_less_than: 1, level: warn}
      - missing:
          threshold:
            metric: percent
            must_be_between: {greater_than: 30, less_than_or_equal: 40}
"""

UNSUPPORTED = """\
dataset: unsupported
columns:
  - name: id
    checks:
      - missing:
      - missing:
          filter: "id > 0"
      - type: avg
        must_be_less_than: 3
      - invalid: {}
      - invalid:
          valid_reference_data: {dataset: other, column: id}
checks:
  - freshness:
      column: id
      threshold: {must_be_less_than: 24}
  - failed_rows:
      query: select 1
"""


@pytest.fixture(scope="module")
def threshold_report(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    sample = "id,x\n1,a\n2,\n3,b\n4,\n5,c\n"  # 2 of 5 missing: 40%
    warn_only = "      - missing:\n          threshold: {must_be: 0, level: warn}\n"
    files = {
        "t/thresholds.yaml": THRESHOLDS.format(id="thresholds", checks=THRESHOLD_CHECKS),
        "t/thresholds.sample.csv": sample,
        "t/warn.yaml": THRESHOLDS.format(id="warn", checks=warn_only),
        "t/warn.sample.csv": sample,
        "t/unsupported.yaml": UNSUPPORTED,
        "t/unsupported.sample.csv": "id\n1\n2\n",
    }
    root = write_files(tmp_path_factory.mktemp("thresholds"), files)
    return by_id(smoke(root, ["t/thresholds.yaml", "t/warn.yaml", "t/unsupported.yaml"], spark))


def test_every_threshold_comparison(threshold_report: dict[str, Any]) -> None:
    results = [r for r in threshold_report["thresholds"].results if r.kind == "check"]
    assert [r.status for r in results] == [
        "failed",  # must_not_be 2
        "passed",  # must_be_greater_than_or_equal 2
        "failed",  # must_be_less_than_or_equal 1
        "failed",  # must_be_not_between {less_than 1, greater_than 3}
        "warned",  # must_be_less_than 1, level warn
        "passed",  # percent between (30, 40]
    ]
    assert all(r.failed_rows == 2 for r in results)


def test_a_warn_level_check_is_shown_but_does_not_fail(threshold_report: dict[str, Any]) -> None:
    warn = threshold_report["warn"]
    assert warn.status == "passed"
    assert find(warn, "missing", "x").status == "warned"


def test_unsupported_checks_are_skipped_never_passed(threshold_report: dict[str, Any]) -> None:
    outcome = threshold_report["unsupported"]
    checks = [(r.name, r.status) for r in outcome.results if r.kind == "check"]
    assert sorted(checks) == sorted(
        [
            ("missing", "passed"),
            ("missing", "skipped"),
            ("avg", "skipped"),
            ("invalid", "skipped"),
            ("invalid", "skipped"),
            ("freshness", "skipped"),
            ("failed_rows", "skipped"),
        ]
    )
    skipped = [r.message for r in outcome.results if r.status == "skipped"]
    assert all(message.startswith("skipped: unsupported: ") for message in skipped)
    assert outcome.status == "passed"


# -- readers -----------------------------------------------------------------------------------

READER_CONTRACT = """\
dataset: people
columns:
  - name: id
    data_type: int
    checks:
      - missing:
  - name: name
    checks:
      - missing:
  - name: score
    data_type: double
"""
READER_ROWS = [
    {"id": "1", "name": "ann", "score": "1.5"},
    {"id": "12a", "name": "bob", "score": "2"},
    {"id": "3", "name": None, "score": "x"},
]


def _sample_bytes(fmt: str, tmp: Path) -> bytes:
    if fmt == "csv":
        lines = ["id,name,score"] + [
            ",".join(row[key] or "" for key in ("id", "name", "score")) for row in READER_ROWS
        ]
        return ("\n".join(lines) + "\n").encode()
    if fmt == "jsonl":
        return "".join(json.dumps(row) + "\n" for row in READER_ROWS).encode()
    if fmt == "json":
        return json.dumps(READER_ROWS, indent=2).encode()
    table = pa.table({key: [row[key] for row in READER_ROWS] for key in ("id", "name", "score")})
    pq.write_table(table, tmp / "people.parquet")
    return (tmp / "people.parquet").read_bytes()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "parquet"])
def test_every_sample_format_gives_the_same_findings(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    fmt: str,
) -> None:
    files = {
        "c/people.yaml": READER_CONTRACT,
        f"c/people.sample.{fmt}": _sample_bytes(fmt, tmp_path),
    }
    outcome = smoke(write_files(tmp_path / "repo", files), ["c/people.yaml"], spark).datasets[0]
    assert (outcome.status, outcome.sample, outcome.rows) == ("failed", f"c/people.sample.{fmt}", 3)
    assert find(outcome, "cast_to_int", "id").samples == ("12a",)
    assert find(outcome, "cast_to_double", "score").samples == ("x",)
    assert find(outcome, "missing", "id").failed_rows == 1  # '12a' is NULL once an INT
    assert find(outcome, "missing", "name").failed_rows == 1


def test_parquet_keeps_its_own_types(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    table = pa.table({"id": pa.array([1, 3_000_000_000, None], pa.int64())})
    write_files(
        tmp_path, {"c/big.yaml": "dataset: big\ncolumns:\n  - name: id\n    data_type: int\n"}
    )
    pq.write_table(table, tmp_path / "c" / "big.sample.parquet")
    outcome = smoke(tmp_path, ["c/big.yaml"], spark).datasets[0]
    result = find(outcome, "cast_to_int", "id")
    assert (result.failed_rows, result.samples) == (1, ("3000000000",))


def test_malformed_records_are_findings(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    files = {
        "c/a.yaml": "dataset: a\ncolumns:\n  - name: id\n  - name: name\n",
        "c/a.sample.csv": 'id,name\n1,a\n2,b,c\n3\n4,"quoted, comma"\n5,"two\nlines",x\n',
        "c/b.yaml": "dataset: b\ncolumns:\n  - name: id\n",
        "c/b.sample.jsonl": '{"id": 1}\n{bad\n',
    }
    outcome = by_id(smoke(write_files(tmp_path, files), ["c/a.yaml", "c/b.yaml"], spark))
    csv_bad = find(outcome["a"], "malformed_record")
    assert (csv_bad.status, csv_bad.failed_rows) == ("failed", 3)
    assert "not valid CSV (wrong number of fields, or a quote not closed)" in csv_bad.message
    assert '5,"two\\nlines",x' in csv_bad.samples  # one-line messages: newlines escaped
    assert "\n" not in csv_bad.message
    json_bad = find(outcome["b"], "malformed_record")
    assert (json_bad.failed_rows, json_bad.samples) == (1, ("{bad",))


def test_a_type_spark_cannot_cast_to_is_a_finding(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    files = {
        "c/tags.yaml": "dataset: tags\ncolumns:\n  - name: tags\n    data_type: int\n",
        "c/tags.sample.jsonl": '{"tags": [1, 2]}\n',
        "c/arr.yaml": "dataset: arr\ncolumns:\n  - name: tags\n    data_type: array<int>\n",
        "c/arr.sample.csv": "tags\n1\n",
    }
    outcome = by_id(smoke(write_files(tmp_path, files), ["c/tags.yaml", "c/arr.yaml"], spark))
    json_array = find(outcome["tags"], "cast_to_int", "tags")
    assert json_array.status == "failed" and "cannot become INT" in json_array.message
    csv_array = find(outcome["arr"], "cast_to_array", "tags")
    assert csv_array.status == "skipped" and "CSV sample cannot hold" in csv_array.message


# -- where samples come from -------------------------------------------------------------------


def test_samples_in_a_folder_with_qualified_ids(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    files = {
        "contracts/orders.yaml": "dataset: shop/db/public/orders\ncolumns:\n  - name: id\n",
        "contracts/items.yaml": "dataset: items\ncolumns:\n  - name: id\n",
        "tests/samples/shop.db.public.orders.csv": "id\n1\n",
    }
    root = write_files(tmp_path, files)
    report = smoke(
        root, ["contracts/orders.yaml", "contracts/items.yaml"], spark, sample_data="tests/samples"
    )
    orders, items = report.datasets
    assert (orders.status, orders.sample) == ("passed", "tests/samples/shop.db.public.orders.csv")
    assert (items.status, items.sample) == ("no_sample", None)
    assert not report.failed
    assert report.spark_version and report.master.startswith("local")


def test_an_unreadable_sample_errors_its_dataset_only(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    files = {
        "c/broken.yaml": "dataset: broken\ncolumns:\n  - name: id\n",
        "c/broken.sample.parquet": b"not parquet at all",
        "c/latin.yaml": "dataset: latin\ncolumns:\n  - name: name\n",
        "c/latin.sample.csv": "name\ncaf\xe9\n".encode("latin-1"),
        "c/fine.yaml": "dataset: fine\ncolumns:\n  - name: id\n",
        "c/fine.sample.csv": "id\n1\n",
    }
    root = write_files(tmp_path, files)
    report = by_id(smoke(root, ["c/broken.yaml", "c/latin.yaml", "c/fine.yaml"], spark))
    assert report["broken"].status == "error"
    assert "c/broken.sample.parquet" in (report["broken"].error or "")
    assert report["latin"].status == "error" and "not UTF-8" in (report["latin"].error or "")
    assert report["fine"].status == "passed"


def test_a_large_json_lines_sample_keeps_malformed_records_and_nested_values(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Above 50,000 records JSON is parsed by Spark once and handed back as Arrow:
    the results must be those of the reader itself (malformed text, nested values)."""
    lines = [json.dumps({"id": row, "qty": str(row % 7), "tags": [row]}) for row in range(60_000)]
    lines[41_234] = json.dumps({"id": 41_234, "qty": "12a", "tags": [1]})
    lines[52_000] = '{"id": 52000, "qty": '  # cut off: a malformed record
    write_files(
        tmp_path,
        {
            "c/j.yaml": "dataset: j\ncolumns:\n  - name: id\n    data_type: bigint\n"
            "    checks:\n      - duplicate:\n  - name: qty\n    data_type: int\n"
            "  - name: tags\n    data_type: array<int>\n",
            "c/j.sample.jsonl": "\n".join(lines) + "\n",
        },
    )
    outcome = smoke(tmp_path, ["c/j.yaml"], spark).datasets[0]
    assert (outcome.status, outcome.rows) == ("failed", 60_000)
    failed = {(r.name, r.column): (r.failed_rows, r.samples) for r in outcome.results}
    assert failed[("malformed_record", None)] == (1, ('{"id": 52000, "qty": ',))
    assert failed[("cast_to_int", "qty")] == (1, ("12a",))
    assert failed[("cast_to_array", "tags")] == (0, ())
    assert find(outcome, "duplicate").status == "passed"


def test_one_job_per_dataset_plus_only_what_a_failure_needs(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A passing dataset costs one Spark job: every flag and duplicate key as Arrow.

    A failing sample adds a Spark group-by per duplicate check that found a
    repeated key (its offending values came with the one job); a failing large
    one (50,000 rows and more) whose offending values could outweigh
    ``INLINE_TEXT_BYTES`` if every row failed adds one job for them, only of
    the rules that failed.
    """
    frame_class = type(spark.range(1))  # the classic (or Connect) DataFrame in use
    calls: list[str] = []

    for method in ("collect", "toArrow"):
        real = getattr(frame_class, method)

        def counting(self: Any, real: Any = real, method: str = method) -> Any:  # counted
            calls.append(method)
            return real(self)

        monkeypatch.setattr(frame_class, method, counting)
    root, datasets = check_repo(tmp_path)
    big = "\n".join(["id,qty", *[f"{row},{row % 9}" for row in range(60_000)], "60000,12a"])
    write_files(
        root,
        {
            "contracts/big.yaml": "dataset: big\ncolumns:\n  - name: id\n    data_type: bigint\n"
            "    checks:\n      - duplicate:\n  - name: qty\n    data_type: int\n",
            "contracts/big.sample.csv": big + "\n",
        },
    )
    datasets += datasets_in(root, "contracts/big.yaml")
    for name, status, jobs, budget in (
        ("v4_pass", "passed", ["toArrow"], None),
        ("v4_fail", "failed", ["toArrow", "collect", "collect"], None),  # two keys repeat
        ("big", "failed", ["toArrow"], None),  # '12a' comes with the flags; no key repeats
        ("big", "failed", ["toArrow", "collect"], 0),  # '12a' from the values job
    ):
        if budget is not None:
            monkeypatch.setattr(checks, "INLINE_TEXT_BYTES", budget)
        calls.clear()
        chosen = [dataset for dataset in datasets if dataset.id == name]
        report = run_smoke(chosen, root, SmokeSettings(), spark=spark)
        assert report.datasets[0].status == status
        assert calls == jobs, name
    qty = find(report.datasets[0], "cast_to_int", "qty")
    assert (qty.failed_rows, qty.samples) == (1, ("12a",))


def test_datasets_run_concurrently_with_the_same_report_in_the_same_order(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small samples two at a time, a large one alone after them: the report is
    the one a run of one dataset at a time gives, in contract order."""
    root, datasets = check_repo(tmp_path)
    padding = "x" * 60
    rows = ["id,qty,pad", *[f"{row},{row % 9},{padding}" for row in range(80_000)], "1,12a,x"]
    big = "\n".join(rows) + "\n"
    assert len(big) > SMALL_SAMPLE_BYTES
    write_files(
        root,
        {
            "contracts/big.yaml": "dataset: big\ncolumns:\n  - name: id\n    data_type: bigint\n"
            "    checks:\n      - duplicate:\n  - name: qty\n    data_type: int\n"
            "  - name: pad\n",
            "contracts/big.sample.csv": big,
        },
    )
    chosen = [*datasets[:3], *datasets_in(root, "contracts/big.yaml"), *datasets[3:6]]
    reports = []
    for parallel in ("1", "2"):
        monkeypatch.setenv(PARALLEL_ENV, parallel)
        reports.append(comparable(run_smoke(chosen, root, SmokeSettings(), spark=spark)))
    assert reports[0] == reports[1]
    assert [d["dataset"] for d in reports[1]] == [d.id for d in chosen]
    big_result = reports[1][3]
    assert big_result["status"] == "failed" and big_result["rows"] == 80_001


def test_large_samples_are_read_ahead_with_the_same_report_in_the_same_order(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large samples are read (pyarrow, no Spark) one step ahead of Spark, in
    one thread; the report, a broken sample's error included, is the one of a
    run that reads each sample when its dataset's turn comes."""
    root, datasets = check_repo(tmp_path)
    write_files(root, {"contracts/broken.yaml": "dataset: broken\ncolumns:\n  - name: id\n"})
    (root / "contracts" / "broken.sample.csv").write_bytes(b"id\n\xff\xfe\n")
    chosen = [*datasets, *datasets_in(root, "contracts/broken.yaml")]
    expected = comparable(run_smoke(chosen, root, SmokeSettings(), spark=spark))

    threads: list[str] = []
    real = readers.read

    def read(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(readers, "read", read)
    monkeypatch.setattr(runner, "SMALL_SAMPLE_BYTES", 1)  # every sample is large
    ahead = comparable(run_smoke(chosen, root, SmokeSettings(), spark=spark))
    assert ahead == expected
    assert [d["dataset"] for d in ahead] == [d.id for d in chosen]
    assert ahead[-1]["status"] == "error" and "not UTF-8" in ahead[-1]["error"]
    assert len(threads) == len(chosen) and all(t.startswith("gate-read") for t in threads)


def test_a_read_ahead_sample_over_the_row_limit_stops_the_run(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A limit is a usage error (exit 2), whichever thread read the sample."""
    root, datasets = check_repo(tmp_path)
    monkeypatch.setattr(runner, "SMALL_SAMPLE_BYTES", 1)
    settings = SmokeSettings(limits=Limits(sample_rows=3))
    with pytest.raises(LimitExceeded, match=r"is more than the sample limit of 3"):
        run_smoke(datasets, root, settings, spark=spark)


# -- quarantine ------------------------------------------------------------------------------


def test_quarantine_writes_violating_rows_with_the_violated_checks(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, datasets = check_repo(tmp_path)
    chosen = [dataset for dataset in datasets if dataset.id in ("v4_fail", "rows_ok")]
    stale = root / "out" / "q" / "rows_ok.quarantine.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old run")
    run_smoke(chosen, root, SmokeSettings(quarantine="out/q"), spark=spark)
    table = pq.read_table(root / "out" / "q" / "v4_fail.quarantine.parquet")
    assert table.column_names == [
        "id",
        "email",
        "size",
        "price",
        "code",
        "code2",
        "flag",
        "nick",
        "a",
        "b",
        "_violated_checks",
    ]
    rows = {row["email"]: row["_violated_checks"] for row in table.to_pylist()}
    assert rows["N/A"] == [  # in contract order
        "duplicate(id)",
        "missing(email)",
        "invalid(email)",
        "invalid(size)",
        "invalid(price)",
        "invalid(code)",
        "invalid(code2)",
        "invalid(flag)",
        "missing(nick)",
        "duplicate(a,b)",
    ]
    assert "missing(id)" in rows["bad-email"]
    assert not stale.exists()  # rows_ok has no violating rows: the last run's file is gone


def test_quarantine_folder_rules(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    root, datasets = check_repo(tmp_path / "repo")
    v4 = [dataset for dataset in datasets if dataset.id == "v4_fail"]
    artifacts = tmp_path / "artifacts"  # an explicit absolute path outside the repository
    run_smoke(v4, root, SmokeSettings(quarantine=str(artifacts)), spark=spark)
    assert (artifacts / "v4_fail.quarantine.parquet").is_file()
    (root / "escape").symlink_to(tmp_path)
    with pytest.raises(UsageError, match="escape"):
        run_smoke(v4, root, SmokeSettings(quarantine="escape/q"), spark=spark)
    with pytest.raises(UsageError, match=r"\.git"):
        run_smoke(v4, root, SmokeSettings(quarantine=".git/q"), spark=spark)


# -- other formats: dbt tests and NOT NULL columns -----------------------------------------------

DBT_SCHEMA = """\
version: 2
models:
  - name: orders
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
        constraints: [{type: not_null}]
        data_tests: [unique, not_null]
      - name: status
        data_type: string
        data_tests:
          - accepted_values:
              arguments:
                values: [placed, paid]
      - name: channel
        data_type: string
        data_tests:
          - accepted_values:
              values: [web]
              config: {severity: warn}
          - relationships:
              to: ref('channels')
              field: id
"""


def test_dbt_tests_and_not_null_constraints(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    files = {
        "models/schema.yml": DBT_SCHEMA,
        "models/schema.sample.csv": "id,status,channel\n1,placed,web\n1,lost,app\n,paid,web\n",
    }
    outcome = smoke(write_files(tmp_path, files), ["models/schema.yml"], spark).datasets[0]
    assert outcome.dataset == "orders" and outcome.status == "failed"
    not_null = find(outcome, "not_null", "id", kind="coercion")  # constraints: not_null
    assert (not_null.status, not_null.failed_rows) == ("failed", 1)
    assert "required (NOT NULL) column 'id'" in not_null.message
    assert find(outcome, "unique", "id").failed_rows == 1
    assert find(outcome, "not_null", "id", kind="check").status == "failed"
    assert find(outcome, "accepted_values", "status").samples == ("lost",)
    channel = [r for r in outcome.results if r.column == "channel" and r.kind == "check"]
    assert [(r.name, r.status) for r in channel] == [
        ("accepted_values", "warned"),  # config: {severity: warn}
        ("relationships", "skipped"),
    ]


def test_a_parquet_folder_written_by_spark(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    write_files(tmp_path, {"c/p.yaml": "dataset: p\ncolumns:\n  - name: id\n    data_type: int\n"})
    spark.createDataFrame([("1",), ("x",)], "id string").coalesce(1).write.parquet(
        str(tmp_path / "c" / "p.sample.parquet")
    )
    outcome = smoke(tmp_path, ["c/p.yaml"], spark).datasets[0]
    assert (outcome.rows, outcome.sample) == (2, "c/p.sample.parquet")
    assert find(outcome, "cast_to_int", "id").samples == ("x",)


def test_a_million_rows_with_one_bad_value_finds_exactly_that_value(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Issue #13: a realistic sample size, read by pyarrow and checked in one pass."""
    lines = [f"{row},{row % 7}" for row in range(1_000_000)]
    lines[765_432] = "765432,12a"
    write_files(
        tmp_path,
        {
            "c/big.yaml": "dataset: big\ncolumns:\n  - name: id\n    data_type: int\n"
            "    checks:\n      - duplicate:\n  - name: qty\n    data_type: int\n",
            "c/big.sample.csv": "id,qty\n" + "\n".join(lines) + "\n",
        },
    )
    outcome = smoke(tmp_path, ["c/big.yaml"], spark).datasets[0]
    assert (outcome.status, outcome.rows) == ("failed", 1_000_000)
    failed = [result for result in outcome.results if result.status == "failed"]
    assert [(r.kind, r.column, r.failed_rows, r.samples) for r in failed] == [
        ("coercion", "qty", 1, ("12a",))
    ]
    duplicate = next(result for result in outcome.results if result.name == "duplicate")
    assert duplicate.status == "passed" and duplicate.failed_rows == 0


def test_duplicate_keys_are_compared_after_spark_casts_them(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``7`` and ``07`` are one BIGINT (counted from Spark's keys as Arrow); ``-0.0`` and
    ``0.0``, and two NaNs, are one DOUBLE each (floating keys are grouped by Spark)."""
    write_files(
        tmp_path,
        {
            "c/d.yaml": "dataset: d\ncolumns:\n  - name: id\n    data_type: bigint\n"
            "    checks:\n      - duplicate:\n  - name: x\n    data_type: double\n"
            "    checks:\n      - duplicate:\n",
            "c/d.sample.csv": "id,x\n7,-0.0\n07,0.0\n8,NaN\n9,NaN\n10,1.5\n",
        },
    )
    outcome = smoke(tmp_path, ["c/d.yaml"], spark).datasets[0]
    found = {r.column: (r.status, r.failed_rows, r.samples) for r in outcome.results}
    assert found["id"] == ("failed", 1, ("7",))
    assert found["x"] == ("failed", 2, ("0.0", "NaN"))


def test_duplicates_counted_in_arrow_agree_with_a_spark_group_by(spark: Any) -> None:  # noqa: F811
    """Every key type counted by pyarrow: the same duplicates as Spark's group-by,
    NULL equal to NULL as in a group-by, for one key column and for several."""
    from datetime import date, datetime
    from decimal import Decimal

    from pyspark.sql import functions as F

    from gate.smoke import checks

    rows = [
        ("a", 1, Decimal("1.10"), date(2024, 1, 1), datetime(2024, 1, 1, 1), True, b"x"),
        ("a", 1, Decimal("1.10"), date(2024, 1, 1), datetime(2024, 1, 1, 1), True, b"x"),
        (None, None, None, None, None, None, None),
        (None, None, None, None, None, None, None),
        ("é", 2, Decimal("2.00"), date(2024, 1, 2), datetime(2024, 1, 1, 2), False, b"y"),
        ("é", 3, Decimal("2.00"), date(2024, 1, 3), datetime(2024, 1, 1, 2), False, b"z"),
        ("b", None, Decimal("3.00"), None, datetime(2024, 1, 1, 3), None, b""),
    ]
    df = spark.createDataFrame(
        rows, "s string, i bigint, d decimal(10,2), dt date, ts timestamp, b boolean, y binary"
    )
    for keys in (["s"], ["i"], ["d"], ["dt"], ["ts"], ["b"], ["y"], ["s", "i"], ["i", "dt"]):
        names = [f"k{index}" for index in range(len(keys))]
        selected = df.select(
            *[F.col(key).alias(name) for key, name in zip(keys, names, strict=True)]
        )
        assert all(
            isinstance(field.dataType, checks._ARROW_KEY_TYPES) for field in selected.schema.fields
        )
        shown = [lambda column: column.cast("string")] * len(keys)
        in_spark, _samples = checks.group_duplicates(selected, names, shown)
        assert checks.count_arrow(selected.toArrow()) == in_spark > 0, keys
    lowered = spark.createDataFrame([("a",), ("A",)], "s string").selectExpr(
        "s COLLATE UTF8_LCASE AS k0"
    )
    assert not checks._arrow_key(lowered.schema.fields[0].dataType)  # Spark groups 'a', 'A'
