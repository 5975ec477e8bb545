"""dbt properties files (``models/**/*.yml``) with model contracts into the model.

Every entry of ``models:`` becomes a ``Dataset`` whose id is the model name.
A model with ``versions:`` becomes one dataset per version, ``<model>.v<v>``
(``orders.v2``): each version is its own relation (``orders_v2``) with its own
columns, and consumers pin versions. ``latest_version`` only says which version
an unpinned ``ref('orders')`` resolves to; it is validated, not a dataset.

Only models whose contract is enforced are guarded: ``config: {contract:
{enforced: true}}`` at version level, else model level (where a top-level
``contract:`` counts too: dbt-core moves it into ``config``), else the
``dbt_project.yml`` ``+contract`` for the model's fqn (see ``dbt_project``),
as dbt resolves it. Jinja values are folded when constant, else read as true
and recorded (``gate.formats.dbt.flags``). The others are kept with ``enforced=False`` so switching
enforcement off reads as ``contract_enforcement_removed``. ``enabled`` and
``deprecation_date`` are resolved the same way (version over model). A
``dbt_project.yml`` that a glob happens to match holds no datasets.

Mapping: ``data_type`` is the column type as written (warehouse SQL);
constraints are schema guarantees (``not_null`` -> required, ``unique`` ->
unique, ``primary_key`` -> primary key position; ``check``/``foreign_key``/
``custom`` -> checks); ``tests``/``data_tests`` are checks, and
``accepted_values`` also gives the column's enum. dbt never declares a column
nullable, so ``required`` is ``True`` or unknown (``None``).

A properties file without ``models`` (only ``sources``, ``seeds``, ``macros``,
``exposures``...) is valid and holds no datasets: the gate's globs often cover
whole ``models/`` trees.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime, time, timezone
from functools import partial
from typing import Any

from gate.formats import constraints as value_constraints
from gate.formats.common import (
    describe,
    items,
    optional_list,
    optional_str,
    reject_duplicate_columns,
    reject_duplicate_datasets,
    require_mapping,
    require_str,
    scalar_tuple,
)
from gate.formats.dbt import flags as dbt_flags
from gate.formats.dbt.flags import Unevaluable
from gate.formats.dbt.project import Project
from gate.model import Check, Column, Contract, ContractError, Dataset, Relationship
from gate.yaml_load import YMap

FORMAT = "dbt"

#: Top-level keys of a dbt properties file; any of them marks the file as dbt.
DBT_KEYS = frozenset(
    {
        "models",
        "sources",
        "seeds",
        "snapshots",
        "macros",
        "exposures",
        "metrics",
        "semantic_models",
        "saved_queries",
        "analyses",
        "unit_tests",
        "groups",
        "data_tests",
        "functions",
    }
)

#: Keys only ``dbt_project.yml`` has (its ``models:`` is a config tree, not a list).
_PROJECT_KEYS = frozenset({"config-version", "profile", "model-paths", "source-paths"})

#: dbt's ``ConstraintType`` values.
CONSTRAINT_TYPES = frozenset(
    {"not_null", "unique", "primary_key", "foreign_key", "check", "custom"}
)
#: Constraints that are checks rather than column flags (``foreign_key`` is a relationship).
_CHECK_CONSTRAINTS = frozenset({"check", "custom"})

_REF = re.compile(r"""^\s*(?:ref|source)\s*\((.*)\)\s*$""")


def _relation_name(text: str) -> str:
    """``ref('customers')`` -> ``customers``; ``source('shop', 'customers')`` -> ``shop.customers``."""
    match = _REF.match(text)
    if match is None:
        return text.strip().lower()
    parts = [p.strip().strip("'\"") for p in match.group(1).split(",")]
    return ".".join(p for p in parts if p and "=" not in p).lower()


def detect(doc: Any) -> bool:
    """A dbt properties file: any dbt top-level key, or a bare ``version: 2``."""
    if not isinstance(doc, dict) or "dataset" in doc:
        return False
    if any(key in doc for key in DBT_KEYS):
        return True
    return doc.get("version") == 2 and set(doc) == {"version"}


def _enforced(
    mapping: YMap, path: str, owner: str, found: list[Unevaluable], top_level: bool = False
) -> bool | None:
    """``config.contract.enforced``, or ``None`` when the mapping does not say.

    On a model (``top_level``), dbt-core moves a top-level ``contract:`` into
    ``config`` before it reads it (``normalize_contract_attribute``), and refuses
    a model that has both; so does the gate. dbt does not move it on a version.
    """
    config = None
    if mapping.get("config") is not None:
        config = require_mapping(
            mapping["config"], path, f"{owner}: 'config'", mapping.key_line("config")
        )
    if top_level and mapping.get("contract") is not None:
        if config is not None and "contract" in config:
            raise ContractError(
                path,
                f"{owner}: 'contract' is both a top-level key and in 'config' (dbt refuses "
                "this: keep the one under 'config')",
                mapping.key_line("contract"),
            )
        holder, where = mapping, f"{owner}: 'contract'"
    elif config is not None and config.get("contract") is not None:
        holder, where = config, f"{owner}: 'config.contract'"
    else:
        return None
    contract = require_mapping(holder["contract"], path, where, holder.key_line("contract"))
    if contract.get("enforced") is None:
        return None
    return dbt_flags.read_yaml(
        contract["enforced"],
        dbt_flags.ENFORCED,
        path,
        contract.key_line("enforced"),
        f"{where.rstrip(chr(39))}.enforced'",
        found,
    )


def _enabled(mapping: YMap, path: str, owner: str, found: list[Unevaluable]) -> bool | None:
    """``config.enabled``: Jinja is folded when constant, else read as true (guarded)."""
    config = mapping.get("config")
    if not isinstance(config, dict) or config.get("enabled") is None:
        return None
    return dbt_flags.read_yaml(
        config["enabled"],
        dbt_flags.ENABLED,
        path,
        config.key_line("enabled") if isinstance(config, YMap) else None,
        f"{owner}: 'config.enabled'",
        found,
    )


def _deprecation_date(mapping: YMap, path: str, owner: str) -> datetime | None:
    """``deprecation_date`` as an aware datetime; a date or naive time is read as UTC."""
    value = mapping.get("deprecation_date")
    if value is None:
        return None
    line = mapping.key_line("deprecation_date")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ContractError(
                path, f"{owner}: 'deprecation_date' is not a date: '{value}'", line
            ) from None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    raise ContractError(
        path, f"{owner}: 'deprecation_date' must be a date, found {describe(value)}", line
    )


def _unquote(name: str) -> tuple[str, bool]:
    """A constraint's column as SQL writes it: ``"from"`` names the column ``from``."""
    if len(name) >= 2 and name[0] == name[-1] and name[0] in '"`':
        return name[1:-1].replace(name[0] * 2, name[0]), True
    return name, False


def _alias(model: YMap) -> tuple[str, ...]:
    """``config.alias``: the relation name SQL consumers use instead of the model name."""
    config = model.get("config")
    alias = config.get("alias") if isinstance(config, dict) else None
    return (alias,) if isinstance(alias, str) and alias else ()


def _version_label(value: Any, path: str, line: int, owner: str) -> str:
    """``v`` may be an integer, a float or a string (dbt accepts all three)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ContractError(
            path,
            f"{owner}: version 'v' must be a number or a string, found {describe(value)}",
            line,
        )
    label = str(value).strip()
    if not label:
        raise ContractError(path, f"{owner}: version 'v' is empty", line)
    return label


class _Parser:
    def __init__(self, path: str, project: Project | None = None) -> None:
        self.path = path
        self.foreign_keys: list[Relationship] = []
        self.project = project
        located = project.source_path_of(path) if project else None
        self.folders: tuple[str, ...] = located[1] if located else ()

    def foreign_key(
        self, constraint: YMap, columns: tuple[str, ...], line: int, owner: str
    ) -> Relationship:
        """A ``foreign_key`` constraint: ``to`` + ``to_columns`` (dbt >= 1.9) or an ``expression``."""
        to = constraint.get("to")
        if isinstance(to, str) and to.strip():
            to_columns = constraint.get("to_columns") or []
            targets = scalar_tuple(
                to_columns, self.path, f"{owner}: foreign_key 'to_columns'", line
            )
            table = _relation_name(to)
            target = ",".join(f"{table}.{c.lower()}" for c in targets) or table
            return Relationship(columns, target, line)
        expression = constraint.get("expression")
        if isinstance(expression, str) and expression.strip():
            # ``customers (id)``: the pre-1.9 spelling, compared as written.
            return Relationship(columns, " ".join(expression.lower().split()), line)
        raise ContractError(
            self.path, f"{owner}: a foreign_key constraint needs 'to' or 'expression'", line
        )

    def project_settings(
        self, stem: str, fqn_tail: tuple[str, ...]
    ) -> tuple[bool | None, bool | None]:
        """``(enforced, enabled)`` that ``dbt_project.yml`` gives the model in file ``stem``.

        dbt places a model by its SQL file; when the engine found it, its folder
        is used, else the properties file's own folder.
        """
        if self.project is None:
            return None, None
        found = (self.project.sql_folders or {}).get(stem)
        folders = self.folders if found is None else found
        return self.project.resolve((self.project.name, *folders, *fqn_tail))

    # -- checks -------------------------------------------------------------

    def tests(self, mapping: YMap, owner: str, columns: tuple[str, ...]) -> tuple[Check, ...]:
        """``data_tests`` (dbt >= 1.8) or ``tests``: both spellings, never both at once."""
        if mapping.get("tests") is not None and mapping.get("data_tests") is not None:
            raise ContractError(
                self.path,
                f"{owner}: declare either 'tests' or 'data_tests', not both",
                mapping.key_line("data_tests"),
            )
        key = "data_tests" if mapping.get("data_tests") is not None else "tests"
        entries = optional_list(mapping, key, self.path, f"{owner}: '{key}'")
        return tuple(self.test(entry, line, owner, columns) for _i, entry, line in items(entries))

    def test(self, entry: Any, line: int, owner: str, columns: tuple[str, ...]) -> Check:
        if isinstance(entry, str) and entry.strip():
            return Check.make(entry.strip(), {}, line=line, columns=columns)
        if not isinstance(entry, dict) or not entry:
            raise ContractError(
                self.path,
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
                self.path, f"{owner}: a test needs one key naming it (or a 'test_name')", line
            )
        if not isinstance(kind, str) or not kind.strip():
            raise ContractError(self.path, f"{owner}: a test name must be a string", line)
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            raise ContractError(
                self.path,
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
        self, checks: tuple[Check, ...], owner: str
    ) -> tuple[tuple[str, Any], ...]:
        """Range, length and regex tests (dbt_utils, dbt_expectations) as value constraints.

        ``accepted_range: {min_value: 0}`` says what DCS ``minimum: 0`` says, so the
        same change gives the same ``constraint_*`` finding in every format.
        """
        found: dict[str, Any] = {}
        for check in checks:
            test = check.kind.rsplit(".", 1)[-1]
            spec = check.spec
            if test in ("accepted_range", "expect_column_values_to_be_between"):
                exclusive = spec.get("inclusive") is False or spec.get("strictly") is True
                keys = {
                    "min_value": "exclusiveMinimum" if exclusive else "minimum",
                    "max_value": "exclusiveMaximum" if exclusive else "maximum",
                }
            elif test == "expect_column_value_lengths_to_be_between":
                keys = {"min_value": "minLength", "max_value": "maxLength"}
            elif test == "expect_column_values_to_match_regex":
                keys = {"regex": "pattern"}
            else:
                continue
            mapping = require_mapping(spec, self.path, f"{owner}: test '{check.kind}'", check.line)
            found.update(
                value_constraints.read(
                    mapping,
                    self.path,
                    f"{owner}: test '{check.kind}'",
                    lambda _k, n=check.line: n,
                    keys=keys,
                )
            )
        return tuple(sorted(found.items()))

    def accepted_values(self, checks: tuple[Check, ...]) -> tuple[str, ...] | None:
        for check in checks:
            if check.kind.rsplit(".", 1)[-1] != "accepted_values":
                continue
            values = check.spec.get("values")
            if values is None:
                raise ContractError(self.path, "'accepted_values' needs 'values'", check.line)
            return scalar_tuple(values, self.path, "'accepted_values' values", check.line)
        return None

    def constraints(self, mapping: YMap, owner: str) -> list[tuple[str, YMap, int]]:
        """(type, constraint, line) for each entry of ``constraints``."""
        entries = optional_list(mapping, "constraints", self.path, f"{owner}: 'constraints'")
        out: list[tuple[str, YMap, int]] = []
        for index, entry, line in items(entries):
            what = f"{owner}: constraint #{index + 1}"
            constraint = require_mapping(entry, self.path, what, line)
            kind = require_str(constraint, "type", self.path, f"{what} 'type'").lower()
            if kind not in CONSTRAINT_TYPES:
                known = ", ".join(sorted(CONSTRAINT_TYPES))
                raise ContractError(
                    self.path,
                    f"{what}: unknown constraint type '{kind}' (expected one of: {known})",
                    constraint.key_line("type"),
                )
            out.append((kind, constraint, line))
        return out

    # -- columns ------------------------------------------------------------

    def column(self, entry: YMap, index: int, line: int) -> tuple[Column, bool]:
        """A column and whether a column-level ``primary_key`` constraint marks it."""
        name = require_str(entry, "name", self.path, f"column #{index + 1} 'name'")
        owner = f"column '{name}'"
        checks = list(self.tests(entry, owner, (name,)))
        required: bool | None = None
        unique = False
        is_key = False
        for kind, constraint, c_line in self.constraints(entry, owner):
            if kind == "not_null":
                required = True
            elif kind == "unique":
                unique = True
            elif kind == "primary_key":
                is_key = True
            elif kind == "foreign_key":
                self.foreign_keys.append(self.foreign_key(constraint, (name,), c_line, owner))
            else:
                spec = {k: v for k, v in constraint.items() if k != "type"}
                checks.append(Check.make(kind, spec, line=c_line, columns=(name,)))
        description = entry.get("description")
        column = Column(
            name=name,
            data_type=optional_str(entry, "data_type", self.path, f"{owner}: 'data_type'"),
            line=line,
            position=index,
            required=required,
            unique=unique,
            enum=self.accepted_values(tuple(checks)),
            constraints=self.value_constraints(tuple(checks), owner),
            checks=tuple(checks),
            description=description if isinstance(description, str) else None,
        )
        return column, is_key

    def column_entries(self, mapping: YMap, owner: str) -> list[tuple[str, YMap, int]]:
        """(name, entry, line) of a ``columns`` list; names are validated here."""
        entries = optional_list(mapping, "columns", self.path, f"{owner}: 'columns'")
        out: list[tuple[str, YMap, int]] = []
        for index, entry, line in items(entries):
            column = require_mapping(entry, self.path, f"{owner}: column #{index + 1}", line)
            if column.get("name") is None:
                raise ContractError(self.path, f"{owner}: column #{index + 1} has no 'name'", line)
            name = require_str(column, "name", self.path, f"{owner}: column #{index + 1} 'name'")
            out.append((name, column, line))
        return out

    def version_columns(
        self, version: YMap, top: list[tuple[str, YMap, int]], owner: str
    ) -> list[tuple[str, YMap, int]]:
        """Resolve a version's ``include``/``exclude`` and its own column entries."""
        if version.get("columns") is None:
            return top
        entries = optional_list(version, "columns", self.path, f"{owner}: 'columns'")
        selector: YMap | None = None
        own: list[tuple[str, YMap, int]] = []
        for index, entry, line in items(entries):
            column = require_mapping(entry, self.path, f"{owner}: column #{index + 1}", line)
            if "include" in column or "exclude" in column:
                if selector is not None:
                    raise ContractError(
                        self.path, f"{owner}: at most one 'include'/'exclude' entry", line
                    )
                selector = column
                continue
            if column.get("name") is None:
                raise ContractError(self.path, f"{owner}: column #{index + 1} has no 'name'", line)
            name = require_str(column, "name", self.path, f"{owner}: column #{index + 1} 'name'")
            if any(other.casefold() == name.casefold() for other, _c, _l in own):
                raise ContractError(self.path, f"{owner}: column '{name}' is declared twice", line)
            own.append((name, column, line))
        top_names = [name for name, _c, _l in top]
        included = list(top_names)
        if selector is not None:
            include = selector.get("include", "all")
            line = selector.key_line("include")
            if include in ("*", "all"):
                excluded = (
                    scalar_tuple(selector["exclude"], self.path, f"{owner}: 'exclude'", line)
                    if selector.get("exclude") is not None
                    else ()
                )
                unknown = [name for name in excluded if name not in top_names]
                included = [name for name in top_names if name not in excluded]
            else:
                if selector.get("exclude") is not None:
                    raise ContractError(
                        self.path,
                        f"{owner}: 'exclude' needs include: '*' or 'all'",
                        selector.key_line("exclude"),
                    )
                listed = scalar_tuple(include or [], self.path, f"{owner}: 'include'", line)
                unknown = [name for name in listed if name not in top_names]
                included = [name for name in top_names if name in listed]
            if unknown:
                raise ContractError(
                    self.path,
                    f"{owner}: 'include'/'exclude' names unknown column '{unknown[0]}'",
                    line,
                )
        overrides = {name: (name, column, line) for name, column, line in own}
        by_name = {name: (name, column, line) for name, column, line in top}
        resolved = [overrides.pop(name, by_name[name]) for name in included]
        resolved.extend(entry for entry in own if entry[0] in overrides)
        return resolved

    # -- datasets -----------------------------------------------------------

    def dataset(
        self,
        dataset_id: str,
        line: int,
        column_entries: list[tuple[str, YMap, int]],
        constraint_owner: YMap,
        tests_owner: YMap,
        enforced: bool,
    ) -> Dataset:
        owner = f"model '{dataset_id}'"
        columns: list[Column] = []
        flagged: list[str] = []
        self.foreign_keys = []
        for index, (_name, entry, c_line) in enumerate(column_entries):
            column, is_key = self.column(entry, index, c_line)
            columns.append(column)
            if is_key:
                flagged.append(column.name)
        reject_duplicate_columns(columns, self.path, owner)
        known = [column.name for column in columns]
        checks = list(self.tests(tests_owner, owner, ()))
        required: set[str] = set()
        unique: set[str] = set()
        key: list[str] | None = None
        for kind, constraint, c_line in self.constraints(constraint_owner, owner):
            named: tuple[str, ...] = ()
            if constraint.get("columns") is not None:
                written = scalar_tuple(
                    constraint["columns"], self.path, f"{owner}: constraint 'columns'", c_line
                )
                named = tuple(
                    self.constraint_column(n, known, owner, kind, c_line) for n in written
                )
            if kind == "foreign_key":
                if not named:
                    raise ContractError(
                        self.path, f"{owner}: a model-level foreign_key needs 'columns'", c_line
                    )
                self.foreign_keys.append(self.foreign_key(constraint, named, c_line, owner))
                continue
            if kind in _CHECK_CONSTRAINTS or (kind == "unique" and len(named) > 1):
                spec = {k: v for k, v in constraint.items() if k != "type"}
                checks.append(Check.make(kind, spec, line=c_line, columns=named))
                continue
            if not named:
                raise ContractError(
                    self.path, f"{owner}: a model-level {kind} constraint needs 'columns'", c_line
                )
            if kind == "not_null":
                required.update(named)
            elif kind == "unique":
                unique.update(named)
            else:  # primary_key
                if key is not None:
                    raise ContractError(
                        self.path, f"{owner}: more than one primary_key constraint", c_line
                    )
                key = list(named)
        if key is None:
            key = flagged
        else:
            for name in flagged:
                if name not in key:
                    raise ContractError(
                        self.path,
                        f"{owner}: column '{name}' has a primary_key constraint but is not in "
                        "the model's primary_key columns",
                        line,
                    )
        positions = {name: position for position, name in enumerate(key)}
        columns = [
            replace(
                column,
                required=True if column.name in required else column.required,
                unique=column.unique or column.name in unique,
                primary_key_position=positions.get(column.name),
            )
            for column in columns
        ]
        return Dataset(
            id=dataset_id,
            path=self.path,
            format=FORMAT,
            project=self.project.name if self.project else None,
            columns=tuple(columns),
            checks=tuple(checks),
            line=line,
            enforced=enforced,
            relationships=tuple(self.foreign_keys),
        )

    def constraint_column(
        self, written: str, known: list[str], owner: str, kind: str, line: int
    ) -> str:
        """The declared column a constraint names: a quoted name exactly, a bare
        one as SQL folds it (any case, when only one column matches)."""
        name, quoted = _unquote(written.strip())
        if name in known:
            return name
        folded = [c for c in known if c.casefold() == name.casefold()]
        if not quoted and len(folded) == 1:
            return folded[0]
        raise ContractError(
            self.path, f"{owner}: {kind} constraint names unknown column '{written}'", line
        )

    def version(
        self,
        dataset_id: str,
        line: int,
        entries: tuple[YMap, YMap, list[tuple[str, YMap, int]]],
        owner: str,
        enforced: bool,
    ) -> Dataset:
        """One version's dataset: its columns, constraints and tests, or the model's.

        ``entries`` is (version, model, the model's column entries).
        """
        version, model, top = entries
        tests = version.get("data_tests") is not None or version.get("tests") is not None
        return self.dataset(
            dataset_id,
            line,
            self.version_columns(version, top, owner),
            version if version.get("constraints") is not None else model,
            version if tests else model,
            enforced,
        )

    def read(
        self, dataset_id: str, line: int, enforced: bool, build: Callable[[], Dataset]
    ) -> Dataset:
        """``build()``; for a model its properties file and project leave unenforced,
        a problem in its entry is kept on the dataset instead of refusing the file:
        an unenforced model is no contract (its model file's ``config()`` may still
        enforce it; the engine refuses it then)."""
        try:
            return build()
        except ContractError as exc:
            if enforced:
                raise
            return Dataset(
                id=dataset_id,
                path=self.path,
                format=FORMAT,
                project=self.project.name if self.project else None,
                line=line,
                enforced=False,
                unreadable=(exc.detail, exc.line),
            )

    def model(self, entry: Any, index: int, line: int) -> list[Dataset]:
        model = require_mapping(entry, self.path, f"model #{index + 1}", line)
        if model.get("name") is None:
            raise ContractError(self.path, f"model #{index + 1} has no 'name'", line)
        name = require_str(model, "name", self.path, f"model #{index + 1} 'name'")
        owner = f"model '{name}'"
        found: list[Unevaluable] = []
        enforced = _enforced(model, self.path, owner, found, top_level=True)
        enabled = _enabled(model, self.path, owner, found)
        model_level = tuple(found)
        deprecation = _deprecation_date(model, self.path, owner)
        top = self.column_entries(model, owner)
        versions = optional_list(model, "versions", self.path, f"{owner}: 'versions'")
        if not versions:
            p_enforced, p_enabled = self.project_settings(name, (name,))
            resolved = _first(enforced, p_enforced, False)
            dataset = self.read(
                name, line, resolved, lambda: self.dataset(name, line, top, model, model, resolved)
            )
            return [
                replace(
                    dataset,
                    enabled=_first(enabled, p_enabled, True),
                    deprecation_date=deprecation,
                    aliases=_alias(model),
                    model_names=(name,),
                    unevaluable=model_level,
                )
            ]
        datasets: list[Dataset] = []
        labels: list[str] = []
        for v_index, v_entry, v_line in items(versions):
            version = require_mapping(
                v_entry, self.path, f"{owner}: version #{v_index + 1}", v_line
            )
            if version.get("v") is None:
                raise ContractError(
                    self.path, f"{owner}: version #{v_index + 1} has no 'v'", v_line
                )
            label = _version_label(version["v"], self.path, version.key_line("v"), owner)
            if label in labels:
                raise ContractError(
                    self.path, f"{owner}: version {label} is declared twice", version.key_line("v")
                )
            labels.append(label)
            v_owner = f"{owner} version {label}"
            stem = version.get("defined_in")
            stem = stem.strip() if isinstance(stem, str) and stem.strip() else f"{name}_v{label}"
            p_enforced, p_enabled = self.project_settings(stem, (name, f"v{label}"))
            v_found: list[Unevaluable] = []
            v_enforced = _enforced(version, self.path, v_owner, v_found)
            v_enabled = _enabled(version, self.path, v_owner, v_found)
            decided = {
                setting
                for setting, said in (
                    (dbt_flags.ENFORCED, v_enforced),
                    (dbt_flags.ENABLED, v_enabled),
                )
                if said is not None
            }
            resolved = _first(v_enforced, enforced, p_enforced, False)
            dataset = self.read(
                f"{name}.v{label}",
                v_line,
                resolved,
                partial(
                    self.version,
                    f"{name}.v{label}",
                    v_line,
                    (version, model, top),
                    v_owner,
                    resolved,
                ),
            )
            datasets.append(
                replace(
                    dataset,
                    enabled=_first(v_enabled, enabled, p_enabled, True),
                    deprecation_date=_deprecation_date(version, self.path, v_owner) or deprecation,
                    model_names=(stem,),
                    unevaluable=dbt_flags.merge(model_level, tuple(v_found), decided),
                )
            )
        latest = _latest(labels)
        if model.get("latest_version") is not None:
            latest = _version_label(
                model["latest_version"], self.path, model.key_line("latest_version"), owner
            )
            if latest not in labels:
                raise ContractError(
                    self.path,
                    f"{owner}: latest_version {latest} is not one of its versions",
                    model.key_line("latest_version"),
                )
        index = labels.index(latest)
        # dbt lets the latest version live in ``<model>.sql`` when its own file is absent.
        datasets[index] = replace(
            datasets[index],
            unpinned_name=name,
            model_names=tuple(dict.fromkeys((*datasets[index].model_names, name))),
        )
        return datasets


def _latest(labels: list[str]) -> str:
    """dbt's default ``latest_version``: the greatest version, numerically when it can."""
    try:
        return max(labels, key=float)
    except ValueError:
        return max(labels)


def _first(*values: bool | None) -> bool:
    """The most specific setting that says something (callers end with the default)."""
    return next(value for value in values if value is not None)


def parse(doc: Any, path: str, project: Project | None = None) -> Contract:
    """Turn a loaded dbt properties file into a ``Contract`` with one dataset per model.

    ``project`` is the dbt project the file belongs to, when the engine found
    one: its ``dbt_project.yml`` configs fill in what the file does not say.
    """
    if doc is None:
        return Contract(path=path, format=FORMAT)  # an empty properties file: dbt skips it
    root = require_mapping(doc, path, "the file's top level", 1)
    if any(key in root for key in _PROJECT_KEYS):
        return Contract(path=path, format=FORMAT)  # dbt_project.yml: configs, no contracts
    parser = _Parser(path, project)
    models = optional_list(root, "models", path, "'models'")
    datasets: list[Dataset] = []
    for index, entry, line in items(models):
        datasets.extend(parser.model(entry, index, line))
    reject_duplicate_datasets(datasets, path)
    return Contract(path=path, format=FORMAT, datasets=tuple(datasets))
