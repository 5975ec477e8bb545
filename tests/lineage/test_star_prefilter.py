"""The star prefilter: a dbt style reader (``select *`` in an import CTE, then
named columns) whose SQL never spells a changed column is decided on sqlglot's
tokens, without a parse (``gate.lineage.dbt_mesh.stars_end_inside``).

Both directions, each held to the parse (``_columns``): whatever the prefilter
skips, the parse finds reading none of the changed columns and not passing its
star on; a star that reaches the output (``select *``, ``t.*`` at the outermost
level, a parenthesised or set-operation outer query), a changed column spelt
anywhere (quoted, in a later CTE, in ``* except``), or a form that names
columns by position or all at once is parsed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.lineage.dbt_mesh import (
    _columns,
    _spelt,
    _tokens,
    cannot_read,
    needs_star_check,
    read_manifest,
    stars_end_inside,
    unknown_columns,
)
from tests.lineage.test_prefilter import _manifest, external_readers_of_a_dropped_column

UP = '"db"."main"."stg_orders"'
TABLE = ("db", "main", "stg_orders")
AMOUNT = _spelt(frozenset({"amount"}))
SRC = f"with src as (select * from {UP})"


def _skipped(sql: str, dialect: str = "postgres") -> bool:
    """What the manifest step decides: the text check, then the tokens."""
    if cannot_read(sql, AMOUNT):
        return True
    if not needs_star_check(sql, AMOUNT):
        return False
    tokens = _tokens(sql, dialect)
    return tokens is not None and stars_end_inside(tokens)


SKIPPED = [
    f"{SRC} select src.order_id, src.status from src",
    f"{SRC}, o as (select * from other) select src.order_id, sum(o.total) as total "
    "from src left join o on src.order_id = o.order_id group by 1",  # bench's shape
    f"select s.order_id from (select * from {UP}) as s",  # a derived table
    f"{SRC} select order_id from src where exists (select * from other o where o.id = 1)",
    f"{SRC} select count(*) as n, order_id * 2 as twice from src group by order_id",
    f"with src as (select distinct * from {UP}) select order_id from src",
    f"with src as (select o.* from {UP} as o) select order_id from src",
    f"with src as (select * except (status) from {UP}) select order_id from src",
    f"with a as (with b as (select * from {UP}) select * from b) select a.order_id from a",
    f"with u as (select * from {UP} union all select * from {UP}) select order_id from u",
    f"{SRC} select order_id from src order by 1",  # by position over named columns
    f"{SRC} select order_id from src;",
    # dbt style's last line: the outer star over a CTE whose columns are named
    f"{SRC}, final as (select src.order_id, src.status from src) select * from final",
    f"{SRC}, final as (select order_id from src) select * from final;",
    f'{SRC}, "Final" as (select order_id from src) select * from "Final"',
]


@pytest.mark.parametrize("sql", SKIPPED)
def test_a_star_that_ends_inside_the_query_is_decided_without_a_parse(sql: str) -> None:
    assert _skipped(sql), sql
    read = _columns(sql, "postgres", TABLE, unknown_columns)
    assert read is not None and "amount" not in read, (sql, read)


PARSED = [
    f"{SRC} select * from src",  # the star reaches the output
    f"{SRC} select src.* from src",
    f"{SRC} select src.*, 1 as x from src",
    f"select * from {UP}",
    f"{SRC} (select * from src)",  # a parenthesised outer query
    f"(select * from {UP})",
    f"{SRC} select order_id from src union all select * from {UP}",
    f"{SRC} select order_id from src union all (select * from {UP})",
    f'{SRC} select src."AMOUNT" from src',  # quoted, any case: spelt
    f"{SRC}, later as (select amount from src) select order_id from later",  # a later CTE
    f"with src as (select * except (amount) from {UP}) select * from src",
    f"with src as (select * except (amount) from {UP}) select order_id from src",
    f"with src as (select * from {UP} order by 1) select order_id from src",  # position
    f"with src as (select * from {UP} group by all) select order_id from src",
    f"{SRC} select to_json(struct(src.*)) from src",  # every column in one value
    f"{SRC} select object_construct(*) as row from src",
    f"select top 3 * from {UP}",
    f"{SRC} select order_id from src natural join other",
    f"{SRC} select order_id from src; select * from src",  # a second statement
    f"insert into t {SRC} select order_id from src",
    f"{SRC} select order_id from src -- amount\n",  # a comment spells it: parsed
    f"{SRC} select order_id from src where x = 'it''s",  # sqlglot cannot tokenize it
    f"{SRC}, final as (select * from src) select * from final",  # final's own star
    f"{SRC}, final as (select src.*, 1 as x from src) select * from final",
    f"{SRC}, final as (select order_id from src) select * from final f join x on true",
    f"{SRC}, final as (select order_id from src) select * from src",
    f"{SRC}, final as (select order_id from src) select * from final order by 1",
    f"{SRC}, final as (select order_id from other) select * from fin",
    f'{SRC}, "Final" as (select order_id from src) select * from final',  # another name
    f"with s (a, b) as (select * from {UP}) select a from s",  # renamed by position
    f"select a from (select * from {UP}) as s (a, b)",
    f"select a from (select * from {UP}) s(a, b)",
]


@pytest.mark.parametrize("sql", PARSED)
def test_a_star_that_may_reach_the_output_or_a_spelt_column_is_parsed(sql: str) -> None:
    assert not _skipped(sql), sql


def test_the_outer_star_is_what_the_parse_lists_as_reading_every_column() -> None:
    """The other direction, on the parse: what is not skipped for its star is,
    for the parse too, a reader of every column."""
    for sql in (f"{SRC} select * from src", f"{SRC} select src.* from src"):
        assert _columns(sql, "postgres", TABLE, unknown_columns) is None
        assert not _skipped(sql)


#: Pieces of generated dbt style models: an import CTE, named or starred outputs.
_IMPORTS = [
    f"src as (select * from {UP})",
    f"src as (select o.* from {UP} o)",
    f"src as (select * from {UP} where status = 'x')",
    f"src as (select order_id, amount from {UP})",
    f"src as (select *, amount * 2 as doubled from {UP})",
]
_OUTPUTS = ["src.order_id", "src.status", "src.amount", "src.*", "*", "count(*) as n", '"AMOUNT"']


@settings(max_examples=200, deadline=None)
@given(
    imports=st.sampled_from(_IMPORTS),
    outputs=st.lists(st.sampled_from(_OUTPUTS), min_size=1, max_size=3),
    tail=st.sampled_from(["", " group by 1", " where src.amount > 0", " order by 1"]),
)
def test_whatever_the_parse_finds_read_is_never_skipped(
    imports: str, outputs: list[str], tail: str
) -> None:
    sql = f"with {imports} select {', '.join(outputs)} from src{tail}"
    read = _columns(sql, "postgres", TABLE, unknown_columns)
    if _skipped(sql):
        assert read is not None and "amount" not in read, sql


def test_a_skipped_star_reader_is_not_parsed_and_a_parsed_one_is_tokenized_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sqlglot import parser
    from sqlglot.dialects.dialect import Dialect

    parses: list[int] = []
    tokenized: list[int] = []
    real_parse = parser.Parser.parse
    real_tokenize = Dialect.tokenize

    def parse(self: parser.Parser, *args: object, **kwargs: object) -> object:
        parses.append(1)
        return real_parse(self, *args, **kwargs)

    def tokenize(self: Dialect, *args: object, **kwargs: object) -> object:
        tokenized.append(1)
        return real_tokenize(self, *args, **kwargs)

    monkeypatch.setattr(parser.Parser, "parse", parse)
    monkeypatch.setattr(Dialect, "tokenize", tokenize)
    sqls = [
        f"{SRC} select src.order_id from src",  # skipped on its tokens
        f"{SRC} select src.* from src",  # its star reaches the output: parsed
        f"{SRC} select src.amount from src",  # spelt: parsed
    ]
    data = _manifest(sqls)
    reads = read_manifest(
        data,
        "m.json",
        "postgres",
        lambda _n: True,
        changed_columns=lambda _n: frozenset({"amount"}),
    )
    assert [r.columns for r in reads] == [frozenset(), None, frozenset({"amount"})]
    assert len(parses) == 2
    assert len(tokenized) == 3  # once a reader: the star-checked one's tokens are parsed
    # A removed model wants every reader: every one is parsed, as before.
    parses.clear()
    every = read_manifest(data, "m.json", "postgres", lambda _n: True)
    assert [r.columns for r in every] == [frozenset({"order_id"}), None, frozenset({"amount"})]
    assert len(parses) == 3


def test_through_the_cli_a_dbt_style_reader_is_listed_only_when_it_names_the_column(
    tmp_path: Path,
) -> None:
    """Wired from the run's changes: dropping ``discount_code``, of three dbt style
    readers (``select *`` import CTEs) the one that names it is listed; the one
    whose named columns are others is not (skipped on its tokens), and the one
    whose ``*`` reaches its output is (it reads every column)."""
    sqls = [
        f"{SRC} select src.order_id, src.discount_code from src",
        f"{SRC}, final as (select src.order_id, src.amount from src) select * from final",
        f"{SRC} select src.* from src",
    ]
    _repo, consumers = external_readers_of_a_dropped_column(tmp_path, sqls)
    assert consumers == ["fin.m0", "fin.m2"]


def test_a_duckdb_positional_column_over_a_star_is_parsed() -> None:
    """DuckDB's ``#2`` names the second column of ``src`` (every column of the
    upstream, through the import CTE's ``*``) by position: ``cannot_read`` parses
    it for its ``#``; the star check must not skip it on its tokens either."""
    sql = f"{SRC} select #2 from src"
    assert not _skipped(sql, "duckdb"), sql
