"""Soda data contracts (v3 and v4) into the internal model.

v4 writes a check as a one-key mapping (``- missing:`` / ``- invalid: {valid_values: [...]}``);
v3 writes it as ``- type: no_missing_values`` with its options beside ``type``.
Both land in the same ``Check`` so the diff and the smoke test see one shape.
Unknown keys are allowed everywhere: Soda grows, and the gate must not reject
contracts that Soda accepts.
"""

from __future__ import annotations

from typing import Any

from gate.formats import constraints as value_constraints
from gate.formats.common import (
    describe,
    direct_constructor,
    items,
    optional_bool,
    optional_int,
    optional_list,
    optional_str,
    reject_duplicate_columns,
    require_mapping,
    require_str,
    scalar_tuple,
)
from gate.formats.detect import soda as detect  # noqa: F401  (the format's detect, re-exported)
from gate.model import Check, Column, Contract, ContractError, Dataset
from gate.yaml_load import YMap

FORMAT = "soda"

#: Checks whose ``valid_values`` list the values a column may take: an enum.
_ENUM_CHECKS = frozenset({"invalid", "invalid_count", "invalid_percent", "no_invalid_values"})
#: Checks that count missing values (their ``missing_values`` markers).
_MISSING_CHECKS = frozenset({"missing", "missing_count", "missing_percent", "no_missing_values"})
#: Column-level options (v4) that configure the column's missing and invalid checks.
#: Column-level options of missing checks (also read by the key check in validate.py).
MISSING_OPTIONS = _MISSING_OPTIONS = ("missing_values", "missing_format", "missing_regex_sql")
#: Column-level options of validity checks (also read by the key check in validate.py).
VALIDITY_OPTIONS = _VALIDITY_OPTIONS = (
    "invalid_values",
    "invalid_format",
    "invalid_regex_sql",
    "valid_values",
    "valid_format",
    "valid_regex_sql",
    "valid_min",
    "valid_max",
    "valid_length",
    "valid_min_length",
    "valid_max_length",
    "valid_reference_data",
)
#: Column-level options that change what every check of the column measures: v4's
#: ``column_expression`` (a SQL expression checked instead of the stored column).
COLUMN_OPTIONS = ("column_expression",)
_TEXT_TYPES = ("varchar", "char", "character varying", "string", "text", "nvarchar")
_DECIMAL_TYPES = ("decimal", "numeric", "number")


def _check(entry: Any, path: str, line: int, owner: str, columns: tuple[str, ...]) -> Check:
    """One check entry in either Soda spelling."""
    if isinstance(entry, str) and entry.strip():
        return Check.make(entry.strip(), {}, line=line, columns=columns)
    if not isinstance(entry, dict) or not entry:
        raise ContractError(
            path, f"{owner}: a check must be a mapping, found {describe(entry)}", line
        )
    if "type" in entry:  # v3: options beside the type
        kind = entry["type"]
        if not isinstance(kind, str) or not kind.strip():
            raise ContractError(path, f"{owner}: check 'type' must be a string", line)
        spec = {key: value for key, value in entry.items() if key != "type"}
    elif len(entry) == 1:  # v4: the check type is the only key
        kind, spec = next(iter(entry.items()))
        if not isinstance(kind, str):
            raise ContractError(path, f"{owner}: check name must be a string", line)
        if spec is None:
            spec = {}
        elif not isinstance(spec, dict):
            raise ContractError(
                path,
                f"{owner}: check '{kind}' options must be a mapping, found {describe(spec)}",
                line,
            )
    else:
        raise ContractError(
            path,
            f"{owner}: a check needs one key naming its type (v4) or a 'type' key (v3)",
            line,
        )
    spec_columns = spec.get("columns") if isinstance(spec, dict) else None
    if isinstance(spec_columns, list) and all(isinstance(c, str) for c in spec_columns):
        columns = tuple(spec_columns)
    return Check.make(kind.strip(), spec, line=line, columns=columns)


def _checks(
    mapping: YMap, path: str, owner: str, columns: tuple[str, ...] = ()
) -> tuple[Check, ...]:
    entries = optional_list(mapping, "checks", path, f"{owner}: 'checks'")
    return tuple(_check(entry, path, line, owner, columns) for _i, entry, line in items(entries))


def _enum(checks: tuple[Check, ...], path: str) -> tuple[str, ...] | None:
    """The allowed values a column declares through its validity checks."""
    for check in checks:
        if check.kind in _ENUM_CHECKS and "valid_values" in check.spec:
            return _valid_values(check.spec["valid_values"], path, "'valid_values'", check.line)
    return None


def _valid_values(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    """``valid_values`` as an enum; a ``null`` item adds nothing.

    Soda counts a null as missing, never as invalid, so ``['1', '2', null]``
    allows what ``['1', '2']`` allows (soda-core's own invalid-check tests list
    null this way and count only the non-null outsider).
    """
    values = scalar_tuple(value, path, what, line, allow_null=True)
    if isinstance(value, list) and None in value:
        return tuple(text for text, item in zip(values, value, strict=True) if item is not None)
    return values


def _data_type(mapping: YMap, path: str, owner: str) -> str | None:
    """``data_type`` with the v4 attributes that belong to it.

    ``character_maximum_length: 10`` on a ``varchar`` is ``varchar(10)``, and
    ``numeric_precision``/``numeric_scale`` on a ``decimal`` are its parameters,
    so ``10 -> 5`` is ``type_narrowed`` exactly as ``varchar(10) -> varchar(5)``.
    A ``data_type`` that spells its own parameters keeps them.
    """
    data_type = optional_str(mapping, "data_type", path, f"{owner}: 'data_type'")
    length = optional_int(
        mapping, "character_maximum_length", path, f"{owner}: 'character_maximum_length'", 1
    )
    precision = optional_int(mapping, "numeric_precision", path, f"{owner}: 'numeric_precision'", 1)
    scale = optional_int(mapping, "numeric_scale", path, f"{owner}: 'numeric_scale'", 0)
    if data_type is None or "(" in data_type:
        return data_type
    base = data_type.strip().lower()
    if length is not None and base in _TEXT_TYPES:
        name = "varchar" if base in ("string", "text") else data_type
        return f"{name}({length})"
    if (precision is not None or scale is not None) and base in _DECIMAL_TYPES:
        return f"{data_type}({38 if precision is None else precision},{scale or 0})"
    return data_type


def _with_column_options(checks: tuple[Check, ...], mapping: YMap) -> tuple[Check, ...]:
    """Fold column-level missing/validity options into the checks they configure.

    Soda v4 lets a column say ``missing_values: ['N/A']`` once for its missing
    checks; written there or on the check, it is the same check. A column's
    ``column_expression`` is what all its checks measure, so it joins each check
    (a changed expression is a changed check; the smoke test skips such checks).
    """
    out: list[Check] = []
    for check in checks:
        keys: tuple[str, ...] = COLUMN_OPTIONS
        if check.kind in _MISSING_CHECKS:
            keys += _MISSING_OPTIONS
        elif check.kind in _ENUM_CHECKS:
            keys += _VALIDITY_OPTIONS
        extra = {k: mapping[k] for k in keys if mapping.get(k) is not None and k not in check.spec}
        if extra:
            check = Check.make(
                check.kind, {**check.spec, **extra}, line=check.line, columns=check.columns
            )
        out.append(check)
    return tuple(out)


def _exact_length(mapping: YMap, path: str, owner: str, line: int | None) -> dict[str, Any]:
    """``valid_length: 3`` is ``minLength`` and ``maxLength`` both 3."""
    length = value_constraints.read(
        mapping, path, owner, lambda _k: line, keys={"valid_length": "minLength"}
    )
    return {key: value for _key, value in length for key in ("minLength", "maxLength")}


def _column_constraints(
    mapping: YMap, checks: tuple[Check, ...], path: str, owner: str
) -> tuple[tuple[str, Any], ...]:
    """``valid_min``, ``valid_max_length``... of the column or its invalid checks."""
    found: dict[str, Any] = dict(
        value_constraints.read(
            mapping, path, owner, mapping.key_line, keys=value_constraints.SODA_KEYS
        )
    )
    found.update(_exact_length(mapping, path, owner, mapping.key_line("valid_length")))
    for check in checks:
        if check.kind in _ENUM_CHECKS:
            spec = require_mapping(check.spec, path, f"{owner}: check '{check.kind}'", check.line)
            found.update(_exact_length(spec, path, owner, check.line))
            found.update(
                value_constraints.read(
                    spec,
                    path,
                    owner,
                    lambda _k, line=check.line: line,
                    keys=value_constraints.SODA_KEYS,
                )
            )
    return tuple(sorted(found.items()))


_new_column = direct_constructor(Column)

#: The keys of a plain column (most columns): ``_plain_column`` reads it alone.
_PLAIN_KEYS = frozenset({"name", "data_type", "optional", "description"})


def _plain_column(entry: Any, index: int) -> Column | None:
    """A column of plain keys only, read as ``_column`` reads it; ``None`` otherwise.

    Most columns of a contract are a name and a type: without checks, options or
    type attributes there is nothing to fold in, so the column is built straight
    from its values (a third of the parse at K = 100, #26). Anything else, a value
    of the wrong kind included, goes the general way and its messages.
    """
    if entry.__class__ is not YMap or not entry.keys() <= _PLAIN_KEYS:
        return None
    name = entry.get("name")
    data_type = entry.get("data_type")
    optional = entry.get("optional")
    if (
        name.__class__ is not str
        or not (name := name.strip())
        or (data_type is not None and data_type.__class__ is not str)
        or (optional is not None and optional.__class__ is not bool)
    ):
        return None
    description = entry.get("description")
    return _new_column(
        name=name,
        data_type=(data_type.strip() or None) if data_type is not None else None,
        line=entry.line,
        position=index,
        # Soda says nothing about nulls unless ``optional`` is set; keep that unknown.
        required=False if optional else None,
        description=description if isinstance(description, str) else None,
    )


def _column(entry: Any, index: int, line: int, path: str) -> Column:
    plain = _plain_column(entry, index)
    if plain is not None:
        return plain
    mapping = require_mapping(entry, path, f"column #{index + 1}", line)
    if "name" not in mapping or mapping["name"] is None:
        raise ContractError(path, f"column #{index + 1} has no 'name'", mapping.line)
    name = require_str(mapping, "name", path, f"column #{index + 1} 'name'")
    owner = f"column '{name}'"
    optional = optional_bool(mapping, "optional", path, f"{owner}: 'optional'")
    checks = _with_column_options(_checks(mapping, path, owner, (name,)), mapping)
    enum = _enum(checks, path)
    if enum is None and mapping.get("valid_values") is not None:
        enum = _valid_values(
            mapping["valid_values"],
            path,
            f"{owner}: 'valid_values'",
            mapping.key_line("valid_values"),
        )
    return Column(
        name=name,
        data_type=_data_type(mapping, path, owner),
        line=mapping.line,
        position=index,
        # Soda says nothing about nulls unless ``optional`` is set; keep that unknown.
        required=False if optional else None,
        enum=enum,
        constraints=_column_constraints(mapping, checks, path, owner),
        checks=checks,
        description=mapping.get("description")
        if isinstance(mapping.get("description"), str)
        else None,
    )


def _allows_extra_columns(checks: tuple[Check, ...]) -> bool:
    return any(
        check.kind == "schema" and check.spec.get("allow_extra_columns") is True for check in checks
    )


def parse(doc: Any, path: str) -> Contract:
    """Turn a loaded Soda contract into a ``Contract`` with one dataset."""
    root = require_mapping(doc, path, "the contract's top level", 1)
    dataset_id = require_str(root, "dataset", path, "'dataset'")
    columns_value = optional_list(root, "columns", path, "'columns'")
    columns = [_column(entry, index, line, path) for index, entry, line in items(columns_value)]
    reject_duplicate_columns(columns, path, f"dataset '{dataset_id}'")
    checks = _checks(root, path, f"dataset '{dataset_id}'")
    dataset = Dataset(
        id=dataset_id,
        path=path,
        format=FORMAT,
        columns=tuple(columns),
        checks=checks,
        line=root.key_line("dataset"),
        allow_extra_columns=_allows_extra_columns(checks),
    )
    return Contract(path=path, format=FORMAT, datasets=(dataset,))
