"""Where a column goes inside one model (gate.lineage.flow): passed on or consumed.

Table-driven over real sqlglot; each row is a shape public dbt projects use
(staging CTEs that rename, marts that cast, reports that aggregate).
"""

from __future__ import annotations

import pytest

from gate.consumers.sql import Budget, SqlError, TooComplex
from gate.lineage.flow import flow

COLUMNS = {"stg_orders": frozenset({"order_id", "discount_code", "amount"})}


def columns_of(table: tuple[str, ...]) -> frozenset[str] | None:
    return COLUMNS.get(table[-1])


def starts(table: tuple[str, ...]) -> frozenset[str]:
    return frozenset({"discount_code"}) if table[-1] == "stg_orders" else frozenset()


def steps(sql: str) -> set[tuple[str | None, str, int, tuple[str, ...] | None]]:
    result = flow(sql, "spark", columns_of, starts, Budget())
    return {(s.output, s.how, s.line, s.target) for s in result.steps}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # same name, an alias, a cast: passed on
        ("select discount_code from stg_orders", {("discount_code", "same", 1, None)}),
        ("select discount_code as promo from stg_orders", {("promo", "renamed", 1, None)}),
        (
            "select cast(o.discount_code as varchar(9)) as code from stg_orders o",
            {("code", "cast", 1, None)},
        ),
        ("select o.discount_code::int from stg_orders o", {("discount_code", "cast", 1, None)}),
        # SELECT * passes every column on, anchored at the star
        (
            "select *\nfrom stg_orders\nwhere discount_code is not null",
            {("discount_code", "star", 1, None), (None, "filtered", 3, None)},
        ),
        # through a CTE that renames, then an outer query that casts
        (
            "with r as (\n  select discount_code as dc from stg_orders\n)\n"
            "select cast(dc as string) as d2\nfrom r",
            {("d2", "cast", 4, None)},
        ),
        # consumed: aggregate, filter, join, group, any other expression
        ("select count(discount_code) as n from stg_orders", {(None, "aggregated", 1, None)}),
        (
            "with r as (select discount_code as dc from stg_orders)\n"
            "select count(*) as n from r\ngroup by dc",
            {(None, "grouped", 3, None)},
        ),
        (
            "select o.order_id from stg_orders o join codes c on o.discount_code = c.code",
            {(None, "joined", 1, None)},
        ),
        ("select upper(discount_code) as code from stg_orders", {(None, "derived", 1, None)}),
        # a subquery in WHERE consumes it, the outer query passes nothing on
        (
            "select 1 as x from t where k in (select discount_code from stg_orders)",
            {(None, "filtered", 1, None)},
        ),
        # both branches of a UNION are the output
        (
            "select discount_code from stg_orders union all select k from other",
            {("discount_code", "same", 1, None)},
        ),
        # a view's output is its name
        (
            "create view mart.v as select discount_code as d from stg_orders",
            {("d", "renamed", 1, ("mart", "v"))},
        ),
        # another table's column of the same name is not it
        ("select o.discount_code from other o", set()),
    ],
)
def test_passes_and_ends(sql: str, expected: set[tuple[object, ...]]) -> None:
    assert steps(sql) == expected


def test_outputs_are_the_outer_query_columns_and_unknown_through_an_unknown_star() -> None:
    known = flow(
        "select order_id, discount_code as d from stg_orders", "spark", columns_of, starts, Budget()
    )
    assert known.outputs == ((None, frozenset({"order_id", "d"})),)
    unknown = flow("select * from somewhere", "spark", columns_of, starts, Budget())
    assert unknown.outputs == ((None, None),)


def test_bad_sql_and_the_budget_raise_the_scan_errors() -> None:
    with pytest.raises(SqlError):
        flow("select from where (", "spark", columns_of, starts, Budget())
    chain = "with c0 as (select * from stg_orders)\n" + "".join(
        f", c{i} as (select a.discount_code from c{i - 1} a join c{i - 1} b on a.x = b.x)\n"
        for i in range(1, 40)
    )
    with pytest.raises(TooComplex):
        flow(
            chain + "select discount_code from c39", "spark", columns_of, starts, Budget(steps=100)
        )


#: Shapes whose flow must not depend on who resolved the statement: CTE chains,
#: stars, unions, subqueries, HAVING/ORDER names, USING, positions, views, DML,
#: several statements (one unparsable ``;`` gap), a correlated subquery.
SHARED_SHAPES = [
    "select discount_code from stg_orders",
    "with a as (select * from stg_orders), b as (select a.discount_code as dc, amount from a)\n"
    "select dc, sum(amount) as total from b group by 1 having max(dc) > 'a' order by total",
    "select * from stg_orders union all select * from stg_orders",
    "select o.order_id, (select max(x.discount_code) from stg_orders x "
    "where x.order_id = o.order_id) as m from stg_orders o",
    "select order_id from stg_orders join codes using (discount_code)\n"
    "where discount_code in (select discount_code from stg_orders)",
    "create view mart.v as select cast(discount_code as int) as d from stg_orders;\n"
    "insert into mart.w select discount_code, amount from stg_orders;\n"
    "select s.* from (select discount_code from stg_orders) s",
    "update t set x = 1 where k in (select discount_code from stg_orders)",
    "with r as (select discount_code, count(*) as n from stg_orders group by discount_code)\n"
    "select * from r qualify row_number() over (partition by discount_code order by n) = 1",
]


@pytest.mark.parametrize("sql", SHARED_SHAPES)
def test_the_flow_on_the_scans_resolver_is_the_fresh_flow(
    sql: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The consumer scan hands its resolvers to the flow (``analyse(resolved=)``):
    the same steps and outputs as a flow that walks the statements afresh,
    with each query's scopes traversed once, by the scan."""
    from gate.consumers import sql as sql_module
    from gate.consumers.sql import analyse, parse

    budget = Budget()
    statements = parse(sql, "spark", budget)
    fresh = flow(sql, "spark", columns_of, starts, Budget(), statements)
    traversed = []
    real = sql_module.traverse_scope

    def counted(query):  # type: ignore[no-untyped-def]
        traversed.append(query)
        return real(query)

    monkeypatch.setattr(sql_module, "traverse_scope", counted)
    resolved: list[sql_module.StatementScopes] = []
    analyse(sql, "spark", columns_of, budget=budget, statements=statements, resolved=resolved)
    by_scan = len(traversed)
    shared = flow(sql, "spark", columns_of, starts, budget, statements, resolved)
    assert shared == fresh
    assert fresh.steps or sql.startswith("update")  # the others follow the column
    assert len(traversed) == by_scan  # the flow traversed nothing again


def test_resolvers_of_another_text_are_not_used() -> None:
    sql = "select discount_code as d from stg_orders"
    other = "select 1 as x; select discount_code from stg_orders"
    budget = Budget()
    resolved: list[object] = []
    from gate.consumers.sql import analyse, parse

    analyse(other, "spark", columns_of, budget=budget, resolved=resolved)  # type: ignore[arg-type]
    assert len(resolved) == 2
    statements = parse(sql, "spark", Budget())
    fresh = flow(sql, "spark", columns_of, starts, Budget(), statements)
    assert flow(sql, "spark", columns_of, starts, Budget(), statements, resolved) == fresh  # type: ignore[arg-type]
