"""dbt ``columns:`` of a model: each entry as a ``Column``, and a version's column list.

Split from the properties parser because a column gathers three jobs' output
(its tests, its constraints, its ``data_type``) into one ``Column``, and a
version's columns are the model's resolved through ``include``/``exclude``
with the version's own entries overriding by name, as dbt does.
"""

from __future__ import annotations

from collections.abc import Callable

from gate.formats.common import (
    items,
    optional_list,
    optional_str,
    require_mapping,
    require_str,
    scalar_tuple,
)
from gate.formats.dbt import constraints, data_tests
from gate.model import Check, Column, ContractError, ContractWarning, Relationship
from gate.yaml_load import YMap


def column(
    path: str,
    entry: YMap,
    index: int,
    line: int,
    warnings: list[ContractWarning] | None = None,
    project_tests: Callable[[Check], data_tests.Said] = lambda _check: {},
) -> tuple[Column, bool, list[Relationship]]:
    """A column, whether a column-level ``primary_key`` constraint marks it, and its foreign
    keys. ``warnings``: where a foreign key naming no target is noted (else refused).
    ``project_tests``: what ``dbt_project.yml``'s ``data_tests:`` gives one of its tests."""
    name = require_str(entry, "name", path, f"column #{index + 1} 'name'")
    owner = f"column '{name}'"
    checks = list(data_tests.tests(path, entry, owner, (name,)))
    foreign_keys: list[Relationship] = []
    required: bool | None = None
    unique = False
    is_key = False
    for kind, constraint, c_line in constraints.entries(path, entry, owner):
        if kind == "not_null":
            required = True
        elif kind == "unique":
            unique = True
        elif kind == "primary_key":
            is_key = True
        elif kind == "foreign_key":
            key = constraints.foreign_key(path, constraint, (name,), c_line, owner, warnings)
            if key is not None:
                foreign_keys.append(key)
        else:
            spec = {k: v for k, v in constraint.items() if k != "type"}
            checks.append(Check.make(kind, spec, line=c_line, columns=(name,)))
    description = entry.get("description")
    built = Column(
        name=name,
        data_type=optional_str(entry, "data_type", path, f"{owner}: 'data_type'"),
        line=line,
        position=index,
        required=required,
        unique=unique,
        enum=data_tests.accepted_values(path, tuple(checks), project_tests),
        constraints=data_tests.value_constraints(path, tuple(checks), owner),
        checks=tuple(checks),
        description=description if isinstance(description, str) else None,
    )
    return built, is_key, foreign_keys


def column_entries(path: str, mapping: YMap, owner: str) -> list[tuple[str, YMap, int]]:
    """(name, entry, line) of a ``columns`` list; names are validated here."""
    entries = optional_list(mapping, "columns", path, f"{owner}: 'columns'")
    out: list[tuple[str, YMap, int]] = []
    for index, entry, line in items(entries):
        mapping_ = require_mapping(entry, path, f"{owner}: column #{index + 1}", line)
        if mapping_.get("name") is None:
            raise ContractError(path, f"{owner}: column #{index + 1} has no 'name'", line)
        name = require_str(mapping_, "name", path, f"{owner}: column #{index + 1} 'name'")
        out.append((name, mapping_, line))
    return out


def version_columns(
    path: str, version: YMap, top: list[tuple[str, YMap, int]], owner: str
) -> list[tuple[str, YMap, int]]:
    """Resolve a version's ``include``/``exclude`` and its own column entries."""
    if version.get("columns") is None:
        return top
    entries = optional_list(version, "columns", path, f"{owner}: 'columns'")
    selector: YMap | None = None
    own: list[tuple[str, YMap, int]] = []
    for index, entry, line in items(entries):
        column_ = require_mapping(entry, path, f"{owner}: column #{index + 1}", line)
        if "include" in column_ or "exclude" in column_:
            if selector is not None:
                raise ContractError(path, f"{owner}: at most one 'include'/'exclude' entry", line)
            selector = column_
            continue
        if column_.get("name") is None:
            raise ContractError(path, f"{owner}: column #{index + 1} has no 'name'", line)
        name = require_str(column_, "name", path, f"{owner}: column #{index + 1} 'name'")
        if any(other.casefold() == name.casefold() for other, _c, _l in own):
            raise ContractError(path, f"{owner}: column '{name}' is declared twice", line)
        own.append((name, column_, line))
    top_names = [name for name, _c, _l in top]
    included = list(top_names)
    if selector is not None:
        include = selector.get("include", "all")
        line = selector.key_line("include")
        if include in ("*", "all"):
            excluded = (
                scalar_tuple(selector["exclude"], path, f"{owner}: 'exclude'", line)
                if selector.get("exclude") is not None
                else ()
            )
            # dbt filters the model's columns through the list and never checks an
            # excluded name (dbt_common's IncludeExclude): one no column has
            # (often a column the PR drops elsewhere) excludes nothing.
            included = [name for name in top_names if name not in excluded]
        else:
            if selector.get("exclude") is not None:
                raise ContractError(
                    path,
                    f"{owner}: 'exclude' needs include: '*' or 'all'",
                    selector.key_line("exclude"),
                )
            listed = scalar_tuple(include or [], path, f"{owner}: 'include'", line)
            unknown = [name for name in listed if name not in top_names]
            if unknown:
                raise ContractError(
                    path,
                    f"{owner}: 'include'/'exclude' names unknown column '{unknown[0]}'",
                    line,
                )
            included = [name for name in top_names if name in listed]
    overrides = {name: (name, column_, line) for name, column_, line in own}
    by_name = {name: (name, column_, line) for name, column_, line in top}
    resolved = [overrides.pop(name, by_name[name]) for name in included]
    resolved.extend(entry for entry in own if entry[0] in overrides)
    return resolved
