"""A converted pair's nested fields are made comparable in time linear in their depth.

``gate.diff.conversion._columns`` walks both sides' nested fields; it walked each
pair of nested fields once for the old side and once more for the new, at every
level: 2^depth walks. A contract nested 18 levels took 23 s, and the formats
allow 64 (``NestingGuard``): a converted hostile contract hung the gate.
"""

from __future__ import annotations

import pytest

from gate.diff import conversion
from gate.model import Column, Dataset


def _nested(depth: int) -> tuple[Column, ...]:
    column = Column(name="leaf", data_type="string")
    for level in range(depth):
        column = Column(name=f"f{level}", data_type="struct", fields=(column,))
    return (column,)


def test_nested_fields_are_walked_once_a_level(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = conversion._columns

    depth = 40

    def counted(old: tuple[Column, ...], new: tuple[Column, ...]) -> object:
        calls.append(1)
        assert len(calls) <= depth + 2, "nested fields walked again at each level"
        return real(old, new)

    monkeypatch.setattr(conversion, "_columns", counted)
    old = Dataset(id="orders", path="a.yaml", format="dcs", columns=_nested(depth))
    new = Dataset(id="orders", path="b.yaml", format="odcs", columns=_nested(depth))
    before, after = conversion.comparable(old, new)
    # Still made comparable all the way down.
    deepest = before.columns[0]
    while deepest.fields:
        deepest = deepest.fields[0]
    assert deepest.name == "leaf" and after.columns == before.columns
