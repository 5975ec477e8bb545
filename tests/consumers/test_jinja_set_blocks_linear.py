"""Review of integ36: ``_expand_set_blocks`` scans a reader file in linear time.

A reader file is untrusted text of up to ``limits.consumer_bytes`` (256 KiB). Set
openers with no ``{% endset %}`` after them (the word ``endset`` elsewhere) made the
block pattern scan to the end from each opener, and many distinct set blocks each
searched the whole text twice: quadratic, ~70 s and ~17 s for one 256 KiB file.
"""

from __future__ import annotations

import time

from gate.consumers.jinja import render_with_refs

SIZE = 256 * 1024


def _took(text: str) -> float:
    start = time.perf_counter()
    render_with_refs(text)
    return time.perf_counter() - start


def test_set_openers_without_an_endset_tag_are_linear() -> None:
    text = "{% set a %}" * (SIZE // 11) + " -- endset\nselect 1\n"
    assert _took(text) < 2.0


def test_many_distinct_set_blocks_are_linear() -> None:
    one = "{%% set q%d %%}x{%% endset %%}\n"
    text = "".join(one % i for i in range(SIZE // len(one % 10000)))
    assert _took(text + "select 1\n") < 2.0


def test_expansion_unchanged_by_the_scan() -> None:
    text = (
        "{% set a %}select id from {{ ref('orders') }}{% endset %}\n"
        "{% set b = 1 %}{% set b %}select 2{% endset %}\n"
        "select * from ({{ a }}) x join ({{- a -}}) y on true, ({{ b }})\n"
    )
    sql, _nested = render_with_refs(text)
    assert sql.count("orders") == 2, sql
    assert sql.count("\n") == text.count("\n")
