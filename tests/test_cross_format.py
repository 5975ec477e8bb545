"""The same semantic change gives the same finding whichever format it is written in.

Fixtures: tests/fixtures/<format>/orders.<variant>.yaml (see tests/fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.diff import diff_datasets
from gate.formats import parse_contract

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FORMATS = ("dcs", "odcs", "dbt", "soda")

EXPECTED: dict[str, set[tuple[str, str | None]]] = {
    "column_removed": {("column_removed", "note")},
    "type_narrowed": {("type_narrowed", "customer_id")},
    "column_renamed": {("column_renamed", "order_note")},
    "required_added": {("required_added", "note")},
    "enum_value_removed": {("enum_value_removed", "status")},
    "primary_key_changed": {("primary_key_changed", None)},
    "check_removed": {("check_removed", None)},
    "nested_field_removed": {("column_removed", "shipping_address.postal_code")},
    "version_bumped": {("column_removed", "note"), ("version_bumped", None)},
    "version_not_bumped": {("column_removed", "note"), ("version_not_bumped", None)},
    "enforcement_removed": {("contract_enforcement_removed", None)},
}

CASES = [
    (fmt, variant)
    for variant in EXPECTED
    for fmt in FORMATS
    if (FIXTURES / fmt / f"orders.{variant}.yaml").exists()
]


def datasets(fmt: str, variant: str):
    path = FIXTURES / fmt / f"orders.{variant}.yaml"
    return parse_contract(path.read_bytes(), f"contracts/orders.{fmt}.yaml").datasets


@pytest.mark.parametrize(("fmt", "variant"), CASES, ids=[f"{f}-{v}" for f, v in CASES])
def test_same_change_same_finding(fmt: str, variant: str) -> None:
    changes = diff_datasets(datasets(fmt, "base"), datasets(fmt, variant))
    found = {(c.rule, c.column) for c in changes}
    if not variant.startswith("version_"):
        # DCS/ODCS fixtures keep their version, so breaking variants also say so.
        found.discard(("version_not_bumped", None))
    assert found == EXPECTED[variant]
    assert all(c.dataset == "orders" for c in changes)


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_every_variant_is_covered_by_at_least_two_formats_or_is_format_specific(
    variant: str,
) -> None:
    formats = [f for f, v in CASES if v == variant]
    assert formats, f"no fixture for {variant}"
    if variant != "enforcement_removed":
        assert len(formats) >= 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_base_compared_with_itself_is_clean(fmt: str) -> None:
    assert diff_datasets(datasets(fmt, "base"), datasets(fmt, "base")) == []
