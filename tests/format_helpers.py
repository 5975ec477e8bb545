"""Shared helpers of the per-format parser tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gate.formats import parse_contract
from gate.model import Column, Dataset

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(fmt: str, name: str) -> tuple[Dataset, ...]:
    """Parse ``tests/fixtures/<fmt>/<name>`` and check it is detected as ``fmt``."""
    path = FIXTURES / fmt / name
    contract = parse_contract(path.read_bytes(), f"{fmt}/{name}")
    assert contract.format == fmt
    return contract.datasets


def column_row(column: Column, *, nested: bool = True) -> tuple[Any, ...]:
    """Everything the diff reads from a column, plus its line.

    ``nested`` adds the stable id and the nested fields, for the formats that
    have them (DCS, ODCS).
    """
    row: tuple[Any, ...] = (
        column.name,
        column.data_type,
        column.line,
        column.position,
        column.required,
        column.unique,
        column.primary_key_position,
        column.enum,
    )
    if nested:
        row += (column.stable_id,)
    row += (tuple(check.kind for check in column.checks),)
    if nested:
        row += (tuple(column_row(field) for field in column.fields),)
    return row
