"""A refusal explained: one jsonschema error as one line naming the key, the line and the fix.

Split from the validation because the wording is a job of its own: the most
useful error among many (``_first``), an unknown key with the closest known
one, a required key, a wrong type (``quote it``), a value outside an enum,
branches that each want one key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gate.formats.common import describe
from gate.formats.validate.dbt_scope import _dbt_movable, _near_misses
from gate.formats.validate.locate import (
    _QUOTED,
    _UNKNOWN,
    _line,
    _short,
    _suggest,
    _unexpected,
    _where,
)
from gate.formats.validate.schemas import _LABELS, _known_keys, load_schema
from gate.model import ContractError


def _first(errors: Iterable[Any]) -> Any | None:
    """The most useful error: jsonschema's best match among the first few."""
    from jsonschema.exceptions import best_match

    collected = []
    for error in errors:
        collected.append(error)
        if len(collected) >= 20:
            break
    # ``unevaluatedProperties`` also fires on keys a failed ``oneOf`` branch left
    # unevaluated; the branch's own error is the one to show.
    paths = [tuple(e.absolute_path) for e in collected if e.validator != "unevaluatedProperties"]
    primary = [
        e
        for e in collected
        if e.validator != "unevaluatedProperties" or tuple(e.absolute_path) not in paths
    ]
    if not primary:
        return None
    return best_match(primary)


def _to_contract_error(error: Any, doc: Any, path: str, name: str) -> ContractError:
    label = _LABELS.get(name, name)
    location = list(error.absolute_path)
    where = _where(location)
    at = f" in {where}" if where else ""
    if error.validator in _UNKNOWN:
        root = load_schema(name)
        known = _known_keys(error.schema, root)
        keys = _unexpected(error, known)
        if name == "dbt-properties":  # name the typo, not a key dbt moved into config
            movable = _dbt_movable(error, root)
            misses = [k for k in _near_misses(error, known) if k not in movable]
            keys = misses or [k for k in keys if k not in movable] or keys
        key = keys[0] if keys else "?"
        line = _line(doc, [*location, key])
        return ContractError(
            path, f"unknown key '{key}'{at}{_suggest(key, known)} [{label} schema]", line
        )
    line = _line(doc, location)
    alternatives = _required_alternatives(error)
    if alternatives:
        shown = ", ".join(alternatives)
        return ContractError(
            path, f"{where or 'the top level'} needs one of: {shown} [{label} schema]", line
        )
    if error.validator == "required":
        missing = _QUOTED.findall(error.message)[:1]
        what = f"'{missing[0]}'" if missing else "a required key"
        return ContractError(path, f"{what} is required{at} [{label} schema]", line)
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        hint = " (quote it)" if expected == "string" and not isinstance(error.instance, str) else ""
        return ContractError(
            path,
            f"{where or 'the top level'} must be {expected}, found "
            f"{describe(error.instance)}{hint} [{label} schema]",
            line,
        )
    if error.validator in ("enum", "const"):
        allowed = error.validator_value
        allowed = allowed if isinstance(allowed, list) else [allowed]
        shown = ", ".join(str(v) for v in allowed[:12]) + (", ..." if len(allowed) > 12 else "")
        return ContractError(
            path,
            f"{where or 'the value'}: {_short(error.instance)!r} is not allowed "
            f"(expected one of: {shown}) [{label} schema]",
            line,
        )
    message = " ".join(str(error.message).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return ContractError(path, f"{where or 'the top level'}: {message} [{label} schema]", line)


def _required_alternatives(error: Any) -> list[str]:
    """For a ``oneOf``/``anyOf`` whose branches each want one key: those keys."""
    parent = error if error.validator in ("oneOf", "anyOf") else error.parent
    if parent is None or parent.validator not in ("oneOf", "anyOf"):
        return []
    context = parent.context or []
    if not context or any(c.validator != "required" for c in context):
        return []
    keys: list[str] = []
    for sub in context:
        keys += [k for k in _QUOTED.findall(sub.message)[:1] if k not in keys]
    return keys
