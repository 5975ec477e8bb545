"""Bounds on a type's text, checked in one linear scan before sqlglot sees it.

Split from the lattice because it guards the parser rather than ordering types:
sqlglot's cost grows with the text (and comparing nested types more than
linearly), so an oversized type is refused by the formats with its file and
line, and never parsed.
"""

from __future__ import annotations

import re

#: Bounds on one type's text, checked before sqlglot sees it. sqlglot's cost
#: grows with the text (and comparing nested types more than linearly): a
#: decimal with 50,000 parameters took 48 s, a 10,000-field struct 29 s. Real
#: types stay far below: a wide Spark struct has a few hundred fields.
MAX_TYPE_CHARS = 10_000
MAX_TYPE_PARAMS = 64  # values in one parenthesized list: DECIMAL(p,s), ENUM('a', ...)
MAX_TYPE_DEPTH = 32  # nested <...> and (...)
MAX_STRUCT_FIELDS = 1_000  # items of every <...> list in the type together

_TYPE_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|[<>(),]")


def check_bounds(text: str) -> str | None:
    """Why ``text`` is too large to parse as a type, or ``None`` when it is not.

    A single linear scan, so the answer is immediate at any size. Quoted names
    and string literals are skipped; struct fields are counted as the items of
    every ``<...>`` list (``MAP<K, V>`` counts two), parameters as the items of
    one ``(...)`` list.
    """
    if len(text) > MAX_TYPE_CHARS:
        return f"is {len(text):,} characters long, more than {MAX_TYPE_CHARS:,}"
    depth = 0
    commas: list[int] = [0]  # per open bracket: commas seen so far
    angled: list[bool] = [False]
    fields = 0
    for match in _TYPE_TOKENS.finditer(text):
        token = match.group()
        if token in "<(":
            depth += 1
            if depth > MAX_TYPE_DEPTH:
                return f"nests more than {MAX_TYPE_DEPTH} levels deep"
            commas.append(0)
            angled.append(token == "<")
            fields += token == "<"
        elif token in ">)":
            if depth:
                depth -= 1
                commas.pop()
                angled.pop()
        elif token == ",":
            commas[-1] += 1
            if not angled[-1] and commas[-1] >= MAX_TYPE_PARAMS:
                return f"has more than {MAX_TYPE_PARAMS} parameters in one list"
            fields += angled[-1]
        if fields > MAX_STRUCT_FIELDS:
            return f"has more than {MAX_STRUCT_FIELDS:,} struct fields"
    return None
