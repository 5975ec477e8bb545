"""A warn-only ``accepted_values`` gives no enum: dbt's test severity, as dbt resolves it.

The test's own ``severity`` (beside its arguments, dbt's legacy spelling, or under
``config:``) over the ``+severity`` of ``dbt_project.yml``'s ``data_tests:`` (old
spelling ``tests:``) levels by the properties file's folders, over ``error``. A
severity the gate cannot evaluate reads as ``error``: the enum stays (fail closed).
TEAMSchools/teamster 1a02b55a showed the pattern: ``data_tests: +severity: warn`` in
its dbt_project.yml made every test warn-only, yet the gate built the enum and blocked.
"""

from __future__ import annotations

import pytest

from gate.formats.dbt.project import parse_project
from gate.formats.dbt.properties import parse
from gate.yaml_load import load_yaml


def _properties(test: str) -> str:
    return (
        "models:\n  - name: orders\n    config: {contract: {enforced: true}}\n"
        "    columns:\n      - name: status\n        data_type: string\n"
        f"        data_tests:\n{test}"
    )


PLAIN = "          - accepted_values:\n              values: [placed, paid]\n"


def _enum(text: str, project_text: str | None = None, path: str = "models/marts/orders.yml"):
    project = parse_project(project_text, "dbt_project.yml") if project_text else None
    (dataset,) = parse(load_yaml(text, path), path, project).datasets
    (column,) = dataset.columns
    return column.enum


@pytest.mark.parametrize(
    "test",
    [
        PLAIN + "              config: {severity: warn}\n",
        PLAIN + "              config: {severity: WARN}\n",
        PLAIN + "              severity: warn\n",  # legacy: a config beside the arguments
        PLAIN + "              config: {severity: \"{{ 'warn' }}\"}\n",  # a constant
        "          - accepted_values:\n              arguments: {values: [placed, paid]}\n"
        "              config: {severity: warn}\n",
    ],
)
def test_a_warn_only_test_gives_no_enum(test: str) -> None:
    assert _enum(_properties(test)) is None


@pytest.mark.parametrize(
    "test",
    [
        PLAIN,
        PLAIN + "              config: {severity: error}\n",
        # Jinja the gate cannot evaluate: the test may fail the run, so the enum stays
        PLAIN + "              config: {severity: \"{{ var('sev', 'warn') }}\"}\n",
    ],
)
def test_a_test_that_may_fail_the_run_gives_its_enum(test: str) -> None:
    assert _enum(_properties(test)) == ("placed", "paid")


PROJECT = "name: shop\nconfig-version: 2\n"


@pytest.mark.parametrize(
    ("tree", "path", "enum"),
    [
        ("data_tests:\n  +severity: warn\n", "models/marts/orders.yml", None),
        ("tests:\n  +severity: warn\n", "models/marts/orders.yml", None),  # old spelling
        ("data_tests:\n  severity: warn\n", "models/marts/orders.yml", None),  # no '+'
        ("data_tests:\n  shop:\n    marts:\n      +severity: warn\n", "models/marts/o.yml", None),
        # another folder: the level is not this file's
        ("data_tests:\n  shop:\n    staging:\n      +severity: warn\n", "models/marts/o.yml",
         ("placed", "paid")),
        # the most specific level wins
        ("data_tests:\n  +severity: warn\n  shop:\n    marts:\n      +severity: error\n",
         "models/marts/o.yml", ("placed", "paid")),
        # dbt reads 'tests:' only when there is no 'data_tests:'
        ("data_tests:\n  +severity: error\ntests:\n  +severity: warn\n", "models/marts/o.yml",
         ("placed", "paid")),
        ("data_tests:\n  +severity: \"{{ var('x') }}\"\n", "models/marts/o.yml",
         ("placed", "paid")),
    ],
)  # fmt: skip
def test_the_projects_data_tests_severity(tree: str, path: str, enum: object) -> None:
    assert _enum(_properties(PLAIN), PROJECT + tree, path) == enum


def test_the_tests_own_severity_goes_over_the_project() -> None:
    test = PLAIN + "              config: {severity: error}\n"
    assert _enum(_properties(test), PROJECT + "data_tests:\n  +severity: warn\n") == (
        "placed",
        "paid",
    )


def test_a_project_severity_change_is_a_project_change() -> None:
    # A changed ``data_tests:`` severity compares the project's properties files again.
    before = parse_project(PROJECT, "dbt_project.yml")
    after = parse_project(PROJECT + "data_tests:\n  +severity: warn\n", "dbt_project.yml")
    assert before != after


# A test that cannot fail ``dbt build`` is no promise either: disabled, or an
# ``error_if`` that lets failures pass (dbt-core: ``{{ fail_calc }} {{ error_if }}``;
# ``fail_calc`` of accepted_values counts the distinct values not accepted).
@pytest.mark.parametrize(
    "test",
    [
        PLAIN + "              config: {enabled: false}\n",
        PLAIN + "              enabled: false\n",  # legacy spelling
        PLAIN + '              config: {enabled: "{{ false }}"}\n',  # a constant
        PLAIN + '              config: {error_if: ">100"}\n',
        PLAIN + '              config: {error_if: ">= 5"}\n',
        PLAIN + '              error_if: "!= 3"\n',
        "          - accepted_values:\n              arguments: {values: [placed, paid]}\n"
        "              config: {enabled: false}\n",
    ],
)
def test_a_test_that_cannot_fail_the_build_gives_no_enum(test: str) -> None:
    assert _enum(_properties(test)) is None


@pytest.mark.parametrize(
    "test",
    [
        PLAIN + "              config: {enabled: true}\n",
        PLAIN + "              config: {enabled: \"{{ var('on') }}\"}\n",  # unknowable: guarded
        PLAIN + '              config: {error_if: "!= 0"}\n',
        PLAIN + '              config: {error_if: "> 0"}\n',
        PLAIN + '              config: {error_if: ">=1"}\n',
        PLAIN + "              config: {error_if: \"{{ var('limit') }}\"}\n",  # guarded
        PLAIN + '              config: {error_if: "> (select 1)"}\n',  # unreadable: guarded
        # warn_if only says when a test that passes error_if warns
        PLAIN + '              config: {warn_if: ">100"}\n',
        # dbt drops a falsy legacy config when the test has a 'config:' without it
        PLAIN + "              enabled: false\n              config: {tags: [a]}\n",
    ],
)
def test_a_test_that_fails_the_build_on_any_failure_gives_its_enum(test: str) -> None:
    assert _enum(_properties(test)) == ("placed", "paid")


@pytest.mark.parametrize(
    ("tree", "test", "enum"),
    [
        ("data_tests:\n  +enabled: false\n", PLAIN, None),
        ("data_tests:\n  shop:\n    marts:\n      +enabled: false\n", PLAIN, None),
        ("data_tests:\n  shop:\n    +error_if: \">10\"\n", PLAIN, None),
        # the level of one test: its synthesized name (dbt's fqn: project, folders, name)
        ("data_tests:\n  shop:\n    marts:\n"
         "      accepted_values_orders_status__placed__paid:\n        +severity: warn\n",
         PLAIN, None),
        ("data_tests:\n  shop:\n    marts:\n      status_ok:\n        +enabled: false\n",
         PLAIN + "              name: status_ok\n", None),
        # another test's name: not this one
        ("data_tests:\n  shop:\n    marts:\n      not_null_orders_status:\n"
         "        +severity: warn\n", PLAIN, ("placed", "paid")),
        # the walk stops where the tree does: a name level under another folder
        ("data_tests:\n  shop:\n    accepted_values_orders_status__placed__paid:\n"
         "      +severity: warn\n", PLAIN, ("placed", "paid")),
        # the test's own config goes over the project's
        ("data_tests:\n  +enabled: false\n", PLAIN + "              config: {enabled: true}\n",
         ("placed", "paid")),
        ("data_tests:\n  +enabled: \"{{ var('x') }}\"\n", PLAIN, ("placed", "paid")),
        # a more specific unknowable value keeps the test a promise
        ("data_tests:\n  +enabled: false\n  shop:\n    +enabled: \"{{ var('x') }}\"\n", PLAIN,
         ("placed", "paid")),
    ],
)  # fmt: skip
def test_the_projects_data_tests_enabled_error_if_and_name_levels(
    tree: str, test: str, enum: object
) -> None:
    assert _enum(_properties(test), PROJECT + tree, "models/marts/orders.yml") == enum


def test_a_versioned_models_test_is_named_after_its_version() -> None:
    text = (
        "models:\n  - name: orders\n    latest_version: 2\n"
        "    config: {contract: {enforced: true}}\n"
        "    columns:\n      - name: status\n        data_type: string\n"
        f"        data_tests:\n{PLAIN}"
        "    versions:\n      - v: 2\n"
    )
    tree = (
        "data_tests:\n  shop:\n    marts:\n"
        "      accepted_values_orders_v2_status__placed__paid:\n        +severity: warn\n"
    )
    project = parse_project(PROJECT + tree, "dbt_project.yml")
    path = "models/marts/orders.yml"
    (dataset,) = parse(load_yaml(text, path), path, project).datasets
    (column,) = dataset.columns
    assert column.enum is None
