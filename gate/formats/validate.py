"""Validate a parsed contract against its format's published JSON Schema.

The parsers read only the keys the gate compares, so a misspelt key (``column:``
for ``columns:``, ``propertes:`` for ``properties:``) used to vanish silently and
the gate compared an emptier contract than the author wrote. Every contract is
therefore also checked against the schema its format publishes (vendored under
``gate/formats/schemas/``, see the README there): ODCS v3.0.x/v3.1.x/v3.2.x, the
Data Contract Specification 0.9.x-1.2.x, and dbt's own property-file schema.
Soda v4 publishes no reusable schema, so its documented key set is checked here
(keys starting ``x-`` are extension keys, e.g. a home for YAML anchors).

The first problem becomes one ``ContractError`` naming the file, the line of the
offending key and, for an unknown key, the closest known key
(``unknown key 'column' (did you mean 'columns'?)``).

dbt is treated as dbt itself treats its schema: dbt-core only warns about most
violations (it also accepts Jinja where the schema wants booleans) and keeps
extra keys on models and columns, so the gate refuses only a *near miss* of a
known key that is absent at the same level (``data_tpye`` with no
``data_type``, ``column:`` with no ``columns:``), on models, versions, columns
and constraints, which is where a typo silently drops a contract's columns;
and only in models whose contract is enforced (an unenforced model is no
contract, so nothing beyond what dbt refuses is checked there).

Validation is two-step for speed: a ``fastjsonschema`` validator compiled from the
schema (its code cached on disk) says yes in a few milliseconds; only a document
it refuses goes to ``jsonschema``, which decides and explains. Both are imported
on first use, so a run that reads only Soda contracts never pays for them.
See docs/performance.md for the measurements behind this.
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import importlib.util
import itertools
import json
import marshal
import os
import re
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from gate.formats import constraints, soda
from gate.formats.common import describe
from gate.formats.compared import Part, near_miss
from gate.formats.compared import part as part_of
from gate.formats.dcs import TYPE_MAP
from gate.model import Contract, ContractError, ContractWarning
from gate.yaml_load import YList, YMap

SCHEMA_DIR = Path(__file__).parent / "schemas"

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

#: Soda contract keys (v4 as documented in Soda's contract language reference,
#: plus the v3 keys the gate still reads). Written from the docs and checked
#: against every contract in soda-core's tests (v3 branch and v4): Soda's own
#: JSON Schema ships under a proprietary licence and is not vendored.
SODA_TOP_KEYS = frozenset(
    {
        "dataset",
        "description",
        "filter",
        "variables",
        "columns",
        "checks",
        "soda_runner",
        "soda_agent",
        "scopes",
        "check_attributes",
        "failed_rows",  # v4: how failed rows are stored (strategy, keys)
        "dataset_prefix",  # early v4: the dataset's prefixes beside 'data_source'
        "diagnostics",  # v4: what is stored in the diagnostics warehouse
        "data_source",
        # v3 contracts
        "database",
        "schema",
        "filter_sql",
        "owner",
        "attributes",
    }
)
SODA_COLUMN_KEYS = frozenset(
    {
        "name",
        "description",
        "data_type",
        "character_maximum_length",
        "numeric_precision",
        "numeric_scale",
        "datetime_precision",
        "optional",
        "checks",
        # v4 column-level missing and validity options (configure the column's checks)
        *soda.MISSING_OPTIONS,
        *soda.VALIDITY_OPTIONS,
        *soda.COLUMN_OPTIONS,
        "valid_length",
        *constraints.SODA_KEYS,
    }
)

_UNKNOWN = ("additionalProperties", "unevaluatedProperties")


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


def validate(
    fmt: str, doc: Any, path: str, contract: Contract | None = None
) -> tuple[ContractWarning, ...]:
    """Raise ``ContractError`` for a schema violation in what the gate compares.

    ODCS and DCS violations elsewhere (servers, team, quality-rule shape, extension
    keys...) come back as warnings with their line; a file that breaks its declared
    version's schema only where a newer vendored schema allows it is compared, with
    a warning that says so (``gate/formats/compared.py``, docs/formats/validation.md).
    Soda and dbt keep their own checks: every problem there is a refusal. For dbt,
    ``contract`` (the parsed document) says which models are enforced: only their
    entries are checked (an unenforced model is not a contract).
    """
    if fmt == "soda":
        _validate_soda(doc, path)
        return ()
    name = schema_name(fmt, doc)
    if name is None:
        return ()
    if fmt == "dbt":
        if not _fast_valid(name, doc):  # only now is jsonschema imported
            errors = _dbt_relevant(
                _validator(name).iter_errors(doc), doc, _enforced_models(contract)
            )
            best = _first(errors)
            if best is not None:
                raise _to_contract_error(best, doc, path, name)
        return ()
    warnings = _scoped(fmt, name, doc, path)
    if fmt == "dcs" and isinstance(doc, YMap):
        warnings += _DcsKeys(load_schema(name), path, _LABELS[name]).check(doc)
    if len(warnings) > WARNINGS_PER_FILE:
        more = len(warnings) - WARNINGS_PER_FILE
        summary = ContractWarning(path, f"... and {more} more schema warnings in this file", None)
        warnings = [*warnings[:WARNINGS_PER_FILE], summary]
    return tuple(warnings)


#: Schema warnings kept per file; a file that breaks its schema everywhere says so once.
WARNINGS_PER_FILE = 20

#: Vendored schemas of each format, oldest first: where a file may "use" a newer one.
_ORDER = {
    "odcs": ("odcs-v3.0.2", "odcs-v3.1.0", "odcs-v3.2.0"),
    "dcs": ("dcs-1.1.0", "dcs-1.2.0", "dcs-1.2.1"),
}
_VERSION_KEY = {"odcs": "apiVersion", "dcs": "dataContractSpecification"}


class _Finding:
    """One schema violation: the refusal it would be, and the part of the contract it is in."""

    __slots__ = ("error", "part", "raw", "typo")

    def __init__(self, error: ContractError, where: Part, raw: Any, typo: bool = False) -> None:
        self.error = error
        self.part = where
        self.raw = raw
        self.typo = typo

    def warning(self, fmt: str) -> ContractWarning:
        extension = fmt == "odcs" and self.raw is None and not self.typo  # an unknown key
        hint = " (ODCS keeps extensions under customProperties)" if extension else ""
        return ContractWarning(
            self.error.path,
            f"{self.error.detail}: the gate does not compare '{self.part.name}', "
            f"so this is a warning{hint}",
            self.error.line,
        )


def _scoped(fmt: str, name: str, doc: Any, path: str) -> list[ContractWarning]:
    """Refuse a violation in a compared part (unless a newer schema allows it); warn on the rest.

    A file that breaks its declared version's schema but passes a newer vendored
    one (a v3.0.2 file using v3.1's ``logicalType: timestamp``) is compared as the
    newer version, with a warning per difference.
    """
    findings = _findings(fmt, name, doc, path)
    if not findings:
        return []
    compared = [f for f in findings if f.part.compared]
    order = _ORDER[fmt]
    for newer in order[order.index(name) + 1 :] if name in order else ():
        others = _findings(fmt, newer, doc, path, skip_version=True)
        # Compared parts must pass the newer schema; a file broken only elsewhere
        # is read as newer only when the newer schema accepts it whole.
        if any(f.part.compared for f in others) if compared else others:
            continue
        declared = str(doc.get(_VERSION_KEY[fmt], "")).strip()
        used = [
            ContractWarning(
                path, f"declares {declared}, uses {_LABELS[newer]}: {_brief(f, name)}", f.error.line
            )
            for f in (compared or findings)
        ]
        return _unique(used + [f.warning(fmt) for f in others])
    if not compared:
        return _unique([f.warning(fmt) for f in findings])
    typos = [f for f in compared if f.typo]
    if typos:
        raise typos[0].error
    from jsonschema.exceptions import best_match

    raws = [f.raw for f in compared if f.raw is not None]
    best = best_match(raws) if raws else None
    raise next((f.error for f in compared if f.raw is best), compared[0].error)


def _brief(finding: _Finding, name: str) -> str:
    """What a file uses that its declared version lacks: ``schema[0]...logicalType 'time'``."""
    raw = finding.raw
    if raw is not None and raw.validator in ("enum", "const"):
        return f"{_where(raw.absolute_path)} {_short(raw.instance)!r}"
    return finding.error.detail.removesuffix(f" [{_LABELS[name]} schema]")


def _unique(warnings: list[ContractWarning]) -> list[ContractWarning]:
    """Each warning once (jsonschema reports a key once per schema branch that rejects it)."""
    return list(dict.fromkeys(warnings))


def _findings(
    fmt: str, name: str, doc: Any, path: str, skip_version: bool = False
) -> list[_Finding]:
    """Every violation of schema ``name`` (the first hundred), each placed in its part."""
    if _fast_valid(name, doc):  # only now is jsonschema imported
        return []
    found: list[_Finding] = []
    for error in itertools.islice(_validator(name).iter_errors(doc), 100):
        location = list(error.absolute_path)
        if skip_version and location[:1] == [_VERSION_KEY[fmt]]:
            continue
        if error.validator in _UNKNOWN:
            found += _unknown_findings(fmt, name, error, doc, path)
            continue
        key = location
        if error.validator == "required":
            missing = _QUOTED.findall(error.message)[:1]
            key = location + missing
        found.append(_Finding(_to_contract_error(error, doc, path, name), part_of(fmt, key), error))
    return found


def _unknown_findings(fmt: str, name: str, error: Any, doc: Any, path: str) -> list[_Finding]:
    """An unknown key: a typo of a missing compared key is refused; any other is a warning.

    ``unevaluatedProperties`` also fires on known keys that a failed branch left
    unevaluated; those keys are not unknown, and the branch's own error counts.
    """
    root = load_schema(name)
    known = _known_keys(error.schema, root)
    instance = error.instance if isinstance(error.instance, dict) else {}
    location = list(error.absolute_path)
    where = _where(location)
    at = f" in {where}" if where else ""
    found: list[_Finding] = []
    for key in _unexpected(error, known):
        if key in known:
            continue
        line = _line(doc, [*location, key])
        meant = near_miss(key, known, instance)
        if meant is not None:
            message = f"unknown key '{key}'{at} (did you mean '{meant}'?) [{_LABELS[name]} schema]"
            target = part_of(fmt, [*location, meant])
            found.append(_Finding(ContractError(path, message, line), target, None, typo=True))
        else:
            message = f"unknown key '{key}'{at} [{_LABELS[name]} schema]"
            target = part_of(fmt, [*location, key])
            found.append(_Finding(ContractError(path, message, line), target, None))
    return found


def require_columns(contract: Contract) -> None:
    """Refuse a dbt model that enforces a contract but declares no columns.

    dbt fails such a model at build time (``assert_columns_equivalent`` raises a
    contract error when the YAML lists no columns); the gate must not compare it
    as "every column removed" or pass it. A disabled model is never built.
    """
    if contract.format != "dbt":
        return
    for dataset in contract.datasets:
        if dataset.enforced and dataset.enabled and not dataset.columns:
            raise ContractError(
                contract.path,
                f"model '{dataset.id}' enforces a contract but declares no columns "
                "(dbt fails such a model: an enforced contract lists every column)",
                dataset.line,
            )


# -- Soda -----------------------------------------------------------------------


def _validate_soda(doc: Any, path: str) -> None:
    if isinstance(doc, YMap):
        _unknown_keys(doc, SODA_TOP_KEYS, path, "", "Soda contract")
        if doc.get("columns") is None and doc.get("checks") is None:
            raise ContractError(
                path,
                "a Soda contract needs 'columns:' or 'checks:' (Soda's contract language "
                "requires one of them); without either there is nothing to compare",
                doc.key_line("dataset"),
            )
        columns = doc.get("columns")
        if isinstance(columns, YList):
            for index, column in enumerate(columns):
                if isinstance(column, YMap):
                    _unknown_keys(
                        column, SODA_COLUMN_KEYS, path, f" in columns[{index}]", "Soda column"
                    )


def _unknown_keys(mapping: YMap, known: frozenset[str], path: str, where: str, what: str) -> None:
    for key in mapping:
        if key not in known and not str(key).startswith("x-"):
            raise ContractError(
                path,
                f"unknown key '{key}'{where}{_suggest(key, known)} [{what} keys]",
                mapping.key_line(key),
            )


def _suggest(key: Any, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    if not close:
        close = [k for k in sorted(known) if k.lower() == str(key).lower()]
    return f" (did you mean '{close[0]}'?)" if close else ""


# -- DCS: the gate's own key check -----------------------------------------------

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
                    self.unknown(model, self.model, ["models", name])
                    self.fields(model.get("fields"), ["models", name], 0)
        definitions = doc.get("definitions")
        if isinstance(definitions, YMap):
            for name, definition in definitions.items():
                if isinstance(definition, YMap):
                    self.field_keys(definition, ["definitions", name], 0, self.definition)
        return self.warnings

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


# -- JSON Schema ------------------------------------------------------------------


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


def _enforced_models(contract: Contract | None) -> set[str] | None:
    """Names of the models a parsed dbt file enforces (``None``: not known, check all)."""
    if contract is None:
        return None
    return {_VERSIONED.sub("", d.id) for d in contract.datasets if d.enforced and d.enabled}


_VERSIONED = re.compile(r"\.v[^.]+$")


def _model_name(doc: Any, path: Iterable[Any]) -> str | None:
    parts = list(path)
    if len(parts) < 2 or parts[0] != "models" or not isinstance(parts[1], int):
        return None
    try:
        name = doc["models"][parts[1]].get("name")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _near_misses(error: Any, known: set[str]) -> list[Any]:
    """Unknown keys that are a near miss of a known key absent at the same level.

    dbt keeps other keys (custom properties); a near miss is the typo that makes
    the gate, and dbt, silently read less than the author wrote.
    """
    instance = error.instance if isinstance(error.instance, dict) else {}
    absent = sorted(k for k in known if k not in instance)
    out = []
    for key in _unexpected(error, known):
        text = str(key)
        if difflib.get_close_matches(text, absent, n=1, cutoff=0.8) or any(
            k.lower() == text.lower() for k in absent
        ):
            out.append(key)
    return out


def _dbt_relevant(
    errors: Iterable[Any], doc: Any = None, enforced: set[str] | None = None
) -> Iterator[Any]:
    """Near misses of known keys on enforced models, their versions, columns and
    constraints; nothing else.

    dbt-core itself turns schema violations into deprecation warnings, accepts
    Jinja where the schema wants other types and keeps extra keys; a misspelt
    known key is the one violation that makes the gate compare less than the
    author wrote, and it matters only where the model is a contract.
    """
    for error in errors:
        if error.validator not in _UNKNOWN:
            continue
        parts = [p for p in error.absolute_path if isinstance(p, str)]
        if not parts or parts[0] != "models":
            continue
        if any(p in ("config", "data_tests", "tests", "meta", "docs") for p in parts[1:]):
            continue
        if enforced is not None and _model_name(doc, error.absolute_path) not in enforced:
            continue
        root = load_schema("dbt-properties")
        movable = _dbt_movable(error, root)
        misses = _near_misses(error, _known_keys(error.schema, root))
        if all(key in movable for key in misses):
            continue
        yield error


def _dbt_movable(error: Any, root: dict[str, Any]) -> set[str]:
    """Keys dbt >= 1.10 moved into ``config`` and still reads in the old place.

    dbt only warns about them ("property moved to config"), so they are neither
    a refusal nor the key to name when a real typo sits beside them.
    """
    config = _resolve(error.schema, root).get("properties", {}).get("config")
    return _known_keys(config, root) if config is not None else set()


def _first(errors: Iterable[Any]) -> Any | None:
    """The most useful error: jsonschema's best match among the first few."""
    from jsonschema.exceptions import best_match

    collected = []
    for error in errors:
        collected.append(error)
        if len(collected) >= 20:
            break
    # ``unevaluatedProperties`` also fires on keys a failed ``oneOf`` branch left
    # unevaluated; the branch's own error is the one to show.
    paths = [tuple(e.absolute_path) for e in collected if e.validator != "unevaluatedProperties"]
    primary = [
        e
        for e in collected
        if e.validator != "unevaluatedProperties" or tuple(e.absolute_path) not in paths
    ]
    if not primary:
        return None
    return best_match(primary)


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _container(doc: Any, path: Iterable[Any]) -> list[Any]:
    """Every value from the document root down ``path``."""
    chain = [doc]
    node = doc
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        chain.append(node)
    return chain


def _line(doc: Any, path: list[Any]) -> int | None:
    chain = _container(doc, path)
    if len(chain) == len(path) + 1 and path:
        parent, key = chain[-2], path[-1]
        if isinstance(parent, YMap):
            return parent.key_line(key)
        if isinstance(parent, YList) and isinstance(key, int):
            return parent.item_line(key)
    for node in reversed(chain):
        if isinstance(node, (YMap, YList)):
            return node.line
    return 1


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


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _unexpected(error: Any, known: set[str]) -> list[Any]:
    instance = error.instance
    if isinstance(instance, dict):
        patterns = list((error.schema.get("patternProperties") or {}).keys())
        extra = [
            key
            for key in instance
            if key not in known and not any(re.search(p, str(key)) for p in patterns)
        ]
        if extra:
            return extra
    return _QUOTED.findall(error.message)[:1]


def _to_contract_error(error: Any, doc: Any, path: str, name: str) -> ContractError:
    label = _LABELS.get(name, name)
    location = list(error.absolute_path)
    where = _where(location)
    at = f" in {where}" if where else ""
    if error.validator in _UNKNOWN:
        root = load_schema(name)
        known = _known_keys(error.schema, root)
        keys = _unexpected(error, known)
        if name == "dbt-properties":  # name the typo, not a key dbt moved into config
            movable = _dbt_movable(error, root)
            misses = [k for k in _near_misses(error, known) if k not in movable]
            keys = misses or [k for k in keys if k not in movable] or keys
        key = keys[0] if keys else "?"
        line = _line(doc, [*location, key])
        return ContractError(
            path, f"unknown key '{key}'{at}{_suggest(key, known)} [{label} schema]", line
        )
    line = _line(doc, location)
    alternatives = _required_alternatives(error)
    if alternatives:
        shown = ", ".join(alternatives)
        return ContractError(
            path, f"{where or 'the top level'} needs one of: {shown} [{label} schema]", line
        )
    if error.validator == "required":
        missing = _QUOTED.findall(error.message)[:1]
        what = f"'{missing[0]}'" if missing else "a required key"
        return ContractError(path, f"{what} is required{at} [{label} schema]", line)
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        hint = " (quote it)" if expected == "string" and not isinstance(error.instance, str) else ""
        return ContractError(
            path,
            f"{where or 'the top level'} must be {expected}, found "
            f"{describe(error.instance)}{hint} [{label} schema]",
            line,
        )
    if error.validator in ("enum", "const"):
        allowed = error.validator_value
        allowed = allowed if isinstance(allowed, list) else [allowed]
        shown = ", ".join(str(v) for v in allowed[:12]) + (", ..." if len(allowed) > 12 else "")
        return ContractError(
            path,
            f"{where or 'the value'}: {_short(error.instance)!r} is not allowed "
            f"(expected one of: {shown}) [{label} schema]",
            line,
        )
    message = " ".join(str(error.message).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return ContractError(path, f"{where or 'the top level'}: {message} [{label} schema]", line)


def _required_alternatives(error: Any) -> list[str]:
    """For a ``oneOf``/``anyOf`` whose branches each want one key: those keys."""
    parent = error if error.validator in ("oneOf", "anyOf") else error.parent
    if parent is None or parent.validator not in ("oneOf", "anyOf"):
        return []
    context = parent.context or []
    if not context or any(c.validator != "required" for c in context):
        return []
    keys: list[str] = []
    for sub in context:
        keys += [k for k in _QUOTED.findall(sub.message)[:1] if k not in keys]
    return keys


def _short(value: Any) -> Any:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
