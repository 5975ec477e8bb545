"""pyarrow reads JSON Lines into Spark's table, or declines: checked against Spark itself.

``gate.smoke.jsonl`` replaces Spark's JSON schema inference and parse with
pyarrow's reader where the two agree. Each case below goes both ways on a
real local Spark: where pyarrow's table is used, Spark must see the same
schema and the same rows as its own JSON reader gives; where the two would
differ, pyarrow must decline (``None``) so that Spark reads the sample.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from gate.smoke import SmokeSettings, jsonl, readers, run_smoke
from tests.spark_fixtures import (
    check_repo,
    comparable,
    datasets_in,
    spark,  # noqa: F401  (the session fixture)
    write_files,
)

pytestmark = pytest.mark.spark

#: Samples pyarrow reads as Spark would (name -> JSON Lines).
AGREE = {
    "scalars": '{"i": 1, "f": 2.5, "s": "x", "b": true}\n{"i": -3, "f": -0.0, "s": "", "b": false}\n',
    "int then float": '{"a": 1}\n{"a": 2.5}\n{"a": -7}\n',
    "exponents and edges": '{"a": 1e3, "b": 9223372036854775807, "c": -9223372036854775808}\n'
    '{"a": 1.5e-300, "b": 0, "c": -0}\n',
    "doubles to the last digit": "".join(
        json.dumps({"d": value}) + "\n"
        for value in (0.1, 1 / 3, 2.2250738585072014e-308, 5e-324, 123456789.12345679, 2.0**62)
    ),
    "always null and missing": '{"a": null, "b": 1}\n{"b": 2}\n{"a": null, "c": "z"}\n',
    "unsorted nested keys": '{"z": 1, "s": {"y": "1", "b": [1, 2], "a": {"q": 1, "p": null}}}\n'
    '{"a": 0, "s": {"b": [], "c": true}}\n',
    "arrays": '{"xs": [1, 2, 3], "ys": [{"k": "v", "a": 1}], "zs": []}\n'
    '{"xs": [], "ys": [], "zs": []}\n{"xs": null}\n',
    "timestamps and dates stay text": '{"t": "2024-01-02 10:00:00", "d": "2024-01-02", '
    '"n": {"t": "2024-01-02T10:00:00"}, "l": ["2024-01-02"]}\n'
    '{"t": "2024-13-02 10:00:00", "d": "2024-01-03", "n": {"t": "x"}, "l": []}\n',
    "text": '{"s": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\n \\t", "k": "日本"}\n',
    "names in Java's string order": '{"é": 1, "z": 2, "_": 3, "😀": 4, "\uff01": 5, "B": 6}\n',
    "null, then a struct or an array": '{"a": null, "b": null}\n{"a": {"x": 1}, "b": [1]}\n',
    "odd names": '{"a.b": 1, "with space": 2, "`tick`": 3, "ünï": 4, "Z": 5, "_": 6}\n',
    "CRLF line endings, no final one": '{"a": 1}\r\n{"a": 2}\r\n{"a": 3}',
}

#: Samples pyarrow would read differently from Spark, or not at all.
DECLINE = {
    "number then text": '{"a": 1}\n{"a": "x"}\n',
    "object then text": '{"a": {"b": 1}}\n{"a": "x"}\n',
    "a malformed record": '{"a": 1}\n{"a": \n',
    "a record that is not an object": '{"a": 1}\n42\n',
    "a top-level array": "[1, 2]\n",
    "a duplicate key": '{"a": 1, "a": 2}\n',
    "single quotes": "{'a': 1}\n",
    "an integer beyond BIGINT": '{"a": 99999999999999999999}\n',
    "a nested integer beyond BIGINT": '{"a": [1, 99999999999999999999]}\n',
    # From 2**63 up a double may have been an integer literal: declined, whatever it was.
    "a double beyond BIGINT": '{"a": 1e22}\n{"a": 1.5}\n',
    "an empty object": '{"a": {}}\n',
    "names that differ in case only": '{"a": 1, "A": 2}\n',
    "no records": "\n\n",
    "two objects on a line": '{"a": 1}{"a": 2}\n',
    "an object over two lines": '{"a":\n1}\n',
    "the two at once": '{"a": 1}{"a": 2}\n{"a":\n3}\n',
    "a null record": '{"a": 1}\nnull\n',
    "blank lines (Spark reads them the same, only slower)": '{"a": 1}\n\n  \n{"a": 2}\n',
    # pyarrow's parser recurses: this would crash the process; Spark refuses it.
    "a record nested 50,000 levels deep": '{"a": 1}\n{"a": ' + "[" * 50_000 + "]" * 50_000 + "}\n",
    "an empty key": '{"": 1, "a": 2}\n',
    "an empty nested key": '{"s": {"": 1, "a": 2}}\n',
    "the gate's corrupt-record column": '{"__gate_corrupt_record": "x", "a": 1}\n',
}


def spark_read(spark: Any, text: str) -> Any:  # noqa: F811
    lines = [line for line in text.splitlines() if line.strip()]
    frame = spark.createDataFrame(pa.table({"value": pa.array(lines, pa.string())}))
    return spark.read.json(frame, mode="PERMISSIVE", columnNameOfCorruptRecord=readers.CORRUPT)


def same_value(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return (math.isnan(left) and math.isnan(right)) or (
            left == right and math.copysign(1, left) == math.copysign(1, right)
        )
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(same_value, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


@pytest.mark.parametrize("name", list(AGREE))
def test_pyarrow_gives_the_table_spark_would(spark: Any, name: str) -> None:  # noqa: F811
    text = AGREE[name]
    table = jsonl.read_records(text.encode())
    assert table is not None, name
    ours = spark.createDataFrame(table)
    theirs = spark_read(spark, text)
    assert ours.schema == theirs.schema, (ours.schema.simpleString(), theirs.schema.simpleString())
    rows = [row.asDict(recursive=True) for row in ours.collect()]
    expected = [row.asDict(recursive=True) for row in theirs.collect()]
    assert same_value(rows, expected), (rows, expected)


@pytest.mark.parametrize("name", list(DECLINE))
def test_pyarrow_declines_where_spark_would_differ(spark: Any, name: str) -> None:  # noqa: F811
    text = DECLINE[name]
    assert jsonl.read_records(text.encode()) is None, name
    if text.strip():  # Spark reads it its own way: the reason pyarrow must not
        theirs = spark_read(spark, text)
        assert theirs.count() == len([line for line in text.splitlines() if line.strip()])


CORPUS = Path(__file__).parent.parent / "corpus" / "jsonl"


@pytest.mark.parametrize(
    ("name", "by_pyarrow"),
    [
        ("flights-100.jsonl", True),
        ("kafka-messages.jsonl", True),
        ("delta-log-orders.jsonl", False),
        ("sts-data-pretty.jsonl", False),
    ],
)
def test_real_samples_read_as_spark_reads_them(
    spark: Any,  # noqa: F811
    name: str,
    by_pyarrow: bool,
) -> None:
    """Samples from datacontract-cli's fixtures (tests/corpus/README.md)."""
    data = (CORPUS / name).read_bytes()
    table = jsonl.read_records(data)
    theirs = spark_read(spark, data.decode("utf-8"))
    assert (table is not None) == by_pyarrow
    if table is not None:
        ours = spark.createDataFrame(table)
        assert ours.schema == theirs.schema
        rows = [row.asDict(recursive=True) for row in ours.collect()]
        assert same_value(rows, [row.asDict(recursive=True) for row in theirs.collect()])


def test_the_smoke_test_finds_the_same_either_way(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Findings from JSON Lines samples pyarrow reads equal those Spark's reader gives."""
    root, datasets = check_repo(tmp_path)
    rows = [
        {"id": i, "email": f"u{i}@x.org", "size": i % 4, "price": 1.5 * i, "code": "abc"}
        for i in range(200)
    ]
    rows[7]["email"] = "not an email"
    rows[9]["id"] = 8  # a duplicate id
    rows[11]["size"] = None
    write_files(
        root,
        {
            "contracts/fast.yaml": "dataset: fast\ncolumns:\n"
            "  - name: id\n    data_type: bigint\n    checks:\n      - duplicate:\n"
            "  - name: email\n    checks:\n      - invalid:\n          valid_format:\n"
            "            name: email\n            regex: '^[^@ ]+@[^@ ]+$'\n"
            "  - name: size\n    data_type: int\n    checks:\n      - missing:\n"
            "  - name: price\n    data_type: decimal(10,2)\n"
            "  - name: code\n    data_type: varchar(2)\n",
            "contracts/fast.sample.jsonl": "".join(json.dumps(row) + "\n" for row in rows),
        },
    )
    chosen = [*datasets, *datasets_in(root, "contracts/fast.yaml")]
    used: list[bool] = []
    real = jsonl.read_records

    def counted(data: bytes) -> Any:
        table = real(data)
        used.append(table is not None)
        return table

    monkeypatch.setattr(jsonl, "read_records", counted)
    fast = comparable(run_smoke(chosen, root, SmokeSettings(), spark=spark))
    assert used == [False, True]  # check_repo's JSON mixes numbers and text in a column
    monkeypatch.setattr(jsonl, "read_records", lambda data: None)
    assert comparable(run_smoke(chosen, root, SmokeSettings(), spark=spark)) == fast
    outcome = fast[-1]
    failed = {(r["name"], r["column"]): r["failed_rows"] for r in outcome["results"]}
    assert failed[("duplicate", "id")] == 1 and failed[("missing", "size")] == 1
    assert failed[("invalid", "email")] == 1 and failed[("cast_to_varchar", "code")] == 200


def test_a_hostile_deeply_nested_record_is_a_malformed_record_not_a_crash(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    deep = '{"id": ' + "[" * 200_000 + "]" * 200_000 + "}"
    write_files(
        tmp_path,
        {
            "c/deep.yaml": "dataset: deep\ncolumns:\n  - name: id\n    data_type: bigint\n",
            "c/deep.sample.jsonl": '{"id": 1}\n' + deep + "\n",
        },
    )
    report = run_smoke(datasets_in(tmp_path, "c/deep.yaml"), tmp_path, SmokeSettings(), spark=spark)
    outcome = report.datasets[0]
    malformed = [r for r in outcome.results if r.name == "malformed_record"]
    assert (outcome.status, outcome.rows) == ("failed", 2)
    assert malformed[0].failed_rows == 1
