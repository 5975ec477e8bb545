"""Acknowledgement tokens: PR-body parsing and matching, table-driven."""

from __future__ import annotations

import json
from pathlib import Path

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


# -- acknowledgements as GitHub renders them (issue #27, point 6) ------------------

K = "accept-breaking-change: a.b"


@pytest.mark.parametrize(
    "body",
    [
        # The seven CommonMark HTML block types: their text is the author's HTML.
        f"<pre>\n{K}\n</pre>",  # 1: script, pre, style, textarea
        f"<script>\n{K}\n</script>",  # 1
        f"<textarea>\n{K}\n</textarea>",  # 1
        f"<!-- a template\n{K}\n-->",  # 2: comment
        f"<?php\n{K}\n?>",  # 3: processing instruction
        f"<!DOCTYPE\n{K}\n>",  # 4: declaration
        f"<![CDATA[\n{K}\n]]>",  # 5: CDATA
        f"<div>\n{K}\n</div>",  # 6: a block tag, up to the blank line
        f"<details><summary>How to acknowledge</summary>\n{K}\n</details>",  # 6
        f"Intro.\n\n<custom-note>\n{K}\n</custom-note>",  # 7: any complete tag on its own line
        # hidden elements, wherever the tag stands
        f"<div hidden>\n\n{K}\n\n</div>",
        f"<span hidden>\n\n{K}\n\n</span>",
        f"text <span hidden>\n{K}</span>",
        # attributes and link titles
        f"<div title='\n\n{K}\n\n'>x</div>",
        f'[docs](https://example.com "\n{K}")',
        f'[docs]: https://example.com\n  "\n{K}"\n\n[docs]',
        f"![\n{K}](image.png)",
        f"<img alt='\n{K}'>",
        # an autolink is a link (a URL), and a tag is not text
        "<accept-breaking-change:a.b>",
        "accept-breaking-change: <shop-orders>",
        # an inline comment and indented code
        f"Text <!--\n{K}\n--> more",
        f"    {K}",
        f"- item\n\n      {K}",
        # markdown-it-py trims these before a paragraph; CommonMark does not
        f"- \x0c{K}",
        f"\xa0{K}",
        f"# \x0b{K}",
    ],
)
def test_what_a_reader_does_not_see_acknowledges_nothing(body: str) -> None:
    assert acks.parse_pr_body(body) == []


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (f"<!-- the template's help -->\n{K}", 2),  # after a closed comment
        (f"<!--\nhelp\n-->\n{K}", 4),
        (f"<div hidden>\n\nhelp\n\n</div>\n\n{K}", 7),  # after the hidden element closed
        (f"Intro\n<!-- c -->\n{K}", 3),
        (f"<details>\n<summary>Why</summary>\n\n{K}\n\n</details>", 4),  # Markdown inside
        (f"# Title\n\nSome words.\n{K}", 4),  # a line of a paragraph
        (f"## {K}", 1),  # a heading is visible
        (f"- one\n- {K}", 2),  # a tight list
        (f"1. one\n\n2. {K}", 3),  # a loose list
        (f"Text <span>\n{K}</span>", 2),  # a tag that hides nothing
        (f"Hard break  \n{K}", 2),
        (f"Before\n\n`{K}`", 3),  # a code span is visible text
        (f"- {K.replace('a.b', '`a.b`')}", 1),
    ],
)
def test_what_a_reader_sees_acknowledges(body: str, line: int) -> None:
    assert acks.parse_pr_body(body) == [acks.Token("a.b", f"pr-body:{line}")]


def test_an_image_or_autolink_before_the_key_is_not_a_line_start() -> None:
    assert acks.parse_pr_body(f"![logo](x.png){K}") == []
    assert acks.parse_pr_body(f"<https://example.com>{K}") == []
    # after the key, an autolink names no dataset; the names beside it still count
    tokens = acks.parse_pr_body("accept-breaking-change: <https://example.com> a.b")
    assert [t.value for t in tokens] == ["a.b"]


def test_html_cannot_forge_the_gates_own_marker() -> None:
    forged = '<p data-gate="0" data-line="1">accept-breaking-change: a.b</p>'
    assert acks.parse_pr_body(forged) == []


def test_a_quoted_line_is_named_as_a_near_miss_but_never_counted() -> None:
    body = f"> {K}\n\n<!-- {K}s -->\n\n<div>\naccept-breaking-changes: x\n</div>\n"
    assert acks.parse_pr_body(body) == []
    assert acks.near_misses(body) == [1]


def test_a_body_longer_than_github_allows_is_refused() -> None:
    from gate.model import UsageError

    fits = K + "\r\n" + "x" * (65_536 - len(K) - 1)  # CRLF counts as one character
    assert [t.value for t in acks.parse_pr_body(fits)] == ["a.b"]
    with pytest.raises(UsageError, match="the PR body is 65,537 characters, more than"):
        acks.parse_pr_body(fits + "y")
    assert acks.parse_pr_body("y" * 200_000) == []  # no key: nothing to read


def test_hostile_markdown_is_parsed_within_the_cap() -> None:
    from tests.cost import cpu_seconds

    with cpu_seconds() as cpu:  # CPU seconds: load does not inflate them
        acks.parse_pr_body(K + "\n" + "<" * 65_000)
    assert cpu.seconds < 20, cpu.seconds


#: A PR template as projects write them: the syntax explained where no reader sees it.
TEMPLATE = """\
## Why
<!-- To acknowledge a breaking change, add a line:
accept-breaking-change: shop.orders
-->
<details hidden>

accept-breaking-change: shop.orders

</details>
<div>
accept-breaking-change: shop.orders
</div>

[schema gate](https://example.com "accept-breaking-change: shop.orders")
"""


def test_through_the_cli_only_the_visible_line_acknowledges(cli, repo, tmp_path: Path) -> None:
    repo.write("soda/contracts/orders.yaml", "dataset: shop.orders\ncolumns:\n  - name: id\n")
    repo.commit("contracts")
    repo.branch("feature")
    repo.write("soda/contracts/orders.yaml", "dataset: shop.orders\ncolumns: []\n")
    repo.commit("drop id")
    body = tmp_path / "body.md"
    body.write_text(TEMPLATE)
    proc = cli(repo.path, "--base", "main", "--format", "json", "--pr-body-file", str(body))
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["acknowledgements"] == [] and report["unmatched_acknowledgements"] == []
    body.write_text(TEMPLATE + "\n- accept-breaking-change: `shop.orders`\n")
    proc = cli(repo.path, "--base", "main", "--format", "json", "--pr-body-file", str(body))
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["acknowledgements"] == ["shop.orders"]
    body.write_text(K + "\n" + "x" * 70_000)
    proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body))
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: the PR body is 70,028 characters, more than the 65,536 GitHub "
        "allows; shorten it (acknowledgements are read from the rendered description)\n"
    )


def test_a_pasted_image_makes_the_next_line_html_and_the_note_names_it() -> None:
    """GitHub pastes an image as an ``<img>`` tag on its own line: an HTML block to the blank line."""
    image = '<img width="640" alt="plot" src="https://github.com/user-attachments/assets/1">'
    body = f"{image}\n{K}\n"
    assert acks.parse_pr_body(body) == []
    assert acks.near_misses(body) == [2]
    body = f"{image}\n\n{K}\n"
    assert acks.parse_pr_body(body) == [acks.Token("a.b", "pr-body:3")]
    assert acks.near_misses(body) == []
    # a template's help inside a comment in raw HTML is named nowhere
    assert acks.near_misses(f"<div>\n<!--\n{K}\n-->\n</div>") == []


def _filling_body(key: str, token: str | None = None) -> list[acks.Token]:
    """The tokens of a PR body GitHub still accepts: one line of short tokens
    (distinct ones, or ``token`` repeated) under ``key``, about 64,000 characters."""
    words: list[str] = []
    size = 0
    while size < 64_000:
        words.append(token or f"{len(words):x}")
        size += len(words[-1]) + 1
    return acks.parse_pr_body(f"{key}: " + " ".join(words) + "\n", key)


@pytest.mark.parametrize("token", [None, "x"])
def test_a_body_full_of_tokens_is_matched_in_linear_time(token: str | None) -> None:
    """Attack: 300 new datasets and a 64 KB description of tokens. Each token was
    checked against every changed dataset, rebuilding its short names each time:
    17 s for 13,674 distinct tokens over 200 datasets, 37 s for one token written
    32,000 times (83 s and 198 s over 1,000 datasets). A lookup per name now
    (bounded in CPU seconds, which load does not inflate)."""
    from tests.cost import cpu_seconds

    changes = [_change(f"lake/s{i}/t{i}") for i in range(300)]
    tokens = _filling_body(acks.KEY, token)
    assert len(tokens) > 13_000
    with cpu_seconds() as cpu:
        result = acks.apply(changes, tokens)
    assert cpu.seconds < 3, cpu.seconds
    assert result.matched == ()
    assert len(result.unmatched) == (1 if token else len(tokens))


def test_a_body_full_of_consumer_paths_is_matched_in_linear_time() -> None:
    """Attack: a 64 KB ``accept-consumer-break:`` line of 13,674 distinct short
    paths: each token was looked up in a set rebuilt from all the unmatched ones
    before it, quadratic (31 s, with no change at all; bounded in CPU seconds)."""
    from tests.cost import cpu_seconds

    tokens = _filling_body(acks.CONSUMER_KEY)
    with cpu_seconds() as cpu:
        result = acks.apply_consumer_breaks([], tokens)
    assert cpu.seconds < 3, cpu.seconds
    assert [t.value for t in result.unmatched] == [t.value for t in tokens]
