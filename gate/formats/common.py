"""Validation helpers every format parser shares.

Each helper raises ``ContractError`` with the file and the line of the
offending key, so every format fails closed with the same precise message
style: ``soda/contracts/orders.yaml:12: column 'id' is declared twice``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gate.model import Column, ContractError
from gate.yaml_load import YList, YMap, line_of


def describe(value: Any) -> str:
    """Name a YAML value's kind the way a contract author thinks of it."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def require_mapping(value: Any, path: str, what: str, line: int | None = None) -> YMap:
    if not isinstance(value, dict):
        raise ContractError(path, f"{what} must be a mapping, found {describe(value)}", line)
    if not isinstance(value, YMap):  # plain dicts come only from tests; give them no lines
        wrapped = YMap(value)
        wrapped.line = line or 1
        wrapped.key_lines = {}
        return wrapped
    return value


def require_list(value: Any, path: str, what: str, line: int | None = None) -> YList:
    if not isinstance(value, list):
        raise ContractError(path, f"{what} must be a list, found {describe(value)}", line)
    if not isinstance(value, YList):
        wrapped = YList(value)
        wrapped.line = line or 1
        wrapped.item_lines = []
        return wrapped
    return value


def optional_list(mapping: YMap, key: str, path: str, what: str) -> YList:
    """The list under ``key``, or an empty list when the key is absent or null."""
    value = mapping.get(key)
    if value is None:
        empty = YList()
        empty.line = mapping.key_line(key)
        empty.item_lines = []
        return empty
    return require_list(value, path, what, mapping.key_line(key))


def items(values: YList) -> Iterator[tuple[int, Any, int]]:
    """(index, item, line) for every list item."""
    for index, item in enumerate(values):
        yield index, item, values.item_line(index)


def require_str(mapping: YMap, key: str, path: str, what: str) -> str:
    """A required, non-empty string value."""
    if key not in mapping or mapping[key] is None:
        raise ContractError(path, f"{what} is missing", mapping.line)
    value = mapping[key]
    if not isinstance(value, str) or isinstance(value, bool):
        raise ContractError(
            path, f"{what} must be a string, found {describe(value)}", mapping.key_line(key)
        )
    if not value.strip():
        raise ContractError(path, f"{what} is empty", mapping.key_line(key))
    return value.strip()


def optional_str(mapping: YMap, key: str, path: str, what: str) -> str | None:
    """A string value that may be absent; ``data_type: 123`` is refused, not coerced."""
    value = mapping.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str):
        raise ContractError(
            path, f"{what} must be a string, found {describe(value)}", mapping.key_line(key)
        )
    return value.strip() or None


def optional_version(mapping: YMap, key: str, path: str, what: str) -> str | None:
    """A version that YAML may have read as a number (``version: 1.0``)."""
    value = mapping.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ContractError(
            path, f"{what} must be a string, found {describe(value)}", mapping.key_line(key)
        )
    return str(value).strip() or None


def optional_bool(mapping: YMap, key: str, path: str, what: str) -> bool | None:
    value = mapping.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ContractError(
            path,
            f"{what} must be true or false, found {describe(value)}",
            mapping.key_line(key),
        )
    return value


def reject_duplicate_columns(columns: list[Column], path: str, owner: str) -> None:
    """Refuse two columns whose names differ only by case.

    Delta Lake, Parquet readers and most warehouses treat such names as the same
    column (or refuse them), so a contract that declares both cannot be honoured.
    """
    seen: dict[str, Column] = {}
    for column in columns:
        folded = column.name.casefold()
        if folded in seen:
            first = seen[folded]
            same = "twice" if first.name == column.name else f"twice (as '{first.name}')"
            raise ContractError(
                path, f"{owner}: column '{column.name}' is declared {same}", column.line
            )
        seen[folded] = column


def scalar_tuple(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    """A list of scalar values (enums, valid_values) as strings, order kept."""
    values = require_list(value, path, what, line)
    out: list[str] = []
    for _index, item, item_line in items(values):
        if isinstance(item, (dict, list)) or item is None:
            raise ContractError(
                path, f"{what} must hold plain values, found {describe(item)}", item_line
            )
        out.append(str(item).lower() if isinstance(item, bool) else str(item))
    return tuple(out)


__all__ = [
    "describe",
    "items",
    "line_of",
    "optional_bool",
    "optional_list",
    "optional_str",
    "optional_version",
    "reject_duplicate_columns",
    "require_list",
    "require_mapping",
    "require_str",
    "scalar_tuple",
]
