"""SQLMesh models: a ``MODEL (...)`` header, then the query.

sqlglot parses the query but not the header (SQLMesh extends the dialect for
it), so the header is cut out after reading its ``name``, and SQLMesh macro
references (``@start_ds``, ``@EACH(...)``) become ``NULL`` so the rest parses.
Line breaks are kept, so lines still point into the model file.

Every pass here is one linear scan: a model is untrusted text, and a regex
that backtracks over comments, or a search for a closing parenthesis from each
of 20,000 unclosed ``@a(``, took minutes on a few kilobytes (issue #27).
"""

from __future__ import annotations

import re

_KEYWORD = re.compile(r"(?P<kw>MODEL|AUDIT)\s*\(", re.I)
_NAME = re.compile(r"\bname\s+(?P<name>[\w.\"`]+)", re.I)
_DIALECT = re.compile(r"\bdialect\s+['\"]?(?P<dialect>\w+)", re.I)
_MACRO = re.compile(r"@\{?\w+\}?")


class _Header:
    """Where the ``MODEL (`` / ``AUDIT (`` keyword is and where its body starts."""

    def __init__(self, keyword: str, body: int) -> None:
        self.keyword = keyword
        self.body = body


def _header(text: str) -> _Header | None:
    """The header after leading blanks and comments, found in one pass.

    (A regex ``(?:\\s|--...|/\\*.*?\\*/)*MODEL`` backtracks through every way
    of grouping the comments: 30 empty ``/* */`` took minutes.)
    """
    i, size = 0, len(text)
    while i < size:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            if end < 0:
                return None
            i = end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return None
            i = end + 2
        else:
            break
    match = _KEYWORD.match(text, i)
    return _Header(match["kw"], match.end()) if match else None


def is_model(text: str) -> bool:
    return _header(text) is not None


def _closers(text: str) -> dict[int, int]:
    """For each ``(``, the index just past the ``)`` that closes it.

    One pass with a stack, skipping quoted strings and comments (an apostrophe
    in ``-- the customer's orders`` opens no string); an unclosed ``(`` has no entry.
    """
    closers: dict[int, int] = {}
    stack: list[int] = []
    i, size = 0, len(text)
    while i < size:
        ch = text[i]
        if ch in "'\"":
            end = text.find(ch, i + 1)
            i = size if end < 0 else end + 1
            continue
        if ch == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = size if end < 0 else end + 1
            continue
        if ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = size if end < 0 else end + 2
            continue
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            closers[stack.pop()] = i + 1
        i += 1
    return closers


def _balanced(text: str, start: int) -> int:
    """Index just past the parenthesis that closes the one before ``start``; -1 if none."""
    depth = 1
    quote: str | None = None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _blank(text: str) -> str:
    return "\n" * text.count("\n")


def dialect_of(text: str) -> str | None:
    """The ``dialect`` property of the header, if the model names one."""
    header = _header(text)
    if header is None:
        return None
    end = _balanced(text, header.body)
    found = _DIALECT.search(text[header.body : end if end > 0 else len(text)])
    return found["dialect"].lower() if found else None


def split(text: str) -> tuple[str | None, str]:
    """(model name, the query with the header blanked); ``ValueError`` if unbalanced."""
    header = _header(text)
    if header is None:
        return None, text
    end = _balanced(text, header.body)
    if end < 0:
        raise ValueError(f"the {header.keyword.upper()} (...) header is not closed")
    name_match = _NAME.search(text, header.body, end)
    rest = text[end:]
    semicolon = re.match(r"\s*;", rest)
    if semicolon:
        rest = _blank(semicolon.group(0)) + rest[semicolon.end() :]
    query = _blank(text[:end]) + _macros(rest)
    return (name_match["name"].strip('"`') if name_match else None), query


def _macros(text: str) -> str:
    """``@macro(...)`` calls and ``@var`` references -> ``NULL`` (lines kept)."""
    out: list[str] = []
    i = 0
    closers: dict[int, int] | None = None
    for match in _MACRO.finditer(text):
        if match.start() < i:
            continue
        out.append(text[i : match.start()])
        end = match.end()
        if text[end : end + 1] == "(":
            if closers is None:
                closers = _closers(text)
            # An unclosed call keeps its text (sqlglot then reports it).
            end = closers.get(end, end)
        out.append("NULL" + _blank(text[match.start() : end]))
        i = end
    out.append(text[i:])
    return "".join(out)
