"""Soda's key sets: Soda v4 publishes no reusable schema, so its documented keys are checked here.

Split from the validation because Soda needs a check of its own: every key
of a contract and of its columns must be a documented one (or an ``x-``
extension key), and a contract must have ``columns:`` or ``checks:``.
"""

from __future__ import annotations

from typing import Any

from gate.formats import constraints, soda
from gate.formats.validate.locate import _suggest
from gate.model import ContractError
from gate.yaml_load import YList, YMap

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
