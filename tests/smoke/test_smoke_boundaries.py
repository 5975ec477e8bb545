"""Boundaries of the smoke test's fast paths, on a real local Spark (review2).

The smoke test counts every rule in one aggregation and asks for offending
values in a second job only for the rules that counted something; a JSON
sample of 50,000 records or more is parsed by Spark once and held as Arrow
(``gate.smoke.readers.MIN_PARTITION_ROWS``). These tests pin what must not
change at those seams: the same findings on either side of 50,000 records,
malformed records kept, and each failing rule showing its own offending values.
The scenarios are written for the gate; Soda v4's duplicate semantics (missing
values excluded for one column, every row counted for several) follow
soda-core's ``duplicate_check.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.smoke import SmokeSettings, checks, readers, run_smoke, sqlexpr
from tests.spark_fixtures import (
    datasets_in,
    find,
    spark,  # noqa: F401  (the session fixture)
    write_files,
)

pytestmark = pytest.mark.spark

CONTRACT = """\
dataset: j
columns:
  - name: id
    data_type: bigint
    checks:
      - duplicate:
  - name: qty
    data_type: int
    checks:
      - invalid:
          valid_min: 0
  - name: a
    data_type: string
  - name: b
    data_type: string
checks:
  - duplicate:
      columns: [a, b]
"""

#: Lines that are not plain records, at the end of every sample.
ODD = [
    '{"id": 1, "qty": ',  # cut off: malformed
    "42",  # valid JSON, not a record: malformed
    '{"id": null, "qty": -1, "a": "k", "b": null}',
    '{"id": null, "qty": -2, "a": "k", "b": null}',  # (k, NULL) twice: one duplicate
    '{"id": 5, "qty": "7x", "a": "p", "b": "q"}',  # id 5 twice; qty cannot be an int
]


def run(root: Path, session: Any, lines: list[str]) -> Any:
    write_files(root, {"c/j.yaml": CONTRACT, "c/j.sample.jsonl": "\n".join(lines) + "\n"})
    report = run_smoke(datasets_in(root, "c/j.yaml"), root, SmokeSettings(), spark=session)
    return report.datasets[0]


def records(n: int) -> list[str]:
    plain = [
        json.dumps({"id": i, "qty": i % 7, "a": "x", "b": str(i)}) for i in range(n - len(ODD))
    ]
    return plain + ODD


@pytest.mark.parametrize("n", [readers.MIN_PARTITION_ROWS - 1, readers.MIN_PARTITION_ROWS, 50_001])
@pytest.mark.parametrize("route", ["values with the flags", "values job"])
def test_the_same_findings_on_either_side_of_50000_json_records(
    spark: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    n: int,
    route: str,
) -> None:
    assert readers.MIN_PARTITION_ROWS == 50_000  # the boundary these sizes straddle
    if route == "values job":  # a sample whose values could outweigh the budget
        monkeypatch.setattr(checks, "INLINE_TEXT_BYTES", 0)
    asked: list[int] = []
    real = checks._offending_values

    def values_job(*args: Any) -> Any:
        asked.append(1)
        return real(*args)

    monkeypatch.setattr(checks, "_offending_values", values_job)
    outcome = run(tmp_path, spark, records(n))
    # A large sample asks for its offending values in a second job only when
    # their text could outweigh INLINE_TEXT_BYTES.
    second_job = route == "values job" and n >= readers.MIN_PARTITION_ROWS
    assert len(asked) == (1 if second_job else 0)
    assert (outcome.status, outcome.rows) == ("failed", n)
    found = {
        (r.name, r.column): (r.status, r.failed_rows, r.samples)
        for r in outcome.results
        if r.status != "passed"
    }
    # Every rule that fails shows its own offending values, none of another rule's.
    assert found == {
        ("malformed_record", None): ("failed", 2, ("42", '{"id": 1, "qty": ')),
        ("cast_to_int", "qty"): ("failed", 1, ("7x",)),
        ("invalid", "qty"): ("failed", 2, ("-1", "-2")),
        # Missing ids (the two NULLs, the two malformed records) are no duplicates.
        ("duplicate", "id"): ("failed", 1, ("5",)),
        # Several columns: every row counts, NULLs group together as in SQL's GROUP BY;
        # the two malformed records are a (NULL, NULL) pair.
        ("duplicate", "a,b"): ("failed", 2, ("(NULL, NULL)", "(k, NULL)")),
    }, found
    assert f"among {n - 4:,} non-missing values" in find(outcome, "duplicate", "id").message
    assert f"among {n:,} rows" in find(outcome, "duplicate", "a,b").message


def test_a_json_array_sample_of_exactly_50000_elements(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    elements = [{"id": i % 49_999, "qty": 1, "a": "x", "b": str(i)} for i in range(50_000)]
    write_files(tmp_path, {"c/j.yaml": CONTRACT, "c/j.sample.json": json.dumps(elements)})
    report = run_smoke(datasets_in(tmp_path, "c/j.yaml"), tmp_path, SmokeSettings(), spark=spark)
    outcome = report.datasets[0]
    assert (outcome.status, outcome.rows) == ("failed", 50_000)
    duplicate = find(outcome, "duplicate", "id")
    assert (duplicate.status, duplicate.failed_rows, duplicate.samples) == ("failed", 1, ("0",))
    assert find(outcome, "malformed_record").status == "passed"
    assert find(outcome, "duplicate", "a,b").status == "passed"


def test_a_passing_dataset_shows_no_values(spark: Any, tmp_path: Path) -> None:  # noqa: F811
    lines = [json.dumps({"id": i, "qty": 1, "a": "x", "b": str(i)}) for i in range(20)]
    outcome = run(tmp_path, spark, lines)
    assert outcome.status == "passed"
    assert all(r.samples == () and not r.failed_rows for r in outcome.results), [
        r.to_dict() for r in outcome.results
    ]


def test_conditions_beyond_one_packed_column_keep_their_own_counts(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Forty columns, three conditions each: 120 flags in two BIGINTs (63 + 57).

    Column ``i`` has ``i + 1`` values that are not integers, so a flag read
    from the wrong bit or the wrong word shows as a wrong count; the duplicate
    check's rows (the non-missing ones) are a flag of the second word.
    """
    width, rows = 40, 200
    names = [f"col{i:02d}" for i in range(width)]
    contract = "dataset: wide\ncolumns:\n" + "".join(
        f"  - name: {name}\n    data_type: int\n    checks:\n      - missing:\n"
        + ("      - duplicate:\n" if name == names[-1] else "")
        for name in names
    )
    table = []
    for r in range(rows):
        row = []
        for i in range(width):
            value = f"x{r}" if r <= i else str(r)
            if i == width - 1 and r >= rows - 10:
                value = str(r - 100)  # ten repeats of earlier keys
            row.append(value)
        table.append(",".join(row))
    write_files(
        tmp_path,
        {
            "c/wide.yaml": contract,
            "c/wide.sample.csv": ",".join(names) + "\n" + "\n".join(table) + "\n",
        },
    )
    report = run_smoke(datasets_in(tmp_path, "c/wide.yaml"), tmp_path, SmokeSettings(), spark=spark)
    outcome = report.datasets[0]
    for i, name in enumerate(names):
        coercion = [r for r in outcome.results if r.kind == "coercion" and r.column == name]
        assert [r.failed_rows for r in coercion] == [i + 1], name
        assert find(outcome, "missing", name).failed_rows == i + 1, name
    duplicate = find(outcome, "duplicate", names[-1])
    assert duplicate.failed_rows == 10, duplicate.to_dict()


@pytest.mark.parametrize("considered_at", [0, 62, 63, 100])
def test_each_packed_condition_counts_what_count_if_counts(
    spark: Any,  # noqa: F811
    considered_at: int,
) -> None:
    """130 conditions (three words) with a distinct count each, NULLs included.

    Condition ``k`` is ``a > k``: it is NULL where ``a`` is, and counts the
    rows whose ``a`` exceeds ``k``, so every condition has its own count and a
    bit read from the wrong place shows. The duplicate check's rows are those
    of condition ``considered_at``, in the first, last bit of the first, or a
    later word; its count must be pyarrow's exact one, not Spark's fallback.
    """
    a = [None if r % 7 == 0 else r for r in range(300)]
    b = [r % 13 for r in range(300)]
    frame = spark.createDataFrame(list(zip(a, b, strict=True)), "c0 INT, c1 INT")
    metrics = checks.Metrics(texts=True)
    aliases = [metrics.count_if(sqlexpr.col("c0") > k) for k in range(130)]
    key = metrics.duplicates([sqlexpr.col("c1")], aliases[considered_at])
    values = metrics.collect(frame)
    for k, alias in enumerate(aliases):
        assert values[alias] == sum(1 for v in a if v is not None and v > k), k
    kept = [bv for av, bv in zip(a, b, strict=True) if av is not None and av > considered_at]
    assert values[key] == len(kept) - len(set(kept)) > 0


def test_packed_flags_hold_one_to_63_conditions() -> None:
    assert checks.packed_flags(["a"]) == "(CASE WHEN a THEN 1L ELSE 0L END)"
    three = checks.packed_flags(["a", "b", "c"])
    assert three.count("CASE WHEN") == 3 and "THEN 4L" in three
    deep = checks.packed_flags([f"c{i}" for i in range(checks.FLAGS_PER_WORD)])
    assert f"THEN {1 << 62}L" in deep
    depth = max_depth = 0
    for char in deep:  # a balanced tree: about log2(63) levels of OR, not 63
        depth += {"(": 1, ")": -1}.get(char, 0)
        max_depth = max(max_depth, depth)
    assert max_depth <= 8
    for bad in ([], ["c"] * (checks.FLAGS_PER_WORD + 1)):
        with pytest.raises(ValueError):
            checks.packed_flags(bad)
