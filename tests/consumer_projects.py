"""Real project layouts for the consumer tests (written for this project).

- a jaffle-shop-like dbt project: sources, staging models with CTEs, marts with
  refs, joins, aggregates and ``select *``, enforced contracts in properties files,
  a macro (not a consumer) and a model the Jinja pre-pass cannot read;
- a SQLMesh project (``MODEL (...)`` header) over Soda contracts;
- a PySpark job.

The dbt layout follows dbt-labs/jaffle-shop's shape (staging/marts, ``stg_``
models over ``source('ecom', ...)``); the SQL is written here.
"""

from __future__ import annotations

DBT_PROJECT = {
    "dbt_project.yml": "name: jaffle\nversion: '1.0'\nprofile: jaffle\nmodel-paths: [models]\n",
    "models/staging/__sources.yml": """\
version: 2
sources:
  - name: ecom
    schema: raw
    tables:
      - name: raw_orders
      - name: raw_customers
""",
    "models/staging/stg_orders.sql": """\
{{ config(materialized='view') }}

with source as (
    select * from {{ source('ecom', 'raw_orders') }}
),

renamed as (
    select
        id as order_id,
        customer as customer_id,
        ordered_at,
        subtotal as order_total,
        tax_paid,
        discount_code
    from source
)

select * from renamed
""",
    "models/staging/stg_customers.sql": """\
select
    id as customer_id,
    name as customer_name
from {{ source('ecom', 'raw_customers') }}
""",
    "models/staging/stg_models.yml": """\
version: 2
models:
  - name: stg_orders
    config:
      contract: {enforced: true}
    columns:
      - name: order_id
        data_type: int
      - name: customer_id
        data_type: int
      - name: ordered_at
        data_type: timestamp
      - name: order_total
        data_type: bigint
      - name: tax_paid
        data_type: int
      - name: discount_code
        data_type: string
  - name: stg_customers
    config:
      contract: {enforced: true}
    columns:
      - name: customer_id
        data_type: int
      - name: customer_name
        data_type: string
""",
    "models/marts/customers.sql": """\
{{
    config(
        materialized='table'
    )
}}

with customers as (
    select * from {{ ref('stg_customers') }}
),

orders as (
    select * from {{ ref('stg_orders') }}
),

customer_orders as (
    select
        customer_id,
        count(order_id) as count_orders,
        sum(order_total) as lifetime_spend
    from orders
    group by customer_id
)

select
    customers.customer_id,
    customers.customer_name,
    customer_orders.count_orders,
    customer_orders.lifetime_spend
from customers
left join customer_orders
    on customers.customer_id = customer_orders.customer_id
""",
    "models/marts/orders.sql": """\
select
    o.*,
    c.customer_name
from {{ ref('stg_orders') }} as o
join {{ ref('stg_customers') }} as c
    on o.customer_id = c.customer_id
where o.discount_code is not null
{% if is_incremental() %}
  and o.ordered_at > (select max(ordered_at) from {{ this }})
{% endif %}
""",
    "models/marts/broken_model.sql": """\
select order_id from {{ ref('stg_orders')
""",
    "macros/cents_to_dollars.sql": """\
{% macro cents_to_dollars(column_name) %} ({{ column_name }} / 100) {% endmacro %}
-- mentions stg_orders, but a macro is not a consumer
""",
}

SODA_ORDERS = """\
dataset: lake/sushi/orders
columns:
  - name: id
    data_type: int
  - name: customer_id
    data_type: int
  - name: amount
    data_type: decimal(12, 2)
  - name: ds
    data_type: date
"""

SQLMESH_PROJECT = {
    "soda/contracts/orders.yaml": SODA_ORDERS,
    "config.yaml": "model_defaults:\n  dialect: duckdb\n",
    "models/customer_revenue.sql": """\
MODEL (
  name sushi.customer_revenue_by_day,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain (customer_id, ds)
);

SELECT
  o.customer_id::INT AS customer_id,
  SUM(o.amount)::DOUBLE AS revenue,
  o.ds
FROM sushi.orders AS o
WHERE
  o.ds BETWEEN @start_ds AND @end_ds
GROUP BY
  o.customer_id,
  o.ds
""",
    "jobs/refunds.py": '''\
"""Nightly refunds, a PySpark job."""
from pyspark.sql import SparkSession, functions as F

spark = SparkSession.builder.getOrCreate()


def refunds():
    orders = spark.read.table("sushi.orders")
    return orders.where(F.col("amount") < 0).select("id", "customer_id")


def daily(day):
    return spark.sql(f"select * from sushi.orders where ds = '{day}'")
''',
}

#: Downstream lineage (docs/impact.md#downstream-lineage): ``stg_orders.discount_code``
#: is renamed twice on its way to a mart (``int_orders.promo_code``,
#: ``fct_orders.discount``), then aggregated, cast, and read by a SQLMesh model.
LINEAGE_PROJECT = {
    **DBT_PROJECT,
    "models/intermediate/int_orders.sql": """\
with orders as (
    select * from {{ ref('stg_orders') }}
)

select
    order_id,
    discount_code as promo_code
from orders
""",
    "models/marts/fct_orders.sql": """\
select
    i.order_id,
    i.promo_code as discount
from {{ ref('int_orders') }} as i
""",
    "models/marts/rpt_discounts.sql": """\
select
    count(distinct discount) as discounted_orders
from {{ ref('fct_orders') }}
""",
    "models/marts/fct_orders_text.sql": """\
select
    order_id,
    cast(discount as varchar(20)) as discount_text
from {{ ref('fct_orders') }}
""",
    "sqlmesh/models/discount_audit.sql": """\
MODEL (
  name audit.discount_audit,
  kind FULL
);

SELECT
  f.order_id,
  f.discount
FROM fct_orders AS f
""",
}
