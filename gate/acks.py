"""Acknowledgement tokens: how a PR author says "I mean to break this dataset".

Tokens come from three places that are merged: lines in the PR body, the
``--accept`` flag and the ``ACCEPT_BREAKING_CHANGE`` environment variable. A
second key, ``accept-consumer-break: <path>`` (``--accept-consumer-break``,
``ACCEPT_CONSUMER_BREAK``), clears the ``consumer_broken`` findings of one
consumer file, named exactly: the narrow way out when the gate misreads a
reader that still works, instead of switching the rule off. The
PR body is untrusted free text, so it is only ever scanned for the exact key at
the start of a line **that a reader of the rendered description sees**
(``gate.rendered_lines``): a line of a paragraph, a list item or a heading, as
CommonMark renders it. Raw HTML blocks, HTML comments (PR templates explain the
syntax there), attributes and link titles, anything inside a ``hidden``
element or crossed out (``<del>``, ``<s>``, ``<strike>``), fenced and indented
code blocks (where authors quote examples) and block quotes do not count, so a template cannot acknowledge anything by itself.
Inline code spans and emphasis are visible text: ```accept-breaking-change:
a.b``` and ``**accept-breaking-change:** a.b`` count.

"Start of a line" is what the reader sees: Markdown lines end only at LF, CR or
CRLF (not at a vertical tab, form feed, U+0085 or U+2028, which
``str.splitlines`` would also split on); four columns of indentation (a tab
counts to the next tab stop) make a code block, not a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from gate.diff import Change
from gate.model import UsageError
from gate.rules import Severity

if TYPE_CHECKING:  # the Markdown reader is imported only for a body that names a key
    from gate.rendered_lines import Line

KEY = "accept-breaking-change"

#: Clears ``consumer_broken`` findings of one consumer file (its exact path).
CONSUMER_KEY = "accept-consumer-break"


def _line(key: str) -> re.Pattern[str]:
    """A visible line that acknowledges under ``key``: the key first (a bullet or
    number the Markdown left as text, and bold or code marks it did not take, may
    precede it)."""
    return re.compile(
        r"""^[ \t]*
        (?:[-*+][ \t]+|[0-9]{1,9}[.)][ \t]+)?  # a bullet or number left as text
        (?:\*\*|__|`)?               # bold or code marks left as text
        """
        + re.escape(key)
        + r"""
        (?:\*\*|__|`)?
        [ \t]*:[ \t]*(?:\*\*|__)?
        (?P<tokens>.*)$""",
        re.IGNORECASE | re.VERBOSE | re.ASCII,
    )


_LINES = {KEY: _line(KEY), CONSUMER_KEY: _line(CONSUMER_KEY)}
_LINE = _LINES[KEY]
_SPLIT = re.compile(r"[,\s]+")
_STRIP = "`'\"*_<>"


@dataclass(frozen=True)
class Token:
    """One acknowledged dataset name and where it came from (for messages)."""

    value: str
    source: str  # "pr-body:<line>", "--accept" or "ACCEPT_BREAKING_CHANGE"
    #: Which key it came under: ``KEY`` names a dataset, ``CONSUMER_KEY`` a file.
    key: str = KEY


def _split(text: str) -> list[str]:
    if not text:
        return []  # no flag, no variable: the Markdown module is not even imported
    from gate.rendered_lines import PLACEHOLDER

    parts = (part.strip(_STRIP) for part in _SPLIT.split(text))
    return [part for part in parts if part and PLACEHOLDER not in part]


def _lines(body: str) -> tuple[Line, ...]:
    """The visible lines of ``body`` (none when it cannot mention the key at all)."""
    if not any(loose.search(body) for loose in _LOOSE_KEYS.values()):
        return ()  # most bodies: no Markdown parse at all
    from gate.rendered_lines import MAX_BODY_CHARS

    size = len(body.replace("\r\n", "\n"))
    if size > MAX_BODY_CHARS:
        raise UsageError(
            f"the PR body is {size:,} characters, more than the {MAX_BODY_CHARS:,} GitHub "
            "allows; shorten it (acknowledgements are read from the rendered description)"
        )
    return _parsed(body)


@lru_cache(maxsize=4)
def _parsed(body: str) -> tuple[Line, ...]:
    """Parsed once per body: tokens and near misses read the same lines."""
    from gate.rendered_lines import visible_lines

    return tuple(visible_lines(body))


def parse_pr_body(body: str, key: str = KEY) -> list[Token]:
    """Every token in visible ``<key>:`` lines of a PR body (``accept-breaking-change:``).

    ``UsageError`` for a body longer than GitHub allows (``MAX_BODY_CHARS``):
    the parse is linear but slow on hostile Markdown, so it is bounded.
    """
    pattern = _LINES[key]
    tokens: list[Token] = []
    for line in _lines(body):
        match = None if line.quoted or line.raw else pattern.match(line.text)
        if match:
            tokens.extend(
                Token(value, f"pr-body:{line.number}", key) for value in _split(match["tokens"])
            )
    return tokens


#: The keys as people misspell or decorate them: plural, spaces or underscores.
_LOOSE = re.compile(r"accept[\s_-]*breaking[\s_-]*changes?\b", re.IGNORECASE | re.ASCII)
_LOOSE_KEYS = {
    KEY: _LOOSE,
    CONSUMER_KEY: re.compile(
        r"accept[\s_-]*consumers?[\s_-]*break(?:s|ing)?\b", re.IGNORECASE | re.ASCII
    ),
}


def near_misses(body: str, key: str = KEY) -> list[int]:
    """Lines that mention the key but do not acknowledge anything.

    ``accept-breaking-changes:``, ``accept breaking change:``, a quote (``>``)
    or a task-list box before the key: the author meant to acknowledge, and the
    report should say why it did not count rather than only print the FAIL.
    Comments and code blocks are left out (templates explain the syntax
    there); a line of raw HTML is named only when it starts with the key (an
    ``<img>`` pasted on the line before turns the next lines into HTML).
    """
    loose, exact = _LOOSE_KEYS[key], _LINES[key]
    return [
        line.number
        for line in _lines(body)
        if (line.raw and exact.match(line.text))
        or (
            not line.raw and loose.search(line.text) and (line.quoted or not exact.match(line.text))
        )
    ]


def parse_list(text: str | None, source: str, key: str = KEY) -> list[Token]:
    """Tokens from ``--accept a.b,c.d`` or the environment variable."""
    return [Token(value, source, key) for value in _split(text or "")]


def names_for(dataset_id: str) -> set[str]:
    """The names a token may use for a dataset: its id, and ``schema.table`` for
    qualified ids such as ``datasource/schema/table`` (what people type)."""
    names = {dataset_id}
    parts = [p for p in dataset_id.split("/") if p]
    if len(parts) >= 2:
        names.add(".".join(parts[-2:]))
    return names


@dataclass(frozen=True)
class AckResult:
    changes: tuple[Change, ...]
    matched: tuple[str, ...]
    unmatched: tuple[Token, ...]
    #: Short tokens naming several datasets: (token, the full ids it could mean).
    ambiguous: tuple[tuple[Token, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class _Names:
    """Every name a token may use, each with the changed datasets it names: one
    lookup per token (a 64 KB description holds 13,000 of them, and a PR may
    change thousands of datasets; checking every pair took minutes)."""

    exact: dict[str, set[str]]
    short: dict[str, set[str]]

    @classmethod
    def of(cls, datasets: dict[str, set[str]], short_names: Mapping[str, set[str]]) -> _Names:
        exact: dict[str, set[str]] = {}
        short: dict[str, set[str]] = {}
        for dataset, ids in datasets.items():
            for i in ids:
                exact.setdefault(i, set()).add(dataset)
                for name in (*names_for(i), *short_names.get(i, ())):
                    short.setdefault(name, set()).add(dataset)
        return cls(exact, short)

    def targets(self, value: str) -> tuple[set[str], tuple[str, ...]]:
        """(datasets a token acknowledges, candidates when it is ambiguous).

        A changed dataset goes by its id, its old id too for a rename, and dbt's
        ``<project>.<model>`` spellings. A full id wins; a short name
        (``schema.table``, or the bare model name of a dbt model whose name two
        projects share) counts only when it names exactly one dataset, so
        ``shop.orders`` never acknowledges both ``bronze/shop/orders`` and
        ``gold/shop/orders``, nor ``stg_orders`` both ``platform.stg_orders``
        and ``finance.stg_orders``.
        """
        exact = self.exact.get(value)
        if exact:
            return set(exact), ()
        short = self.short.get(value, set())
        if len(short) > 1:
            return set(), tuple(sorted(short))
        return set(short), ()


def apply(
    changes: Sequence[Change],
    tokens: Iterable[Token],
    exact_names: Mapping[str, set[str]] | None = None,
    short_names: Mapping[str, set[str]] | None = None,
) -> AckResult:
    """Mark every blocking-capable change of an acknowledged dataset as ACKED.

    One token covers every breaking change of its dataset; a rename is covered
    by its old or its new name. Tokens that name no changed dataset come back in
    ``unmatched`` so a typo never passes silently; a short name that fits several
    datasets acknowledges none and comes back in ``ambiguous`` with the full ids.
    ``exact_names`` and ``short_names`` give a dataset id more names of either
    kind (dbt: ``model.<project>.<model>``; ``gate.dbt.identity.ack_names``).
    """
    tokens = list(tokens)
    exact_names = exact_names or {}
    short_names = short_names or {}
    datasets: dict[str, set[str]] = {}
    for change in changes:
        datasets.setdefault(change.dataset, {change.dataset})
        if change.old_dataset:
            datasets[change.dataset].add(change.old_dataset)
    for ids in datasets.values():
        ids |= {name for i in list(ids) for name in exact_names.get(i, ())}
    acked: set[str] = set()
    matched: set[str] = set()
    unmatched: list[Token] = []
    ambiguous: list[tuple[Token, tuple[str, ...]]] = []
    seen: set[str] = set()
    names = _Names.of(datasets, short_names)
    for token in tokens:
        targets, candidates = names.targets(token.value)
        if targets:
            acked |= targets
            matched.add(token.value)
        elif token.value not in seen:
            if candidates:
                ambiguous.append((token, candidates))
            else:
                unmatched.append(token)
        seen.add(token.value)
    out = [
        replace(change, acknowledged=True)
        if change.dataset in acked
        and change.severity in (Severity.ERROR, Severity.WARNING)
        and change.spec.acknowledgeable
        else change
        for change in changes
    ]
    return AckResult(tuple(out), tuple(sorted(matched)), tuple(unmatched), tuple(ambiguous))


def apply_consumer_breaks(changes: Sequence[Change], tokens: Iterable[Token]) -> AckResult:
    """Mark the ``consumer_broken`` findings of each named consumer file as ACKED.

    A token is a consumer file's path, matched exactly (no glob, no folder):
    it clears that file's findings and nothing else, so a reviewer reads in the
    PR description which reader the author vouches for. A path with no
    blocking-capable ``consumer_broken`` finding comes back in ``unmatched``.
    """
    tokens = list(tokens)
    broken = {
        c.path
        for c in changes
        if not c.spec.acknowledgeable and c.severity in (Severity.ERROR, Severity.WARNING)
    }
    matched = {t.value for t in tokens if t.value in broken}
    unmatched: list[Token] = []
    listed: set[str] = set()
    for token in tokens:
        if token.value not in broken and token.value not in listed:
            unmatched.append(token)
            listed.add(token.value)
    out = [
        replace(change, acknowledged=True)
        if not change.spec.acknowledgeable
        and change.path in matched
        and change.severity in (Severity.ERROR, Severity.WARNING)
        else change
        for change in changes
    ]
    return AckResult(tuple(out), tuple(sorted(matched)), tuple(unmatched))
