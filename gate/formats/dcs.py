"""Data Contract Specification (datacontract.com, ``dataContractSpecification:``) into the model.

A DCS file holds several models in a map keyed by model name; each model's
``fields`` is a map keyed by field name. Every model becomes one ``Dataset``
whose id is the model name (the table consumers read); the contract's
``info.version`` is each dataset's version.

Field types are DCS logical types; they are mapped to Spark SQL text through
the small table below so the type lattice can parse them, keeping
``precision``/``scale``/``maxLength``. Objects (``object``/``record``/``struct``)
get the opaque type ``struct`` and carry their members in ``Column.fields``, so
the diff walks them and a removed member reads ``column_removed`` on
``parent.child``. Arrays and maps whose elements are objects do the same: the
element's members are the column's nested fields.

``required``/``unique`` default to false in DCS, so an absent key reads as false
(not "unknown"): dropping ``required: false`` is not a change. Local
``$ref: '#/definitions/...'`` references are resolved; keys on the field win over
the definition. External references cannot be resolved offline: such a field
keeps only what it declares itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gate.formats import constraints as value_constraints
from gate.formats import servers as contract_servers
from gate.formats.common import (
    NestingGuard,
    decimal_type,
    describe,
    enum_from_checks,
    optional_bool,
    optional_int,
    optional_str,
    optional_version,
    quality_checks,
    reject_duplicate_columns,
    reject_duplicate_datasets,
    require_mapping,
    scalar_tuple,
)
from gate.formats.detect import dcs as detect  # noqa: F401  (the format's detect, re-exported)
from gate.model import Column, Contract, ContractError, Dataset, Relationship
from gate.yaml_load import YMap

FORMAT = "dcs"

#: DCS logical type -> Spark SQL text. ``None`` marks the types built from options
#: (decimals, strings with ``maxLength``, arrays, maps).
TYPE_MAP: dict[str, str | None] = {
    "string": None,
    "text": None,
    "varchar": None,
    "number": None,
    "decimal": None,
    "numeric": None,
    "int": "int",
    "integer": "int",
    "long": "bigint",
    "bigint": "bigint",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "timestamp": "timestamp",
    "timestamp_tz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
    "date": "date",
    "time": "time",
    "bytes": "binary",
    "object": "struct",
    "record": "struct",
    "struct": "struct",
    "array": None,
    "map": None,
    "variant": "variant",
    "json": "json",
    "null": "null",
}

_STRINGS = frozenset({"string", "text", "varchar"})
_DECIMALS = frozenset({"number", "decimal", "numeric"})
_OBJECTS = frozenset({"object", "record", "struct"})
_MAX_REF_DEPTH = 16
#: DCS ``config`` keys that give a field's physical column type on one engine
#: (datacontract-cli's SQL exports and tests use them before ``type``), and the
#: dialect that reads it. ``avroType`` is not a SQL type.
PHYSICAL_TYPE_KEYS = {
    "bigqueryType": "bigquery",
    "databricksType": "databricks",
    "glueType": "hive",
    "redshiftType": "redshift",
    "snowflakeType": "snowflake",
    "sqlserverType": "tsql",
}


#: Fields one file may build, ``$ref`` expansions included: 2.5 KB of definitions
#: that reference the next one four times a level named 4,194,304 fields (no
#: answer in 300 s). More than the default node budget lets a file write out.
MAX_FIELDS = 50_000


class _Parser:
    """One DCS document's models as datasets.

    Why one class of ~250 lines: ``definitions`` references (``$ref``) are
    resolved against the document's root while fields nest, under one nesting
    guard, and relationships found at any depth collect in one list; split
    apart, each piece would take the same four pieces of state as arguments.
    """

    def __init__(self, root: YMap, path: str) -> None:
        self.root = root
        self.path = path
        self.guard = NestingGuard(path)
        self.relationships: list[Relationship] = []
        #: Fields built so far, ``$ref`` expansions included (``MAX_FIELDS``).
        self.built = 0
        if root.get("definitions") is not None:
            require_mapping(
                root["definitions"], path, "'definitions'", root.key_line("definitions")
            )

    # -- $ref ---------------------------------------------------------------

    def resolve(self, field: YMap, what: str, depth: int = 0) -> YMap:
        """The field with its local ``$ref`` merged in (the field's own keys win)."""
        ref = field.get("$ref")
        if ref is None:
            return field
        line = field.key_line("$ref")
        if not isinstance(ref, str) or not ref.strip():
            raise ContractError(self.path, f"{what}: '$ref' must be a string", line)
        if not ref.startswith("#/"):
            return field  # external reference: not resolvable offline (documented)
        if depth >= _MAX_REF_DEPTH:
            raise ContractError(self.path, f"{what}: '$ref' chain too deep or circular", line)
        target: Any = self.root
        for part in ref[2:].split("/"):
            if not isinstance(target, dict) or part not in target:
                raise ContractError(self.path, f"{what}: '$ref' {ref!r} points nowhere", line)
            target = target[part]
        target = require_mapping(target, self.path, f"'$ref' target {ref!r}", line)
        target = self.resolve(target, f"'$ref' target {ref!r}", depth + 1)
        merged = YMap({k: v for k, v in target.items() if k != "$ref"})
        merged.update({k: v for k, v in field.items() if k != "$ref"})
        merged.line = field.line
        # Errors in inherited keys point at the definition, where they can be fixed.
        merged.key_lines = {**{k: target.key_line(k) for k in target}, **field.key_lines}
        return merged

    # -- types --------------------------------------------------------------

    def type_of(self, field: YMap, what: str) -> tuple[str | None, YMap | None]:
        """(Spark type text, the mapping whose ``fields`` hold the nested members)."""
        with self.guard.enter(field.line):
            return self._type_of(field, what)

    def _type_of(self, field: YMap, what: str) -> tuple[str | None, YMap | None]:
        raw = optional_str(field, "type", self.path, f"{what}: 'type'")
        nested = field.get("fields")
        if raw is None:
            if nested is not None:  # members without a type: an object
                return "struct", field
            return None, None
        name = raw.lower()
        line = field.key_line("type")
        if name not in TYPE_MAP:
            known = ", ".join(sorted(TYPE_MAP))
            raise ContractError(
                self.path, f"{what}: unknown DCS type '{raw}' (expected one of: {known})", line
            )
        if nested is not None and name not in _OBJECTS:
            raise ContractError(
                self.path,
                f"{what}: 'fields' is only allowed on object, record or struct, not '{raw}'",
                field.key_line("fields"),
            )
        if name in _STRINGS:
            max_length = optional_int(field, "maxLength", self.path, f"{what}: 'maxLength'", 1)
            return (f"varchar({max_length})" if max_length else "string"), None
        if name in _DECIMALS:
            precision = optional_int(field, "precision", self.path, f"{what}: 'precision'", 1)
            scale = optional_int(field, "scale", self.path, f"{what}: 'scale'", 0)
            return decimal_type(precision, scale), None
        if name in _OBJECTS:
            return "struct", field
        if name == "array":
            items = field.get("items")
            if items is None:
                return "array", None
            element = self.element(items, f"{what} 'items'", field.key_line("items"))
            text, owner = self.type_of(element, f"{what} 'items'")
            return f"array<{text or 'string'}>", owner
        if name == "map":
            key_text = "string"
            if field.get("keys") is not None:
                keys = self.element(field["keys"], f"{what} 'keys'", field.key_line("keys"))
                key_text = self.type_of(keys, f"{what} 'keys'")[0] or "string"
            if field.get("values") is None:
                return f"map<{key_text},string>", None
            values = self.element(field["values"], f"{what} 'values'", field.key_line("values"))
            text, owner = self.type_of(values, f"{what} 'values'")
            return f"map<{key_text},{text or 'string'}>", owner
        return TYPE_MAP[name], None

    def element(self, value: Any, what: str, line: int) -> YMap:
        return self.resolve(require_mapping(value, self.path, what, line), what)

    # -- fields -------------------------------------------------------------

    def fields(
        self, fields_value: Any, owner: str, line: int, prefix: str
    ) -> tuple[list[Column], list[str]]:
        """The columns of a ``fields`` map and the names flagged ``primaryKey``, in order."""
        with self.guard.enter(line):
            return self._fields(fields_value, owner, line, prefix)

    def _fields(
        self, fields_value: Any, owner: str, line: int, prefix: str
    ) -> tuple[list[Column], list[str]]:
        fields_map = require_mapping(fields_value, self.path, f"{owner}: 'fields'", line)
        columns: list[Column] = []
        flagged: list[str] = []
        for index, (name, value) in enumerate(fields_map.items()):
            column, is_key = self.field(
                name, value, index, fields_map.key_line(name), owner, prefix
            )
            columns.append(column)
            if is_key:
                flagged.append(column.name)
        reject_duplicate_columns(columns, self.path, owner)
        return columns, flagged

    def field(
        self, name: Any, value: Any, index: int, line: int, owner: str, prefix: str
    ) -> tuple[Column, bool]:
        if not isinstance(name, str) or not name.strip():
            raise ContractError(
                self.path, f"{owner}: field names must be non-empty strings, found {name!r}", line
            )
        name = name.strip()
        what = f"field '{prefix}{name}'"
        self.built += 1
        if self.built > MAX_FIELDS:  # checked while building: $ref can grow exponentially
            raise ContractError(
                self.path,
                f"{what}: the file builds more than {MAX_FIELDS:,} fields ($ref expansions "
                "included); refusing to expand it further",
                line,
            )
        field = self.element(value, what, line)
        data_type, members_owner = self.type_of(field, what)
        nested: list[Column] = []
        if members_owner is not None and members_owner.get("fields") is not None:
            # Primary-key flags on nested members do not make a table key: ignored.
            nested, _ = self.fields(
                members_owner["fields"], what, members_owner.key_line("fields"), f"{prefix}{name}."
            )
        path_name = f"{prefix}{name}"
        checks = quality_checks(field, self.path, what, (path_name,))
        enum = (
            scalar_tuple(field["enum"], self.path, f"{what}: 'enum'", field.key_line("enum"))
            if field.get("enum") is not None
            else enum_from_checks(checks, self.path)
        )
        is_key = any(
            optional_bool(field, key, self.path, f"{what}: '{key}'")
            for key in ("primaryKey", "primary")
        )
        description = field.get("description")
        references = optional_str(field, "references", self.path, f"{what}: 'references'")
        if references is not None:
            self.relationships.append(
                Relationship((path_name,), references.lower(), field.key_line("references"))
            )
        physical = self.physical_types(field, what)
        # A string's maxLength is its type (varchar(n)); everything else is a constraint.
        in_type = ("maxLength",) if (data_type or "").lower().startswith("varchar") else ()
        column = Column(
            name=name,
            data_type=data_type,
            line=line,
            position=index,
            # DCS: "required ... Default: false"; absent means nullable, as the spec says.
            required=bool(optional_bool(field, "required", self.path, f"{what}: 'required'")),
            unique=bool(optional_bool(field, "unique", self.path, f"{what}: 'unique'")),
            enum=enum,
            checks=checks,
            fields=tuple(nested),
            description=description if isinstance(description, str) else None,
            constraints=value_constraints.read(
                field, self.path, what, field.key_line, skip=in_type
            ),
            physical_types=physical,
        )
        return column, is_key

    def physical_types(self, field: YMap, what: str) -> tuple[tuple[str, str], ...]:
        """``config.<engine>Type``: the column's type on that engine, compared in its dialect."""
        if field.get("config") is None:
            return ()
        config = require_mapping(
            field["config"], self.path, f"{what}: 'config'", field.key_line("config")
        )
        out: list[tuple[str, str]] = []
        for key, dialect in PHYSICAL_TYPE_KEYS.items():
            text = optional_str(config, key, self.path, f"{what}: 'config.{key}'")
            if text is not None and text.strip():
                out.append((dialect, text.strip()))
        return tuple(sorted(out))

    # -- models -------------------------------------------------------------

    def primary_key(
        self, model: YMap, flagged: list[str], columns: list[Column], owner: str
    ) -> dict[str, int]:
        """Positions of the primary key: the model's ``primaryKey`` list, else field flags."""
        listed = model.get("primaryKey")
        if listed is None:
            return {name: position for position, name in enumerate(flagged)}
        line = model.key_line("primaryKey")
        if isinstance(listed, str):
            listed = [listed]
        names = scalar_tuple(listed, self.path, f"{owner}: 'primaryKey'", line)
        known = {column.name for column in columns}
        for name in names:
            if name not in known:
                raise ContractError(
                    self.path, f"{owner}: 'primaryKey' names unknown field '{name}'", line
                )
        if len(set(names)) != len(names):
            raise ContractError(self.path, f"{owner}: 'primaryKey' lists a field twice", line)
        for name in flagged:
            if name not in names:
                raise ContractError(
                    self.path,
                    f"{owner}: field '{name}' is marked primaryKey but is not in the "
                    "model's 'primaryKey' list",
                    line,
                )
        return {name: position for position, name in enumerate(names)}

    def model(self, name: Any, value: Any, line: int, version: str | None) -> Dataset:
        if not isinstance(name, str) or isinstance(name, bool) or not name.strip():
            raise ContractError(
                self.path, f"model names must be non-empty strings, found {name!r}", line
            )
        name = name.strip()
        owner = f"model '{name}'"
        model = require_mapping(value, self.path, owner, line)
        columns: list[Column] = []
        flagged: list[str] = []
        self.relationships = []
        if model.get("fields") is not None:
            columns, flagged = self.fields(model["fields"], owner, model.key_line("fields"), "")
        positions = self.primary_key(model, flagged, columns, owner)
        columns = [
            replace(column, primary_key_position=positions[column.name])
            if column.name in positions
            else column
            for column in columns
        ]
        return Dataset(
            id=name,
            path=self.path,
            format=FORMAT,
            columns=tuple(columns),
            checks=quality_checks(model, self.path, owner),
            line=line,
            version=version,
            allow_extra_columns=optional_bool(
                model, "additionalFields", self.path, f"{owner}: 'additionalFields'"
            )
            is True,
            relationships=tuple(self.relationships),
        )


def parse(doc: Any, path: str) -> Contract:
    """Turn a loaded DCS document into a ``Contract`` with one dataset per model."""
    root = require_mapping(doc, path, "the contract's top level", 1)
    spec = root.get("dataContractSpecification")
    if isinstance(spec, bool) or not isinstance(spec, (str, int, float)):
        raise ContractError(
            path,
            f"'dataContractSpecification' must be a version string, found {describe(spec)}",
            root.key_line("dataContractSpecification"),
        )
    version = None
    version_line = None
    if root.get("info") is not None:
        info = require_mapping(root["info"], path, "'info'", root.key_line("info"))
        version = optional_version(info, "version", path, "'info.version'")
        version_line = info.key_line("version") if version is not None else None
    parser = _Parser(root, path)
    servers = contract_servers.dcs(root)
    datasets: list[Dataset] = []
    models = root.get("models")
    if models is not None:
        models = require_mapping(models, path, "'models'", root.key_line("models"))
        for name, value in models.items():
            model = parser.model(name, value, models.key_line(name), version)
            datasets.append(replace(model, version_line=version_line, servers=servers))
    reject_duplicate_datasets(datasets, path)
    return Contract(path=path, format=FORMAT, datasets=tuple(datasets))
