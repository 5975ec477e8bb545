"""dbt ``data_tests:`` / ``tests:`` of a model or column, as checks and what they imply.

Split from the properties parser because tests have their own spellings
(a bare name, ``{name: options}``, the long form with ``test_name``, dbt
1.10's ``arguments``) that must all give one check identity, and because some
tests say what a schema says elsewhere: ``accepted_values`` is the column's
enum, range, length and regex tests are value constraints (so the same change
gives the same ``constraint_*`` finding in every format).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from gate.formats import constraints as value_constraints_of
from gate.formats.common import (
    describe,
    items,
    optional_list,
    require_mapping,
    scalar_tuple,
)
from gate.formats.dbt.flags import ERROR, WARN, fold, fold_text, is_jinja, severity_value
from gate.model import Check, ContractError
from gate.yaml_load import YMap


def tests(path: str, mapping: YMap, owner: str, columns: tuple[str, ...]) -> tuple[Check, ...]:
    """``data_tests`` (dbt >= 1.8) or ``tests``: both spellings, never both at once."""
    if mapping.get("tests") is not None and mapping.get("data_tests") is not None:
        raise ContractError(
            path,
            f"{owner}: declare either 'tests' or 'data_tests', not both",
            mapping.key_line("data_tests"),
        )
    key = "data_tests" if mapping.get("data_tests") is not None else "tests"
    entries = optional_list(mapping, key, path, f"{owner}: '{key}'")
    return tuple(test(path, entry, line, owner, columns) for _i, entry, line in items(entries))


def test(path: str, entry: Any, line: int, owner: str, columns: tuple[str, ...]) -> Check:
    """One test entry as a check."""
    if isinstance(entry, str) and entry.strip():
        return Check.make(entry.strip(), {}, line=line, columns=columns)
    if not isinstance(entry, dict) or not entry:
        raise ContractError(
            path,
            f"{owner}: a test must be a name or a mapping, found {describe(entry)}",
            line,
        )
    if "test_name" in entry:  # the long form: options beside ``test_name``
        kind = entry["test_name"]
        spec: Any = {k: v for k, v in entry.items() if k != "test_name"}
    elif len(entry) == 1:
        kind, spec = next(iter(entry.items()))
    else:
        raise ContractError(
            path, f"{owner}: a test needs one key naming it (or a 'test_name')", line
        )
    if not isinstance(kind, str) or not kind.strip():
        raise ContractError(path, f"{owner}: a test name must be a string", line)
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ContractError(
            path,
            f"{owner}: test '{kind}' options must be a mapping, found {describe(spec)}",
            line,
        )
    arguments = spec.get("arguments")
    if isinstance(arguments, dict):
        # dbt >= 1.10 nests test arguments under ``arguments``; the same test
        # written either way is the same check, so both spellings get one identity.
        spec = {**{k: v for k, v in spec.items() if k != "arguments"}, **arguments}
    return Check.make(kind.strip(), spec, line=line, columns=columns)


def value_constraints(
    path: str, checks: tuple[Check, ...], owner: str
) -> tuple[tuple[str, Any], ...]:
    """Range, length and regex tests (dbt_utils, dbt_expectations) as value constraints.

    ``accepted_range: {min_value: 0}`` says what DCS ``minimum: 0`` says, so the
    same change gives the same ``constraint_*`` finding in every format.
    """
    found: dict[str, Any] = {}
    for check in checks:
        name = check.kind.rsplit(".", 1)[-1]
        spec = check.spec
        if name in ("accepted_range", "expect_column_values_to_be_between"):
            exclusive = spec.get("inclusive") is False or spec.get("strictly") is True
            keys = {
                "min_value": "exclusiveMinimum" if exclusive else "minimum",
                "max_value": "exclusiveMaximum" if exclusive else "maximum",
            }
        elif name == "expect_column_value_lengths_to_be_between":
            keys = {"min_value": "minLength", "max_value": "maxLength"}
        elif name == "expect_column_values_to_match_regex":
            keys = {"regex": "pattern"}
        else:
            continue
        mapping = require_mapping(spec, path, f"{owner}: test '{check.kind}'", check.line)
        found.update(
            value_constraints_of.read(
                mapping,
                path,
                f"{owner}: test '{check.kind}'",
                lambda _k, n=check.line: n,
                keys=keys,
            )
        )
    return tuple(sorted(found.items()))


#: The test configs that decide whether a failing test fails the build (dbt-core's
#: ``TestBuilder.CONFIG_ARGS``; ``fail_calc`` is left at its meaning, a failure count).
SEVERITY, ENABLED, ERROR_IF = "severity", "enabled", "error_if"
TEST_SETTINGS = (SEVERITY, ENABLED, ERROR_IF)
#: dbt's default ``error_if``: any failing row fails the test.
ANY_FAILURE = "!=0"

#: A test's config: setting -> value as ``setting_value`` reads it.
Said = Mapping[str, Any]


def setting_value(setting: str, value: Any) -> Any:
    """A test config as the gate reads it, ``None`` when not said. What the gate cannot
    evaluate (Jinja other than a constant, a value dbt would refuse) reads as the
    setting that keeps the test a promise: ``error``, enabled, any failure fails."""
    if value is None:
        return None
    if setting == SEVERITY:
        return severity_value(value)
    if setting == ENABLED:
        if isinstance(value, bool):
            return value
        folded = fold(value) if is_jinja(value) else None
        return True if folded is None else folded
    if not isinstance(value, str):  # error_if: dbt wants a string (a SQL comparison)
        return ANY_FAILURE
    text = fold_text(value) if is_jinja(value) else value
    return ANY_FAILURE if text is None else "".join(text.split())


#: ``>100``, ``>= 1``, ``!=0``: a comparison with the failure count.
_COMPARISON = re.compile(r"^(!=|<>|>=|<=|==|=|>|<)(\d+)$")


def fails_on_any_failure(error_if: str) -> bool:
    """Whether dbt's ``{{ fail_calc }} {{ error_if }}`` is true for every count >= 1.

    ``!= 0`` (the default), ``> 0``, ``>= 1`` are; ``> 100`` lets a hundred failures
    pass the build, so the test is no promise. A condition the gate cannot read
    (a SQL expression, Jinja) counts as failing on any failure: the guarded reading."""
    match = _COMPARISON.match(error_if)
    if match is None:
        return True
    op, number = match[1], int(match[2])
    if op in ("!=", "<>"):
        return number == 0
    if op == ">":
        return number < 1
    if op == ">=":
        return number <= 1
    return False  # =, <, <=: some count of one or more does not fail


def own_setting(spec: Mapping[str, Any], setting: str) -> Any:
    """A config the test itself gives, as dbt-core's ``TestBuilder._process_legacy_args``
    reads it: the legacy spelling beside the arguments, unless it is falsy and the test
    has a ``config:``, which then decides (a legacy ``enabled: false`` beside a
    ``config:`` without ``enabled`` is dropped by dbt: the test runs)."""
    value = spec.get(setting)
    config = spec.get("config")
    if not value and isinstance(config, dict):
        value = config.get(setting)
    return setting_value(setting, value)


def can_fail_the_build(check: Check, project: Said) -> bool:
    """Whether a failing ``check`` fails ``dbt build``: enabled, ``error`` severity, and an
    ``error_if`` that holds for any failure. Its own config over ``project``'s (what
    ``dbt_project.yml``'s ``data_tests:`` gives it), over dbt's defaults."""
    said = dict(project)
    for setting in TEST_SETTINGS:
        own = own_setting(check.spec, setting)
        if own is not None:
            said[setting] = own
    if said.get(ENABLED) is False:
        return False
    if said.get(SEVERITY, ERROR) == WARN:
        return False
    return fails_on_any_failure(str(said.get(ERROR_IF, ANY_FAILURE)))


#: dbt-core's ``TestBuilder.CONFIG_ARGS`` and the keys it takes out of a test's
#: arguments before it names the test.
_NOT_ARGUMENTS = frozenset(
    {
        "severity",
        "tags",
        "enabled",
        "where",
        "limit",
        "warn_if",
        "error_if",
        "fail_calc",
        "store_failures",
        "store_failures_as",
        "meta",
        "database",
        "schema",
        "alias",
        "config",
        "name",
        "description",
    }
)


def fqn_name(check: Check, target: str, column: str | None) -> str:
    """The test's name in its fqn (its ``name:``, else the name dbt-core synthesizes,
    ``synthesize_generic_test_names``' full name): the level of ``dbt_project.yml``'s
    ``data_tests:`` tree that configures this one test. ``target``: the model's name
    (``orders_v2`` for a version)."""
    given = check.spec.get("name")
    if isinstance(given, str) and given:
        return given
    namespace, _, name = check.kind.rpartition(".")
    test_type = f"{namespace}_{name}" if namespace else name
    args = {k: v for k, v in check.spec.items() if k not in _NOT_ARGUMENTS}
    if column is not None:
        args["column_name"] = column
    flat: list[str] = []
    for key in sorted(args, key=str):
        value = args[key]
        parts = (
            list(value.values())
            if isinstance(value, dict)
            else list(value)
            if isinstance(value, list | tuple)
            else [value]
        )
        flat.extend(str(part) for part in parts)
    unique = "__".join(re.sub("[^0-9a-zA-Z_]+", "_", part) for part in flat)
    return f"{test_type}_{target}_{unique}"


def accepted_values(
    path: str,
    checks: tuple[Check, ...],
    project: Callable[[Check], Said] = lambda _check: {},
) -> tuple[str, ...] | None:
    """The enum an ``accepted_values`` test gives its column, if any.

    A test that cannot fail a build (disabled, ``severity: warn``, an ``error_if`` that
    lets failures pass; on the test or from ``dbt_project.yml``, ``project``) is no
    promise a consumer can rely on: it gives no enum (it stays a check, and its config
    is compared there)."""
    for check in checks:
        if check.kind.rsplit(".", 1)[-1] != "accepted_values":
            continue
        if not can_fail_the_build(check, project(check)):
            continue
        values = check.spec.get("values")
        if values is None:
            raise ContractError(path, "'accepted_values' needs 'values'", check.line)
        return scalar_tuple(values, path, "'accepted_values' values", check.line)
    return None
