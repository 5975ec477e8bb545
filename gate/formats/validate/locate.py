"""Where a schema violation is in the document, and which keys it is about.

Split from the validation because every kind of finding (Soda and DCS key
checks, ODCS/DCS warnings, dbt near misses, refusals) needs the same answers:
the dotted path and the line of a key, the unexpected keys of a jsonschema
error, and the closest known key to suggest.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from gate.yaml_load import YList, YMap

_UNKNOWN = ("additionalProperties", "unevaluatedProperties")


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _unexpected(error: Any, known: set[str]) -> list[Any]:
    instance = error.instance
    if isinstance(instance, dict):
        patterns = list((error.schema.get("patternProperties") or {}).keys())
        extra = [
            key
            for key in instance
            if key not in known and not any(re.search(p, str(key)) for p in patterns)
        ]
        if extra:
            return extra
    return _QUOTED.findall(error.message)[:1]


def _suggest(key: Any, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    if not close:
        close = [k for k in sorted(known) if k.lower() == str(key).lower()]
    return f" (did you mean '{close[0]}'?)" if close else ""


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _container(doc: Any, path: Iterable[Any]) -> list[Any]:
    """Every value from the document root down ``path``."""
    chain = [doc]
    node = doc
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        chain.append(node)
    return chain


def _line(doc: Any, path: list[Any]) -> int | None:
    chain = _container(doc, path)
    if len(chain) == len(path) + 1 and path:
        parent, key = chain[-2], path[-1]
        if isinstance(parent, YMap):
            return parent.key_line(key)
        if isinstance(parent, YList) and isinstance(key, int):
            return parent.item_line(key)
    for node in reversed(chain):
        if isinstance(node, (YMap, YList)):
            return node.line
    return 1


def _short(value: Any) -> Any:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
