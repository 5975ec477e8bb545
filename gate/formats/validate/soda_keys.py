"""Soda's key sets: Soda v4 publishes no reusable schema, so its documented keys are checked here.

Split from the validation because Soda needs a check of its own. soda-core
reads the keys it knows and ignores the rest (v4's parser never checks for
others; v3 has a test that says so), and real projects use that: a generator's
own ``source_table``/``source_column`` beside each column. So an unknown key is
a warning, and the file is compared; what is refused is a near miss of a
documented key that is absent at the same level (``colums`` with no
``columns``, ``data_typ`` with no ``data_type``) or another format's name for
it (``type``, ``tests``, ``accepted_values``), which would silently drop part
of the contract, and a contract without ``columns:`` or ``checks:``.
"""

from __future__ import annotations

from typing import Any

from gate.formats import constraints, soda
from gate.model import ContractError, ContractWarning
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
        "reconciliation",  # v4: checks against a source dataset (not compared)
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


#: Other formats' names (dbt's, DCS's, ODCS's) for a key the gate compares in a
#: Soda contract. None is a near miss by spelling, yet each, written where the
#: Soda key is absent, drops what it would say: ``type: string`` for
#: ``data_type: bigint`` turned a type change into a ``type_removed`` warning.
_OTHER_NAMES = {
    "type": "data_type",
    "logicaltype": "data_type",
    "physicaltype": "data_type",
    "tests": "checks",
    "datatests": "checks",
    "quality": "checks",
    "acceptedvalues": "valid_values",
    "allowedvalues": "valid_values",
    "enum": "valid_values",
    "fields": "columns",
    "properties": "columns",
}


#: Column keys of Soda's first contract format (soda-core-contracts 3.1.0-3.2.4,
#: ``data_contract_translator.py``), each read there as a check; 3.3 replaced
#: them with ``checks:`` and Soda ignores them since. Not compared (what Soda
#: runs today), but a warning must not say Soda never read them.
_FIRST_FORMAT = {
    "not_null": "a not-null check",
    "unique": "a uniqueness check",
    "reference": "a reference check",
}


def _validate_soda(doc: Any, path: str) -> list[ContractWarning]:
    """Refuse a near miss of a Soda key or a contract with nothing to compare; warn the rest."""
    unknown = _Unknown(path)
    if isinstance(doc, YMap):
        unknown.check(doc, SODA_TOP_KEYS, "", "Soda contract")
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
                    unknown.check(column, SODA_COLUMN_KEYS, f" in columns[{index}]", "Soda column")
    return unknown.warnings()


class _Unknown:
    """Unknown keys of one file: a near miss raises, the others become one warning per key.

    One warning per key name, not per column: a generator that adds the same key
    to all 80 columns of a contract is one thing to say, at its first line.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        #: key -> (where it is first, its line, what kind of keys, how many times)
        self.seen: dict[str, tuple[str, int | None, str, int]] = {}

    def check(self, mapping: YMap, known: frozenset[str], where: str, what: str) -> None:
        for key in mapping:
            if key in known or str(key).startswith("x-"):
                continue
            # Here, not at the top: compared.py loads the DCS and ODCS parsers, which
            # a Soda-only run never needs unless a key is unknown.
            from gate.formats.compared import near_miss, other_name

            meant = near_miss(key, known, mapping) or other_name(key, _OTHER_NAMES, known, mapping)
            if meant is not None:
                raise ContractError(
                    self.path,
                    f"unknown key '{key}'{where} (did you mean '{meant}'?) [{what} keys]",
                    mapping.key_line(key),
                )
            first = self.seen.get(str(key))
            if first is None:
                self.seen[str(key)] = (where, mapping.key_line(key), what, 1)
            else:
                self.seen[str(key)] = (*first[:3], first[3] + 1)

    def warnings(self) -> list[ContractWarning]:
        out = []
        for key, (where, line, what, count) in self.seen.items():
            more = f" (and {count - 1} more column(s))" if count > 1 else ""
            first = _FIRST_FORMAT.get(key) if what == "Soda column" else None
            why = (
                f"soda-core-contracts 3.1-3.2 read it as {first}; Soda 3.3 and later "
                "ignore it (write it under 'checks:'), and the gate does not compare it"
                if first
                else "not a documented Soda key, so Soda ignores it and so does the gate"
            )
            out.append(
                ContractWarning(
                    self.path,
                    f"unknown key '{key}'{where}{more} [{what} keys]: {why} (the file is "
                    "compared without it)",
                    line,
                )
            )
        return out
