"""dbt ``data_tests:`` / ``tests:`` of a model or column, as checks and what they imply.

Split from the properties parser because tests have their own spellings
(a bare name, ``{name: options}``, the long form with ``test_name``, dbt
1.10's ``arguments``) that must all give one check identity, and because some
tests say what a schema says elsewhere: ``accepted_values`` is the column's
enum, range, length and regex tests are value constraints (so the same change
gives the same ``constraint_*`` finding in every format).
"""

from __future__ import annotations

from typing import Any

from gate.formats import constraints as value_constraints_of
from gate.formats.common import (
    describe,
    items,
    optional_list,
    require_mapping,
    scalar_tuple,
)
from gate.formats.dbt.flags import ERROR, WARN, severity_value
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


def severity(check: Check, default: str = ERROR) -> str:
    """A test's severity as dbt resolves it: its own (a ``severity`` beside its arguments,
    dbt's legacy spelling, or its ``config: {severity: ...}``) over the ``+severity`` of
    ``dbt_project.yml``'s ``data_tests:`` levels (``default``), over ``error``."""
    said = severity_value(check.spec.get("severity"))
    config = check.spec.get("config")
    if said is None and isinstance(config, dict):
        said = severity_value(config.get("severity"))
    return default if said is None else said


def accepted_values(
    path: str, checks: tuple[Check, ...], default_severity: str = ERROR
) -> tuple[str, ...] | None:
    """The enum an ``accepted_values`` test gives its column, if any.

    A test that only warns (``severity: warn``, on the test or from ``dbt_project.yml``,
    ``default_severity``) fails no run, so its values are no promise a consumer can rely
    on: it gives no enum (it stays a check, and its severity is compared there)."""
    for check in checks:
        if check.kind.rsplit(".", 1)[-1] != "accepted_values":
            continue
        if severity(check, default_severity) == WARN:
            continue
        values = check.spec.get("values")
        if values is None:
            raise ContractError(path, "'accepted_values' needs 'values'", check.line)
        return scalar_tuple(values, path, "'accepted_values' values", check.line)
    return None
