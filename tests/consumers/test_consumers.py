"""The consumer readers on their own: SQL scopes, the dbt Jinja pre-pass, SQLMesh
headers, PySpark ``ast`` walking and table-name mapping. Table-driven, real sqlglot."""

from __future__ import annotations

import pytest

from gate.consumers import jinja, sqlmesh
from gate.consumers.names import NameIndex, dataset_names
from gate.consumers.reader import kind_of, read_consumer
from gate.consumers.sql import SqlError, analyse
from gate.model import Column, Dataset

ORDERS = frozenset({"id", "customer_id", "amount", "status", "discount_code"})
CUSTOMERS = frozenset({"id", "name"})


def columns_of(table: tuple[str, ...]) -> frozenset[str] | None:
    return {"orders": ORDERS, "customers": CUSTOMERS}.get(table[-1])


def reads(sql: str) -> set[tuple[str, str | None, int, str]]:
    return {(u.table[-1], u.column, u.line, u.usage) for u in analyse(sql, "spark", columns_of)}


def test_cte_star_join_filter_aggregate_are_told_apart() -> None:
    sql = (
        "with o as (select * from orders),\n"
        "c as (select id, name from customers)\n"
        "select c.name, sum(o.amount) as total, o.discount_code\n"
        "from o join c on o.customer_id = c.id\n"
        "where o.status = 'x'\n"
        "group by c.name, o.discount_code\n"
    )
    found = reads(sql)
    assert ("orders", "*", 1, "star") in found
    assert ("orders", None, 1, "read") in found
    assert ("orders", "amount", 3, "aggregated") in found
    assert ("orders", "discount_code", 3, "selected") in found
    assert ("orders", "customer_id", 4, "joined") in found
    assert ("orders", "status", 5, "filtered") in found
    assert ("orders", "discount_code", 6, "grouped") in found
    assert ("customers", "name", 2, "selected") in found


@pytest.mark.parametrize(
    ("sql", "expected", "absent"),
    [
        # unqualified column with two sources: the contract's columns decide
        (
            "select amount, name from orders join customers on orders.customer_id = customers.id",
            {("orders", "amount", 1, "selected"), ("customers", "name", 1, "selected")},
            set(),
        ),
        # an unknown table's columns are never guessed
        ("select amount from payments", set(), {("orders", "amount", 1, "selected")}),
        # a column both sources have, unqualified: ambiguous, not attributed
        ("select id from orders, customers", set(), {("orders", "id", 1, "selected")}),
        # an alias of the projection is not a column of the table
        (
            "select count(*) as n from orders order by n",
            {("orders", None, 1, "read")},
            {("orders", "n", 1, "ordered")},
        ),
        # a renamed projection inside a derived table is read where it is written
        (
            "select amt from (select amount as amt from orders) t",
            {("orders", "amount", 1, "selected")},
            {("orders", "amt", 1, "selected")},
        ),
        # correlated subquery and IN
        (
            "select id from customers c where exists (select 1 from orders o "
            "where o.customer_id = c.id and o.status = 'x')",
            {("orders", "customer_id", 1, "filtered"), ("orders", "status", 1, "filtered")},
            set(),
        ),
        # union branches
        (
            "select amount from orders union all select 1 from customers",
            {("orders", "amount", 1, "selected")},
            set(),
        ),
        # JOIN ... USING names a column of both sides
        (
            "select name from orders join customers using (id)",
            {("orders", "id", 1, "joined"), ("customers", "id", 1, "joined")},
            set(),
        ),
        # window aggregate, HAVING
        (
            "select status, sum(amount) over (partition by status) from orders\n"
            "group by status having max(discount_code) > 'a'",
            {("orders", "amount", 1, "aggregated"), ("orders", "discount_code", 2, "aggregated")},
            set(),
        ),
        # a column traced through SELECT * in a derived table
        (
            "select t.discount_code from (select * from orders) t",
            {("orders", "discount_code", 1, "selected"), ("orders", "*", 1, "star")},
            set(),
        ),
        # CREATE ... AS SELECT and INSERT ... SELECT read their query only
        (
            "create table shop.report as select amount from orders;\n"
            "insert into shop.audit select status from orders",
            {("orders", "amount", 1, "selected"), ("orders", "status", 2, "selected")},
            {("report", None, 1, "read")},
        ),
    ],
)
def test_column_resolution(sql: str, expected: set, absent: set) -> None:
    found = reads(sql)
    assert expected <= found
    assert not (absent & found)


def test_unparseable_sql_raises_with_a_line() -> None:
    with pytest.raises(SqlError) as info:
        analyse("select a\nfrom where ((", "spark", columns_of)
    assert "could not parse" in str(info.value) and info.value.line == 2


def test_token_budget_bounds_a_pathological_file() -> None:
    with pytest.raises(SqlError, match="token limit"):
        analyse("select " + "(" * 5000 + "1" + ")" * 5000, "spark", columns_of, max_tokens=1000)


# dbt Jinja pre-pass


@pytest.mark.parametrize(
    ("template", "sql"),
    [
        ("select * from {{ ref('stg_orders') }}", "stg_orders"),
        ('select * from {{ ref("pkg", "stg_orders") }}', "pkg.stg_orders"),
        ("select * from {{ ref('pkg', 'orders', v=2) }}", "pkg.orders_v2"),
        ("select * from {{ ref('dim_customers', v=2) }}", "dim_customers_v2"),
        ("select * from {{ source('ecom', 'raw_orders') }}", "ecom.raw_orders"),
        ("select {{ dbt_utils.star(ref('x')) }} from t", "__jinja__"),
    ],
)
def test_jinja_replacements(template: str, sql: str) -> None:
    assert sql in jinja.render(template)


def test_jinja_keeps_lines_and_strips_tags() -> None:
    template = (
        "{{ config(\n  materialized='table',\n  meta={'a': '}}'}\n) }}\n"
        "{# a comment\n over lines #}\n"
        "select id\nfrom {{ ref('orders') }}\n"
        "{% if is_incremental() %}\nwhere id > (select max(id) from {{ this }})\n{% endif %}\n"
    )
    rendered = jinja.render(template)
    assert rendered.count("\n") == template.count("\n")
    lines = rendered.splitlines()
    assert lines[6] == "select id" and "orders" in lines[7] and "__jinja__" in lines[9]
    assert "{" not in rendered


def test_jinja_unterminated_names_the_line() -> None:
    with pytest.raises(jinja.JinjaError, match="line 2"):
        jinja.render("select 1\nfrom {{ ref('x') ")


def test_jinja_raw_block_is_kept() -> None:
    assert "'{{ x }}'" in jinja.render("select {% raw %}'{{ x }}'{% endraw %} from t")


# SQLMesh


def test_sqlmesh_header_is_cut_and_macros_neutralised() -> None:
    text = (
        "MODEL (\n  name sushi.customer_revenue,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column ds)\n);\n\n"
        "SELECT o.customer_id, SUM(o.amount) AS revenue\nFROM sushi.orders AS o\n"
        "WHERE o.ds BETWEEN @start_ds AND @end_ds AND @IF(@x, TRUE)\nGROUP BY 1\n"
    )
    assert sqlmesh.is_model(text)
    name, query = sqlmesh.split(text)
    assert name == "sushi.customer_revenue"
    assert query.count("\n") == text.count("\n")
    assert "@" not in query and "MODEL" not in query
    found = {(u.table, u.column, u.line, u.usage) for u in analyse(query, "duckdb", lambda t: None)}
    assert (("sushi", "orders"), "amount", 6, "aggregated") in found


def test_sqlmesh_unclosed_header() -> None:
    with pytest.raises(ValueError, match="not closed"):
        sqlmesh.split("MODEL (name a.b,\n kind FULL\nSELECT 1")


# PySpark


PYSPARK = '''\
from pyspark.sql import SparkSession, functions as F
from pyspark.sql.functions import col

spark = SparkSession.builder.getOrCreate()
orders = spark.read.table("shop.orders")

def refunds(customers):
    paid = orders.where(col("status") == "paid").select("id", F.col("amount"))
    joined = paid.join(customers, on=["customer_id"])
    return joined.groupBy("discount_code").agg(F.sum("amount"))

def report(day):
    spark.sql(f"select * from shop.orders where ds = '{day}'")
    return spark.sql("""
        select discount_code
        from shop.orders
        where status = 'x'
    """)

def direct():
    return spark.table("customers").filter("name like 'a%'").select(orders["amount"])
'''


def test_pyspark_job_is_read_without_running_it() -> None:
    index = NameIndex(
        [
            Dataset(id="lake/shop/orders", path="c.yml", format="soda", columns=()),
            Dataset(id="customers", path="c.yml", format="soda", columns=()),
        ]
    )
    columns = {"lake/shop/orders": ORDERS, "customers": CUSTOMERS}
    result = read_consumer("jobs/refunds.py", PYSPARK.encode(), "spark", index, columns)
    found = {(f.dataset, f.column, f.line, f.usage, f.object) for f in result.found}
    o = "lake/shop/orders"
    assert (o, None, 5, "read", "refunds") in found
    assert (o, "status", 8, "filtered", "refunds.refunds") in found
    assert (o, "amount", 8, "selected", "refunds.refunds") in found
    assert (o, "customer_id", 9, "joined", "refunds.refunds") in found
    assert (o, "discount_code", 10, "grouped", "refunds.refunds") in found
    assert (o, "amount", 10, "aggregated", "refunds.refunds") in found
    assert (o, "discount_code", 15, "selected", "refunds.report") in found
    assert (o, "status", 17, "filtered", "refunds.report") in found
    assert ("customers", "name", 21, "filtered", "refunds.direct") in found
    assert (o, "amount", 21, "selected", "refunds.direct") in found
    assert [(n.line, n.reason) for n in result.not_analysed] == [
        (13, "spark.sql() with an f-string is not analysed")
    ]


def test_python_syntax_error_is_not_analysed() -> None:
    result = read_consumer("jobs/x.py", b"def (:\n", "spark", NameIndex([]), {})
    assert result.not_analysed[0].reason.startswith("Python syntax error")


# files and names


def test_kind_of() -> None:
    assert kind_of("a.py", "") == "pyspark"
    assert kind_of("m.sql", "-- c\nMODEL (name a.b);\nSELECT 1") == "sqlmesh"
    assert kind_of("m.sql", "select * from {{ ref('a') }}") == "dbt"
    assert kind_of("m.sql", "select 1") == "sql"


def test_size_cap_and_encoding_are_reported() -> None:
    big = read_consumer("big.sql", b"select 1 " * 100, "spark", NameIndex([]), {}, max_bytes=50)
    assert "over the 50-byte limit" in big.not_analysed[0].reason
    binary = read_consumer("b.sql", b"\xff\xfe", "spark", NameIndex([]), {})
    assert "not UTF-8" in binary.not_analysed[0].reason


def test_names_for_each_format() -> None:
    soda = Dataset(id="lake/analytics/orders", path="a", format="soda")
    dbt_v = Dataset(
        id="dim_customers.v2",
        path="b",
        format="dbt",
        aliases=("customers_alias",),
        unpinned_name="dim_customers",
    )
    assert ("lake", "analytics", "orders") in dataset_names(soda)
    assert {("dim_customers",), ("dim_customers_v2",), ("customers_alias",)} <= dataset_names(dbt_v)
    # a version an unpinned ref does not resolve to goes by its pinned name only
    v1 = Dataset(id="dim_customers.v1", path="b", format="dbt")
    assert dataset_names(v1) == {("dim_customers_v1",)}
    index = NameIndex(
        [soda, dbt_v, Dataset(id="orders", path="c", format="dcs")], {"orders": ["x.y"]}
    )
    assert index.lookup(("analytics", "orders")) == {"lake/analytics/orders"}
    assert index.lookup(("other", "orders")) == {"orders"}  # a bare name matches any schema
    assert index.lookup(("orders",)) == {"lake/analytics/orders", "orders"}  # a true tie
    assert index.lookup(("dim_customers_v2",)) == {"dim_customers.v2"}
    assert index.lookup(("y",)) == {"orders"}
    assert {"orders", "dim_customers_v2", "y"} <= index.needles()


def test_dataset_columns_unused_by_names() -> None:
    # the columns tuple is not part of a name; only ids and aliases are
    d = Dataset(id="t", path="p", format="dcs", columns=(Column("a"),))
    assert dataset_names(d) == {("t",)}


def test_consumer_notices_come_before_additive_notices_within_the_cap() -> None:
    from gate.diff import Change
    from gate.model import Consumer, NotAnalysed
    from gate.report.base import Report
    from gate.report.github import annotations
    from gate.rules import Severity

    narrowed = Change(
        "type_narrowed",
        Severity.ERROR,
        "orders",
        "amount",
        "c.yml",
        3,
        "narrowed",
        consumers=(Consumer("m/a.sql", 7, "a", "aggregated"), Consumer("m/b.sql", 2, "b", "star")),
    )
    added = [
        Change("column_added", Severity.INFO, "orders", f"c{i}", "c.yml", 9, "added")
        for i in range(3)
    ]
    report = Report(changes=(*added, narrowed), not_analysed=(NotAnalysed("m/x.sql", "bad"),))
    lines = annotations(report, limit=3)
    assert lines[0].startswith("::error file=c.yml,line=3,title=type_narrowed::")
    assert [line.split("::")[1] for line in lines[1:4]] == [
        "notice file=m/a.sql,line=7,title=consumer of type_narrowed",
        "notice file=m/b.sql,line=2,title=consumer of type_narrowed",
        "notice file=m/x.sql,title=consumer not analysed",
    ]
    assert len(lines) == 4  # the additive notices are over the cap


def test_a_ref_inside_a_macro_call_is_a_read_of_the_table() -> None:
    model = "select\n  {{ dbt_utils.star(from=ref('stg_orders'), except=['x']) }}\nfrom t\n"
    sql, nested = jinja.render_with_refs(model)
    assert nested == [(2, "stg_orders")] and "__jinja__" in sql
    index = NameIndex([Dataset(id="stg_orders", path="m.yml", format="dbt")])
    result = read_consumer("models/m.sql", model.encode(), "spark", index, {})
    assert [(f.dataset, f.column, f.line, f.usage) for f in result.found] == [
        ("stg_orders", None, 2, "read")
    ]


def test_a_sqlmesh_model_is_read_in_its_own_dialect() -> None:
    # ``//`` (integer division) parses in duckdb, not in T-SQL; the header says duckdb
    model = (
        "MODEL (name s.m, dialect 'duckdb');\nSELECT o.amount // 2 AS a FROM sushi.orders AS o\n"
    )
    assert sqlmesh.dialect_of(model) == "duckdb"
    index = NameIndex([Dataset(id="lake/sushi/orders", path="o.yml", format="soda")])
    result = read_consumer(
        "models/m.sql", model.encode(), "tsql", index, {"lake/sushi/orders": ORDERS}
    )
    assert not result.not_analysed
    assert ("lake/sushi/orders", "amount", 2, "selected") in {
        (f.dataset, f.column, f.line, f.usage) for f in result.found
    }


def test_one_consumer_broken_per_change_and_line_however_often_the_change_comes() -> None:
    from gate.consumers import explain
    from gate.consumers.reader import Found
    from gate.diff import Change, default_severity
    from gate.rules import Severity

    removed = Change("model_removed", Severity.ERROR, "orders", None, "a.yml", 1, "gone")
    copy = Change("model_removed", Severity.ERROR, "orders", None, "b.yml", 1, "gone")
    read = Found("orders", ("orders",), None, "q.sql", 2, "q", "read")
    out = explain([removed, copy], [read], [], default_severity)
    assert [(c.rule, c.path, c.line) for c in out if c.rule == "consumer_broken"] == [
        ("consumer_broken", "q.sql", 2)
    ]
