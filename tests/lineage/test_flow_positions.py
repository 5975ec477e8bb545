"""Columns named by position in the downstream walk (item 5 of docs/precision.md's
"Items decided after the fifth round"): ``ORDER BY 2`` ends a path at the ordering as
``ORDER BY o.code`` does, positions inside ``ROLLUP``/``CUBE``/``GROUPING SETS`` and
``GROUP BY ALL`` group, and ``SELECT #1``/``$1`` (a column the gate cannot tell) reads
every followed column of its source instead of none."""

from __future__ import annotations

import pytest

from gate.consumers.sql import Budget
from gate.lineage.flow import Step, flow


def _steps(sql: str, dialect: str = "duckdb") -> set[tuple[str | None, str, int]]:
    def starts(table: tuple[str, ...]) -> frozenset[str]:
        return frozenset({"code"}) if table == ("orders",) else frozenset()

    result = flow(sql, dialect, lambda _t: None, starts, Budget())
    return {(s.output, s.how, s.line) for s in result.steps if isinstance(s, Step)}


@pytest.mark.parametrize(
    ("sql", "steps"),
    [
        # by name: passed on, and ended at the ordering (as before)
        (
            "select o.code from orders o\norder by o.code",
            {("code", "same", 1), (None, "ordered", 2)},
        ),
        # by position: the same (was: no ordering)
        ("select o.code from orders o\norder by 1", {("code", "same", 1), (None, "ordered", 2)}),
        (
            "select o.id, o.code as c from orders o\norder by 2 desc",
            {("c", "renamed", 1), (None, "ordered", 2)},
        ),
        # another position orders by another column
        ("select o.code, o.id from orders o\norder by 2", {("code", "same", 1)}),
        # positions inside ROLLUP and GROUPING SETS group
        (
            "select o.code, count(*) as n from orders o\ngroup by rollup (1)",
            {("code", "same", 1), (None, "grouped", 2)},
        ),
        (
            "select o.code, count(*) as n from orders o\ngroup by grouping sets ((1), ())",
            {("code", "same", 1), (None, "grouped", 2)},
        ),
        # GROUP BY ALL groups by every projection without an aggregate
        (
            "select o.code,\n count(*) as n from orders o group by all",
            {("code", "same", 1), (None, "grouped", 1)},
        ),
        ("select count(o.code) as n from orders o group by all", {(None, "aggregated", 1)}),
        # a position past a star names no column that can be told
        (
            "select *, o.code as c from orders o\norder by 2",
            {("code", "star", 1), ("c", "renamed", 1)},
        ),
    ],
)
def test_keys_named_by_position(sql: str, steps: set[tuple[str | None, str, int]]) -> None:
    assert _steps(sql) == steps


def test_a_positional_column_reads_every_followed_column() -> None:
    """DuckDB's ``#1`` and Snowflake's ``$1`` name a column by its place: which one the
    gate cannot tell, so the path ends there rather than being missed."""
    assert _steps("select #1 as x\nfrom orders") == {(None, "derived", 1)}
    assert _steps("select $1 as x from orders", "snowflake") == {(None, "derived", 1)}
    # through a CTE (sqlglot keeps no line for ``#1``: the statement's is given)
    through_cte = "with c as (select code from orders)\nselect #1 from c"
    assert {(o, how) for o, how, _line in _steps(through_cte)} == {(None, "derived")}
