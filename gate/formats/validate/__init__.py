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

Modules, one job each (names with a leading underscore are private to this
package, shared between its modules and kept importable here for the tests
and the benchmark):

- ``schemas``: which vendored schema a document uses; loading, compiling,
  the code cache and ``warm``;
- ``soda_keys``: Soda's documented key sets;
- ``dcs_keys``: the DCS typo guard;
- ``scoped``: ODCS/DCS refusals in compared parts, warnings elsewhere;
- ``dbt_scope``: the dbt near misses that are refused;
- ``explain``: one error as one line; ``locate``: paths, lines and keys.
"""

from __future__ import annotations

import importlib
from typing import Any

from gate.formats.validate.schemas import (
    _LABELS,
    SCHEMA_DIR,
    _fast_valid,
    _validator,
    load_schema,
    schema_name,
    warm,
)
from gate.formats.validate.schemas import _fast as _fast  # the tests and the benchmark use it
from gate.model import Contract, ContractError, ContractWarning
from gate.yaml_load import YMap

#: Names re-exported from the modules each format's check imports on first use
#: (a Soda-only run loads neither the DCS key walk nor the scoped schema check).
_LAZY = {
    "WARNINGS_PER_FILE": "scoped",
    "SODA_COLUMN_KEYS": "soda_keys",
    "SODA_TOP_KEYS": "soda_keys",
    "_DcsKeys": "dcs_keys",
    "_dbt_relevant": "dbt_scope",
    "_enforced_models": "dbt_scope",
    "_first": "explain",
    "_scoped": "scoped",
    "_to_contract_error": "explain",
    "_validate_soda": "soda_keys",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SCHEMA_DIR",
    "SODA_COLUMN_KEYS",
    "SODA_TOP_KEYS",
    "WARNINGS_PER_FILE",
    "load_schema",
    "require_columns",
    "schema_name",
    "validate",
    "warm",
]


def validate(
    fmt: str, doc: Any, path: str, contract: Contract | None = None
) -> tuple[ContractWarning, ...]:
    """Raise ``ContractError`` for a schema violation in what the gate compares.

    ODCS and DCS violations elsewhere (servers, team, quality-rule shape, extension
    keys...) come back as warnings with their line; a file that breaks its declared
    version's schema only where a newer vendored schema allows it is compared, with
    a warning that says so (``gate/formats/compared.py``, docs/formats/validation.md).
    Soda keeps its own key check (an unknown key is a warning, a near miss of a
    documented one a refusal); dbt refuses every problem it finds. For dbt,
    ``contract`` (the parsed document) says which models are enforced: only their
    entries are checked (an unenforced model is not a contract).
    """
    if fmt == "soda":
        from gate.formats.validate.soda_keys import _validate_soda

        return _capped(_validate_soda(doc, path), path)
    name = schema_name(fmt, doc)
    if name is None:
        return ()
    if fmt == "dbt":
        if not _fast_valid(name, doc):  # only now is jsonschema imported
            from gate.formats.validate.dbt_scope import _dbt_relevant, _enforced_models
            from gate.formats.validate.explain import _first, _to_contract_error

            errors = _dbt_relevant(
                _validator(name).iter_errors(doc), doc, _enforced_models(contract)
            )
            best = _first(errors)
            if best is not None:
                raise _to_contract_error(best, doc, path, name)
        return ()
    from gate.formats.validate.scoped import _scoped

    warnings = _scoped(fmt, name, doc, path)
    if fmt == "dcs" and isinstance(doc, YMap):
        from gate.formats.validate.dcs_keys import _DcsKeys

        warnings += _DcsKeys(load_schema(name), path, _LABELS[name]).check(doc)
    return _capped(warnings, path)


def _capped(warnings: list[ContractWarning], path: str) -> tuple[ContractWarning, ...]:
    """At most ``WARNINGS_PER_FILE`` warnings of one file, then one that counts the rest."""
    if not warnings:
        return ()  # the usual case, and a Soda run's: no import of the schema machinery
    from gate.formats.validate.scoped import WARNINGS_PER_FILE

    if len(warnings) > WARNINGS_PER_FILE:
        more = len(warnings) - WARNINGS_PER_FILE
        summary = ContractWarning(path, f"... and {more} more schema warnings in this file", None)
        warnings = [*warnings[:WARNINGS_PER_FILE], summary]
    return tuple(warnings)


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
