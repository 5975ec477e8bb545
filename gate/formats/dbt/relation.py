"""dbt's relation configs: ``database``, ``schema`` and ``alias``, as written at one level.

dbt builds a model into ``<database>.<schema>.<alias>``: ``generate_database_name``,
``generate_schema_name`` and ``generate_alias_name`` turn the configured values
into the final names (by default: the target's database; the target's schema,
or ``<target_schema>_<custom>``; the alias, else the model's name). The configs
are set, most specific first, in the model file's ``config()``, its properties
entry's ``config:`` (a version's over its model's) and ``dbt_project.yml`` along
the model's folders. dbt-bigquery reads ``project`` as ``database`` and
``dataset`` as ``schema`` (dbt-core's ``AdapterConfig`` aliases), so one part
written either way is one value.

The default macros ``trim`` a value, so a value is kept trimmed. A constant Jinja
string (``"{{ 'marts' }}"``) is folded to its text; any other Jinja stays as
written (``{{ var('schema') }}``), so an unchanged expression compares equal and
a changed one is a change. This module reads; ``gate.diff.datasets`` compares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gate.formats.common import describe
from gate.model import ContractError

PARTS = ("database", "schema", "alias")
#: config key -> the part it sets; the canonical keys come last so they win a tie.
KEYS = {
    "project": "database",
    "dataset": "schema",
    "database": "database",
    "schema": "schema",
    "alias": "alias",
}

#: What one level says: part -> value (``None``: set to none, which resets it).
Said = dict[str, str | None]

_CONSTANT = re.compile(r"""^\{\{-?\s*(['"])([^'"{}\\]*)\1\s*-?\}\}$""")
_EXPRESSION = re.compile(r"^\{\{-?(.*?)-?\}\}$", re.DOTALL)
_STRING = re.compile(r"""^(['"])([^'"\\]*)\1$""")


def text(raw: str) -> str:
    """A value as dbt's default macros use it: trimmed, constant Jinja folded; other
    Jinja spelled one way (``{{ var('s') }}``), so only a changed expression differs."""
    stripped = raw.strip()
    match = _CONSTANT.match(stripped)
    if match:
        return match[2].strip()
    match = _EXPRESSION.match(stripped)
    return expression(match[1]) if match else stripped


_WORD = re.compile(r"[\w'\"]")
_OPERATOR = frozenset("+-*/%<>=!~|.")


def expression(code: str) -> str:
    """A Jinja expression as a value's text: ``{{ <code> }}`` spelt one way, so only a
    changed expression differs: a string literal without quotes or backslashes in
    single quotes (``"s"`` and ``'s'`` are one string to Jinja), whitespace dropped
    except between two word characters (quotes count) or two operator characters,
    where dropping it would join tokens (``not x``, ``* *``). One pass: a string
    is scanned to its closing quote once (an unclosed one runs to the end)."""
    code = code.strip()
    out: list[str] = []
    space = False
    index = 0
    while index < len(code):
        char = code[index]
        if char.isspace():
            space = True
            index += 1
            continue
        if char in "'\"":
            end = index + 1
            while end < len(code) and code[end] != char:
                end += 2 if code[end] == "\\" else 1
            inner = code[index + 1 : end]
            closed = end < len(code)
            plain = closed and not any(c in inner for c in "'\"\\")
            piece = f"'{inner}'" if plain else code[index : end + 1]
            index = end + 1
        else:
            piece = char
            index += 1
        if space and out and _joins(out[-1][-1], piece[0]):
            out.append(" ")
        out.append(piece)
        space = False
    return "{{ " + "".join(out) + " }}"


def _joins(left: str, right: str) -> bool:
    """Whether ``left`` and ``right`` are kept apart by a space (both word-like or
    both operators: written together they would read otherwise, or less clearly)."""
    if _WORD.match(left) and _WORD.match(right):
        return True
    return left in _OPERATOR and right in _OPERATOR


def argument(code: str) -> str | None:
    """A ``config()`` argument: a string literal's text, ``none``, else the expression."""
    stripped = code.strip()
    if stripped in ("none", "None"):
        return None
    match = _STRING.match(stripped)
    return text(match[2]) if match else expression(stripped)


def value(raw: Any, path: str, what: str, line: int | None) -> str | None:
    """One YAML config value: a name (numbers read as their text), or ``None``."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ContractError(path, f"{what} must be a name, found {describe(raw)}", line)
    return text(str(raw))


def from_mapping(config: Mapping[Any, Any], path: str, owner: str) -> Said:
    """The relation parts a properties entry's ``config:`` mapping sets."""
    said: Said = {}
    line_of = getattr(config, "key_line", None)
    for key, part in KEYS.items():
        if key in config:
            line = line_of(key) if line_of else None
            said[part] = value(config[key], path, f"{owner}: 'config.{key}'", line)
    return said


def first(*levels: Mapping[str, str | None]) -> Said:
    """Each part from the most specific level that sets it (callers list most specific first)."""
    out: Said = {}
    for level in reversed(levels):
        out.update(level)
    return out
