"""``translate``: a type of one dialect spelled so another reads the same type."""

from __future__ import annotations

import pytest

from gate.lattice import TypeChange, compare, translate


@pytest.mark.parametrize(
    ("text", "source", "target", "spelled"),
    [
        ("int8", "postgres", "spark", "BIGINT"),
        ("int8", "spark", "postgres", "TINYINT"),
        ("decimal", "spark", "postgres", "DECIMAL(10,0)"),  # Spark's default filled in
        ("number", "snowflake", "postgres", "DECIMAL(38,0)"),
        ("int[]", "postgres", "spark", "ARRAY<INT>"),
        ("my_enum", "postgres", "spark", "my_enum"),  # unknown stays unknown
        ("int8", "spark", "spark", "int8"),
    ],
)
def test_translate(text: str, source: str, target: str, spelled: str) -> None:
    assert translate(text, source, target) == spelled
    if spelled != text:
        assert compare(spelled, translate(spelled, target, source) or "", source).change in (
            TypeChange.SAME,
            TypeChange.WIDENED,
        )


def test_a_type_the_target_cannot_spell_is_refused() -> None:
    # BigQuery's DATETIME (no time zone) has no Spark spelling that reads back as it.
    assert translate("datetime", "bigquery", "spark") is None
