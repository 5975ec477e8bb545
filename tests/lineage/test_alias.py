"""A dbt model's ``config(alias=...)``: SQL outside ``ref()`` reads the model by its alias.

Real projects set it at the top of the model file (``{{ config(alias='ppa_games') }}``,
``{{config(alias='tornado_cash', materialized='table', ...)}}``: public dbt
projects found through code search, none of them copied here); dbt materialises
the model under that name, so a plain SQL view or a SQLMesh model reads
``schema.<alias>``, while ``ref()`` keeps naming the model.
"""

from __future__ import annotations

import pytest

from gate.lineage.downstream import model_alias
from tests.lineage.test_downstream import Cli, project, removed, report

INT_ALIASED = """\
{{ config(materialized='table', alias='orders_enriched') }}

with orders as (
    select * from {{ ref('stg_orders') }}
)

select
    order_id,
    discount_code as promo_code
from orders
"""

FCT_ALIASED = """\
{{ config({"alias": "orders_fact"}) }}
select
    i.order_id,
    i.promo_code as discount
from {{ ref('int_orders') }} as i
"""


def test_a_view_reading_a_first_readers_alias_is_followed(cli: Cli, tmp_path) -> None:
    extra = {
        "models/intermediate/int_orders.sql": INT_ALIASED,
        "sql/promo.sql": (
            "create view mart.promo as\nselect o.promo_code from analytics.orders_enriched o;\n"
        ),
    }
    paths = removed(report(cli, project(tmp_path, extra)))["downstream"]
    assert (
        "stg_orders.discount_code -> int_orders.promo_code -> mart.promo.promo_code",
        "output",
    ) in {(p["path"], p["end"]) for p in paths}
    # ref() still names the model: the dbt readers are followed as before
    assert any(
        p["path"].startswith("stg_orders.discount_code -> int_orders.promo_code -> fct_orders")
        for p in paths
    )


def test_an_alias_further_down_is_followed_too(cli: Cli, tmp_path) -> None:
    """fct_orders is reached at the second level; its alias comes from its own file."""
    extra = {
        "models/marts/fct_orders.sql": FCT_ALIASED,
        "sqlmesh/models/discount_audit.sql": (
            "MODEL (\n  name audit.discount_audit,\n  kind FULL\n);\n\n"
            "SELECT\n  f.order_id,\n  f.discount\nFROM analytics.orders_fact AS f\n"
        ),
    }
    paths = removed(report(cli, project(tmp_path, extra)))["downstream"]
    assert (
        "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"
        " -> audit.discount_audit.discount",
        "output",
    ) in {(p["path"], p["end"]) for p in paths}


@pytest.mark.parametrize(
    ("text", "alias"),
    [
        ("{{ config(alias='ppa_games') }}\nselect 1", "ppa_games"),
        ('{{config(alias="STG_ORDERS")}}', "stg_orders"),
        ("{{\n    config(\n        materialized='table',\n        alias='x_y'\n    )\n}}", "x_y"),
        ("{{ config({'alias': 'dim_a', 'schema': 'm'}) }}", "dim_a"),
        ("{{ config(**{'alias': 'dim_b'}) }}", "dim_b"),
        ("{{- config(alias='a') -}}\n{{ config(alias='b') }}", "b"),  # a later call wins
        ("{{ config(alias=var('name')) }}", None),  # dbt would evaluate it: unknown
        ("{{ config(alias='a' ~ target.name) }}", None),
        ("{{ config(materialized='view') }}", None),
        ("select 'alias=x' as config", None),
        ("{{ config(relation_alias='r') }}", None),
        ("{{ dbt_utils.star(ref('x'), relation_alias='rd') }}", None),
    ],
)
def test_model_alias(text: str, alias: str | None) -> None:
    assert model_alias(text) == alias


def test_an_external_reader_names_the_upstream_by_the_alias_in_the_manifest() -> None:
    """dbt writes the upstream's ``alias`` into its ``relation_name``; the compiled SQL
    of a cross-project reader names that relation, not the model."""
    import json

    from gate.lineage.dbt_mesh import read_manifest

    upstream = {
        "unique_id": "model.platform.stg_orders",
        "resource_type": "model",
        "package_name": "platform",
        "name": "stg_orders",
        "alias": "orders_clean",
        "relation_name": '"db"."main"."orders_clean"',
    }
    reader = {
        "unique_id": "model.fin.rev",
        "resource_type": "model",
        "package_name": "fin",
        "name": "rev",
        "depends_on": {"nodes": ["model.platform.stg_orders"]},
        "compiled_code": 'select o.discount_code from "db"."main"."orders_clean" o',
    }
    nodes = {n["unique_id"]: n for n in (upstream, reader)}
    data = json.dumps({"metadata": {"project_name": "fin"}, "nodes": nodes}).encode()
    (read,) = read_manifest(data, "m.json", "postgres", lambda _u: True)
    assert read.columns == frozenset({"discount_code"})
    # without its relation, the manifest's alias is the name
    del upstream["relation_name"]
    reader["compiled_code"] = "select o.amount from orders_clean o"
    data = json.dumps({"metadata": {"project_name": "fin"}, "nodes": nodes}).encode()
    (read,) = read_manifest(data, "m.json", "postgres", lambda _u: True)
    assert read.columns == frozenset({"amount"})


def test_an_openlineage_reader_of_a_contracts_file_alias_is_named(tmp_path) -> None:
    """A Spark job reads the relation dbt materialised (``analytics.db/orders_clean``):
    the contract's model file says ``config(alias='orders_clean')``."""
    from tests.lineage.mesh_repo import FILES, MODELS, PROPERTIES, drop, make
    from tests.lineage.test_cli_lineage import ENRICHMENT, SPARK_EVENTS, _jobs, run
    from tests.lineage.test_cli_lineage import removed as removed_column

    # the path and the symlink (``analytics.orders_clean``) both name the relation
    events = SPARK_EVENTS.replace(b"stg_orders", b"orders_clean")
    aliased = "{{ config(alias='orders_clean') }}\n" + FILES["models/stg_orders.sql"]
    config = "lineage:\n  openlineage_events: [lineage/events.jsonl]\n"
    extra = {"lineage/events.jsonl": events, "models/stg_orders.sql": aliased}
    repo = make(tmp_path / "r", config, extra)
    repo.write(PROPERTIES, drop(MODELS, "amount"))
    repo.commit("drop amount")
    _code, report = run(repo)
    jobs = _jobs(removed_column(report, "amount"))
    assert any(j.startswith(ENRICHMENT) for j in jobs), jobs
