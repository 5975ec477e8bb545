"""ODCS and DCS: refuse a violation in a part the gate compares, warn about the rest.

Split from the validation because this is the policy, not the mechanics: each
violation is placed in its part of the contract (``gate.formats.compared``), a
file that breaks its declared version only where a newer vendored schema
allows it is read as that version, and the warnings are deduplicated.
"""

from __future__ import annotations

import itertools
from typing import Any

from gate.formats.compared import Part, column_keys_on_object, columns_key_on_object, near_miss
from gate.formats.compared import part as part_of
from gate.formats.validate.explain import _to_contract_error
from gate.formats.validate.locate import _QUOTED, _UNKNOWN, _line, _short, _unexpected, _where
from gate.formats.validate.schemas import (
    _LABELS,
    _fast_valid,
    _known_keys,
    _validator,
    load_schema,
)
from gate.model import ContractError, ContractWarning

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
            ContractWarning(path, _used(f, name, declared, _LABELS[newer]), f.error.line)
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


def _used(finding: _Finding, name: str, declared: str, newer: str) -> str:
    """What a file declared as ``declared`` does that only ``newer`` allows. A key the
    declared version requires and the newer one does not is no use of the newer
    version ("uses ODCS v3.2.0: 'status' is required" read as if v3.2 wanted it)."""
    brief = _brief(finding, name)
    raw = finding.raw
    if raw is not None and raw.validator == "required":
        return f"{brief} by {declared}, which it declares; {newer} does not require it"
    return f"declares {declared}, uses {newer}: {brief}"


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
    refs = _referenced_definitions(doc) if fmt == "dcs" else frozenset()
    for error in itertools.islice(_validator(name).iter_errors(doc), 100):
        location = list(error.absolute_path)
        if skip_version and location[:1] == [_VERSION_KEY[fmt]]:
            continue
        if error.validator in _UNKNOWN:
            found += _unknown_findings(fmt, name, error, doc, path, refs)
            continue
        key = location
        if error.validator == "required":
            missing = _QUOTED.findall(error.message)[:1]
            key = location + missing
        found.append(
            _Finding(_to_contract_error(error, doc, path, name), _part(fmt, refs, key), error)
        )
    return found


def _part(fmt: str, refs: frozenset[str], key: list[Any]) -> Part:
    """The part at ``key``; in DCS, a definition no local ``$ref`` names is not compared.

    A DCS definition reaches a model only through a field's ``$ref:
    '#/definitions/<name>'`` (external references are not resolved), so one
    that nothing in the file refers to (a lookup table kept beside the models)
    changes no dataset: its violations are warnings, like those in ``servers``.
    """
    unreferenced = fmt == "dcs" and len(key) >= 2 and key[0] == "definitions"
    if unreferenced and str(key[1]) not in refs:
        return Part(False, f"definitions.{key[1]} (no $ref names it)")
    return part_of(fmt, key)


def _referenced_definitions(doc: Any) -> frozenset[str]:
    """The definition names any local ``$ref`` in ``doc`` points into (``"*"``: all of them)."""
    names: set[str] = set()
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/definitions"):
                head = ref[len("#/definitions") :].strip("/").split("/", 1)[0]
                names.add(head.replace("~1", "/").replace("~0", "~") if head else "*")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if "*" in names and isinstance(doc, dict) and isinstance(doc.get("definitions"), dict):
        names.update(str(k) for k in doc["definitions"])
    return frozenset(names)


def _unknown_findings(
    fmt: str, name: str, error: Any, doc: Any, path: str, refs: frozenset[str]
) -> list[_Finding]:
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
    misplaced = column_keys_on_object(fmt, location, instance)
    if misplaced:
        keys = ", ".join(f"'{k}'" for k in misplaced)
        message = (
            f"{where} '{_short(instance.get('name'))}' has {keys} but no 'properties': "
            "those are a column's keys, so this lists a column as a table; ODCS puts a "
            f"table's columns under its 'properties' [{_LABELS[name]} schema]"
        )
        error_at = ContractError(path, message, _line(doc, location))
        found.append(_Finding(error_at, Part(True, "columns"), None))
    listed = columns_key_on_object(fmt, location, instance)
    if listed:
        message = (
            f"{where} '{_short(instance.get('name'))}' lists its columns under '{listed}' and has "
            "no 'properties': ODCS v3 puts a table's columns under 'properties' ('columns' is "
            "ODCS v2's word), so read as written the table has no column and no change to "
            f"one is ever compared; rename the key [{_LABELS[name]} schema]"
        )
        found.append(
            _Finding(
                ContractError(path, message, _line(doc, [*location, listed])),
                Part(True, "columns"),
                None,
            )
        )
        misplaced = [*misplaced, listed]
    for key in _unexpected(error, known):
        if key in known or key in misplaced:
            continue
        line = _line(doc, [*location, key])
        meant = near_miss(key, known, instance)
        if meant is not None:
            message = f"unknown key '{key}'{at} (did you mean '{meant}'?) [{_LABELS[name]} schema]"
            target = _part(fmt, refs, [*location, meant])
            found.append(_Finding(ContractError(path, message, line), target, None, typo=True))
        else:
            message = f"unknown key '{key}'{at} [{_LABELS[name]} schema]"
            target = _part(fmt, refs, [*location, key])
            found.append(_Finding(ContractError(path, message, line), target, None))
    return found
