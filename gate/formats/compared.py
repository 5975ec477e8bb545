"""Which parts of an ODCS or DCS contract the gate compares, and what a typo looks like.

The published schemas stay the reference, but a schema violation only stops the
run (exit 2) where it touches what the gate compares: datasets, columns, types,
required, keys, constraints, enums, relationships and the contract version. A
violation anywhere else (servers, team, support, pricing, SLA, the shape of a
quality rule, custom or extension properties) cannot change a comparison, so it
is a warning naming file and line and the run goes on (issue #21; the measured
corpus is in docs/formats/validation.md).

``part(fmt, path)`` answers for one location, given as the JSON path of the
schema error (keys and list indices), extended by the key that is missing or
unknown. ``near_miss`` is the typo guard for keys a schema lets through.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from gate.formats import constraints
from gate.formats.dcs import PHYSICAL_TYPE_KEYS, TYPE_MAP
from gate.formats.odcs import LOGICAL_TYPES

#: What each compared key is, in a reviewer's words (the part a refusal names).
_PARTS = {
    "apiVersion": "the format version",
    "kind": "the format version",
    "dataContractSpecification": "the format version",
    "version": "the contract version",
    "schema": "datasets",
    "models": "datasets",
    "definitions": "columns",
    "name": "names",
    "physicalName": "names",
    "id": "names",
    "properties": "columns",
    "fields": "columns",
    "items": "types",
    "map": "types",
    "keys": "types",
    "values": "types",
    "type": "types",
    "logicalType": "types",
    "physicalType": "types",
    "$ref": "types",
    "config": "types",
    "precision": "types",
    "scale": "types",
    "logicalTypeOptions": "constraints",
    "required": "required",
    "unique": "keys",
    "primaryKey": "keys",
    "primary": "keys",
    "primaryKeyPosition": "keys",
    "additionalFields": "columns",
    "enum": "enums",
    "relationships": "relationships",
    "references": "relationships",
    **{key: "constraints" for key in constraints.KEYS},
    **{key: "types" for key in PHYSICAL_TYPE_KEYS},
}

_ODCS_TOP = frozenset({"apiVersion", "kind", "version", "schema"})
_ODCS_OBJECT = frozenset({"name", "physicalName", "id", "properties", "relationships"})
_ODCS_PROPERTY = frozenset(
    {
        "name",
        "physicalName",
        "id",
        "logicalType",
        "logicalTypeOptions",
        "physicalType",
        "items",
        "map",
        "properties",
        "required",
        "unique",
        "primaryKey",
        "primaryKeyPosition",
        "enum",
        "relationships",
    }
)
_DCS_TOP = frozenset({"dataContractSpecification", "models", "definitions", "info"})
_DCS_MODEL = frozenset({"fields", "primaryKey", "additionalFields"})
_DCS_FIELD = frozenset(
    {
        "type",
        "required",
        "unique",
        "primaryKey",
        "primary",
        "enum",
        "fields",
        "items",
        "keys",
        "values",
        "references",
        "$ref",
        "config",
        "precision",
        "scale",
        *constraints.KEYS,
    }
)
#: Keys below which everything is compared (the values themselves).
_LEAVES = frozenset({"logicalTypeOptions", "enum", "relationships"})

#: Keys only an ODCS *property* (a column) has: on a schema object they are unknown.
_ODCS_COLUMN_ONLY = frozenset(
    {"required", "unique", "primaryKey", "primaryKeyPosition", "logicalTypeOptions", "items"}
)
#: Keys only a DCS *field* has (a model's ``primaryKey`` is a list of its fields).
_DCS_COLUMN_ONLY = frozenset({"required", "unique", "enum", "references", "precision", "scale"})
#: Scalar type names (ODCS logical types, DCS types): ``type: string`` names a column's type.
_COLUMN_TYPE_NAMES = (frozenset(LOGICAL_TYPES) | frozenset(TYPE_MAP)) - {
    "object",
    "record",
    "struct",
}


class Part:
    """Where a path lands: ``compared`` and the part's name (or the ignored key)."""

    __slots__ = ("compared", "name")

    def __init__(self, compared: bool, name: str) -> None:
        self.compared = compared
        self.name = name

    def __repr__(self) -> str:
        return f"Part({self.compared!r}, {self.name!r})"


def _skip(path: Sequence[object], i: int) -> int:
    """Past one list index or one map key (a model or field name)."""
    return i + 1 if i < len(path) else i


def part(fmt: str, path: Sequence[object]) -> Part:
    """The part of an ``odcs``/``dcs`` document at ``path`` (JSON path of keys and indices)."""
    return _odcs(path) if fmt == "odcs" else _dcs(path)


def _odcs(path: Sequence[object]) -> Part:
    if not path:
        return Part(True, "the contract")
    key = str(path[0])
    if key not in _ODCS_TOP:
        return Part(False, key)
    if key != "schema":
        return Part(True, _PARTS[key])
    level, i, last = _ODCS_OBJECT, _skip(path, 1), "datasets"
    while i < len(path):
        key = str(path[i])
        if key not in level:
            return Part(False, key)
        last = _PARTS[key]
        if key in _LEAVES:
            return Part(True, last)
        if key == "properties":
            level, i = _ODCS_PROPERTY, _skip(path, i + 1)
        elif key == "items":
            level, i = _ODCS_PROPERTY, i + 1
        elif key == "map":
            if i + 1 < len(path) and path[i + 1] in ("key", "value"):
                level, i = _ODCS_PROPERTY, i + 2
            else:
                return Part(True, last)
        else:
            return Part(True, last)
    return Part(True, last)


def _dcs(path: Sequence[object]) -> Part:
    if not path:
        return Part(True, "the contract")
    key = str(path[0])
    if key not in _DCS_TOP:
        return Part(False, key)
    if key == "info":
        if len(path) > 1 and path[1] == "version":
            return Part(True, "the contract version")
        return Part(len(path) == 1, "info")  # a non-mapping info stops the parser too
    if key == "dataContractSpecification":
        return Part(True, _PARTS[key])
    level = _DCS_MODEL if key == "models" else _DCS_FIELD
    i, last = _skip(path, 1), _PARTS[key]
    while i < len(path):
        key = str(path[i])
        if key not in level:
            return Part(False, key)
        last = _PARTS[key]
        if key == "fields":
            level, i = _DCS_FIELD, _skip(path, i + 1)
        elif key in ("items", "keys", "values"):
            level, i = _DCS_FIELD, i + 1
        elif key == "config":
            if i + 1 < len(path) and str(path[i + 1]) not in PHYSICAL_TYPE_KEYS:
                return Part(False, f"config.{path[i + 1]}")
            return Part(True, last)
        else:
            return Part(True, last)
    return Part(True, last)


def column_keys_on_object(fmt: str, path: Sequence[object], instance: object) -> list[str]:
    """The keys that make the table at ``path`` a column written one level too high.

    ODCS lists a table's columns under its ``properties``, DCS a model's under its
    ``fields``. A table entry without them but with a column's type (``type:
    string``) or, in ODCS, a column's ``required``/``unique``/``primaryKey``/...
    is a column written as a table (seen in a public ODCS "extension" that lists
    columns straight under ``schema``): read as written, every column becomes a
    table without columns, so no type or ``required`` change is ever compared.
    Empty for anything else, including ``type: table`` or a table with columns.
    A DCS model takes extension keys, so there only a column's type counts. A key
    whose value is null is a key left out (``items: null``).
    """
    if not isinstance(instance, dict) or len(path) != 2:
        return []
    if fmt == "odcs" and path[0] == "schema" and isinstance(path[1], int):
        members, column_only = "properties", _ODCS_COLUMN_ONLY
    elif fmt == "dcs" and path[0] == "models":
        members, column_only = "fields", _DCS_COLUMN_ONLY
    else:
        return []
    if members in instance:
        return []
    kind = instance.get("type")
    typed = isinstance(kind, str) and kind.split("(")[0].strip().lower() in _COLUMN_TYPE_NAMES
    if fmt == "dcs" and not typed:
        return []
    # A null is the key left out (ODCS says so of its null-valued fields; generators
    # write `items: null`): only a column key with a value makes the entry a column.
    written = [str(key) for key in instance if key in column_only and instance[key] is not None]
    return (["type"] if typed else []) + written


def columns_key_on_object(fmt: str, path: Sequence[object], instance: object) -> str | None:
    """``'columns'`` when the ODCS table at ``path`` lists its columns under
    ``columns:`` (ODCS v2's word) and has no ``properties``: read as written, the
    table has no column, so no drop, rename or type change is ever compared
    (Obsidian-Owl/floe's "ODCS v3.1" contract). ``None`` for anything else."""
    if fmt != "odcs" or len(path) != 2 or path[0] != "schema" or not isinstance(path[1], int):
        return None
    if not isinstance(instance, dict) or "properties" in instance:
        return None
    listed = instance.get("columns")
    if isinstance(listed, list) and any(isinstance(c, dict) and "name" in c for c in listed):
        return "columns"
    return None


def other_name(
    key: object, names: Mapping[str, str], known: Iterable[str], present: Iterable[object]
) -> str | None:
    """The ``known`` key another format calls ``key`` (``names``: folded name -> key),
    when that key is absent at the same level, as for ``near_miss``."""
    meant = names.get(_fold(str(key)))
    if meant is None or meant not in known or meant in {str(k) for k in present}:
        return None
    return meant


def _fold(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def _distance(a: str, b: str, bound: int) -> int:
    """Optimal string alignment distance (a swap of two letters counts one), capped."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


def near_miss(key: object, known: Iterable[str], present: Iterable[object]) -> str | None:
    """The known key ``key`` is a typo of, when that key is absent at the same level.

    ``requiered`` beside no ``required``, ``feilds`` beside no ``fields``,
    ``primary_key`` for ``primaryKey``: one or two letters off (one for keys of up
    to six letters), a swap, or only case and separators apart. A key that is
    merely unknown (``namespace``, ``isNullable``) is no near miss: the schema may
    allow it as an extension.

    Called for every unknown key of a file a pull request writes (tens of
    thousands fit under the node limit), so it costs a few dictionary lookups,
    not a distance to every known key: only the known keys that share a
    two-deletion variant with ``key`` can be within two edits (a substitution,
    an insertion or a swap is undone by deleting one letter on each side), and
    only those are measured. ``present`` is looked up, not copied, when it is a
    mapping (the level's own keys).
    """
    folded = _fold(str(key))
    variants, longest = _variant_index(known if isinstance(known, frozenset) else frozenset(known))
    if len(folded) > longest + 2:
        return None
    near: set[str] = set()
    for variant in _deletions(folded):
        near.update(variants.get(variant, ()))
    here: Mapping[object, object] | set[str]
    here = present if isinstance(present, Mapping) else {str(k) for k in present}
    best: tuple[int, str] | None = None
    for candidate in sorted(near):
        if candidate in here:
            continue
        other = _fold(candidate)
        if other == folded:
            return candidate
        bound = 1 if min(len(other), len(folded)) <= 6 else 2
        distance = _distance(folded, other, bound)
        if distance <= bound and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


def _deletions(word: str, depth: int = 2) -> set[str]:
    """``word`` and every string made from it by deleting up to ``depth`` letters."""
    out, frontier = {word}, {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        out |= frontier
    return out


@functools.lru_cache(maxsize=128)
def _variant_index(known: frozenset[str]) -> tuple[dict[str, tuple[str, ...]], int]:
    """Each two-deletion variant of a known key (folded) -> the keys it comes from;
    and the longest folded key (a longer ``key`` is more than two edits from all)."""
    index: dict[str, set[str]] = {}
    for candidate in known:
        for variant in _deletions(_fold(candidate)):
            index.setdefault(variant, set()).add(candidate)
    longest = max((len(_fold(k)) for k in known), default=0)
    return {v: tuple(sorted(c)) for v, c in index.items()}, longest
