"""``GROUP BY 1`` in the downstream walk: the key named by position ends a path as a
named ``GROUP BY`` does (dbt projects group by position more often than by name:
``group by 1, 2`` in bench_consumers.py's models and throughout mattermost-analytics)."""

from __future__ import annotations

import pytest

from gate.consumers.sql import Budget
from gate.lineage.flow import Step, flow
from tests.lineage.test_downstream import Cli, project, removed, report


def _steps(sql: str) -> set[tuple[str | None, str, int]]:
    def starts(table: tuple[str, ...]) -> frozenset[str]:
        return frozenset({"code"}) if table == ("orders",) else frozenset()

    result = flow(sql, "duckdb", lambda _t: None, starts, Budget())
    return {(s.output, s.how, s.line) for s in result.steps if isinstance(s, Step)}


@pytest.mark.parametrize(
    ("sql", "steps"),
    [
        # by name, as before: passed on and ended at the grouping
        (
            "select o.code, count(*) as n from orders o\ngroup by o.code",
            {("code", "same", 1), (None, "grouped", 2)},
        ),
        # by position: the same
        (
            "select o.code, count(*) as n from orders o\ngroup by 1",
            {("code", "same", 1), (None, "grouped", 2)},
        ),
        # an expression by position: consumed, and a grouping key
        (
            "select upper(o.code) as c, count(*) as n\nfrom orders o\ngroup by 1",
            {(None, "derived", 1), (None, "grouped", 3)},
        ),
        # another position: no grouping of this column
        (
            "select count(*) as n, o.code from orders o\ngroup by 1",
            {("code", "same", 1)},
        ),
        # inside a CTE
        (
            "with x as (\n  select code, count(*) as n from orders\n  group by 1\n)\n"
            "select code from x",
            {("code", "same", 5), (None, "grouped", 3)},
        ),
        # a position past a star names a column that cannot be told
        (
            "select *, o.code as c from orders o\ngroup by 2",
            {("code", "star", 1), ("c", "renamed", 1)},
        ),
        # out of range, or not a position
        ("select o.code from orders o\ngroup by 3", {("code", "same", 1)}),
    ],
)
def test_a_key_grouped_by_position(sql: str, steps: set[tuple[str | None, str, int]]) -> None:
    assert _steps(sql) == steps


def test_a_mart_grouping_by_position_ends_the_path_there(cli: Cli, tmp_path) -> None:
    extra = {
        "models/marts/rpt_by_discount.sql": (
            "select discount, count(*) as orders\nfrom {{ ref('fct_orders') }}\ngroup by 1\n"
        )
    }
    paths = removed(report(cli, project(tmp_path, extra)))["downstream"]
    got = {(p["path"], p["end"], p["end_path"], p["end_line"]) for p in paths}
    assert (
        "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount",
        "grouped",
        "models/marts/rpt_by_discount.sql",
        3,
    ) in got
