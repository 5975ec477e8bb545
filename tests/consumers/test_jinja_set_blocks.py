"""``{% set q %}...{% endset %}`` blocks used as queries (gate.consumers.jinja).

jaffle-shop-expand's models/marts/advanced_sql/adv_referral_tree.sql (a public dbt
project, measured locally, not copied) keeps each query it reads in a set block and
selects ``from ({{ orders_q }}) as _orders``: the gate read it as "not analysed". The
models below are written for this test in the same shape.
"""

from __future__ import annotations

from gate.consumers import jinja
from gate.consumers.names import NameIndex
from gate.consumers.reader import read_consumer
from gate.model import Dataset

ORDERS = frozenset({"id", "amount", "status"})
INDEX = NameIndex([Dataset(id="stg_orders", path="m.yml", format="dbt")])


def _read(model: str):  # type: ignore[no-untyped-def]
    return read_consumer("models/m.sql", model.encode(), "postgres", INDEX, {"stg_orders": ORDERS})


def test_a_model_that_is_one_set_block_rendered_once_is_analysed() -> None:
    model = (
        "{% set q %}\nselect id, amount\nfrom {{ ref('stg_orders') }}\n"
        "where status = 'paid'\n{% endset %}\n{{ q }}\n"
    )
    result = _read(model)
    assert not result.not_analysed, result.not_analysed
    found = {(f.column, f.line) for f in result.found if f.dataset == "stg_orders"}
    assert {("amount", 6), ("status", 6)} <= found, found


def test_set_blocks_used_as_subqueries_are_expanded_with_lines_kept() -> None:
    model = (
        "{% set orders_q %}select * from {{ ref('stg_orders') }}{% endset %}\n"
        "\n"
        "select o.id, o.amount\n"
        "from ({{ orders_q }}) as o\n"
        "join ({{ orders_q }}) as p on p.id = o.id\n"
    )
    sql = jinja.render(model)
    assert sql.count("\n") == model.count("\n")
    assert sql.splitlines()[3].strip() == "from ( select * from  stg_orders  ) as o"
    result = _read(model)
    assert not result.not_analysed, result.not_analysed
    assert 4 in {f.line for f in result.found if f.dataset == "stg_orders"}


def test_anything_else_is_left_as_before() -> None:
    """Control flow in the body, a second assignment, a use before the block, or a
    line comment (which one line would turn into a comment over the rest): the use
    stays the placeholder."""
    for model in (
        "{% set q %}{% if x %}select 1{% endif %}{% endset %}\n{{ q }}\n",
        "{% set q %}select 1{% endset %}{% set q = 'x' %}\n{{ q }}\n",
        "{{ q }}\n{% set q %}select 1{% endset %}\n",
        "{% set q %}select 1 -- one\nfrom t{% endset %}\n{{ q }}\n",
    ):
        assert jinja.PLACEHOLDER in jinja.render(model), model
