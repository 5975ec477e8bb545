"""Contract formats: detect each file's format and parse it into the internal model.

Every format module exposes ``FORMAT`` (its name), ``detect(doc) -> bool`` and
``parse(doc, path) -> Contract``. Detection looks at the document, never at the
file name, so a team can keep any format anywhere their globs point.

The detection tests live in ``gate.formats.detect``; a format's parser (and
the schema validation of the formats that have one) is imported when a file of
that format is first parsed, so a run pays only for the formats it meets.
``FORMATS`` (the modules, in detection order) imports them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gate import lattice as types
from gate.escapes import shown
from gate.formats.common import describe
from gate.formats.detect import DETECTORS
from gate.limits import DEFAULT_LIMITS, Limits
from gate.model import Column, Contract, ContractError, ContractWarning, Dataset
from gate.yaml_load import MAX_DEPTH, YMap, load_yaml

if TYPE_CHECKING:
    from gate.formats.dbt.project import Project

#: ``FORMATS``: the format modules, checked in this order; the first whose
#: ``detect`` accepts the document wins. Soda comes last because its marker
#: (``dataset``) is the most generic. Built on first use (``__getattr__``).
_ORDER = tuple(name for name, _detect in DETECTORS)


def format_module(name: str) -> ModuleType:
    """The parser module of format ``name`` (``dcs``, ``odcs``, ``dbt``, ``soda``), imported now."""
    if name == "dcs":
        from gate.formats import dcs

        return dcs
    if name == "odcs":
        from gate.formats import odcs

        return odcs
    if name == "dbt":
        from gate.formats import dbt

        return dbt
    if name == "soda":
        from gate.formats import soda

        return soda
    raise LookupError(name)


def __getattr__(name: str) -> Any:
    if name == "FORMATS":
        return tuple(format_module(fmt) for fmt in _ORDER)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Where contracts usually live, per format (git glob syntax; ``**/`` matches any depth).
#: A matched file whose content is no known format is an error, not skipped: the
#: gate fails closed rather than silently ignoring a contract it cannot read.
DEFAULT_GLOBS: tuple[str, ...] = (
    "soda/contracts/**/*.yaml",
    "soda/contracts/**/*.yml",
    # Soda's docs put a `soda/` folder at a project's top; in a monorepo that is
    # below the root (itsbillw/beara_bones: `football/soda/contracts/`).
    "**/soda/contracts/**/*.yaml",
    "**/soda/contracts/**/*.yml",
    "contracts/**/*.yaml",
    "contracts/**/*.yml",
    "**/*.odcs.yaml",
    "**/*.odcs.yml",
    "**/*.datacontract.yaml",
    "**/*.datacontract.yml",
    "**/datacontract.yaml",  # the name datacontract-cli's `init` writes
    "**/datacontract.yml",
    "models/**/*.yml",
    "models/**/*.yaml",
    # GitHub's own folder holds no contract, but a workflow that runs datacontract-cli
    # is named `.github/workflows/datacontract.yml` (its docs say so), which the two
    # globs above match: refused as "not a contract" on every PR that edits it.
    "!.github/**",
)

_EXPECTED = (
    "a Data Contract Specification file ('dataContractSpecification:'), "
    "an ODCS v3 contract ('apiVersion: v3.x' and 'kind: DataContract'), "
    "a dbt properties file ('models:', 'sources:', ...) "
    "or a Soda contract ('dataset:')"
)


def parse_document(
    doc: Any,
    path: str,
    project: Project | None = None,
    check_schema: bool = True,
    lenient: bool = False,
) -> Contract:
    """Parse an already-loaded YAML document, detecting its format.

    ``project`` is set for a file inside a dbt project's resource paths: dbt
    reads every such file as a properties file, so one that no format claims
    is parsed as dbt (holding no models) rather than refused.

    ``check_schema=False`` skips the published-schema validation (the parser's
    own checks still run). ``lenient=True`` reads the file as the base side is
    read: a schema violation that would refuse it at HEAD becomes its only
    warning (the engine says it is the base version), other warnings are dropped.
    """
    if project is not None and (doc is None or not any(test(doc) for _n, test in DETECTORS)):
        return format_module("dbt").parse(doc, path, project)
    if doc is None:
        raise ContractError(path, "empty file; expected a data contract")
    if not isinstance(doc, dict):
        raise ContractError(path, f"the top level must be a mapping, found {describe(doc)}", 1)
    if _odcs_v2(doc):
        # bitol-io/open-data-contract-standard's v2 examples: `dataset:` holds tables,
        # so the Soda test would claim them and refuse for a reason that misleads.
        key = "standardVersion" if "standardVersion" in doc else "kind"
        raise ContractError(
            path,
            "an ODCS v2 contract (no 'apiVersion'); the gate reads ODCS v3 (apiVersion: v3.x, "
            f"kind: DataContract, tables under 'schema:'); {exclude_hint(path)}",
            doc.key_line(key) if isinstance(doc, YMap) else 1,
        )
    for name, detect in DETECTORS:
        if detect(doc):
            module = format_module(name)
            try:
                if name == "dbt":
                    contract = module.parse(doc, path, project)
                else:
                    contract = module.parse(doc, path)
                if lenient:  # the parser's warnings are HEAD's to give (a Jinja latest_version)
                    contract = replace(contract, warnings=())
                # The parser's own checks first (their messages are tailored), then
                # the published schema, which catches every key the parser skips.
                if check_schema:
                    contract = _validated(module.FORMAT, doc, path, contract, lenient)
            except RecursionError:  # deeply nested check options, walked by json/recursion
                raise ContractError(
                    path, f"YAML nests too deeply (more than {MAX_DEPTH} levels)"
                ) from None
            return contract
    if "columns" in doc or "checks" in doc:
        # Shaped like a Soda contract that lost its identity: say exactly that. Keys
        # Soda never reads (anilsolanki2645/schema-guard's `source:`) say it may be
        # another tool's file: then the exclude line too.
        from gate.formats.validate.soda_keys import SODA_TOP_KEYS

        foreign = sorted(shown(str(k), 80) for k in doc if k not in SODA_TOP_KEYS)
        hint = f"; it also has {_keys(foreign)}, which Soda never reads: {exclude_hint(path)}"
        raise ContractError(
            path,
            "'dataset' is missing: a Soda contract needs 'dataset:'" + (hint if foreign else ""),
            1,
        )
    if isinstance(doc.get("schema"), list) and ("apiVersion" not in doc or "kind" not in doc):
        # datacontract-cli's tests/fixtures/markdown/export/multicolumn.odcs.yaml
        raise ContractError(
            path,
            "shaped like an ODCS contract (a 'schema:' list) but without 'apiVersion: v3.x' "
            f"and 'kind: DataContract', which ODCS requires: add them; {exclude_hint(path)}",
            1,
        )
    soda_file = _soda_config(doc)
    if soda_file:
        what, key, why = soda_file
        raise ContractError(
            path,
            f"a {what} ('{shown(key, 80)}'){why}, not a Soda data contract ('dataset:' with 'columns:' "
            f"or 'checks:'), which is what the gate compares; {exclude_hint(path)}",
            doc.key_line(key) if isinstance(doc, YMap) else 1,
        )
    raise ContractError(
        path, f"not a recognised contract: expected {_EXPECTED}; {exclude_hint(path)}", 1
    )


def _keys(names: list[str]) -> str:
    listed = ", ".join(f"'{n}'" for n in names[:3])
    return listed + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _soda_config(doc: dict[Any, Any]) -> tuple[str, str, str] | None:
    """What Soda file of another kind ``doc`` is (SodaCL scan checks, a data source's
    connection), by its first key of that kind: the refusal then says what it is
    rather than "expected ... a Soda contract", which a Soda user reads as a puzzle."""
    for key in doc:
        if not isinstance(key, str):
            continue
        if key.startswith(("checks for ", "for each dataset ", "for each table ")):
            return "SodaCL checks file", key, ", which `soda scan` runs"
        if key.startswith("data_source "):
            return "Soda data source configuration", key, ""
    return None


def _validated(fmt: str, doc: Any, path: str, contract: Contract, lenient: bool) -> Contract:
    """``contract`` checked against its format's published schema (imported now).

    At HEAD a violation refuses the file and the schema's warnings join the
    contract; read leniently, a violation becomes the contract's only warning.
    """
    from gate.formats.validate import require_columns, validate

    if not lenient:
        warnings = validate(fmt, doc, path, contract)
        require_columns(contract)
        return replace(contract, warnings=(*contract.warnings, *warnings)) if warnings else contract
    try:
        validate(fmt, doc, path)
        require_columns(contract)
    except ContractError as broken:
        warning = ContractWarning(broken.path, broken.detail, broken.line)
        contract = replace(contract, warnings=(warning,))
    return contract


def _odcs_v2(doc: dict[str, Any]) -> bool:
    """An ODCS v2 document: ``standardVersion``, or ``kind: DataContract`` with no
    ``apiVersion`` and its tables under ``dataset:`` (a list or mapping, not Soda's
    name). A v3 ``schema:`` list missing its ``apiVersion`` keeps its own message."""
    if "apiVersion" in doc or "dataContractSpecification" in doc:
        return False
    if "standardVersion" in doc:
        return True
    dataset = doc.get("dataset")
    return doc.get("kind") == "DataContract" and isinstance(dataset, (list, dict))


def exclude_hint(path: str) -> str:
    """The config line that stops the gate reading ``path``, ready to paste."""
    quoted = json.dumps(f"!{path}")  # a YAML double-quoted scalar, escapes included
    return (
        f"if it is not a contract, exclude it: add  - {quoted}  under 'contracts:' in "
        ".schema-gate.yml (a 'contracts:' list replaces the default globs: list them too)"
    )


def _count_columns(columns: tuple[Column, ...]) -> int:
    return sum(1 + _count_columns(column.fields) for column in columns)


def _walk(columns: tuple[Column, ...], prefix: str = "") -> Iterator[tuple[str, Column]]:
    for column in columns:
        name = f"{prefix}{column.name}"
        yield name, column
        yield from _walk(column.fields, f"{name}.")


def _check_types(dataset: Dataset, path: str, seen: set[str], total: int, limits: Limits) -> int:
    """Bound every type before sqlglot sees it: each one, and the file's distinct ones.

    Returns the characters of the distinct types seen so far in the file.
    """
    for name, column in _walk(dataset.columns):
        for text in (column.data_type, *(t for _d, t in column.physical_types)):
            if text is None or text in seen:
                continue
            total = _check_type(dataset, path, name, column, text, seen, total, limits)
    return total


def _check_type(
    dataset: Dataset,
    path: str,
    name: str,
    column: Column,
    text: str,
    seen: set[str],
    total: int,
    limits: Limits,
) -> int:
    """One type text (a data_type or a physical type): bounded, then counted."""
    problem = types.check_bounds(text)
    if problem is not None:
        raise ContractError(
            path,
            f"dataset '{dataset.id}': column '{name}': the type {problem}; refusing to parse it",
            column.line,
        )
    seen.add(text)
    total += len(text)
    if total > limits.type_chars_per_file:
        raise ContractError(
            path,
            f"the distinct data_type values add up to more than "
            f"{limits.type_chars_per_file:,} characters (at dataset '{dataset.id}', column "
            f"'{name}'); raise limits.type_chars_per_file in the config",
            column.line,
        )
    return total


def check_size(
    data: bytes | str,
    path: str,
    limits: Limits = DEFAULT_LIMITS,
    advice: str = "split it or raise limits.contract_bytes in the config",
) -> None:
    """Refuse a file above ``limits.contract_bytes`` before reading it as YAML."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > limits.contract_bytes:
        raise ContractError(
            path,
            f"the file is {size:,} bytes, more than the limit of {limits.contract_bytes:,}; "
            + advice,
        )


def parse_contract(
    data: bytes | str,
    path: str,
    project: Project | None = None,
    limits: Limits = DEFAULT_LIMITS,
    check_schema: bool = True,
    lenient: bool = False,
) -> Contract:
    """Load and parse one contract file; every failure is a ``ContractError``.

    The size limits are checked before the work they bound: bytes before YAML,
    nodes while composing, columns before anything compares them.
    """
    check_size(data, path, limits)
    repeats: list[tuple[str, int]] = []
    try:
        doc = load_yaml(data, path, limits.yaml_nodes, repeats)
        if repeats and not _read_as_dbt(doc, project):
            key, line = repeats[0]
            raise ContractError(path, f"invalid YAML: duplicate key '{key}'", line)
    except ContractError as exc:
        raise _template(data, exc) from None
    contract = parse_document(doc, path, project, check_schema, lenient)
    if repeats and not lenient:
        contract = replace(
            contract,
            warnings=contract.warnings + tuple(_dbt_repeat(path, k, n) for k, n in repeats),
        )
    seen: set[str] = set()
    total = 0
    for dataset in contract.datasets:
        count = _count_columns(dataset.columns)
        if count > limits.columns_per_dataset:
            raise ContractError(
                path,
                f"dataset '{dataset.id}' has {count:,} columns (nested fields included), "
                f"more than the limit of {limits.columns_per_dataset:,}; raise "
                "limits.columns_per_dataset in the config",
                dataset.line,
            )
        total = _check_types(dataset, path, seen, total, limits)
    return contract


def _read_as_dbt(doc: Any, project: Project | None) -> bool:
    """Whether ``parse_document`` reads ``doc`` as a dbt properties file."""
    first = next((name for name, test in DETECTORS if test(doc)), None)
    return first == "dbt" or (project is not None and first is None)


def _dbt_repeat(path: str, key: str, line: int) -> ContractWarning:
    """A key written twice in a dbt file: dbt reads it, so the gate does too.

    dbt loads YAML with PyYAML, which keeps the last value; dbt 1.10 only warns
    (``DuplicateYAMLKeysDeprecation``: checked with ``dbt parse``, a second
    ``models:`` block replaces the first). Refusing the file would block pull
    requests on a project dbt builds; the warning names what dbt ignores.
    """
    return ContractWarning(
        path,
        f"key '{key}' is written twice in one mapping: dbt keeps this last value and "
        "ignores the earlier one (DuplicateYAMLKeysDeprecation), and so does the gate",
        line,
    )


#: Jinja markup at the start of a YAML value or line: ``{{ var }}``, ``{% if %}``, ``{# #}``.
_JINJA = re.compile(rb"\{\{|\{%|\{#")


def unquoted_jinja(raw: bytes) -> re.Match[bytes] | None:
    """The first Jinja markup outside a quoted scalar of its line, if any.

    ``description: '{{ doc("x") }}'`` is valid YAML (dbt properties files are
    full of it), so it says nothing of why a file does not parse.
    """
    # One pass: each stretch between two matches is searched and counted once
    # (a line of 50,000 ``{{x}}`` must not be rescanned from its start each time).
    position = singles = doubles = 0
    for found in _JINJA.finditer(raw):
        newline = raw.rfind(b"\n", position, found.start())
        if newline >= 0:
            position, singles, doubles = newline + 1, 0, 0
        singles += raw.count(b"'", position, found.start())
        doubles += raw.count(b'"', position, found.start())
        position = found.start()
        if singles % 2 == 0 and doubles % 2 == 0:
            return found
    return None


def _template(data: bytes | str, error: ContractError) -> ContractError:
    """Invalid YAML that holds Jinja markup is a template, not a contract: say so, and how."""
    raw = data.encode() if isinstance(data, str) else data
    found = unquoted_jinja(raw)
    if found is None:
        return error
    line = raw.count(b"\n", 0, found.start()) + 1
    return ContractError(
        error.path,
        f"{error.detail}; the file holds Jinja markup ('{found.group().decode()}' at line "
        f"{line}): a template is not a contract; {exclude_hint(error.path)}",
        error.line,
    )
