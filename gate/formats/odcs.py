"""Open Data Contract Standard v3 (bitol-io, ``apiVersion: v3.x``, ``kind: DataContract``).

``schema`` is a list of objects (tables); each object's ``properties`` are its
columns. Every object becomes one ``Dataset`` whose id is its ``physicalName``
when set, else its ``name``: the table consumers read. A column is named the same
way (``physicalName`` else ``name``). v3.1's optional ``id`` on objects and
properties becomes ``stable_id``, so a rename that keeps the id is reported as
a rename rather than a removal plus an addition. The contract's ``version`` is
each dataset's version.

Types: ``physicalType`` is the SQL type and wins when present; otherwise the
``logicalType`` is mapped to Spark SQL text through ``LOGICAL_TYPES`` (with
``logicalTypeOptions`` such as ``maxLength`` or an integer ``format``). Objects
get the opaque type ``struct`` and carry their members in ``Column.fields``;
arrays of objects and maps with object values do the same with their element's
members. A property that has nested members uses the logical type even when a
``physicalType`` is given, so a removed member is reported once, as
``column_removed`` on ``parent.child``.

``required``/``unique``/``primaryKey`` default to false in ODCS, so an absent key
reads as false. ODCS v2 (``dataset:`` lists) is refused with a clear message.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from gate.formats import constraints as value_constraints
from gate.formats import servers as contract_servers
from gate.formats.common import (
    NestingGuard,
    decimal_type,
    describe,
    enum_from_checks,
    items,
    optional_bool,
    optional_int,
    optional_list,
    optional_str,
    optional_version,
    quality_checks,
    reject_duplicate_columns,
    reject_duplicate_datasets,
    require_mapping,
    require_str,
    scalar_text,
)
from gate.formats.detect import odcs as detect  # noqa: F401  (the format's detect, re-exported)
from gate.model import Column, Contract, ContractError, Dataset, Relationship
from gate.yaml_load import YMap

FORMAT = "odcs"

#: ODCS logical type -> Spark SQL text; ``None`` marks types built from their parts.
#: ``integer`` has no width in ODCS, so it maps to the widest integer (as the Data
#: Contract CLI's Spark export does) unless ``logicalTypeOptions.format`` narrows it.
LOGICAL_TYPES: dict[str, str | None] = {
    "string": "string",
    "date": "date",
    "timestamp": "timestamp",
    "time": "time",
    "number": "double",
    "integer": "bigint",
    "boolean": "boolean",
    "object": "struct",
    "array": None,
    "map": None,
    "vector": None,
}

#: ``logicalTypeOptions.format`` of an integer (Rust integer names, as the spec says).
INTEGER_FORMATS: dict[str, str] = {
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "u8": "smallint",
    "u16": "int",
    "u32": "bigint",
    "u64": "decimal(20,0)",
}


#: ``physicalType`` words that name only a container: its element is in ``items``
#: (``map.value``), which ODCS reads "only ... when ``logicalType: array``" (v3 JSON schema,
#: SchemaBaseProperty); the official all-schema-types example writes ``physicalType: array``.
_CONTAINERS = {"array": "array<", "list": "array<", "map": "map<"}


def _bare_container(physical: str, logical: str | None) -> bool:
    """``physicalType: array`` beside a logical ``array<int>`` (built from ``items``):
    the physical word says less than the logical type, which is the column's type.
    A physical type with its own element (``ARRAY<INT>``) keeps winning."""
    prefix = _CONTAINERS.get(physical.strip().lower())
    return prefix is not None and logical is not None and logical.startswith(prefix)


def _enum(prop: YMap, path: str, what: str) -> tuple[str, ...] | None:
    """``enum`` (v3.2): plain values or ``{value: ...}`` entries, order kept."""
    if prop.get("enum") is None:
        return None
    entries = optional_list(prop, "enum", path, f"{what}: 'enum'")
    values: list[str] = []
    for _index, entry, line in items(entries):
        value = entry
        if isinstance(entry, dict):
            if "value" not in entry:
                raise ContractError(path, f"{what}: an 'enum' entry needs a 'value'", line)
            value = entry["value"]
        if isinstance(value, (dict, list)):
            raise ContractError(
                path, f"{what}: 'enum' must hold plain values, found {describe(value)}", line
            )
        values.append(scalar_text(value))
    return tuple(values)


def _targets(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    """``from``/``to`` of a relationship: one ``table.column`` or a list of them."""
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ContractError(
            path, f"{what} must be 'table.column' or a list of them, found {describe(value)}", line
        )
    return tuple(v.strip() for v in values)


class _Parser:
    """One ODCS document's schema objects as datasets.

    Why one class of ~230 lines: properties nest (objects, arrays of objects)
    under one nesting guard, and relationships declared at any depth collect
    in one list; the methods are the document's levels, each small.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.guard = NestingGuard(path)
        self.relationships: list[Relationship] = []

    def relationships_of(self, mapping: YMap, what: str, column: str | None) -> None:
        """ODCS ``relationships`` of a property (``from`` is the property) or an object."""
        entries = optional_list(mapping, "relationships", self.path, f"{what}: 'relationships'")
        for index, entry, line in items(entries):
            where = f"{what}: relationship #{index + 1}"
            entry = require_mapping(entry, self.path, where, line)
            if entry.get("to") is None:
                raise ContractError(self.path, f"{where} needs 'to'", line)
            to = _targets(entry["to"], self.path, f"{where} 'to'", entry.key_line("to"))
            if entry.get("from") is not None:
                sources = _targets(entry["from"], self.path, f"{where} 'from'", line)
                # ``from`` names ``table.column``; the table is this object.
                columns = tuple(s.rsplit(".", 1)[-1] for s in sources)
            elif column is not None:
                columns = (column,)
            else:
                raise ContractError(self.path, f"{where} on a schema object needs 'from'", line)
            self.relationships.append(Relationship(columns, ",".join(to).lower(), line))

    def options(self, prop: YMap, what: str) -> YMap:
        value = prop.get("logicalTypeOptions")
        if value is None:
            empty = YMap()
            empty.line = prop.line
            empty.key_lines = {}
            return empty
        return require_mapping(
            value, self.path, f"{what}: 'logicalTypeOptions'", prop.key_line("logicalTypeOptions")
        )

    def logical_type(self, prop: YMap, what: str) -> tuple[str | None, YMap | None]:
        """(Spark type text from the logical type, the mapping holding nested members)."""
        raw = optional_str(prop, "logicalType", self.path, f"{what}: 'logicalType'")
        if raw is None:
            if prop.get("properties") is not None:
                return "struct", prop
            return None, None
        name = raw.lower()
        if name not in LOGICAL_TYPES:
            known = ", ".join(LOGICAL_TYPES)
            raise ContractError(
                self.path,
                f"{what}: unknown ODCS logicalType '{raw}' (expected one of: {known})",
                prop.key_line("logicalType"),
            )
        options = self.options(prop, what)
        if name == "string":
            max_length = optional_int(
                options, "maxLength", self.path, f"{what}: 'maxLength'", minimum=1
            )
            return (f"varchar({max_length})" if max_length else "string"), None
        if name == "number":
            precision = optional_int(options, "precision", self.path, f"{what}: 'precision'", 1)
            scale = optional_int(options, "scale", self.path, f"{what}: 'scale'", 0)
            if precision is None and scale is None:
                return "double", None
            return decimal_type(precision, scale), None
        if name == "integer":
            fmt = optional_str(options, "format", self.path, f"{what}: 'format'")
            return INTEGER_FORMATS.get((fmt or "").lower(), "bigint"), None
        if name == "timestamp":
            timezone = optional_bool(options, "timezone", self.path, f"{what}: 'timezone'")
            return ("timestamp_ntz" if timezone is False else "timestamp"), None
        if name == "object":
            return "struct", (prop if prop.get("properties") is not None else None)
        if name == "vector":
            # v3.2: an embedding. Its dimensions and element type are its type
            # (vector(3,float32)), opaque to the lattice: any change is type_changed.
            dims = optional_int(options, "dimensions", self.path, f"{what}: 'dimensions'", 1)
            element = optional_str(options, "elementType", self.path, f"{what}: 'elementType'")
            size = "" if dims is None else f"{dims},"
            return f"vector({size}{(element or 'float32').lower()})", None
        if name not in ("array", "map"):
            return LOGICAL_TYPES[name], None
        if name == "array":
            if prop.get("items") is None:
                return "array", None
            items = require_mapping(
                prop["items"], self.path, f"{what}: 'items'", prop.key_line("items")
            )
            text, owner = self.element_type(items, f"{what} 'items'")
            return f"array<{text or 'string'}>", owner
        # map (v3.2): ``map.key`` and ``map.value`` are property definitions.
        if prop.get("map") is None:
            return "map", None
        spec = require_mapping(prop["map"], self.path, f"{what}: 'map'", prop.key_line("map"))
        key_text = "string"
        if spec.get("key") is not None:
            key = require_mapping(
                spec["key"], self.path, f"{what}: 'map.key'", spec.key_line("key")
            )
            key_text = self.element_type(key, f"{what} 'map.key'")[0] or "string"
        if spec.get("value") is None:
            return f"map<{key_text},string>", None
        value = require_mapping(
            spec["value"], self.path, f"{what}: 'map.value'", spec.key_line("value")
        )
        text, owner = self.element_type(value, f"{what} 'map.value'")
        return f"map<{key_text},{text or 'string'}>", owner

    def element_type(self, prop: YMap, what: str) -> tuple[str | None, YMap | None]:
        """A property's type: ``physicalType`` unless it declares nested members.

        A vector keeps its logical type (element type and dimensions) even beside a
        ``physicalType``: those are the facts ODCS states about it.
        """
        with self.guard.enter(prop.line):
            text, owner = self.logical_type(prop, what)
        if text is not None and text.startswith("vector("):
            return text, None
        physical = optional_str(prop, "physicalType", self.path, f"{what}: 'physicalType'")
        if physical is not None and owner is None and not _bare_container(physical, text):
            return physical, None
        return text, owner

    def properties(self, mapping: YMap, owner: str, prefix: str, top_level: bool) -> list[Column]:
        entries = optional_list(mapping, "properties", self.path, f"{owner}: 'properties'")
        with self.guard.enter(entries.line):
            columns = [
                self.prop(entry, index, line, owner, prefix, top_level)
                for index, entry, line in items(entries)
            ]
        reject_duplicate_columns(columns, self.path, owner)
        return columns

    def prop(
        self, entry: Any, index: int, line: int, owner: str, prefix: str, top_level: bool
    ) -> Column:
        prop = require_mapping(entry, self.path, f"{owner}: property #{index + 1}", line)
        if prop.get("name") is None:
            raise ContractError(self.path, f"{owner}: property #{index + 1} has no 'name'", line)
        logical_name = require_str(
            prop, "name", self.path, f"{owner}: property #{index + 1} 'name'"
        )
        physical_name = optional_str(
            prop, "physicalName", self.path, f"property '{logical_name}': 'physicalName'"
        )
        name = physical_name or logical_name
        what = f"property '{prefix}{name}'"
        data_type, members_owner = self.element_type(prop, what)
        nested: list[Column] = []
        if members_owner is not None:
            nested = self.properties(members_owner, what, f"{prefix}{name}.", top_level=False)
        checks = quality_checks(prop, self.path, what, (f"{prefix}{name}",))
        self.relationships_of(prop, what, f"{prefix}{name}")
        options = self.options(prop, what)
        # What the type already carries is compared as a type, not as a constraint.
        in_type = ["maxLength"] if (data_type or "").lower().startswith("varchar") else []
        if str(prop.get("logicalType", "")).lower() == "integer":
            in_type.append("format")
        enum = _enum(prop, self.path, what)
        if enum is None:
            enum = enum_from_checks(checks, self.path)
        position = None
        if top_level and optional_bool(prop, "primaryKey", self.path, f"{what}: 'primaryKey'"):
            position = optional_int(
                prop, "primaryKeyPosition", self.path, f"{what}: 'primaryKeyPosition'"
            )
            position = position if position is not None and position >= 1 else -1
        description = prop.get("description")
        return Column(
            name=name,
            data_type=data_type,
            line=line,
            position=index,
            # ODCS: "required ... Default is false"; absent means nullable.
            required=bool(optional_bool(prop, "required", self.path, f"{what}: 'required'")),
            unique=bool(optional_bool(prop, "unique", self.path, f"{what}: 'unique'")),
            # Provisional: the declared position (-1 when unset), ranked per object below.
            primary_key_position=position,
            enum=enum,
            checks=checks,
            fields=tuple(nested),
            stable_id=optional_str(prop, "id", self.path, f"{what}: 'id'"),
            description=description if isinstance(description, str) else None,
            constraints=value_constraints.read(
                options, self.path, what, options.key_line, skip=in_type
            ),
        )

    def primary_key(self, columns: list[Column], owner: str) -> list[Column]:
        """Rank ``primaryKeyPosition`` (1-based, may be unset) into 0-based positions."""
        keyed = [c for c in columns if c.primary_key_position is not None]
        declared = [c.primary_key_position for c in keyed if c.primary_key_position != -1]
        if len(declared) != len(set(declared)):
            raise ContractError(
                self.path, f"{owner}: two properties share a 'primaryKeyPosition'", keyed[0].line
            )
        ranked = sorted(
            keyed,
            key=lambda c: (c.primary_key_position == -1, c.primary_key_position, c.position),
        )
        rank = {c.name: i for i, c in enumerate(ranked)}
        return [
            replace(c, primary_key_position=rank[c.name])
            if c.primary_key_position is not None
            else c
            for c in columns
        ]

    def schema_object(self, entry: Any, index: int, line: int, version: str | None) -> Dataset:
        obj = require_mapping(entry, self.path, f"schema object #{index + 1}", line)
        if obj.get("name") is None:
            raise ContractError(self.path, f"schema object #{index + 1} has no 'name'", line)
        name = require_str(obj, "name", self.path, f"schema object #{index + 1} 'name'")
        physical_name = optional_str(
            obj, "physicalName", self.path, f"schema object '{name}': 'physicalName'"
        )
        dataset_id = physical_name or name
        owner = f"schema object '{dataset_id}'"
        self.relationships = []
        columns = self.primary_key(self.properties(obj, owner, "", top_level=True), owner)
        self.relationships_of(obj, owner, None)
        return Dataset(
            id=dataset_id,
            path=self.path,
            format=FORMAT,
            columns=tuple(columns),
            checks=quality_checks(obj, self.path, owner),
            line=line,
            version=version,
            stable_id=optional_str(obj, "id", self.path, f"{owner}: 'id'"),
            relationships=tuple(self.relationships),
            aliases=(name,) if physical_name and name != physical_name else (),
        )


def parse(doc: Any, path: str) -> Contract:
    """Turn a loaded ODCS v3 contract into a ``Contract`` with one dataset per schema object."""
    root = require_mapping(doc, path, "the contract's top level", 1)
    api_version = root.get("apiVersion")
    line = root.key_line("apiVersion")
    if not isinstance(api_version, str) or isinstance(api_version, bool):
        raise ContractError(
            path,
            f"'apiVersion' must be a string like 'v3.1.0', found {describe(api_version)}",
            line,
        )
    if re.fullmatch(r"3(\.\d+){0,2}", api_version.strip()):
        # Every ODCS v3 schema spells it with its 'v' (an enum of 'v3.0.0'...):
        # '3.0.0' is no other version, and the message must not say v3 is unread.
        raise ContractError(
            path,
            f"ODCS apiVersion '{api_version}' lacks its 'v': ODCS v3 writes "
            f"apiVersion: v{api_version.strip()}",
            line,
        )
    if not api_version.strip().lower().startswith("v3"):
        raise ContractError(
            path,
            f"ODCS apiVersion '{api_version}' is not supported; the gate reads ODCS v3 "
            "(apiVersion: v3.x)",
            line,
        )
    version = optional_version(root, "version", path, "'version'")
    parser = _Parser(path)
    schema = optional_list(root, "schema", path, "'schema'")
    version_line = root.key_line("version") if version is not None else None
    servers = contract_servers.odcs(root)
    datasets = [
        replace(
            parser.schema_object(entry, index, item_line, version),
            version_line=version_line,
            servers=servers,
        )
        for index, entry, item_line in items(schema)
    ]
    reject_duplicate_datasets(datasets, path)
    return Contract(path=path, format=FORMAT, datasets=tuple(datasets))
