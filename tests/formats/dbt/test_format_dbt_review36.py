"""Review of the session's merge (integ36): a severity dbt refuses is no ``warn``.

dbt-core 1.10 validates a test's ``severity`` against
``^([Ww][Aa][Rr][Nn]|[Ee][Rr][Rr][Oo][Rr])$`` (``SEVERITY_PATTERN``,
dbt/artifacts/resources/v1/config.py): any case, no spaces. ``"warn "`` was read as
``warn``, so the ``accepted_values`` gave no enum (an ``enum_declared`` passed) for a
value dbt does not take as warn-only: it stays ``error``, the guarded reading.
"""

from __future__ import annotations

import pytest

from tests.formats.dbt.test_format_dbt_test_severity import PLAIN, _enum, _properties


@pytest.mark.parametrize("value", ['"warn "', '" warn"', '"\\twarn"'])
def test_a_severity_with_spaces_keeps_the_enum(value: str) -> None:
    test = PLAIN + f"              config: {{severity: {value}}}\n"
    assert _enum(_properties(test)) == ("placed", "paid")


def test_a_project_severity_with_spaces_keeps_the_enum() -> None:
    project = 'name: shop\nconfig-version: 2\ndata_tests:\n  +severity: "warn "\n'
    assert _enum(_properties(PLAIN), project) == ("placed", "paid")
