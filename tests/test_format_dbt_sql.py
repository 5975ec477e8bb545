"""A model file's own config() call, read as text (never rendered)."""

from __future__ import annotations

import pytest

from gate.formats.dbt_sql import model_settings


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("select 1", (None, None)),
        ("{{ config(materialized='table') }} select 1", (None, None)),
        ("{{ config(contract={'enforced': true}) }}", (True, None)),
        ('{{- config(contract = {"enforced" : False}, enabled=True) -}}', (False, True)),
        ("{{ config(enabled=false) }}", (None, False)),
        ("{{ config(enabled=var('on')) }}", (None, True)),  # unknowable: guarded
        ("{{ config(contract={'enforced': var('x')}) }}", (True, None)),
        ("def model(dbt, session):\n    dbt.config(contract={'enforced': True})\n", (True, None)),
        # Later calls win; a word that merely ends in config is no call.
        ("{{ config(enabled=false) }}{{ config(enabled=true) }}", (None, True)),
        ("{{ my_config(enabled=false) }}", (None, None)),
        ("-- config(enabled=false", (None, None)),  # unbalanced: not a call
    ],
)
def test_model_settings(source: str, expected: tuple) -> None:
    assert model_settings(source) == expected
