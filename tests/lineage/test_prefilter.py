"""The textual prefilter: a manifest reader whose SQL cannot read a changed column is not parsed.

Both directions: readers that spell a changed column (any quoting, any case),
or read columns without spelling them (a star, ``$1``, ``NATURAL JOIN``...),
are parsed as before; the others are not parsed, and are no reader of the
change. A property test holds the prefilter to the parse on generated SQL:
whenever the parse finds the changed column read, the prefilter does not skip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate import rules
from gate.lineage.dbt_mesh import _columns, _spelt, cannot_read, read_manifest, unknown_columns
from gate.lineage.run import _changed_columns
from gate.model import Change
from gate.rules import Severity
from tests.gitrepo import GitRepo

UP = '"db"."main"."stg_orders"'
AMOUNT = _spelt(frozenset({"amount"}))


@pytest.mark.parametrize(
    "sql",
    [
        f"select order_id, status from {UP}",
        f"select o.order_id from {UP} o where o.status = 'paid'",
        f'select "ORDER_ID" from {UP} group by 1',
        f"select order_id as amount_total from {UP}",  # a longer name is not the column
        f"select amount1 from {UP}",  # nor is one with a digit after it
        "select order_id from where",  # sqlglot cannot read it, and it spells no amount
    ],
)
def test_a_reader_that_never_spells_the_column_is_skipped(sql: str) -> None:
    assert cannot_read(sql, AMOUNT)


@pytest.mark.parametrize(
    "sql",
    [
        f"select amount from {UP}",
        f"select o.AMOUNT from {UP} o",
        f'select "Amount" from {UP}',  # quoted: still the column, whatever its case
        f"select `amount` from {UP}",
        f"select [amount] from {UP}",
        f"select sum(o.amount)over() from {UP} o",
        f"select order_id from {UP} -- amount\n",  # a comment counts: errs towards parsing
        f"with o as (select * from {UP}) select o.order_id from o",  # a star
        f"select o.* from {UP} o",
        f"select count(*) from {UP}",
        f"select $1 from {UP}",  # positional
        f"select #1 from {UP}",  # positional (DuckDB)
        f"select order_id from {UP} natural join other",
        f"select order_id from {UP} pivot (sum(x) for y in (1))",
        f"select columns('a.*') from {UP}",
        f"table {UP}",
        f"from {UP}",  # DuckDB: no SELECT is SELECT *
        'select U&"\\0061mount" from t',  # an escape spells it in other characters
        "select `\\x61mount` from t",
        f"select ordér_id from {UP}",  # non-ASCII: Python's lower() is not SQL's
    ],
)
def test_a_reader_that_spells_or_may_read_the_column_is_parsed(sql: str) -> None:
    assert not cannot_read(sql, AMOUNT)


def test_names_that_sql_may_escape_are_never_prefiltered() -> None:
    assert _spelt(frozenset({'am"ount'})) is None  # "am""ount" in SQL
    assert _spelt(frozenset({"amöunt"})) is None
    assert _spelt(frozenset()) is None
    nested = _spelt(frozenset({"address.city"}))  # read through ``address``
    assert not cannot_read("select address from t", nested)
    assert cannot_read("select city from t", nested)


#: Pieces of generated SQL: the changed column in every spelling, other columns.
_SPELLINGS = ["amount", "AMOUNT", '"amount"', '"Amount"', "o.amount", "o.AmOuNt", '"o"."amount"']
_OTHERS = ["order_id", "status", "o.order_id", '"status"', "amount_total", "1", "'amount'"]


@settings(max_examples=150, deadline=None)
@given(
    picked=st.lists(st.sampled_from(_SPELLINGS + _OTHERS), min_size=1, max_size=4),
    where=st.sampled_from(["", " where status = 'x'", " where amount > 0", " group by 1"]),
)
def test_whatever_the_parse_finds_read_is_never_skipped(picked: list[str], where: str) -> None:
    sql = f"select {', '.join(picked)} from {UP} o{where}"
    read = _columns(sql, "postgres", ("db", "main", "stg_orders"), unknown_columns)
    if read is None or "amount" in read:
        assert not cannot_read(sql, AMOUNT), sql
    if cannot_read(sql, AMOUNT):
        assert read is not None and "amount" not in read, sql


def _manifest(sqls: list[str]) -> bytes:
    upstream = "model.platform.stg_orders"
    nodes: dict[str, dict[str, object]] = {
        upstream: {
            "unique_id": upstream,
            "resource_type": "model",
            "package_name": "platform",
            "name": "stg_orders",
            "relation_name": UP,
        }
    }
    for i, sql in enumerate(sqls):
        nodes[f"model.fin.m{i}"] = {
            "unique_id": f"model.fin.m{i}",
            "resource_type": "model",
            "package_name": "fin",
            "name": f"m{i}",
            "depends_on": {"nodes": [upstream]},
            "compiled_code": sql,
        }
    return json.dumps({"metadata": {"project_name": "fin"}, "nodes": nodes}).encode()


def test_skipped_readers_are_not_parsed_and_read_no_column(monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlglot import parser

    parses: list[int] = []
    real = parser.Parser.parse

    def counted(self: parser.Parser, *args: object, **kwargs: object) -> object:
        parses.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(parser.Parser, "parse", counted)
    sqls = [
        f"select order_id from {UP}",
        f'select "AMOUNT" from {UP}',
        f"with o as (select * from {UP}) select o.order_id from o",
        "select order_id from where",
    ]
    data = _manifest(sqls)
    wanted = lambda _name: True  # noqa: E731
    changed = lambda _name: frozenset({"amount"})  # noqa: E731
    reads = read_manifest(data, "m.json", "postgres", wanted, changed_columns=changed)
    assert [r.columns for r in reads] == [
        frozenset(),  # skipped
        frozenset({"amount"}),
        frozenset(),  # skipped: its star ends in the CTE (``stars_end_inside``)
        frozenset(),  # skipped: the parse could not read it (it said "every column")
    ]
    assert len(parses) == 1
    parses.clear()
    # A removed model wants every reader (no columns): nothing is skipped.
    every = read_manifest(data, "m.json", "postgres", wanted, changed_columns=lambda _n: None)
    assert every[0].columns == frozenset({"order_id"})
    assert every[-1].columns is None
    assert len(parses) == 4


def _change(rule: rules.Rule, dataset: str, column: str | None, **kw: str) -> Change:
    return Change.of(rule, Severity.ERROR, dataset, "c.yml", 1, "m", column=column, **kw)


def test_the_changed_columns_are_those_the_reads_are_attached_by() -> None:
    found = _changed_columns(
        [
            _change(rules.COLUMN_REMOVED, "a", "Amount"),
            _change(rules.COLUMN_RENAMED, "a", "total", before="old_total", after="total"),
            _change(rules.COLUMN_REMOVED, "b", "x"),
            _change(rules.MODEL_REMOVED, "b", None),  # every reader of b
        ]
    )
    assert found == {"a": frozenset({"amount", "old_total"}), "b": None}


def external_readers_of_a_dropped_column(
    tmp_path: Path, sqls: list[str]
) -> tuple[GitRepo, list[str]]:
    """The mesh repository whose base config names a manifest of readers ``sqls`` of
    ``stg_orders``, and a PR dropping its ``discount_code``: the repository and the
    external consumers the run lists under that removal."""
    from tests.lineage.mesh_repo import MODELS, PROPERTIES, drop, make
    from tests.lineage.test_cli_lineage import run

    manifest = json.loads(_manifest(sqls).decode().replace("platform", "jaffle_platform"))
    config = "lineage:\n  dbt_manifests: [ci/manifest.json]\n"
    repo = make(tmp_path / "r", config, {"ci/manifest.json": json.dumps(manifest)})
    repo.write(PROPERTIES, drop(MODELS, "discount_code"))
    repo.commit("drop discount_code")
    _code, report = run(repo)
    change = next(c for c in report["changes"] if c["column"] == "discount_code")
    return repo, [r["consumer"] for r in change["external_consumers"]]


def test_through_the_cli_a_reader_that_cannot_read_the_dropped_column_is_not_listed(
    tmp_path: Path,
) -> None:
    """Wired from the run's changes: dropping ``discount_code`` lists the reader that
    spells it; the one that reads other columns, and the one sqlglot cannot read
    (which used to count as reading every column) but that never spells it, are
    not listed. Removing the model wants every reader: all three are listed."""
    from tests.lineage.mesh_repo import MODELS, PROPERTIES
    from tests.lineage.test_cli_lineage import run

    sqls = [
        f"select order_id, discount_code from {UP}",
        f"select order_id, amount from {UP}",
        f"select order_id from {UP} where",
    ]
    repo, consumers = external_readers_of_a_dropped_column(tmp_path, sqls)
    assert consumers == ["fin.m0"]

    repo.write(PROPERTIES, "models:\n  - name: stg_payments" + MODELS.split("stg_payments")[1])
    repo.commit("remove stg_orders")
    _code, report = run(repo)
    removed = next(c for c in report["changes"] if c["rule"] == "model_removed")
    assert sorted(r["consumer"] for r in removed["external_consumers"]) == [
        "fin.m0",
        "fin.m1",
        "fin.m2",
    ]
