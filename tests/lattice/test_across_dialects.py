"""``compare(old, new, dialect, old_dialect)``: a type moved between warehouses, each
side read in its own dialect (a contract moved between dbt projects)."""

from __future__ import annotations

import pytest

from gate.lattice import TypeChange, compare


@pytest.mark.parametrize(
    ("old", "source", "new", "target", "change"),
    [
        ("int8", "postgres", "smallint", "databricks", TypeChange.NARROWED),  # BIGINT -> SMALLINT
        ("int8", "spark", "int2", "postgres", TypeChange.WIDENED),  # TINYINT -> SMALLINT
        ("int8", "postgres", "bigint", "spark", TypeChange.SAME),
        ("int", "postgres", "int", "snowflake", TypeChange.WIDENED),  # NUMBER(38,0) there
        ("float", "postgres", "float", "duckdb", TypeChange.NARROWED),  # DOUBLE -> REAL
        ("decimal", "postgres", "decimal", "spark", TypeChange.NARROWED),  # unbounded -> (10,0)
        ("timestamp", "postgres", "timestamp", "duckdb", TypeChange.SAME),  # no zone in both
        ("timestamp", "postgres", "timestamp", "spark", TypeChange.CHANGED),  # Spark's is LTZ
        ("array<struct<a int8>>", "spark", "array<struct<a int8>>", "duckdb", TypeChange.WIDENED),
    ],
)
def test_each_side_is_read_in_its_own_dialect(
    old: str, source: str, new: str, target: str, change: TypeChange
) -> None:
    assert compare(old, new, target, source).change is change
    if source != target:
        assert compare(old, new, target, target) == compare(old, new, target)
