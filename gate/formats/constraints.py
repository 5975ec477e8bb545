"""Value constraints of a field (``minimum``, ``pattern``, ``minLength``...) into the model.

DCS writes them on the field, ODCS under ``logicalTypeOptions`` and Soda as the
validity options of a column or an ``invalid`` check (``valid_min``,
``valid_max_length``...). They all land in ``Column.constraints`` under the
DCS/ODCS key names, so one rule family compares them (gate/diff/constraints.py).
Constraints that a format turns into the type (a string's ``maxLength`` becomes
``varchar(n)``) are left out by the caller: they are compared as types.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from gate.formats.common import describe
from gate.model import ContractError

#: Bounds: a number, or a date/timestamp written as text (ISO 8601).
BOUND_KEYS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
#: Whole-number limits on lengths and sizes.
COUNT_KEYS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
#: Text the gate cannot order: a changed value is undecidable.
TEXT_KEYS = ("pattern", "format")
FLAG_KEYS = ("uniqueItems",)
KEYS = BOUND_KEYS + COUNT_KEYS + TEXT_KEYS + FLAG_KEYS

#: Soda validity options -> the DCS/ODCS key that means the same.
SODA_KEYS = {
    "valid_min": "minimum",
    "valid_max": "maximum",
    "valid_min_length": "minLength",
    "valid_max_length": "maxLength",
    "valid_format": "format",
    "valid_regex_sql": "pattern",
}


_IDENTITY = {key: key for key in KEYS}

#: A whole scalar that names a contract variable (Soda v4 ``${var.max_len}``, v3
#: ``${MAX_LEN}``): its value is only known when the contract runs, so the text
#: is kept and compared as text (a changed name is ``constraint_changed``).
VARIABLE = re.compile(r"\$\{\s*[A-Za-z_][\w.]*\s*\}")


def is_variable(value: Any) -> bool:
    """True for a scalar that is exactly one ``${...}`` variable reference."""
    return isinstance(value, str) and VARIABLE.fullmatch(value.strip()) is not None


def _scalar(value: Any) -> Any:
    """YAML dates become ISO text, so the model stays JSON-friendly and comparable."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def read(
    mapping: Mapping[str, Any],
    path: str,
    what: str,
    line_of: Any,
    *,
    skip: Iterable[str] = (),
    keys: Mapping[str, str] | None = None,
) -> tuple[tuple[str, Any], ...]:
    """The constraints ``mapping`` declares, as sorted ``(key, value)`` pairs.

    ``keys`` maps the format's spelling to the model's (identity by default);
    ``skip`` names model keys the caller already turned into the type. ODCS v3.0
    writes ``exclusiveMinimum: true`` beside ``minimum``: that is folded into an
    exclusive bound so both spellings compare equal.
    """
    keys = keys or _IDENTITY
    if mapping.keys().isdisjoint(keys):
        return ()  # most columns declare none: no loop, no sort
    skipped = set(skip)
    found: dict[str, Any] = {}
    for raw, key in keys.items():
        if key in skipped or mapping.get(raw) is None:
            continue
        value = _scalar(mapping[raw])
        where = line_of(raw)
        if key in TEXT_KEYS and isinstance(value, Mapping) and isinstance(value.get("regex"), str):
            # Soda v4 ``valid_format: {name: ..., regex: ...}``: the regex is what is
            # checked, so it is a ``pattern`` (compared as a language), not a named format.
            value, key = value["regex"], "pattern"
        if is_variable(value) and key in BOUND_KEYS + COUNT_KEYS:
            found[key] = value.strip()  # known only at run time: compared as text
            continue
        if key in COUNT_KEYS and (isinstance(value, bool) or not isinstance(value, int)):
            raise ContractError(
                path, f"{what}: '{raw}' must be a whole number, found {describe(value)}", where
            )
        if key in TEXT_KEYS and not isinstance(value, str):
            raise ContractError(
                path,
                f"{what}: '{raw}' must be a string (or a mapping with a 'regex'), "
                f"found {describe(value)}",
                where,
            )
        if key in FLAG_KEYS and not isinstance(value, bool):
            raise ContractError(
                path, f"{what}: '{raw}' must be true or false, found {describe(value)}", where
            )
        if key in BOUND_KEYS and not isinstance(value, (bool, int, float, str)):
            raise ContractError(
                path, f"{what}: '{raw}' must be a number or a date, found {describe(value)}", where
            )
        found[key] = value
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = found.get(exclusive)
        if isinstance(flag, bool):
            del found[exclusive]
            if flag and inclusive in found:
                found[exclusive] = found.pop(inclusive)
    if found.get("uniqueItems") is False:
        del found["uniqueItems"]  # the default: saying it is no constraint
    return tuple(sorted(found.items()))
