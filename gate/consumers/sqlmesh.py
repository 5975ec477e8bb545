"""SQLMesh models: a ``MODEL (...)`` header, then the query.

sqlglot parses the query but not the header (SQLMesh extends the dialect for
it), so the header is cut out after reading its ``name``, and SQLMesh macro
references (``@start_ds``, ``@EACH(...)``) become ``NULL`` so the rest parses.
Line breaks are kept, so lines still point into the model file.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"\A(?:\s|--[^\n]*\n|/\*.*?\*/)*(?P<kw>MODEL|AUDIT)\s*\(", re.I | re.S)
_NAME = re.compile(r"\bname\s+(?P<name>[\w.\"`]+)", re.I)
_DIALECT = re.compile(r"\bdialect\s+['\"]?(?P<dialect>\w+)", re.I)
_MACRO = re.compile(r"@\{?\w+\}?")


def is_model(text: str) -> bool:
    return _HEADER.match(text) is not None


def _balanced(text: str, start: int) -> int:
    """Index just past the parenthesis that closes the one before ``start``."""
    depth = 1
    i = start
    quote: str | None = None
    while i < len(text):
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
        i += 1
    return -1


def _blank(text: str) -> str:
    return "\n" * text.count("\n")


def dialect_of(text: str) -> str | None:
    """The ``dialect`` property of the header, if the model names one."""
    match = _HEADER.match(text)
    if match is None:
        return None
    end = _balanced(text, match.end())
    found = _DIALECT.search(text[match.end() : end if end > 0 else len(text)])
    return found["dialect"].lower() if found else None


def split(text: str) -> tuple[str | None, str]:
    """(model name, the query with the header blanked); ``ValueError`` if unbalanced."""
    match = _HEADER.match(text)
    if match is None:
        return None, text
    end = _balanced(text, match.end())
    if end < 0:
        raise ValueError(f"the {match['kw'].upper()} (...) header is not closed")
    header = text[:end]
    name_match = _NAME.search(header, match.end())
    rest = text[end:]
    semicolon = re.match(r"\s*;", rest)
    if semicolon:
        rest = _blank(semicolon.group(0)) + rest[semicolon.end() :]
    query = _blank(header) + _macros(rest)
    return (name_match["name"].strip('"`') if name_match else None), query


def _macros(text: str) -> str:
    """``@macro(...)`` calls and ``@var`` references -> ``NULL`` (lines kept)."""
    out: list[str] = []
    i = 0
    for match in _MACRO.finditer(text):
        if match.start() < i:
            continue
        out.append(text[i : match.start()])
        end = match.end()
        if text[end : end + 1] == "(":
            close = _balanced(text, end + 1)
            end = close if close > 0 else end
        out.append("NULL" + _blank(text[match.start() : end]))
        i = end
    out.append(text[i:])
    return "".join(out)
