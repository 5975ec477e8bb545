"""A model file's own config() call, read as text (never rendered)."""

from __future__ import annotations

import pytest

from gate.formats.dbt.model_config import NOT_LITERAL, model_settings, read_settings


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


@pytest.mark.parametrize(
    ("source", "enforced", "enabled", "unevaluable"),
    [
        ("{{ config(contract=dict(enforced=false)) }}", True, None, [("contract.enforced", 1)]),
        ("{{ config(**{'contract': {'enforced': false}}) }}", False, None, []),
        ("{{ config(**{'materialized': 'table'}) }}", None, None, []),
        ("{% set on = false %}\n{{ config(enabled=on) }}", None, True, [("enabled", 2)]),
        ("{{ config(enabled=not true) }}", None, True, [("enabled", 1)]),
        ("{{ config(enabled=(false)) }}", None, True, [("enabled", 1)]),
        (
            "{{ config(contract={'enforced': '{{ false }}'}) }}",
            True,
            None,
            [("contract.enforced", 1)],
        ),
        ("{{ config(contract={'alias_types': false}) }}", None, None, []),
        # ``**kwargs`` may set either; it decides nothing itself.
        (
            "dbt.config(enabled=False, **kwargs)",
            None,
            False,
            [("contract.enforced", 1), ("enabled", 1)],
        ),
        # A later literal settles what an earlier expression left open.
        ("{{ config(enabled=var('x')) }}\n{{ config(enabled=true) }}", None, True, []),
        # Commas and parentheses inside strings and brackets do not split arguments.
        ("{{ config(tags=['a,b', 'c)'], enabled=false) }}", None, False, []),
    ],
)
def test_read_settings(source: str, enforced: object, enabled: object, unevaluable: list) -> None:
    settings = read_settings(source)
    assert (settings.enforced, settings.enabled) == (enforced, enabled)
    assert [(s, line) for s, _e, line in settings.unevaluable] == unevaluable


@pytest.mark.parametrize(
    ("source", "materialized"),
    [
        # Not said: dbt's default (a view) may apply.
        ("select 1", None),
        ("{{ config(enabled=true) }}\nselect 1", None),
        ("{# {{ config(materialized='table') }} #}\nselect 1", None),
        ("{{ config(materialized='Table') }}", "table"),
        ("{{ config(**{'materialized': 'view'}) }}", "view"),
        # Said, but not known here: never the default.
        ("{{ config(materialized=var('kind', 'view')) }}", NOT_LITERAL),
        ("{{ config(materialized='{{ var(\"k\") }}') }}", NOT_LITERAL),
        (
            "{% if target.name == 'prod' %}{{ config(materialized='table') }}{% endif %}",
            NOT_LITERAL,
        ),
        ("{{ config(**settings) }}", NOT_LITERAL),
        ("{{ config(materialized='view') }}{{ config(**settings) }}", NOT_LITERAL),
        ("{{ config(**settings) }}{{ config(materialized='view') }}", "view"),
    ],
)
def test_materialized_tells_not_said_from_not_known(source: str, materialized: object) -> None:
    assert read_settings(source).materialized == materialized


@pytest.mark.parametrize(
    "source",
    [
        "{# {{ config(enabled=false) }} #}\nselect 1",
        "{# {{ config(contract={'enforced': false}) }} #}\nselect 1",
        "{{ config(materialized='view') }}\n-- was: config(enabled=false)\nselect 1",
    ],
)
def test_a_config_dbt_does_not_run_sets_nothing(source: str) -> None:
    """A Jinja comment, or ``config(`` in SQL text, is not run by dbt: it must not
    disable or unguard the model (that hid the model's breaks)."""
    settings = read_settings(source)
    assert (settings.enforced, settings.enabled, settings.unevaluable) == (None, None, ())


def test_a_python_model_is_code() -> None:
    source = "def model(dbt, s):\n    dbt.config(enabled=False)\n    x = '{{'\n    return x\n"
    assert read_settings(source, python=True).enabled is False
