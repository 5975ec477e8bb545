"""The same semantic change gives the same finding whichever format it is written in.

Fixtures: tests/fixtures/<format>/orders.<variant>.yaml (see tests/fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate import rules
from gate.diff import diff_datasets
from gate.formats import parse_contract

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FORMATS = ("dcs", "odcs", "dbt", "soda")

EXPECTED: dict[str, set[tuple[str, str | None]]] = {
    "model_renamed": {("model_renamed", None)},
    "column_removed": {("column_removed", "note")},
    "column_renamed": {("column_renamed", "order_note")},
    "column_case_changed": {("column_case_changed", "Currency")},
    "type_narrowed": {("type_narrowed", "customer_id")},
    "type_changed": {("type_changed", "customer_id")},
    "required_added": {("required_added", "note")},
    "required_column_added": {("required_column_added", "channel")},
    "enum_value_removed": {("enum_value_removed", "status")},
    "primary_key_changed": {("primary_key_changed", None)},
    "type_removed": {("type_removed", "note")},
    "required_removed": {("required_removed", "currency")},
    "enum_value_added": {("enum_value_added", "status")},
    # ``order_id`` is the sole primary key: it stays unique without the flag, so
    # dropping (or adding) the redundant flag is no change in any format.
    "unique_removed": set(),
    "check_removed": {("check_removed", None)},
    "nested_field_removed": {("column_removed", "shipping_address.postal_code")},
    "column_added": {("column_added", "gift_message")},
    # A misspelt type on a new column: still added, and a warning says so.
    "type_unknown": {("column_added", "gift_message"), ("type_unknown", "gift_message")},
    "type_widened": {("type_widened", "order_total")},
    "type_declared": {("type_declared", "note")},
    "check_added": {("check_added", "order_total")},
    "unique_added": set(),
    "version_bumped": {("column_removed", "note"), ("version_bumped", None)},
    "version_not_bumped": {("column_removed", "note"), ("version_not_bumped", None)},
    "version_decreased": {("version_decreased", None)},
    "enforcement_removed": {("contract_enforcement_removed", None)},
    # Allowed values as a whole (DCS/ODCS enum, dbt accepted_values, Soda valid_values).
    "enum_declared": {("enum_declared", "currency")},
    "enum_removed": {("enum_removed", "status")},
    # Value constraints (DCS field, ODCS logicalTypeOptions, dbt range/regex tests,
    # Soda valid_min/valid_regex_sql): a check that only carries one is not a check finding.
    "constraint_tightened": {("constraint_tightened", "order_total")},
    "constraint_relaxed": {("constraint_relaxed", "order_total")},
    "constraint_pattern_added": {("constraint_tightened", "currency")},
    "constraint_changed": {("constraint_changed", "currency")},
    # Checks are identified by what they assert: a new threshold is one finding,
    # a new name, description, id, schedule or explicit default unit is none.
    "check_changed": {("check_changed", None)},
    "check_metadata_changed": set(),
    # Relationships: DCS references, ODCS relationships, dbt foreign_key constraints.
    "relationship_removed": {("relationship_removed", "customer_id")},
    "relationship_changed": {("relationship_changed", "customer_id")},
    "relationship_added": {("relationship_added", "customer_id")},
    "model_disabled": {("model_disabled", None)},
}

#: Changes the base cannot make (every column is typed, ``order_id`` is already
#: unique) are another variant read backwards: diff(that variant, base).
REVERSED = {
    "type_declared": "type_removed",
    "unique_added": "unique_removed",
    "constraint_relaxed": "constraint_tightened",
    "relationship_added": "relationship_removed",
}

#: Variants compared with another variant instead of the base: (base variant).
BASES = {"constraint_changed": "constraint_pattern_added"}

#: The dataset id at HEAD when the variant renames the dataset.
RENAMED = {"model_renamed": "sales_orders"}

#: A whole contract file deleted or added: diffed against no datasets, no fixture.
FILE_LEVEL = ("model_removed", "model_added")

#: The README table's marks: a fixture exists, or the format cannot say the change.
YES, NO = "\u2713", "\u2013"

CASES = [
    (fmt, variant)
    for variant in EXPECTED
    for fmt in FORMATS
    if (FIXTURES / fmt / f"orders.{REVERSED.get(variant, variant)}.yaml").exists()
]


def datasets(fmt: str, variant: str):
    path = FIXTURES / fmt / f"orders.{variant}.yaml"
    return parse_contract(path.read_bytes(), f"contracts/orders.{fmt}.yaml").datasets


@pytest.mark.parametrize(("fmt", "variant"), CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_same_change_same_finding(fmt: str, variant: str) -> None:
    if variant in REVERSED:
        changes = diff_datasets(datasets(fmt, REVERSED[variant]), datasets(fmt, "base"))
    else:
        changes = diff_datasets(datasets(fmt, BASES.get(variant, "base")), datasets(fmt, variant))
    found = {(c.rule, c.column) for c in changes}
    if not variant.startswith("version_"):
        # DCS/ODCS fixtures keep their version, so breaking variants also say so.
        found.discard(("version_not_bumped", None))
    assert found == EXPECTED[variant]
    assert all(c.dataset == RENAMED.get(variant, "orders") for c in changes)
    if variant in RENAMED:
        assert all(c.old_dataset == "orders" for c in changes if c.rule == "model_renamed")


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_every_variant_is_covered_by_at_least_two_formats_or_is_format_specific(
    variant: str,
) -> None:
    formats = [f for f, v in CASES if v == variant]
    assert formats, f"no fixture for {variant}"
    if variant not in ("enforcement_removed", "model_disabled"):
        assert len(formats) >= 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_base_compared_with_itself_is_clean(fmt: str) -> None:
    assert diff_datasets(datasets(fmt, "base"), datasets(fmt, "base")) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_deleted_contract_is_model_removed(fmt: str) -> None:
    changes = diff_datasets(datasets(fmt, "base"), [])
    assert [(c.rule, c.dataset, c.column) for c in changes] == [("model_removed", "orders", None)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_new_contract_is_model_added(fmt: str) -> None:
    changes = diff_datasets([], datasets(fmt, "base"))
    assert [(c.rule, c.dataset, c.column) for c in changes] == [("model_added", "orders", None)]


#: Rules whose only fixture is redundant with a primary key; tests/diff/test_diff.py
#: covers them on a plain column.
PLAIN_COLUMN_ONLY = ("unique_removed", "unique_added")
#: Rules about consumers, not contracts: tests/cli/test_cli_consumers.py covers them.
CONSUMER_RULES = ("consumer_broken",)

#: Rules that need the run's clock (a removal after ``deprecation_date``);
#: tests/dbt/test_dbt_projects.py covers them end to end.
NEEDS_CLOCK = ("model_removed_after_deprecation",)

#: Rules about versioned dbt models (the shared fixtures are unversioned);
#: tests/dbt/test_dbt_projects.py covers them end to end.
DBT_VERSIONS = ("latest_version_changed",)

#: Rules about dbt model files next to the properties files;
#: tests/dbt/test_dbt_model_files_deleted.py covers them end to end.
DBT_MODEL_FILES = ("model_file_missing",)

#: Rules about dbt settings written as expressions; tests/dbt/test_dbt_reading.py covers them.
DBT_EXPRESSIONS = ("dbt_config_unevaluable",)

#: Enforcement switched on (dbt only); tests/dbt/test_dbt_reading.py covers it end to end.
DBT_ENFORCEMENT = ("contract_enforcement_added",)

#: A dbt model built into another relation (dbt configs, not a contract field in the
#: shared fixtures); tests/dbt/test_dbt_relation.py covers it end to end.
DBT_RELATIONS = ("model_relation_changed",)

#: dbt Mesh access (dbt only); tests/cli/test_cli_dbt_access.py covers it end to end.
DBT_ACCESS = ("model_access_narrowed",)


def test_every_rule_has_a_cross_format_case() -> None:
    covered = {rule for findings in EXPECTED.values() for rule, _column in findings}
    others = set(FILE_LEVEL) | set(PLAIN_COLUMN_ONLY) | set(NEEDS_CLOCK) | set(DBT_VERSIONS)
    others |= set(DBT_MODEL_FILES) | set(DBT_EXPRESSIONS) | set(DBT_ENFORCEMENT)
    others |= set(DBT_RELATIONS) | set(DBT_ACCESS)
    assert covered | others | set(CONSUMER_RULES) == set(rules.RULES)


def readme_matrix() -> dict[str, tuple[list[str], str]]:
    """variant -> (the formats marked YES, the reason given for the NO marks) from the README."""
    rows: dict[str, tuple[list[str], str]] = {}
    for line in (FIXTURES / "README.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 8 or not cells[0].startswith("`"):
            continue
        marks = dict(zip(FORMATS, cells[3:7], strict=True))
        assert set(marks.values()) <= {YES, NO}, line
        rows[cells[0].strip("`")] = ([f for f in FORMATS if marks[f] == YES], cells[7])
    return rows


def test_readme_matrix_matches_the_fixtures() -> None:
    matrix = readme_matrix()
    assert set(matrix) == set(EXPECTED) | set(FILE_LEVEL)
    for variant, (formats, reason) in matrix.items():
        if variant in FILE_LEVEL:
            assert formats == list(FORMATS), variant
        else:
            assert formats == [f for f, v in CASES if v == variant], variant
        assert bool(reason) == (formats != list(FORMATS)), (
            f"{variant}: give a reason for each NO mark, and only then"
        )
