"""The smoke test's rule expressions: SQL text with parameters, and the same rule as a Column.

The text half runs without Spark: what matters there is what the text can
and cannot hold. The last test evaluates every kind of node both ways on a
real local session and compares the counts.
"""

from __future__ import annotations

from typing import Any

import pytest

from gate.smoke import sqlexpr
from gate.smoke.sqlexpr import Params, call, col, lit, to_sql
from tests.spark_fixtures import spark  # noqa: F401  (the session fixture)

HOSTILE = ["x' OR '1'='1", "{frame}", ":p99", "`c9`", "a}b", "--", "/*", "\\'", "?"]


def test_values_become_parameters_never_text() -> None:
    params = Params()
    expr = (
        ~col("c0").isin(HOSTILE)
        | col("c1").rlike("^[a-z]{2}$")
        | (call("length", col("c0")) > 3)
        | (col("c0") < "') --")
    )
    text = to_sql(expr, params)
    for value in [*HOSTILE, "^[a-z]{2}$", "') --"]:
        assert value not in text
    assert list(params.values.values()) == [*HOSTILE, "^[a-z]{2}$", 3, "') --"]
    assert "'" not in text and "{" not in text and "}" not in text and "--" not in text
    assert text.count(":p") == len(params.values)


@pytest.mark.parametrize("name", ["a`b", "c0`; DROP TABLE t --", "", "1c", "c 0", "{frame}", "c0)"])
def test_only_gate_made_names_are_columns(name: str) -> None:
    with pytest.raises(ValueError, match="not a gate-made column name"):
        col(name)


def test_only_listed_functions_and_types() -> None:
    with pytest.raises(ValueError, match="not a function rules may call"):
        call("reflect", lit("java.lang.Runtime"))
    with pytest.raises(ValueError, match="not a type rules may cast to by name"):
        col("c0").cast("string) FROM x --")
    assert to_sql(col("c0").try_cast("double"), Params()) == "TRY_CAST(`c0` AS DOUBLE)"


def test_an_empty_value_list_matches_nothing() -> None:
    assert to_sql(col("c0").isin([]), Params()) == "false"


def test_an_expr_has_no_truth_value() -> None:
    """``if condition:`` on an Expr would silently pick a branch; it raises instead."""
    with pytest.raises(TypeError):
        bool(col("c0") == 1)


CONDITIONS: list[tuple[str, Any]] = [
    ("isnull", col("c0").isNull()),
    ("isnotnull", col("c0").isNotNull()),
    ("in", col("c0").isin(["a", "{frame}", "x' OR '1'='1"])),
    ("not in", ~col("c0").isin(["a"])),
    ("empty in", col("c0").isin([])),
    ("numeric in", col("c1").isin([1, 2.5])),
    ("rlike", col("c0").rlike("^[a-z]{1,2}$")),
    ("try_cast", col("c0").try_cast("double").isNull()),
    ("cast", col("c1").cast("string") == "1"),
    ("length", call("length", col("c0")) > 1),
    ("lt/gt", (col("c1") < 2) | (col("c1") > 3)),
    ("ne", col("c1") != 2),
    ("json", call("try_parse_json", col("c0")).isNull()),
    ("any_of", sqlexpr.any_of([col("c0").isNull(), col("c1") > 2])),
    ("and", col("c0").isNotNull() & (col("c1") == 1)),
]


@pytest.mark.spark
def test_sql_text_and_column_count_the_same_rows(spark: Any) -> None:  # noqa: F811
    rows = [
        ("a", 1),
        ("{frame}", 2),
        (None, 3),
        ("x' OR '1'='1", None),
        ('{"k": 1}', 4),
        ("abc", 5),
        ("1.5", 1),
    ]
    df = spark.createDataFrame(rows, "c0 string, c1 int")
    params = Params()
    select = [
        f"count_if({to_sql(condition, params)}) AS `n{index}`"
        for index, (_label, condition) in enumerate(CONDITIONS)
    ]
    text = f"SELECT {', '.join(select)} FROM {{frame}}"
    by_sql = spark.sql(text, args=params.values, frame=df).collect()[0]
    by_column = df.agg(
        *[
            sqlexpr.to_column(call("count_if", condition)).alias(f"n{index}")
            for index, (_label, condition) in enumerate(CONDITIONS)
        ]
    ).collect()[0]
    got = {label: (by_sql[f"n{i}"], by_column[f"n{i}"]) for i, (label, _c) in enumerate(CONDITIONS)}
    assert all(a == b for a, b in got.values()), got
    assert got["in"] == (3, 3) and got["empty in"] == (0, 0) and got["rlike"] == (1, 1)
