"""dbt Python models (``def model(dbt, session)``) are readers of what ``dbt.ref()`` and
``dbt.source()`` return (docs.getdbt.com, "Python models": ``dbt.ref("m")``,
``dbt.ref("pkg", "m")``, ``dbt.ref("m", v=2)``, ``dbt.source("s", "t")``, ``dbt.config()``).

Scenarios through the CLI in real git repositories: a column the model uses breaks it
(``consumer_broken``), a column it does not use does not, ``--accept`` no longer hides
the broken reader, and a disabled Python model (its own ``dbt.config(enabled=False)``,
or the project's ``+enabled: false``) breaks nothing.
"""

from __future__ import annotations

import pytest

from tests.consumers.test_consumer_readers import (
    DROP_AMOUNT,
    Cli,
    broken,
    readers,
    report,
    start,
    versioned,
)

PROJECT = "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: [models]\n"


def contract(*columns: str) -> str:
    listed = "".join(f"      - name: {c}\n        data_type: int\n" for c in columns)
    return (
        "version: 2\nmodels:\n  - name: stg_orders\n    config:\n"
        f"      contract: {{enforced: true}}\n    columns:\n{listed}"
    )


BASE = {
    "dbt_project.yml": PROJECT,
    "models/staging/stg_orders.sql": "select 1 as id, 2 as amount, 3 as status\n",
    "models/staging/_models.yml": contract("id", "amount", "status"),
}
PY = "models/marts/py_orders.py"


def drop(tmp_path, body: str, column: str = "amount", extra: dict[str, str] | None = None):
    repo = start(tmp_path, {**BASE, PY: body, **(extra or {})})
    kept = [c for c in ("id", "amount", "status") if c != column]
    repo.write("models/staging/_models.yml", contract(*kept))
    repo.commit(f"drop {column}")
    return repo


#: (model body, line of its use of ``amount``): each reads stg_orders.amount.
READS_AMOUNT = {
    "select": (
        'def model(dbt, session):\n    orders = dbt.ref("stg_orders")\n'
        '    return orders.select("id", "amount")\n',
        3,
    ),
    "chained-filter-col": (
        "from pyspark.sql.functions import col\n\n\ndef model(dbt, session):\n"
        '    df = dbt.ref("stg_orders").filter(col("amount") > 0)\n    return df\n',
        5,
    ),
    "filter-sql-string": (
        'def model(dbt, session):\n    return dbt.ref("stg_orders").filter("amount > 0")\n',
        2,
    ),
    "subscript": (
        "def model(dbt, session):\n    df = dbt.ref('stg_orders')\n"
        "    return df.withColumn('double', df['amount'] * 2)\n",
        3,
    ),
    "group-by": (
        'def model(dbt, session):\n    orders = dbt.ref("stg_orders")\n'
        '    return orders.groupBy("amount").count()\n',
        3,
    ),
    "two-argument-ref": (
        "def model(dbt, session):\n    return dbt.ref('shop', 'stg_orders').select('amount')\n",
        2,
    ),
    "snowpark-to-pandas": (
        "def model(dbt, session):\n    frame = dbt.ref('stg_orders').to_pandas()\n"
        "    return frame['amount'].sum()\n",
        3,
    ),
    "helper-function": (
        'def paid(dbt):\n    return dbt.ref("stg_orders").filter("amount > 0")\n\n\n'
        "def model(dbt, session):\n    return paid(dbt)\n",
        2,
    ),
    "snowpark-group-by": (
        "from snowflake.snowpark.functions import col\n\n\ndef model(dbt, session):\n"
        '    return dbt.ref("stg_orders").group_by(col("amount")).count()\n',
        5,
    ),
    "session-table": (
        'def model(dbt, session):\n    return session.table("stg_orders").select("amount")\n',
        2,
    ),
}


@pytest.mark.parametrize("body,line", READS_AMOUNT.values(), ids=list(READS_AMOUNT))
def test_a_python_model_using_a_removed_column_is_broken(
    tmp_path, cli: Cli, body: str, line: int
) -> None:
    repo = drop(tmp_path, body)
    data = report(cli, repo)
    assert data["exit"] == 1
    assert broken(data) == [(PY, line, "stg_orders", "amount")]
    # accepting the change no longer hides the reader it breaks
    accepted = report(cli, repo, "--accept", "stg_orders")
    assert accepted["exit"] == 1
    assert broken(accepted) == [(PY, line, "stg_orders", "amount")]


def test_a_column_the_python_model_does_not_use_breaks_nothing(tmp_path, cli: Cli) -> None:
    body, _line = READS_AMOUNT["select"]
    repo = drop(tmp_path, body, column="status")
    data = report(cli, repo)
    assert broken(data) == []
    accepted = report(cli, repo, "--accept", "stg_orders")
    assert accepted["exit"] == 0, accepted
    # a directly narrowed frame provably reads id and amount only: not listed at all
    narrowed = 'def model(dbt, session):\n    return dbt.ref("stg_orders").select("id", "amount")\n'
    repo = drop(tmp_path / "narrowed", narrowed, column="status")
    data = report(cli, repo)
    assert broken(data) == []
    assert readers(data, "column_removed", "stg_orders", "status") == set()


def test_a_frame_whose_columns_cannot_be_read_is_listed_not_broken(tmp_path, cli: Cli) -> None:
    body = (
        'def model(dbt, session):\n    wanted = ["id", "amount"]\n'
        '    return dbt.ref("stg_orders").select(*wanted)\n'
    )
    repo = drop(tmp_path, body)
    data = report(cli, repo)
    assert broken(data) == []
    assert readers(data, "column_removed", "stg_orders", "amount") == {f"{PY}:3"}


def test_removing_the_model_a_python_model_refs_breaks_it(tmp_path, cli: Cli) -> None:
    repo = start(tmp_path, {**BASE, PY: READS_AMOUNT["select"][0]})
    repo.remove("models/staging/_models.yml")
    repo.remove("models/staging/stg_orders.sql")
    repo.commit("drop the model")
    data = report(cli, repo)
    assert broken(data) == [(PY, 2, "stg_orders", None)]


def test_a_source_read_by_a_python_model(tmp_path, cli: Cli) -> None:
    soda = (
        "dataset: raw/shop/orders\ncolumns:\n  - name: id\n    data_type: bigint\n"
        "  - name: amount\n    data_type: bigint\n"
    )
    body = "def model(dbt, session):\n    return dbt.source('shop', 'orders').select('amount')\n"
    repo = start(tmp_path, {**BASE, "soda/contracts/orders.yaml": soda, PY: body})
    repo.write(
        "soda/contracts/orders.yaml", soda.replace("  - name: amount\n    data_type: bigint\n", "")
    )
    repo.commit("drop amount")
    data = report(cli, repo)
    assert broken(data) == [(PY, 2, "raw/shop/orders", "amount")]


def test_a_pinned_version_ref_in_a_python_model(tmp_path, cli: Cli) -> None:
    files = {
        "dbt_project.yml": PROJECT,
        "models/orders_v1.sql": "select 1 as id, 2 as amount\n",
        "models/orders_v2.sql": "select 1 as id, 2 as amount\n",
        "models/_models.yml": versioned("1"),
        "models/py_v2.py": "def model(dbt, session):\n    return dbt.ref('orders', v=2).select('amount')\n",
        "models/py_v1.py": "def model(dbt, session):\n    return dbt.ref('orders', v=1).select('amount')\n",
    }
    repo = start(tmp_path, files)
    repo.write("models/_models.yml", versioned("1", DROP_AMOUNT))
    repo.commit("drop amount from v2")
    data = report(cli, repo)
    assert broken(data) == [("models/py_v2.py", 2, "orders.v2", "amount")]


@pytest.mark.parametrize(
    "extra,config",
    [
        pytest.param({}, '    dbt.config(materialized="table", enabled=False)\n', id="dbt.config"),
        pytest.param(
            {"dbt_project.yml": PROJECT + "models:\n  shop:\n    marts:\n      +enabled: false\n"},
            "",
            id="project",
        ),
        pytest.param(
            {
                "models/marts/_marts.yml": "models:\n  - name: py_orders\n    config:\n      enabled: false\n"
            },
            "",
            id="properties",
        ),
    ],
)
def test_a_disabled_python_model_breaks_nothing(
    tmp_path, cli: Cli, extra: dict[str, str], config: str
) -> None:
    body = (
        f'def model(dbt, session):\n{config}    orders = dbt.ref("stg_orders")\n'
        '    return orders.select("id", "amount")\n'
    )
    repo = drop(tmp_path, body, extra=extra)
    data = report(cli, repo)
    assert data["exit"] == 1  # the removal itself still blocks
    assert broken(data) == []
    # found as a reader (so enabled, it would break: see the "select" case above)
    listed = readers(data, "column_removed", "stg_orders", "amount")
    assert {r.split(":")[0] for r in listed} == {PY}


def test_a_ref_whose_name_is_computed_is_listed_as_not_analysed(tmp_path, cli: Cli) -> None:
    body = (
        'def model(dbt, session):\n    name = "stg_orders"\n'
        "    return dbt.ref(name).select('amount')\n"
    )
    repo = drop(tmp_path, body)
    data = report(cli, repo)
    assert [(n["path"], n.get("line"), n["reason"]) for n in data["consumers_not_analysed"]] == [
        (PY, 3, "dbt.ref() with arguments other than string literals is not analysed")
    ]


def test_a_pandas_column_the_model_makes_itself_is_no_read(tmp_path, cli: Cli) -> None:
    # ``frame["amount"] = ...`` makes the column: dropping the upstream one breaks nothing.
    body = (
        "def model(dbt, session):\n    frame = dbt.ref('stg_orders').to_pandas()\n"
        "    frame['amount'] = frame['id'] * 2\n    return frame\n"
    )
    repo = drop(tmp_path, body)
    data = report(cli, repo)
    assert broken(data) == []
    assert readers(data, "column_removed", "stg_orders", "amount") == {f"{PY}:2"}  # the star
    # while reading it is a break
    reads = body.replace("frame['id'] * 2", "frame['amount'] * 2")
    repo = drop(tmp_path / "reads", reads)
    assert broken(report(cli, repo)) == [(PY, 3, "stg_orders", "amount")]


def test_a_pandas_column_made_then_read_is_no_read_of_the_upstream_one(tmp_path, cli: Cli) -> None:
    # the model's own ``amount`` is what ``frame['amount']`` reads after it is made
    body = (
        "def model(dbt, session):\n    frame = dbt.ref('stg_orders').to_pandas()\n"
        "    frame['amount'] = frame['id'] * 2\n    frame['total'] = frame['amount'] + 1\n"
        "    return frame\n"
    )
    repo = drop(tmp_path, body)
    assert broken(report(cli, repo)) == []
    # made only under a condition (or after the read): the upstream one may be read
    for made, line in (
        ("    if session:\n        frame['amount'] = frame['id'] * 2\n", 5),
        ("    frame['total'] = frame['amount'] + 1\n    frame['amount'] = frame['id']\n", 3),
    ):
        late = (
            "def model(dbt, session):\n    frame = dbt.ref('stg_orders').to_pandas()\n"
            + made
            + ("    frame['total'] = frame['amount'] + 1\n" if "if" in made else "")
            + "    return frame\n"
        )
        repo = drop(tmp_path / str(line), late)
        assert broken(report(cli, repo)) == [(PY, line, "stg_orders", "amount")], late
