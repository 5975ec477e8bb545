"""The smoke test's pure-Python parts: thresholds, check plans, types, schema, samples.

No Spark here: these run in milliseconds. Where the smoke test refuses to
start (no PySpark, no Java) a real subprocess shows the message a user sees.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate import check_thresholds as th
from gate.git import Repo
from gate.model import Check, Column, ContractError, Dataset, UsageError
from gate.smoke import SmokeSettings, run_smoke
from gate.smoke.checkspec import (
    DUPLICATE,
    INVALID,
    MISSING,
    NAMED_FORMATS,
    ROW_COUNT,
    plan,
)
from gate.smoke.result import DatasetSmoke, SmokeReport, SmokeResult
from gate.smoke.samples import SampleError, SampleFinder, resolve_sample_dir, sample_stem
from gate.smoke.schema import schema_findings, target_type
from gate.smoke.session import display_master
from tests.spark_fixtures import datasets_in, write_files

ROOT = Path(__file__).resolve().parent.parent.parent

# -- thresholds ----------------------------------------------------------------------------


def test_v4_defaults_follow_soda() -> None:
    missing = plan(Check.make("missing", {}, columns=("a",)))
    assert missing.threshold.passes(0) and not missing.threshold.passes(1)
    assert missing.threshold.default
    rows = plan(Check.make("row_count", {}))
    assert rows.threshold.passes(1) and not rows.threshold.passes(0)
    duplicate = plan(Check.make("duplicate", {}, columns=("a",)))
    assert duplicate.threshold.text == "must_be 0"


@pytest.mark.parametrize(
    ("threshold", "passing", "failing"),
    [
        ({"must_be": 3}, [3], [2, 4]),
        ({"must_not_be": 3}, [2, 4], [3]),
        ({"must_be_greater_than": 3}, [4], [3, 2]),
        ({"must_be_greater_than_or_equal": 3}, [3, 4], [2]),
        ({"must_be_less_than": 3}, [2], [3, 4]),
        ({"must_be_less_than_or_equal": 3}, [2, 3], [4]),
        ({"must_be_between": {"greater_than": 1, "less_than_or_equal": 3}}, [2, 3], [1, 4]),
        ({"must_be_between": {"greater_than_or_equal": 1, "less_than": 3}}, [1, 2], [0, 3]),
        ({"must_be_not_between": {"less_than": 1, "greater_than": 3}}, [0, 4], [1, 2, 3]),
        ({"must_be_greater_than": 1, "must_be_less_than": 4}, [2, 3], [1, 4]),
    ],
)
def test_v4_nested_thresholds(threshold: dict, passing: list, failing: list) -> None:
    checked = plan(Check.make("missing", {"threshold": threshold}, columns=("a",))).threshold
    assert [checked.passes(v) for v in passing] == [True] * len(passing)
    assert [checked.passes(v) for v in failing] == [False] * len(failing)


def test_v3_flat_thresholds_and_list_ranges() -> None:
    between = plan(Check.make("row_count", {"must_be_between": [2, 10]})).threshold
    assert between.passes(2) and between.passes(10) and not between.passes(11)
    outside = plan(Check.make("row_count", {"must_be_not_between": [2, 10]})).threshold
    assert outside.passes(1) and outside.passes(11) and not outside.passes(5)
    percent = plan(
        Check.make("missing_percent", {"must_be_less_than": 5}, columns=("a",))
    ).threshold
    assert percent.metric == "percent"


@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.floats(-2000, 2000, allow_nan=False))
def test_between_list_is_inclusive(low: int, high: int, value: float) -> None:
    if low > high:
        low, high = high, low
    threshold = th.parse({"must_be_between": [low, high]}, default=th.must_be(0))
    assert threshold.passes(value) == (low <= value <= high)


def test_metric_and_level_in_threshold_or_beside_the_check() -> None:
    nested = plan(
        Check.make(
            "missing",
            {"threshold": {"metric": "percent", "must_be_less_than": 5, "level": "warn"}},
            columns=("a",),
        )
    ).threshold
    assert (nested.metric, nested.level) == ("percent", "warn")
    beside = plan(
        Check.make("missing", {"metric": "percent", "threshold": {"must_be": 0}}, columns=("a",))
    ).threshold
    assert beside.metric == "percent"


@pytest.mark.parametrize(
    ("kind", "spec", "reason"),
    [
        ("freshness", {"threshold": {"must_be_less_than": 2}}, "check type 'freshness'"),
        ("avg", {"must_be_between": [1, 2]}, "check type 'avg'"),
        ("missing", {"filter": "country = 'BE'"}, "filters"),
        ("missing", {"column_expression": "payload::int"}, "column_expression"),
        ("invalid", {"valid_reference_data": {"dataset": "x", "column": "y"}}, "reference"),
        ("invalid", {}, "without a validity option"),
        ("missing", {"colour": "red"}, "unsupported option 'colour'"),
        ("missing", {"threshold": {"must_be": "zero"}}, "must be a number"),
        ("missing", {"threshold": {"must_be_between": [3]}}, "two numbers"),
        ("missing", {"threshold": {"metric": "ratio"}}, "unsupported metric"),
        ("missing", {"threshold": {"must_be": 0}, "must_be": 0}, "both nested"),
        ("no_missing_values", {"must_be": 3}, "takes no threshold"),
        ("invalid", {"valid_format": "zodiac sign"}, "unknown named format"),
        ("invalid", {"valid_regex": "(unclosed"}, "not a valid regex"),
        ("row_count", {"threshold": {"metric": "percent"}}, "no percent"),
    ],
)
def test_unsupported_checks_say_why(kind: str, spec: dict, reason: str) -> None:
    with pytest.raises(th.Unsupported, match=reason):
        plan(Check.make(kind, spec, columns=("a",)))


def test_check_families_and_columns() -> None:
    assert plan(Check.make("no_missing_values", {}, columns=("a",))).family == MISSING
    assert plan(Check.make("invalid_count", {"valid_values": [1]}, columns=("a",))).family == (
        INVALID
    )
    multi = plan(Check.make("duplicate", {"columns": ["a", "b"]}))
    assert (multi.family, multi.columns, multi.label) == (DUPLICATE, ("a", "b"), "duplicate(a,b)")
    assert plan(Check.make("rows_exist", {})).family == ROW_COUNT
    with pytest.raises(th.Unsupported, match="needs a column"):
        plan(Check.make("missing", {}))
    with pytest.raises(th.Unsupported, match="takes one column"):
        plan(Check.make("missing", {"columns": ["a", "b"]}))


def test_validity_options_are_read() -> None:
    checked = plan(
        Check.make(
            "invalid",
            {
                "valid_values": ["S", "M"],
                "valid_format": {"name": "code", "regex": "^[A-Z]+$"},
                "valid_min": 0,
                "valid_max_length": 4,
                "missing_values": ["N/A", True],
            },
            columns=("a",),
        )
    )
    assert checked.validity.valid_values == ("S", "M")
    assert checked.validity.valid_regexes == ("^[A-Z]+$",)
    assert checked.missing.values == ("N/A", "true")
    named = plan(Check.make("no_invalid_values", {"valid_format": "email"}, columns=("a",)))
    assert named.validity.valid_regexes == (NAMED_FORMATS["email"],)


# -- types and schema ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data_type", "dialect", "ddl", "length", "validator", "skipped"),
    [
        ("int", "spark", "INT", None, None, False),
        ("INT8", "postgres", "BIGINT", None, None, False),
        ("decimal(10,2)", "spark", "DECIMAL(10, 2)", None, None, False),
        ("numeric", "postgres", "DOUBLE", None, None, False),
        ("varchar(10)", "spark", None, 10, None, False),
        ("character varying(5)", "postgres", None, 5, None, False),
        ("char(3)", "spark", None, 3, None, False),
        ("json", "postgres", None, None, "json", False),
        ("uuid", "postgres", None, None, "uuid", False),
        ("string", "spark", None, None, None, False),
        ("array<varchar(3)>", "spark", "ARRAY<STRING>", None, None, False),
        ("timestamp", "snowflake", "TIMESTAMP_NTZ", None, None, False),
        ("time", "spark", None, None, None, True),
        ("UInt8", "clickhouse", None, None, None, True),
        ("decimal(40,2)", "spark", None, None, None, True),
        ("no such type", "spark", None, None, None, True),
    ],
)
def test_contract_types_to_spark(
    data_type: str,
    dialect: str,
    ddl: str | None,
    length: int | None,
    validator: str | None,
    skipped: bool,
) -> None:
    target = target_type(data_type, dialect)
    assert target.spark_ddl == ddl
    assert target.max_length == length
    assert target.validator == validator
    assert (target.skip_reason is not None) == skipped


def _cols(*names: str, optional: tuple[str, ...] = ()) -> list[Column]:
    return [
        Column(name, required=False if name in optional else None, line=index + 1)
        for index, name in enumerate(names)
    ]


def _named(results: list[SmokeResult], status: str = "failed") -> list[tuple[str, str | None]]:
    return [(result.name, result.column) for result in results if result.status == status]


def test_schema_enforcement_like_delta_lake() -> None:
    extra = schema_findings(_cols("id", "name"), ["id", "name", "extra"], allow_extra=False)
    assert _named(extra) == [("extra_column", "extra")]
    allowed = schema_findings(_cols("id", "name"), ["id", "name", "extra"], allow_extra=True)
    assert _named(allowed) == [] and "1 extra allowed" in allowed[-1].message
    missing = schema_findings(_cols("id", "age"), ["id"], allow_extra=False)
    assert _named(missing) == [("missing_column", "age")]
    optional = schema_findings(_cols("id", "age", optional=("age",)), ["id"], allow_extra=False)
    assert _named(optional) == [] and _named(optional, "passed")[0] == ("missing_column", "age")
    case = schema_findings(_cols("id", "Amount"), ["id", "amount"], allow_extra=False)
    assert _named(case) == [("case_clash", "Amount")]
    assert case[0].line == 2
    both = schema_findings(_cols("id"), ["id", "ID"], allow_extra=True)
    assert _named(both) == [("case_clash", "id")]
    twice = schema_findings(_cols("id"), ["id", "id"], allow_extra=False)
    assert ("duplicate_column", "id") in _named(twice)


# -- samples -------------------------------------------------------------------------------


def _dataset(dataset_id: str, path: str) -> Dataset:
    return Dataset(id=dataset_id, path=path, format="soda")


def test_sample_beside_the_contract_and_in_the_sample_folder(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "contracts/orders.sample.csv": "id\n1\n",
            "samples/shop.db.public.customers.jsonl": '{"id": 1}\n',
            "samples/orders.parquet": b"PAR1",
            "contracts/customers.sample.csv": "id\n",
        },
    )
    repo = Repo(tmp_path)
    orders = _dataset("orders", "contracts/orders.yaml")
    customers = _dataset("shop/db/public/customers", "contracts/customers.yaml")
    beside = SampleFinder(repo, None, [orders, customers])
    assert beside.find(orders).relpath == "contracts/orders.sample.csv"
    assert beside.find(customers).relpath == "contracts/customers.sample.csv"
    folder = resolve_sample_dir(repo, "samples")
    in_folder = SampleFinder(repo, folder, [orders, customers])
    found = in_folder.find(customers)
    assert (found.relpath, found.format) == ("samples/shop.db.public.customers.jsonl", "jsonl")
    assert in_folder.find(orders).format == "parquet"  # --sample-data comes first
    assert sample_stem("a/b/c") == "a.b.c"


def test_several_datasets_in_one_contract_file(tmp_path: Path) -> None:
    write_files(tmp_path, {"models/shop.orders.sample.csv": "id\n", "models/x.sample.csv": ""})
    orders = _dataset("orders", "models/shop.yaml")
    items = _dataset("items", "models/shop.yaml")
    finder = SampleFinder(Repo(tmp_path), None, [orders, items])
    assert finder.find(orders).relpath == "models/shop.orders.sample.csv"
    assert finder.find(items) is None


def test_two_samples_for_one_dataset_is_an_error(tmp_path: Path) -> None:
    write_files(tmp_path, {"c/orders.sample.csv": "id\n", "c/orders.sample.json": "[]"})
    orders = _dataset("orders", "c/orders.yaml")
    with pytest.raises(SampleError, match="several samples"):
        SampleFinder(Repo(tmp_path), None, [orders]).find(orders)


def test_symlinks_out_of_the_repository_are_refused(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    outside = tmp_path / "outside"
    write_files(outside, {"secret.csv": "token\nhunter2\n"})
    write_files(repo_root, {"contracts/orders.yaml": "dataset: orders\n"})
    (repo_root / "contracts" / "orders.sample.csv").symlink_to(outside / "secret.csv")
    (repo_root / "samples").symlink_to(outside)
    orders = _dataset("orders", "contracts/orders.yaml")
    with pytest.raises(UsageError, match=r"orders\.sample\.csv"):
        SampleFinder(Repo(repo_root), None, [orders]).find(orders)
    with pytest.raises(UsageError, match="samples"):
        resolve_sample_dir(Repo(repo_root), "samples")
    with pytest.raises(UsageError, match="outside"):
        resolve_sample_dir(Repo(repo_root), str(outside))
    with pytest.raises(UsageError, match="not a folder"):
        resolve_sample_dir(Repo(repo_root), "contracts/orders.yaml")


def test_run_smoke_refuses_escaping_paths_before_spark(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    outside = tmp_path / "outside"
    write_files(outside, {"orders.csv": "id\n1\n"})
    write_files(repo_root, {"contracts/orders.yaml": "dataset: orders\ncolumns:\n  - name: id\n"})
    (repo_root / "contracts" / "orders.sample.csv").symlink_to(outside / "orders.csv")
    datasets = datasets_in(repo_root, "contracts/orders.yaml")
    with pytest.raises(UsageError, match=r"contracts/orders\.sample\.csv"):
        run_smoke(datasets, repo_root, SmokeSettings(), spark=object())
    with pytest.raises(UsageError, match="outside"):
        run_smoke(datasets, repo_root, SmokeSettings(sample_data=str(outside)), spark=object())


def test_no_sample_is_reported_not_passed_and_spark_is_not_started(tmp_path: Path) -> None:
    write_files(tmp_path, {"contracts/orders.yaml": "dataset: orders\ncolumns:\n  - name: id\n"})
    datasets = datasets_in(tmp_path, "contracts/orders.yaml")
    report = run_smoke(datasets, tmp_path, SmokeSettings(), spark=object())
    assert [d.status for d in report.datasets] == ["no_sample"]
    assert report.spark_version == "" and report.session_seconds == 0.0
    assert not report.failed
    assert report.to_dict()["counts"] == {"passed": 0, "failed": 0, "no_sample": 1, "error": 0}


def test_an_ambiguous_sample_errors_only_its_dataset(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "c/orders.yaml": "dataset: orders\ncolumns:\n  - name: id\n",
            "c/orders.sample.csv": "id\n",
            "c/orders.sample.jsonl": "",
        },
    )
    report = run_smoke(
        datasets_in(tmp_path, "c/orders.yaml"), tmp_path, SmokeSettings(), spark=object()
    )
    assert report.datasets[0].status == "error" and report.failed
    assert "several samples" in (report.datasets[0].error or "")


def test_master_and_remote_are_exclusive(tmp_path: Path) -> None:
    settings = SmokeSettings(spark_master="local[1]", spark_remote="sc://localhost:15002")
    with pytest.raises(UsageError, match="not both"):
        run_smoke([], tmp_path, settings)


def test_unknown_dialect_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown dialect"):
        run_smoke([], tmp_path, SmokeSettings(dialect="cobol"), spark=object())


def test_reports_never_show_connect_tokens() -> None:
    assert display_master(None, "sc://spark.internal:15002/;token=s3cr3t;user_id=ci") == (
        "sc://spark.internal:15002"
    )
    assert display_master("spark://user:pw@master:7077", None) == "spark://master:7077"
    assert display_master(None, None) == "local[*]"


# -- CSV parsing with pyarrow (no Spark) ----------------------------------------------------

_cell = st.text(alphabet=st.sampled_from(list('ab ,"\n\r;xé')), max_size=8)


@given(st.lists(st.lists(_cell, min_size=2, max_size=2), min_size=1, max_size=8))
def test_csv_parses_like_rfc4180(rows: list[list[str]]) -> None:
    from gate.smoke.parse import csv_table

    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writerows([["a", "b"], *rows])
    parsed = csv_table(buffer.getvalue().encode(), "s.csv", 100)
    assert parsed.names == ["a", "b"] and parsed.malformed == 0
    got = [[row["c0"], row["c1"]] for row in parsed.table.to_pylist()]
    # csv.writer leaves an empty string unquoted: that is NULL, as in Spark.
    assert got == [[value if value != "" else None for value in row] for row in rows]


def test_csv_blank_lines_crlf_bom_and_quoted_empty() -> None:
    from gate.smoke.parse import csv_table

    data = '\ufeffid,note\r\n\r\n1,"two\r\nlines"\r\n  \n2,x\n3,""\n4,\n'.encode()
    parsed = csv_table(data, "s.csv", 100)
    assert parsed.names == ["id", "note"]
    assert parsed.table.to_pylist() == [
        {"c0": "1", "c1": "two\r\nlines"},
        {"c0": "2", "c1": "x"},
        {"c0": "3", "c1": ""},
        {"c0": "4", "c1": None},
    ]


def test_csv_records_with_a_wrong_field_count_are_kept_as_malformed() -> None:
    from gate.smoke.parse import CORRUPT, csv_table

    parsed = csv_table(b"id,qty\n1,2\n3\n4,5,6\n7,8\n", "s.csv", 100)
    rows = parsed.table.to_pylist()
    assert parsed.malformed == 2 and len(rows) == 4
    bad = sorted((row for row in rows if row[CORRUPT]), key=lambda row: row[CORRUPT])
    assert bad == [
        {"c0": "3", "c1": None, CORRUPT: "3"},
        {"c0": "4", "c1": "5", CORRUPT: "4,5,6"},
    ]


def test_an_unterminated_quote_is_a_malformed_record_not_the_rest_of_the_file() -> None:
    """Issue #8: the open quote swallowed every later line and the sample passed."""
    from gate.smoke.parse import CORRUPT, csv_table

    data = b'id,note\n1,ok\n2,"never closed\n3,hidden\n4,"also hidden"\n'
    parsed = csv_table(data, "s.csv", 100)
    rows = parsed.table.to_pylist()
    assert parsed.malformed == 1
    assert rows[0] == {"c0": "1", "c1": "ok", CORRUPT: None}
    assert rows[1][CORRUPT].startswith('2,"never closed')
    # Closed quotes at the end of a file stay good records.
    for fine in (b'id,note\n1,"a"\n', b'id,note\n1,""\n', b'id,note\n1,""""', b'id\n"x\n"'):
        assert csv_table(fine, "s.csv", 100).malformed == 0, fine
    assert csv_table(b'id,note\n1,"', "s.csv", 100).malformed == 1


def test_a_line_break_in_a_quoted_value_is_still_checked_strictly_without_carriage_returns() -> (
    None
):
    """Counting lines against records skips the strict parse only when no value holds a break."""
    from gate.smoke.parse import CORRUPT, csv_table

    # A quote closed in the middle of a field, across a line break: pyarrow reads one value.
    parsed = csv_table(b'id,note\n1,"a\nb"c\n2,x\n', "s.csv", 100)
    assert parsed.malformed == 1
    assert {row[CORRUPT] for row in parsed.table.to_pylist()} == {'1,"a\nb"c', None}
    # A well-formed quoted line break stays one good value.
    parsed = csv_table(b'id,note\n1,"a\nb"\n2,"x"\n', "s.csv", 100)
    assert parsed.malformed == 0
    assert parsed.table.to_pylist() == [{"c0": "1", "c1": "a\nb"}, {"c0": "2", "c1": "x"}]


def test_csv_header_problems_are_one_line() -> None:
    from gate.smoke.parse import csv_table

    with pytest.raises(SampleError, match="empty CSV"):
        csv_table(b"\n\n", "s.csv", 100)
    with pytest.raises(SampleError, match="unreadable CSV header"):
        csv_table(b'id,"note\n1,2\n', "s.csv", 100)
    with pytest.raises(SampleError, match="not UTF-8"):
        csv_table(b"id\n\xff\n", "s.csv", 100)


def test_sample_limits_stop_the_run_with_exit_2(tmp_path: Path) -> None:
    from gate.smoke import files, parse
    from gate.smoke.limit_errors import LimitExceeded

    big = tmp_path / "big.csv"
    big.write_bytes(b"id\n" + b"1\n" * 600)
    with pytest.raises(LimitExceeded, match=r"big\.csv: 1.2 KiB is more than the sample limit"):
        files.read_bytes(big, "big.csv", 1000)
    with pytest.raises(LimitExceeded, match=r"600 rows is more than the sample limit of 500"):
        parse.csv_table(big.read_bytes(), "big.csv", 500)
    with pytest.raises(LimitExceeded, match=r"limits\.sample_rows"):
        parse.json_lines(b'{"a": 1}\n' * 3, "s.jsonl", 2)
    assert issubclass(LimitExceeded, UsageError)


def test_json_lines_are_split_in_arrow() -> None:
    from gate.smoke.parse import json_lines

    lines = json_lines(b'\xef\xbb\xbf{"a": 1}\r\n\n  \n{"a": "x\\ny"}\nnot json', "s.jsonl", 10)
    assert lines.to_pylist() == ['{"a": 1}', '{"a": "x\\ny"}', "not json"]


def test_smoke_limits_are_fields_of_the_config_limits() -> None:
    from gate.config import config_from_files
    from gate.limits import Limits

    assert config_from_files(None, None).limits == Limits()
    assert Limits().sample_bytes == 256 * 1024 * 1024 and Limits().sample_rows == 2_000_000
    config = config_from_files(
        b"limits:\n  sample_bytes: 1000\n  sample_rows: 10\n  smoke_seconds_per_dataset: 5\n",
        None,
    )
    assert (config.limits.sample_bytes, config.limits.sample_rows) == (1000, 10)
    assert config.limits.smoke_seconds_per_dataset == 5
    assert (Limits().smoke_seconds, Limits().sample_decoded_bytes) == (900, 512 * 1024 * 1024)
    config = config_from_files(b"limits:\n  smoke_seconds: 60\n  sample_decoded_bytes: 9\n", None)
    assert (config.limits.smoke_seconds, config.limits.sample_decoded_bytes) == (60, 9)
    with pytest.raises(ContractError, match=r"\.schema-gate\.yml:3: limit 'sample_rows' must be"):
        config_from_files(b"limits:\n  sample_bytes: 1000\n  sample_rows: lots\n", None)


# -- regexes that backtrack --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("regex", "why"),
    [
        (r"^(a+)+\1$", "backreference|nests quantifiers"),  # issue #8: minutes in Java
        (r"^(a|b)\1$", "backreference"),
        (r"(\w*)*x", "nests quantifiers"),
        ("x" * 1001, "longer than 1000"),
    ],
)
def test_regexes_that_can_backtrack_for_ages_are_skipped(regex: str, why: str) -> None:
    check = Check.make("invalid", {"valid_regex_sql": regex}, columns=("name",))
    with pytest.raises(th.Unsupported, match=why):
        plan(check)


def test_ordinary_regexes_are_kept() -> None:
    for regex in (r"^[a-z]+@[a-z]+\.com$", r"^(ab){2,3}$", r"^(\d{3})-(\d{4})$"):
        planned = plan(Check.make("invalid", {"valid_regex_sql": regex}, columns=("name",)))
        assert planned.validity.valid_regexes == (regex,)


# -- results -------------------------------------------------------------------------------


def test_report_to_dict_has_stable_keys_and_failed_means_failed_or_error() -> None:
    result = SmokeResult(
        "check", "missing", "id", "failed", "1 of 2 rows are missing", failed_rows=1, line=4
    )
    dataset = DatasetSmoke(
        "orders", "c/orders.yaml", 1, "failed", "c/orders.sample.csv", 2, (result,), 0.123456
    )
    report = SmokeReport((dataset,), "4.0.0", "local[*]", 5.5, 4.25)
    data = report.to_dict()
    assert list(data) == [
        "failed",
        "spark_version",
        "master",
        "seconds",
        "session_seconds",
        "counts",
        "datasets",
    ]
    assert list(data["datasets"][0]) == [
        "dataset",
        "path",
        "line",
        "status",
        "sample",
        "rows",
        "seconds",
        "error",
        "results",
    ]
    assert list(data["datasets"][0]["results"][0]) == [
        "kind",
        "name",
        "column",
        "status",
        "message",
        "failed_rows",
        "samples",
        "line",
    ]
    assert data["failed"] and data["datasets"][0]["seconds"] == 0.123
    passed = SmokeReport(
        (DatasetSmoke("o", "p", None, "passed", None, 0, (), 0.0),), "", "local[*]", 0, 0
    )
    assert not passed.failed


# -- what the smoke test needs, in a real subprocess ---------------------------------------


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120
    )


def test_importing_the_cli_and_the_smoke_package_does_not_import_pyspark() -> None:
    probe = _python(
        "import sys, gate.smoke, gate.smoke.result\n"
        "try:\n    import gate.cli\nexcept ImportError:\n    pass\n"
        "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)\n"
    )
    assert probe.returncode == 0, probe.stderr


_SMOKE_RUN = (
    "from pathlib import Path\n"
    "from gate.model import UsageError\n"
    "from gate.smoke import SmokeSettings, run_smoke\n"
    "try:\n"
    "    run_smoke([], Path('.'), SmokeSettings({settings}))\n"
    "except UsageError as err:\n"
    "    print('USAGE:', err)\n"
)


def test_without_pyspark_the_message_says_how_to_install_it() -> None:
    block = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'pyspark':\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    local = _python(block + _SMOKE_RUN.format(settings=""))
    assert "USAGE: the smoke test needs PySpark" in local.stdout, local.stderr
    assert "schema-contract-gate[spark]" in local.stdout
    remote = _python(block + _SMOKE_RUN.format(settings="spark_remote='sc://h:1'"))
    assert "schema-contract-gate[connect]" in remote.stdout, remote.stderr


def test_without_java_the_message_is_clear() -> None:
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)
    if any((Path(p) / "java").exists() for p in env["PATH"].split(os.pathsep)):
        pytest.skip("java sits beside python here")
    probe = _python(_SMOKE_RUN.format(settings=""), env=env)
    assert "USAGE: the smoke test runs Spark, which needs Java 17" in probe.stdout, probe.stderr
    bad_home = dict(env, JAVA_HOME="/nonexistent/jdk")
    probe = _python(_SMOKE_RUN.format(settings=""), env=bad_home)
    assert "JAVA_HOME=/nonexistent/jdk has no bin/java" in probe.stdout, probe.stderr


def test_dbt_generic_tests_read_as_soda_checks() -> None:
    not_null = plan(Check.make("not_null", {}, columns=("id",)))
    assert (not_null.family, not_null.threshold.text) == (MISSING, "must_be 0")
    assert plan(Check.make("dbt.unique", {}, columns=("id",))).family == DUPLICATE
    accepted = plan(
        Check.make(
            "accepted_values",
            {"values": ["a", "b"], "quote": True, "config": {"severity": "warn"}},
            columns=("s",),
        )
    )
    assert (accepted.family, accepted.validity.valid_values) == (INVALID, ("a", "b"))
    assert accepted.threshold.level == "warn"
    with pytest.raises(th.Unsupported, match="filters"):
        plan(Check.make("not_null", {"config": {"where": "x > 1"}}, columns=("id",)))
    with pytest.raises(th.Unsupported, match="error_if"):
        plan(Check.make("unique", {"config": {"error_if": ">10"}}, columns=("id",)))
    with pytest.raises(th.Unsupported, match="relationships"):
        plan(Check.make("relationships", {"to": "ref('x')"}, columns=("id",)))


def test_a_parquet_folder_may_not_hide_a_link_out(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    write_files(tmp_path / "outside", {"secret.parquet": b"PAR1"})
    write_files(repo_root, {"c/orders.sample.parquet/part-0.parquet": b"PAR1"})
    orders = _dataset("orders", "c/orders.yaml")
    found = SampleFinder(Repo(repo_root), None, [orders]).find(orders)
    assert found.relpath == "c/orders.sample.parquet" and found.path.is_dir()
    (repo_root / "c/orders.sample.parquet/part-1.parquet").symlink_to(
        tmp_path / "outside" / "secret.parquet"
    )
    with pytest.raises(UsageError, match="outside"):
        SampleFinder(Repo(repo_root), None, [orders]).find(orders)


@given(
    st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=60),
    st.integers(min_value=1, max_value=4),
)
def test_the_offending_values_shown_are_the_smallest_distinct_in_utf8_order(
    texts: list[str | None], chunks: int
) -> None:
    """Arrow's sort picks what sorting every value in Python would (UTF-8 byte order)."""
    pytest.importorskip("pyspark")
    import pyarrow as pa

    from gate.smoke.checks import smallest_texts
    from gate.smoke.result import MAX_SAMPLES

    size = -(-len(texts) // chunks) or 1
    pieces = [pa.array(texts[i : i + size], pa.string()) for i in range(0, len(texts), size)]
    column = pa.chunked_array(pieces, pa.string())
    distinct = {text for text in texts if text is not None}
    expected = sorted(distinct, key=lambda text: text.encode("utf-8", "surrogatepass"))
    assert smallest_texts(column) == expected[:MAX_SAMPLES]


def test_the_worst_case_of_offending_values_is_estimated_from_arrow_sizes() -> None:
    """Values shown as read weigh their column; Spark's text of typed values a bit more a row."""
    pytest.importorskip("pyspark")
    from gate.smoke.checks import worst_text_bytes

    assert worst_text_bytes(1000, 10, as_is=True) == 1000
    assert worst_text_bytes(1000, 10, as_is=False) == 1000 + 10 * 32
    assert worst_text_bytes(1000, 10, as_is=False, nested=True) == 4000 + 10 * 32
    assert worst_text_bytes(None, 10, as_is=True) is None  # unknown: never inline a large sample
    assert worst_text_bytes(1000, None, as_is=True) is None


# -- Parquet samples that decompress into a bomb (issue #27, point 4) ---------------------


def _parquet_bytes(table, **options) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **options)
    return sink.getvalue().to_pybytes()


def _repeated(value: str, rows: int, nested: bool = False):
    """One long string repeated through a dictionary: a tiny file, a huge table."""
    import pyarrow as pa

    strings = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([value]))
    column = pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), strings)
    return pa.table({"s": column if nested else strings, "id": pa.array(range(rows))})


@pytest.mark.parametrize("nested", [False, True])
def test_a_dictionary_bomb_is_refused_before_it_is_decoded(nested: bool) -> None:
    import resource

    from gate.limits import Limits
    from gate.smoke import parse
    from gate.smoke.limit_errors import LimitExceeded

    # 200,000 x 100 KB = 20 GB once decoded, from a file of about 1 MB (measured).
    # No Arrow schema in the file, as Spark writes it: pyarrow alone would decode it all.
    data = _parquet_bytes(_repeated("x" * 100_000, 200_000, nested), store_schema=False)
    assert len(data) < 2 * 1024 * 1024
    limits = Limits()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(LimitExceeded) as refused:
        parse.parquet_table(data, "s.parquet", limits, limits.sample_decoded_bytes)
    assert re.fullmatch(
        r"s\.parquet: 190\d\d\.\d MiB once decoded is more than the sample limit of 512 MiB "
        r"\(raise limits\.sample_decoded_bytes in the base side's config\)",
        str(refused.value),
    )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024  # never near the 20 GB


def test_parquet_metadata_is_held_against_the_limits_before_decoding() -> None:
    import pyarrow as pa

    from gate.limits import Limits
    from gate.smoke import parse
    from gate.smoke.limit_errors import LimitExceeded

    wide = _parquet_bytes(pa.table({f"c{i}": [1] for i in range(30)}))
    with pytest.raises(LimitExceeded, match=r"30 Parquet columns is more than the limit of 20 "):
        parse.parquet_table(wide, "w.parquet", Limits(columns_per_dataset=20), 10**9)
    rows = _parquet_bytes(pa.table({"id": list(range(11))}))
    with pytest.raises(LimitExceeded, match=r"11 rows is more than the sample limit of 10 rows"):
        parse.parquet_table(rows, "r.parquet", Limits(sample_rows=10), 10**9)
    # zeros compress well: 8 MB of int64 in a file of a few KB (the uncompressed pages)
    zeros = _parquet_bytes(pa.table({"z": pa.array([0] * 1_000_000, pa.int64())}))
    assert len(zeros) < 100_000
    with pytest.raises(LimitExceeded, match=r"7.6 MiB once decoded is more than .* of 1 MiB"):
        parse.parquet_table(zeros, "z.parquet", Limits(), 1024 * 1024)
    # prefixes shared between values cannot be bounded: refused, one line
    delta = _parquet_bytes(
        pa.table({"d": ["a" * 50] * 10}),
        use_dictionary=False,
        column_encoding={"d": "DELTA_BYTE_ARRAY"},
    )
    with pytest.raises(SampleError, match=r"^d\.parquet: column 'd' is DELTA_BYTE_ARRAY-encoded"):
        parse.parquet_table(delta, "d.parquet", Limits(), 10**9)


def test_a_parquet_sample_within_the_limits_reads_as_before() -> None:
    import pyarrow as pa

    from gate.limits import Limits
    from gate.smoke import parse

    table = pa.table(
        {
            "s": ["a", None, "bb", "a"],
            "l": [["x", "yy"], [], None, ["x"]],
            "st": [{"f": "q"}, None, {"f": None}, {"f": "q"}],
            "m": pa.array(
                [[("k", "v")], [], None, [("k", "w")]], pa.map_(pa.string(), pa.string())
            ),
            "n": [1, 2, 3, 4],
        }
    )
    read, decoded = parse.parquet_table(
        _parquet_bytes(table, row_group_size=2), "ok.parquet", Limits(), 10**9
    )
    assert read.equals(table)
    assert 0 < decoded < 10_000
    # a dictionary column stored with its Arrow type comes back as plain values too
    read, _ = parse.parquet_table(_parquet_bytes(_repeated("abc", 3)), "d.parquet", Limits(), 10**9)
    assert read.column("s").type == pa.string() and read.column("s").to_pylist() == ["abc"] * 3


def test_a_jvm_that_stopped_is_one_line_naming_the_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from gate.smoke import session

    monkeypatch.delenv(session.DRIVER_MEMORY_ENV, raising=False)
    assert str(session.stopped("s.csv", session.OOM_EXIT)) == (
        "s.csv: Spark ran out of memory on this sample (driver heap 1g); "
        "raise GATE_SPARK_DRIVER_MEMORY (e.g. 4g) or commit a smaller sample"
    )
    assert str(session.stopped("s.csv", 137)) == (
        "s.csv: the Spark JVM stopped (exit code 137) on this sample"
    )
    assert issubclass(session.SparkStopped, UsageError)  # exit 2
    assert "-XX:+ExitOnOutOfMemoryError" in session.JVM_OPTIONS
    # a connection py4j lost, however deep in the chain, means the JVM may be gone
    try:
        try:
            raise ConnectionResetError(104, "reset")
        except ConnectionResetError as reset:
            raise RuntimeError("An error occurred while calling o72.getResult") from reset
    except RuntimeError as wrapped:
        assert session._connection_lost(wrapped)
    assert not session._connection_lost(ValueError("an ordinary Spark error"))
    # py4j logs a broken connection on the root logger: dropped during a run, only then
    root = logging.getLogger()
    py4j = logging.LogRecord("root", logging.ERROR, f"{os.sep}py4j{os.sep}x.py", 1, "m", (), None)
    other = logging.LogRecord("root", logging.ERROR, "/app/x.py", 1, "m", (), None)
    with session.quiet_py4j():
        assert not root.filter(py4j) and root.filter(other)
    assert root.filter(py4j)
