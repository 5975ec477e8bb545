"""Nested types: array elements, map keys and values, struct fields, and their paths.

Split from the lattice because containers are walked, not ordered: the
comparison pairs their parts (struct fields by name) and compares the leaves;
paths name where a change is (``items[].sku``, ``tags{key}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from gate.lattice.dialects import T


@dataclass(frozen=True)
class _Field:
    identifier: exp.Identifier | None  # None: a BigQuery positional field
    type: exp.DataType
    not_null: bool


def _element(dt: exp.DataType) -> exp.DataType | None:
    parts = dt.expressions
    if (
        dt.this in exp.DataType.ARRAY_TYPES
        and len(parts) == 1
        and isinstance(parts[0], exp.DataType)
        and not dt.args.get("values")  # DuckDB's fixed-size INT[3] stays a leaf
    ):
        return parts[0]
    return None


def _key_value(dt: exp.DataType) -> tuple[exp.DataType, exp.DataType] | None:
    parts = dt.expressions
    if dt.this is T.MAP and len(parts) == 2 and all(isinstance(p, exp.DataType) for p in parts):
        return parts[0], parts[1]
    return None


def _fields(dt: exp.DataType) -> dict[str, _Field] | None:
    """Struct fields by name; BigQuery's unnamed fields are ``_field_1``..."""
    if dt.this not in (T.STRUCT, T.OBJECT) or (dt.this is T.OBJECT and not dt.expressions):
        return None  # a bare Snowflake OBJECT is semi-structured, not a struct
    fields: dict[str, _Field] = {}
    for i, part in enumerate(dt.expressions, start=1):
        if isinstance(part, exp.ColumnDef):
            not_null = any(
                isinstance(c.args.get("kind"), exp.NotNullColumnConstraint)
                and not c.args["kind"].args.get("allow_null")
                for c in part.args.get("constraints") or []
            )
            name, f = part.name, _Field(part.this, part.args["kind"], not_null)
        else:
            name, f = f"_field_{i}", _Field(None, part, False)
        if name in fields:
            return None  # duplicate names: compare the whole struct as one leaf
        fields[name] = f
    return fields


def join_path(parent: str, child: str) -> str:
    """``join_path("items", "[].sku")`` -> ``items[].sku``; ``("a", "b")`` -> ``a.b``."""
    if not parent:
        return child
    if not child:
        return parent
    return parent + child if child[0] in "[{" else f"{parent}.{child}"


def _quote(name: str) -> str:
    if name and not re.search(r"[.\[\]{}`\s]", name):
        return name
    return "`" + name.replace("`", "``") + "`"
