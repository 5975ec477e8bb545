"""DCS keys: the typo guard for a format whose published schemas allow any extra key.

Split from the validation because the DCS schemas cannot catch a misspelt key
(they never close an object), so the gate walks the document itself and
refuses a near miss of a key it compares, or a field indented into another.
"""

from __future__ import annotations

from typing import Any

from gate.formats.compared import column_keys_on_object, near_miss
from gate.formats.compared import part as part_of
from gate.formats.dcs import TYPE_MAP
from gate.formats.validate.locate import _where
from gate.model import ContractError, ContractWarning
from gate.yaml_load import YMap

#: Top-level keys of DCS 0.9.x that the 1.x schemas no longer list.
_DCS_LEGACY_TOP = frozenset({"examples", "quality"})


class _DcsKeys:
    """The typo guard for DCS, whose published schemas allow any extra key.

    The DCS schemas never set ``additionalProperties: false``: extension keys are
    allowed, and the gate accepts them (``namespace`` on a model, ``const`` on a
    field). What it refuses is a near miss of a key it compares that is absent at
    the same level (``feilds`` with no ``fields``, ``requiered`` with no
    ``required``), and a field definition hanging under another field's name (a
    column indented one level too deep): either would silently drop part of the
    contract. A near miss of a key the gate does not compare is a warning.
    """

    def __init__(self, schema: dict[str, Any], path: str, label: str) -> None:
        self.path = path
        self.label = label
        self.warnings: list[ContractWarning] = []
        model = schema["properties"]["models"]["additionalProperties"]
        field = model["properties"]["fields"]["additionalProperties"]
        definition = schema["properties"].get("definitions", {}).get("additionalProperties", {})
        self.top = frozenset(schema["properties"]) | _DCS_LEGACY_TOP
        self.model = frozenset(model["properties"])
        self.field = frozenset(field["properties"])
        self.definition = frozenset(definition.get("properties", {})) | self.field

    def unknown(self, mapping: YMap, known: frozenset[str], where: list[Any]) -> None:
        at = f" in {_where(where)}" if where else ""
        for key in mapping:
            if key in known or str(key).startswith("x-"):
                continue
            line = mapping.key_line(key)
            meant = near_miss(key, known, mapping)
            if meant is None:
                value = mapping[key]
                if where and isinstance(value, dict) and _is_field(value):
                    raise ContractError(
                        self.path,
                        f"'{key}'{at} is a field definition (type: {value['type']}) outside "
                        "any 'fields:' mapping: indented one level too deep? The gate "
                        f"would not compare it as a column [{self.label} schema]",
                        line,
                    )
                continue  # an extension key: the schema allows it
            message = f"unknown key '{key}'{at} (did you mean '{meant}'?) [{self.label} schema"
            target = part_of("dcs", [*where, meant])
            if target.compared:
                raise ContractError(
                    self.path,
                    f"{message}: it allows extension keys, but this one is a near miss of "
                    f"'{meant}', which is missing here and which the gate compares "
                    f"({target.name})]",
                    line,
                )
            self.warnings.append(
                ContractWarning(
                    self.path,
                    f"{message}]: the gate does not compare '{meant}', so this is a warning",
                    line,
                )
            )

    def check(self, doc: YMap) -> list[ContractWarning]:
        self.unknown(doc, self.top, [])
        models = doc.get("models")
        if isinstance(models, YMap):
            for name, model in models.items():
                if isinstance(model, YMap):
                    self.field_as_model(models, name, model)
                    self.unknown(model, self.model, ["models", name])
                    self.fields(model.get("fields"), ["models", name], 0)
        definitions = doc.get("definitions")
        if isinstance(definitions, YMap):
            for name, definition in definitions.items():
                if isinstance(definition, YMap):
                    self.field_keys(definition, ["definitions", name], 0, self.definition)
        return self.warnings

    def field_as_model(self, models: YMap, name: Any, model: YMap) -> None:
        """Refuse a field written one level too high: a model with a field's type, no ``fields``."""
        misplaced = column_keys_on_object("dcs", ["models", name], model)
        if misplaced:
            keys = ", ".join(f"'{k}'" for k in misplaced)
            raise ContractError(
                self.path,
                f"models.{name} has {keys} but no 'fields': those are a field's keys, so "
                "this lists a column as a model; DCS puts a model's columns under its "
                f"'fields' [{self.label} schema]",
                models.key_line(name),
            )

    def fields(self, fields: Any, where: list[Any], depth: int) -> None:
        if isinstance(fields, YMap) and depth < 64:
            for name, field in fields.items():
                if isinstance(field, YMap):
                    self.field_keys(field, [*where, "fields", name], depth, self.field)

    def field_keys(self, field: YMap, where: list[Any], depth: int, known: frozenset[str]) -> None:
        self.unknown(field, known, where)
        self.fields(field.get("fields"), where, depth + 1)
        for key in ("items", "keys", "values"):
            element = field.get(key)
            is_map = str(field.get("type", "")).strip().lower() == "map"
            if isinstance(element, YMap) and (key != "values" or is_map or _is_field(element)):
                self.field_keys(element, [*where, key], depth + 1, self.field)


def _is_field(value: dict[Any, Any]) -> bool:
    """A mapping shaped like a DCS field: its ``type`` is a DCS type name."""
    kind = value.get("type")
    return isinstance(kind, str) and kind.strip().lower() in TYPE_MAP
