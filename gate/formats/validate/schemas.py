"""The vendored published schemas: which one a document uses, loaded, compiled and cached.

Split from the validation because it is the fast path every valid contract
takes (a ``fastjsonschema`` validator compiled from the schema, its code cached
on disk only where someone chose a directory) and the slow path's inputs
(``jsonschema`` validators, the keys a subschema declares), apart from how a
refusal is worded. ``warm`` fills the cache when the Action's image is built.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import marshal
import os
from datetime import date, datetime
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent.parent / "schemas"

#: ODCS ``apiVersion`` prefix -> vendored schema. Each schema's own ``apiVersion``
#: enum decides which exact versions it accepts.
_ODCS = (("v3.0.", "odcs-v3.0.2"), ("v3.1.", "odcs-v3.1.0"), ("v3.2.", "odcs-v3.2.0"))
_ODCS_LATEST = "odcs-v3.2.0"

#: DCS version -> schema. The 1.1.0 schema lists 0.9.0-0.9.3 in its own
#: ``dataContractSpecification`` enum: it is the schema datacontract-cli applies
#: to 0.9.x contracts too, and no 0.9.x schema is published in a package.
_DCS = {
    "0.9.0": "dcs-1.1.0",
    "0.9.1": "dcs-1.1.0",
    "0.9.2": "dcs-1.1.0",
    "0.9.3": "dcs-1.1.0",
    "1.1.0": "dcs-1.1.0",
    "1.2.0": "dcs-1.2.0",
    "1.2.1": "dcs-1.2.1",
}
_DCS_LATEST = "dcs-1.2.1"

_LABELS = {
    "odcs-v3.0.2": "ODCS v3.0.2",
    "odcs-v3.1.0": "ODCS v3.1.0",
    "odcs-v3.2.0": "ODCS v3.2.0",
    "dcs-1.1.0": "DCS 1.1.0",
    "dcs-1.2.0": "DCS 1.2.0",
    "dcs-1.2.1": "DCS 1.2.1",
    "dbt-properties": "dbt property-file",
}


def schema_name(fmt: str, doc: Any) -> str | None:
    """The vendored schema for a document of format ``fmt``, or None (Soda)."""
    if fmt == "odcs":
        version = str(doc.get("apiVersion", "")).strip().lower()
        for prefix, name in _ODCS:
            if version.startswith(prefix) or version == prefix.rstrip("."):
                return name
        return _ODCS_LATEST  # its apiVersion enum then names the versions it knows
    if fmt == "dcs":
        return _DCS.get(str(doc.get("dataContractSpecification", "")).strip(), _DCS_LATEST)
    if fmt == "dbt":
        return "dbt-properties"
    return None


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A vendored schema as a dict (cached: they are large)."""
    with open(SCHEMA_DIR / f"{name}.schema.json", encoding="utf-8") as handle:
        return json.load(handle)


@functools.cache
def _validator(name: str) -> Any:
    """A ``jsonschema`` validator for the schema's own draft.

    YAML reads unquoted dates and timestamps as ``date``/``datetime`` objects;
    like dbt-core's validator, the gate lets them stand for the strings the
    schemas expect. Formats are not asserted (the schemas use them as hints).
    """
    import jsonschema.validators

    schema = load_schema(name)
    base = jsonschema.validators.validator_for(schema)

    def is_string(_checker: Any, instance: Any) -> bool:
        return isinstance(instance, (str, date, datetime))

    checker = base.TYPE_CHECKER.redefine("string", is_string)
    cls = jsonschema.validators.extend(base, type_checker=checker)
    return cls(schema)


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with ``unevaluatedProperties: false`` as ``additionalProperties: false``.

    fastjsonschema knows drafts 4-7 only and would ignore the 2019-09 keyword,
    letting every unknown key through. Each closed object accepts the keys that
    any of its branches declares (slightly looser than "keys a *passing* branch
    evaluated", which a failing branch reports on its own anyway).
    """
    root = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in list(node.values()):
                walk(value)
            if node.get("unevaluatedProperties") is False:
                properties = node.setdefault("properties", {})
                for key in _known_keys(node, root):
                    properties.setdefault(key, {})
                del node["unevaluatedProperties"]
                node["additionalProperties"] = False
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(root)
    root["$schema"] = "http://json-schema.org/draft-07/schema#"
    return root


def _cache_dir() -> Path | None:
    """``$SCHEMA_GATE_CACHE`` when set, else no disk cache at all.

    The cache holds code the gate executes. An implicit home-directory cache
    would be a place where an earlier step of the same CI job (which may run
    the pull request's own scripts) or a restored ``actions/cache`` entry could
    plant code; so only a directory someone chose on purpose is used (the
    Action's image sets one and fills it at build time). Without it the
    validators are compiled in memory, once per schema version and run.
    """
    explicit = os.environ.get("SCHEMA_GATE_CACHE")
    return Path(explicit) if explicit else None


def warm() -> list[str]:
    """Compile every vendored schema into the cache (the action's image does this)."""
    names = sorted(p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json"))
    for name in names:
        _fast(name)
    return names


@functools.cache
def _fast(name: str) -> Any:
    """A compiled fastjsonschema validator, its bytecode cached on disk between runs.

    Generating and compiling the code for a 100 KB schema takes about a second;
    loading the cached bytecode takes milliseconds. The code is generated from
    the vendored schema only, never from a contract; the cache key carries the
    schema, fastjsonschema's version and Python's bytecode version. (The gate
    marshals the code itself: CI images often set PYTHONDONTWRITEBYTECODE.)
    The cache holds executable code, so it must be as trusted as the gate's
    own install (docs/performance.md): never a directory a PR can write.
    """
    import hashlib  # here: a Soda-only run never loads OpenSSL

    import fastjsonschema

    raw = (SCHEMA_DIR / f"{name}.schema.json").read_bytes()
    salt = fastjsonschema.VERSION.encode() + importlib.util.MAGIC_NUMBER + _FAST_VERSION
    key = hashlib.sha256(raw + salt).hexdigest()[:16]
    namespace: dict[str, Any] = {}
    folder = _cache_dir()
    target = folder / f"{name}-{key}.marshal" if folder is not None else None
    if target is not None and target.exists():
        try:
            exec(marshal.loads(target.read_bytes()), namespace)
            return namespace["validate"]
        except Exception:  # a damaged cache entry: regenerate below
            namespace.clear()
    source = fastjsonschema.compile_to_code(
        _closed(load_schema(name)), use_default=False, use_formats=False
    )
    code = compile(source, f"<{name} validator>", "exec")
    if target is not None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            scratch = target.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_bytes(marshal.dumps(code))
            os.replace(scratch, target)
        except OSError:
            pass  # an unwritable cache only costs time
    exec(code, namespace)
    return namespace["validate"]


#: Bump when ``_closed`` changes, so cached code is regenerated.
_FAST_VERSION = b"closed-1"


def _fast_valid(name: str, doc: Any) -> bool:
    """The compiled check: True means valid; False sends the document to jsonschema.

    jsonschema then decides and explains, so a difference between the two
    validators can only cost time, never a wrong refusal.
    """
    try:
        _fast(name)(doc)
    except Exception:  # JsonSchemaValueException, or a YAML date where a string is due
        return False
    return True


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = node
        seen += 1
    return schema


def _known_keys(schema: Any, root: dict[str, Any], depth: int = 0) -> set[str]:
    """Every property name a (sub)schema declares, through refs and combinators."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 12:
        return set()
    keys = set(schema.get("properties", {}) or {})
    for combinator in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(combinator, []) or []:
            keys |= _known_keys(sub, root, depth + 1)
    for branch in ("then", "else"):
        if branch in schema:
            keys |= _known_keys(schema[branch], root, depth + 1)
    if "$ref" in schema:
        keys |= _known_keys({"$ref": schema["$ref"]}, root, depth + 1)
    return keys
