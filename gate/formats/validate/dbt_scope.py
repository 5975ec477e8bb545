"""Which dbt schema violations the gate refuses: near misses of known keys on enforced models.

Split from the validation because dbt is checked as dbt itself checks: dbt-core
only warns about most violations and keeps extra keys, so only a misspelt known
key, on a model whose contract is enforced, is a refusal; keys dbt >= 1.10
moved into ``config`` are read in either place.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from typing import Any

from gate.formats.validate.locate import _UNKNOWN, _unexpected
from gate.formats.validate.schemas import _known_keys, _resolve, load_schema
from gate.model import Contract


def _enforced_models(contract: Contract | None) -> set[str] | None:
    """Names of the models a parsed dbt file enforces (``None``: not known, check all)."""
    if contract is None:
        return None
    return {_VERSIONED.sub("", d.id) for d in contract.datasets if d.enforced and d.enabled}


_VERSIONED = re.compile(r"\.v[^.]+$")


def _model_name(doc: Any, path: Iterable[Any]) -> str | None:
    parts = list(path)
    if len(parts) < 2 or parts[0] != "models" or not isinstance(parts[1], int):
        return None
    try:
        name = doc["models"][parts[1]].get("name")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _near_misses(error: Any, known: set[str]) -> list[Any]:
    """Unknown keys that are a near miss of a known key absent at the same level.

    dbt keeps other keys (custom properties); a near miss is the typo that makes
    the gate, and dbt, silently read less than the author wrote.
    """
    instance = error.instance if isinstance(error.instance, dict) else {}
    absent = sorted(k for k in known if k not in instance)
    out = []
    for key in _unexpected(error, known):
        text = str(key)
        if difflib.get_close_matches(text, absent, n=1, cutoff=0.8) or any(
            k.lower() == text.lower() for k in absent
        ):
            out.append(key)
    return out


def _dbt_relevant(
    errors: Iterable[Any], doc: Any = None, enforced: set[str] | None = None
) -> Iterator[Any]:
    """Near misses of known keys on enforced models, their versions, columns and
    constraints; nothing else.

    dbt-core itself turns schema violations into deprecation warnings, accepts
    Jinja where the schema wants other types and keeps extra keys; a misspelt
    known key is the one violation that makes the gate compare less than the
    author wrote, and it matters only where the model is a contract.
    """
    for error in errors:
        if error.validator not in _UNKNOWN:
            continue
        parts = [p for p in error.absolute_path if isinstance(p, str)]
        if not parts or parts[0] != "models":
            continue
        if any(p in ("config", "data_tests", "tests", "meta", "docs") for p in parts[1:]):
            continue
        if enforced is not None and _model_name(doc, error.absolute_path) not in enforced:
            continue
        root = load_schema("dbt-properties")
        movable = _dbt_movable(error, root)
        misses = _near_misses(error, _known_keys(error.schema, root))
        if all(key in movable for key in misses):
            continue
        yield error


def _dbt_movable(error: Any, root: dict[str, Any]) -> set[str]:
    """Keys dbt >= 1.10 moved into ``config`` and still reads in the old place.

    dbt only warns about them ("property moved to config"), so they are neither
    a refusal nor the key to name when a real typo sits beside them.
    """
    config = _resolve(error.schema, root).get("properties", {}).get("config")
    return _known_keys(config, root) if config is not None else set()
