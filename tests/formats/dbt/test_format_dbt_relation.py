"""dbt relation configs (``database``/``schema``/``alias``) as each level writes them."""

from __future__ import annotations

import textwrap

import pytest

from gate.formats import parse_contract
from gate.formats.dbt.model_config import read_settings
from gate.formats.dbt.project import Project, parse_project
from gate.model import ContractError, Relation

TREE = textwrap.dedent(
    """\
    name: shop
    quoting:
      schema: true
      identifier: false
    models:
      shop:
        +database: analytics
        marts:
          +schema: marts
          finance:
            schema: finance       # no '+' and not a mapping: a config
            +project: money       # BigQuery's name for database
          legacy:
            +dataset: old         # BigQuery's name for schema
            +schema: null         # set to none: dbt's default schema again
        orders:
          +alias: fct_orders
    """
)


@pytest.mark.parametrize(
    ("fqn", "expected"),
    [
        (["shop", "o"], {"database": "analytics"}),
        (["shop", "marts", "o"], {"database": "analytics", "schema": "marts"}),
        (["shop", "marts", "finance", "o"], {"database": "money", "schema": "finance"}),
        (["shop", "marts", "legacy", "o"], {"database": "analytics", "schema": None}),
        (["shop", "orders"], {"database": "analytics", "alias": "fct_orders"}),
        (["other", "marts", "o"], {}),  # the walk stops where the tree does
    ],
)
def test_the_project_tree_most_specific_wins(fqn: list[str], expected: dict) -> None:
    project = parse_project(TREE, "dbt_project.yml")
    assert project.resolve_relation(fqn) == expected
    assert project.quoted == frozenset({"schema"})
    assert project.folder_configs  # a folder sets one: models are placed by their SQL file


def test_a_relation_change_is_a_project_change() -> None:
    """``gate.dbt.changes`` compares every properties file of a project that changed."""
    before = parse_project("name: p\nmodels:\n  p:\n    +schema: a\n", "dbt_project.yml")
    after = parse_project("name: p\nmodels:\n  p:\n    +schema: b\n", "dbt_project.yml")
    same = parse_project("name: p\nmodels:\n  p:\n    +dataset: ' a '\n", "dbt_project.yml")
    assert before != after and before == same
    assert isinstance(before, Project) and not before.folder_configs


def test_a_relation_config_that_is_no_name_is_refused() -> None:
    with pytest.raises(ContractError) as caught:
        parse_project("name: p\nmodels:\n  p:\n    +schema: [a, b]\n", "dbt_project.yml")
    assert str(caught.value).startswith("dbt_project.yml:4: '+schema' must be a name")


@pytest.mark.parametrize(
    ("source", "relation"),
    [
        ("{{ config(schema='marts', alias=\"o\") }}", (("alias", "o"), ("schema", "marts"))),
        ("{{ config(database=none) }}", (("database", None),)),
        ("{{ config(schema=var('s')) }}", (("schema", "{{ var('s') }}"),)),
        ("{{ config(**{'alias': ' o '}) }}", (("alias", "o"),)),
        ("{{ config(dataset='d', project='p') }}", (("database", "p"), ("schema", "d"))),
        ("def model(dbt, s):\n    dbt.config(schema='py')\n", (("schema", "py"),)),
        ("{{ config(materialized='table') }}", ()),
    ],
)
def test_model_file_config_calls(source: str, relation: tuple) -> None:
    assert read_settings(source).relation == relation


def test_properties_version_over_model_over_project() -> None:
    project = parse_project(TREE, "dbt_project.yml")
    doc = textwrap.dedent(
        """\
        models:
          - name: orders
            config: {contract: {enforced: true}, schema: sales}
            columns: [{name: id, data_type: int}]
            versions:
              - v: 1
                config: {alias: orders_legacy}
              - v: 2
        """
    )
    datasets = {
        d.id: d.relation for d in parse_contract(doc, "models/_o.yml", project=project).datasets
    }
    assert datasets == {
        "orders.v1": Relation(
            "analytics", "sales", "orders_legacy", "orders_v1", frozenset({"schema"})
        ),
        "orders.v2": Relation(
            "analytics", "sales", "fct_orders", "orders_v2", frozenset({"schema"})
        ),
    }


def test_an_expression_is_read_in_linear_time() -> None:
    """Hostile Jinja (a quote, then escaped quotes to the end) is read in one pass:
    a backtracking string pattern took 2.6 s for 16 KB, quadratic (so 200 KB
    here would take minutes of CPU; bounded in CPU seconds, which load does not
    inflate)."""
    from gate.formats.dbt import relation
    from tests.cost import cpu_seconds

    hostile = "'" + "\\'" * 100_000
    with cpu_seconds() as cpu:
        relation.expression(hostile)
        relation.text("{{ " + hostile + " }}")
    assert cpu.seconds < 2, cpu.seconds


@pytest.mark.parametrize(
    ("code", "spelt"),
    [
        ('var("s", "marts")', "{{ var('s','marts') }}"),
        ("var( 's' , 'marts' )", "{{ var('s','marts') }}"),
        ("target.name == 'prod' and not x", "{{ target.name=='prod' and not x }}"),
        ("a * *b", "{{ a* *b }}"),
        ('x ~ "a\\"b"', '{{ x~"a\\"b" }}'),
        ("'unclosed", "{{ 'unclosed }}"),
    ],
)
def test_an_expression_is_spelt_one_way(code: str, spelt: str) -> None:
    from gate.formats.dbt import relation

    assert relation.expression(code) == spelt
