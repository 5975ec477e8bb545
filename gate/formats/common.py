"""Validation helpers every format parser shares.

Each helper raises ``ContractError`` with the file and the line of the
offending key, so every format fails closed with the same precise message
style: ``soda/contracts/orders.yaml:12: column 'id' is declared twice``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import MISSING, fields
from typing import Any, TypeVar

from gate.model import Check, Column, ContractError, Dataset
from gate.yaml_load import YList, YMap, line_of

T = TypeVar("T")


def direct_constructor(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen dataclass ``cls`` that sets all fields at once.

    A frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, one call per field: for the model's 14-field
    ``Column`` about three times the cost of filling the instance's ``__dict__``
    in one step, which is what this does (the defaults, then ``values``). Only
    for a class with no ``__post_init__``, no slots and plain defaults, which is
    checked here; the caller passes every field without a default.
    """
    # Every field in declaration order (``__init__``'s), so ``vars()`` matches too;
    # a field without a default keeps its place until ``values`` fills it.
    defaults: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a default factory")
        defaults[f.name] = f.default
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: __post_init__ or slots")
    new = object.__new__
    set_dict = object.__setattr__

    def construct(**values: Any) -> T:
        instance = new(cls)
        set_dict(instance, "__dict__", {**defaults, **values})
        return instance

    return construct


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
            same = (
                "twice"
                if first.name == column.name
                else f"twice (as '{first.name}'): names differing only in case are one "
                "column to Delta Lake, Parquet readers and most warehouses"
            )
            raise ContractError(
                path, f"{owner}: column '{column.name}' is declared {same}", column.line
            )
        seen[folded] = column


def scalar_text(value: Any) -> str:
    """One enum value as text: booleans and null as YAML writes them (``true``, ``null``)."""
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def scalar_tuple(
    value: Any, path: str, what: str, line: int | None, allow_null: bool = False
) -> tuple[str, ...]:
    """A list of scalar values (enums, valid_values) as strings, order kept.

    ``allow_null`` admits ``null`` items, as ODCS's own validity example does
    (``validValues: [..., null]`` says null is a valid value); it reads as ``null``.
    """
    values = require_list(value, path, what, line)
    out: list[str] = []
    for _index, item, item_line in items(values):
        if isinstance(item, (dict, list)) or (item is None and not allow_null):
            raise ContractError(
                path, f"{what} must hold plain values, found {describe(item)}", item_line
            )
        out.append(scalar_text(item))
    return tuple(out)


def optional_int(
    mapping: YMap, key: str, path: str, what: str, minimum: int | None = None
) -> int | None:
    """A whole number that may be absent (``precision: 10``); ``10.5`` or ``"10"`` is refused."""
    value = mapping.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContractError(
            path, f"{what} must be a whole number, found {describe(value)}", mapping.key_line(key)
        )
    if minimum is not None and value < minimum:
        raise ContractError(
            path, f"{what} must be at least {minimum}, found {value}", mapping.key_line(key)
        )
    return value


def decimal_type(precision: int | None, scale: int | None) -> str:
    """``decimal(p,s)`` with the defaults DCS documents (precision 38, scale 0)."""
    return f"decimal({38 if precision is None else precision},{0 if scale is None else scale})"


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_case(name: str) -> str:
    """``nullValues`` -> ``null_values``: DCS/ODCS metric names as check kinds."""
    return _CAMEL.sub("_", name.strip()).replace("-", "_").replace(" ", "_").lower()


#: Keys of a DCS/ODCS quality entry that document it without changing what it checks;
#: editing them must not read as "check removed + check added".
_COSMETIC_QUALITY_KEYS = frozenset(
    {"description", "tags", "authoritativeDefinitions", "customProperties", "businessImpact"}
)


def quality_checks(
    mapping: YMap, path: str, owner: str, columns: tuple[str, ...] = ()
) -> tuple[Check, ...]:
    """The ``quality`` list of a DCS model/field or an ODCS object/property, as checks.

    Both formats share the quality object: ``type`` (``library`` by default, ``sql``,
    ``text``, ``custom``) and, for library checks, ``metric`` (``rule`` before ODCS
    v3.1). The kind is the metric in snake case (``nullValues`` -> ``null_values``),
    else the type (``library`` when the entry names neither). A schema-level ``duplicateValues`` names its columns in
    ``arguments.properties``.
    """
    entries = optional_list(mapping, "quality", path, f"{owner}: 'quality'")
    checks: list[Check] = []
    for index, entry, line in items(entries):
        what = f"{owner}: quality entry #{index + 1}"
        entry = require_mapping(entry, path, what, line)
        kind = None
        for key in ("metric", "rule", "type"):
            value = entry.get(key)
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip():
                raise ContractError(
                    path,
                    f"{what}: '{key}' must be a string, found {describe(value)}",
                    entry.key_line(key),
                )
            kind = snake_case(value)
            break
        if kind is None:
            # ODCS and DCS: ``type`` defaults to ``library``. What the entry lacks
            # (a metric) is its shape, which the schema check reports as a warning.
            kind = "library"
        # A ``text`` check *is* its description; elsewhere the description is cosmetic.
        cosmetic = (
            _COSMETIC_QUALITY_KEYS - {"description"} if kind == "text" else _COSMETIC_QUALITY_KEYS
        )
        spec = {k: v for k, v in entry.items() if k not in cosmetic}
        check_columns = columns
        arguments = entry.get("arguments")
        if isinstance(arguments, dict):
            named = arguments.get("properties")
            if isinstance(named, list) and named and all(isinstance(c, str) for c in named):
                check_columns = tuple(named)
        checks.append(Check.make(kind, spec, line=line, columns=check_columns))
    return tuple(checks)


#: Quality metrics whose valid values list what a column may hold: an enum.
_ENUM_METRICS = frozenset({"invalid_values", "valid_values"})


def enum_from_checks(checks: Iterable[Check], path: str) -> tuple[str, ...] | None:
    """Allowed values declared by an ``invalidValues`` check (``arguments.validValues``)."""
    for check in checks:
        if check.kind not in _ENUM_METRICS:
            continue
        arguments = check.spec.get("arguments")
        if isinstance(arguments, dict) and arguments.get("validValues") is not None:
            return scalar_tuple(
                arguments["validValues"], path, "'validValues'", check.line, allow_null=True
            )
        if check.spec.get("validValues") is not None:
            return scalar_tuple(
                check.spec["validValues"], path, "'validValues'", check.line, allow_null=True
            )
    return None


def reject_duplicate_datasets(datasets: Iterable[Dataset], path: str) -> None:
    """Refuse two datasets of one file whose ids differ only by case."""
    seen: dict[str, Dataset] = {}
    for dataset in datasets:
        folded = dataset.id.casefold()
        if folded in seen:
            first = seen[folded]
            same = (
                "twice"
                if first.id == dataset.id
                else f"twice (as '{first.id}'): ids differing only in case name one table "
                "in most warehouses"
            )
            raise ContractError(path, f"dataset '{dataset.id}' is declared {same}", dataset.line)
        seen[folded] = dataset


class NestingGuard:
    """Refuse schemas nested deeper than any real one (and than Python's stack).

    The YAML loader bounds a document's size, not its depth; a parser that walks
    nested fields recursively would otherwise die with a ``RecursionError``
    instead of failing closed with a line.
    """

    def __init__(self, path: str, limit: int = 64) -> None:
        self.path = path
        self.limit = limit
        self.depth = 0

    @contextmanager
    def enter(self, line: int | None) -> Iterator[None]:
        self.depth += 1
        try:
            if self.depth > self.limit:
                raise ContractError(
                    self.path,
                    f"nested fields and element types go deeper than {self.limit} levels",
                    line,
                )
            yield
        finally:
            self.depth -= 1


__all__ = [
    "NestingGuard",
    "decimal_type",
    "describe",
    "direct_constructor",
    "enum_from_checks",
    "items",
    "line_of",
    "optional_bool",
    "optional_int",
    "optional_list",
    "optional_str",
    "optional_version",
    "quality_checks",
    "reject_duplicate_columns",
    "reject_duplicate_datasets",
    "require_list",
    "require_mapping",
    "require_str",
    "scalar_text",
    "scalar_tuple",
    "snake_case",
]
