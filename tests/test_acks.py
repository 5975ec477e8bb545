"""Acknowledgement tokens: PR-body parsing and matching, table-driven."""

from __future__ import annotations

import pytest

from gate import acks
from gate.diff import Change
from gate.rules import Severity


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("accept-breaking-change: shop.orders", ["shop.orders"]),
        ("Accept-Breaking-Change: shop.orders", ["shop.orders"]),
        ("ACCEPT-BREAKING-CHANGE:shop.orders", ["shop.orders"]),
        ("- accept-breaking-change: shop.orders", ["shop.orders"]),
        ("* accept-breaking-change: `shop.orders`", ["shop.orders"]),
        ("1. accept-breaking-change: 'shop.orders'", ["shop.orders"]),
        ('accept-breaking-change: "shop.orders"', ["shop.orders"]),
        ("accept-breaking-change: a.b, c.d", ["a.b", "c.d"]),
        ("accept-breaking-change: a.b c.d,e.f", ["a.b", "c.d", "e.f"]),
        ("**accept-breaking-change:** a.b", ["a.b"]),
        ("`accept-breaking-change: a.b`", ["a.b"]),
        ("Intro text\n\naccept-breaking-change: a.b\r\nmore", ["a.b"]),
        # The key must start the line: prose that mentions it does not count.
        ("Please add accept-breaking-change: a.b if needed", []),
        ("> accept-breaking-change: a.b", []),
        # Templates explain the syntax inside HTML comments; that must not count.
        ("<!-- accept-breaking-change: a.b -->", []),
        ("<!--\nTo acknowledge, write:\naccept-breaking-change: a.b\n-->\nreal text", []),
        ("<!-- open comment never closed\naccept-breaking-change: a.b", []),
        ("```\naccept-breaking-change: a.b\n```", []),
        ("~~~yaml\naccept-breaking-change: a.b\n~~~\naccept-breaking-change: c.d", ["c.d"]),
        ("````\n```\naccept-breaking-change: a.b\n````", []),
        ("accept-breaking-change:", []),
        ("accept-breaking-changes: a.b", []),
        ("", []),
    ],
)
def test_parse_pr_body(body: str, expected: list[str]) -> None:
    assert [t.value for t in acks.parse_pr_body(body)] == expected


def test_pr_body_tokens_remember_their_line() -> None:
    tokens = acks.parse_pr_body("title\n<!-- c\n c -->\naccept-breaking-change: x.y\n")
    assert tokens == [acks.Token("x.y", "pr-body:4")]


def test_parse_list_splits_commas_and_spaces() -> None:
    assert [t.value for t in acks.parse_list(" a.b, c.d  e ", "--accept")] == ["a.b", "c.d", "e"]
    assert acks.parse_list(None, "env") == []


def _change(dataset: str, rule: str = "column_removed", severity=Severity.ERROR, old=None):
    return Change(rule, severity, dataset, "c", "p.yaml", 1, "m", old_dataset=old)


@pytest.mark.parametrize(
    ("dataset", "token", "acked"),
    [
        ("shop.orders", "shop.orders", True),
        ("lake/shop/orders", "lake/shop/orders", True),
        ("lake/shop/orders", "shop.orders", True),
        ("a/b/lake/shop/orders", "shop.orders", True),
        ("lake/shop/orders", "orders", False),
        ("lake/shop/orders", "Shop.Orders", False),
        ("shop.orders", "shop.order", False),
        ("orders", "orders", True),
    ],
)
def test_token_matching(dataset: str, token: str, acked: bool) -> None:
    result = acks.apply([_change(dataset)], [acks.Token(token, "--accept")])
    assert result.changes[0].acknowledged is acked
    assert bool(result.unmatched) is not acked


def test_rename_is_acknowledged_by_old_or_new_name() -> None:
    change = _change("shop.sales", "model_renamed", old="shop.orders")
    for name in ("shop.orders", "shop.sales"):
        assert acks.apply([change], [acks.Token(name, "x")]).changes[0].acknowledged


def test_one_token_covers_every_change_of_its_dataset_and_nothing_else() -> None:
    changes = [_change("a"), _change("a", "type_narrowed"), _change("b")]
    result = acks.apply(changes, [acks.Token("a", "x")])
    assert [c.acknowledged for c in result.changes] == [True, True, False]
    assert result.matched == ("a",)


def test_additive_changes_are_not_marked_but_the_token_is_matched() -> None:
    result = acks.apply([_change("a", "column_added", Severity.INFO)], [acks.Token("a", "x")])
    assert not result.changes[0].acknowledged
    assert result.unmatched == ()


def test_unmatched_tokens_are_reported_once() -> None:
    result = acks.apply([_change("a")], acks.parse_list("typo, typo, a", "--accept"))
    assert [t.value for t in result.unmatched] == ["typo"]


def test_near_misses_are_lines_meant_as_acknowledgements_that_are_not() -> None:
    body = (
        "accept-breaking-changes: shop.orders\n"  # 1 plural
        "Accept breaking change: shop.orders\n"  # 2 spaces
        "> accept-breaking-change: shop.orders\n"  # 3 quoted
        "- [x] accept-breaking-change: shop.orders\n"  # 4 task-list box
        "accept-breaking-change: shop.orders\n"  # 5 the real thing
        "- accept-breaking-change: shop.customers\n"  # 6 a bullet is fine
        "<!-- accept-breaking-change-s: x -->\n"  # 7 a template comment
        "```\naccept breaking change: x\n```\n"  # 8-10 a code block
        "Nothing to accept here.\n"  # 11
    )
    assert acks.near_misses(body) == [1, 2, 3, 4]
    assert [t.source for t in acks.parse_pr_body(body)] == ["pr-body:5", "pr-body:6"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("accept-consumer-break: models/a.sql", ["models/a.sql"]),
        ("- accept-consumer-break: `models/a.sql`, jobs/b.py", ["models/a.sql", "jobs/b.py"]),
        ("accept-breaking-change: models/a.sql", []),  # the other key names datasets
        ("<!-- accept-consumer-break: models/a.sql -->", []),
        ("```\naccept-consumer-break: models/a.sql\n```", []),
        ("accept-consumer-breaks: models/a.sql", []),
    ],
)
def test_parse_consumer_key(body: str, expected: list[str]) -> None:
    tokens = acks.parse_pr_body(body, acks.CONSUMER_KEY)
    assert [t.value for t in tokens] == expected
    assert all(t.key == acks.CONSUMER_KEY for t in tokens)


def test_a_consumer_token_clears_only_its_file_s_consumer_broken() -> None:
    def broken(path: str) -> Change:
        return Change("consumer_broken", Severity.ERROR, "orders", "a", path, 3, "m")

    changes = [broken("models/x.sql"), broken("models/y.sql"), _change("orders")]
    tokens = acks.parse_list(
        "models/x.sql,models/z.sql", "--accept-consumer-break", acks.CONSUMER_KEY
    )
    result = acks.apply_consumer_breaks(changes, tokens)
    assert [c.acknowledged for c in result.changes] == [True, False, False]
    assert result.matched == ("models/x.sql",)
    assert [t.value for t in result.unmatched] == ["models/z.sql"]
    # a dataset token never clears a consumer_broken, nor a path a dataset change
    assert not acks.apply(changes, [acks.Token("orders", "x")]).changes[0].acknowledged
    assert (
        not acks.apply_consumer_breaks(changes, [acks.Token("p.yaml", "x")]).changes[2].acknowledged
    )
