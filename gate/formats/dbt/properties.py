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

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from gate.formats.common import (
    items,
    optional_list,
    reject_duplicate_columns,
    reject_duplicate_datasets,
    require_mapping,
    require_str,
)
from gate.formats.dbt import columns as dbt_columns
from gate.formats.dbt import constraints, data_tests, relation, settings
from gate.formats.dbt import flags as dbt_flags
from gate.formats.dbt import versions as dbt_versions
from gate.formats.dbt.constraints import CONSTRAINT_TYPES
from gate.formats.dbt.flags import Unevaluable
from gate.formats.dbt.project import Project
from gate.formats.detect import DBT_KEYS
from gate.formats.detect import dbt as detect
from gate.model import (
    Check,
    Column,
    Contract,
    ContractError,
    ContractWarning,
    Dataset,
    Relation,
    Relationship,
)
from gate.yaml_load import YMap

__all__ = ["CONSTRAINT_TYPES", "DBT_KEYS", "FORMAT", "detect", "parse"]

FORMAT = "dbt"

#: Keys only ``dbt_project.yml`` has (its ``models:`` is a config tree, not a list).
_PROJECT_KEYS = frozenset({"config-version", "profile", "model-paths", "source-paths"})


#: Columns the versions of one properties file may repeat from their models, in
#: all: as many as the default node budget lets a file spell out itself, several
#: times what real projects use (a few versions of a few hundred columns).
MAX_VERSION_COLUMNS = 100_000


def _test_prefix(path: str, project: Project | None) -> tuple[str, ...] | None:
    """The fqn prefix of the generic tests of the properties file ``path``: dbt-core places
    them at ``[project, *folders, test name]``, the file's folders below the project less
    the first (the resource path's own, ``SchemaGenericTestParser.parse_generic_test``)."""
    if project is None:
        return None
    inside = path[len(project.root) + 1 :] if project.root else path
    return (project.name, *inside.split("/")[1:-1])


class _Parser:
    """One properties file's models as datasets: the walk over models and versions.

    Columns (``columns``), tests (``data_tests``), constraints (``constraints``),
    settings (``settings``) and version labels (``versions``) are read by their
    own modules; this class holds what the whole file shares (its path, its dbt
    project and folder) and puts each model's or version's parts together.
    Why it stays one class of ~210 lines: a version inherits from its model
    entry, so the model walk and the version walk share that state.
    """

    def __init__(self, path: str, project: Project | None = None) -> None:
        self.path = path
        self.project = project
        #: Columns the file's versions repeat from their models so far.
        self.expanded = 0
        #: What the file says that the gate reads without evaluating (a Jinja latest_version).
        self.warnings: list[ContractWarning] = []
        located = project.source_path_of(path) if project else None
        self.folders: tuple[str, ...] = located[1] if located else ()
        #: Where ``dbt_project.yml``'s ``data_tests:`` tree places this file's tests.
        self.test_prefix = _test_prefix(path, project)

    def project_settings(
        self, stem: str, fqn_tail: tuple[str, ...]
    ) -> tuple[bool | None, bool | None]:
        """``(enforced, enabled)`` that ``dbt_project.yml`` gives the model in file ``stem``.

        dbt places a model by its SQL file; when the engine found it, its folder
        is used, else the properties file's own folder.
        """
        if self.project is None:
            return None, None
        return self.project.resolve(self.fqn(stem, fqn_tail))

    def access(self, said: tuple[str | None, ...], stem: str, fqn_tail: tuple[str, ...]) -> str:
        """The model's ``access``: the entry's (a version's ``config.access`` over its
        model's), else ``+access`` of ``dbt_project.yml`` for its fqn, else dbt's default
        ``protected``; the model file's ``config(access=...)`` goes over all of them
        later (gate.dbt.model_files). Which entry keys count: ``settings.access``."""
        for value in said:
            if value is not None:
                return value
        if self.project is not None:
            from_project = self.project.resolve_access(self.fqn(stem, fqn_tail))
            if from_project is not None:
                return from_project
        return settings.DEFAULT_ACCESS

    def project_unevaluable(
        self,
        stem: str,
        fqn_tail: tuple[str, ...],
        entry: tuple[Unevaluable, ...],
        decided: set[str],
    ) -> tuple[Unevaluable, ...]:
        """The entry's unevaluable settings over those ``dbt_project.yml`` leaves the
        model with (``Project.resolve_unevaluable``), for settings the entry did not
        decide: ``+access: "{{ 'public' if target.name == 'prod' else 'protected' }}"``
        is reported as the same Jinja in the entry is."""
        if self.project is None:
            return entry
        general = self.project.resolve_unevaluable(self.fqn(stem, fqn_tail))
        return dbt_flags.merge(general, entry, decided)

    def fqn(self, stem: str, fqn_tail: tuple[str, ...]) -> tuple[str, ...]:
        """The model's fqn in its project (``project_settings`` says which folder)."""
        assert self.project is not None
        found = (self.project.sql_folders or {}).get(stem)
        folders = self.folders if found is None else found
        return (self.project.name, *folders, *fqn_tail)

    def is_view(self, entries: tuple[YMap, ...], placed: tuple[str, tuple[str, ...]]) -> bool:
        """Whether the model is said to be a view: the first literal ``materialized`` of
        ``entries``' ``config:`` (most specific first), else ``+materialized`` of
        ``dbt_project.yml`` for its fqn. Not said is not a view here: the model file's
        ``config()`` may say table; dbt's default view is decided once it is read
        (``materialization_said``, ``gate.dbt.undeclared_constraints.default_view``)."""
        for entry in entries:
            config = entry.get("config")
            if isinstance(config, dict) and isinstance(config.get("materialized"), str):
                return str(config["materialized"]).strip().lower() == "view"
        if self.project is None:
            return False
        return self.project.resolve_materialized(self.fqn(*placed)) == "view"

    def materialization_said(
        self, entries: tuple[YMap, ...], placed: tuple[str, tuple[str, ...]]
    ) -> bool:
        """Whether ``entries``' ``config:`` or ``dbt_project.yml`` (any level of the model's
        fqn) sets ``materialized`` at all, Jinja included. Neither, and nor the model
        file: dbt builds its default, a view (dbt-core's ``NodeConfig.materialized``).
        No project read: said (not known, so never the default)."""
        for entry in entries:
            config = entry.get("config")
            if isinstance(config, dict) and "materialized" in config:
                return True
        if self.project is None:
            return True
        return self.project.resolve_materialized(self.fqn(*placed)) is not None

    def relation(
        self,
        entries: tuple[tuple[YMap, str], ...],
        placed: tuple[str, tuple[str, ...]],
        default_alias: str,
        enforced: bool,
    ) -> Relation | None:
        """Where the model's table lives: ``entries`` ((version, owner), (model, owner):
        most specific first) over ``dbt_project.yml`` for the model's fqn (``placed``: file stem, fqn
        tail). A bad value refuses only an enforced model's file (as its other keys)."""
        try:
            levels = [
                relation.from_mapping(config, self.path, owner)
                for entry, owner in entries
                if isinstance(config := entry.get("config"), dict)
            ]
        except ContractError:
            if enforced:
                raise
            return None
        if self.project is not None:
            levels.append(self.project.resolve_relation(self.fqn(*placed)))
        said = relation.first(*levels)
        return Relation(
            database=said.get("database"),
            schema=said.get("schema"),
            alias=said.get("alias"),
            default_alias=default_alias,
            quoted=self.project.quoted if self.project is not None else frozenset(),
        )

    def last_entries(
        self, column_entries: list[tuple[str, YMap, int]], owner: str
    ) -> list[tuple[str, YMap, int]]:
        """One entry per column name as dbt keeps them: a name written twice under one
        spelling (dbt's columns are a dict by name) keeps its first place and its last
        entry, with a warning. Two spellings of one name stay refused (the warehouse
        folds them into one column while dbt keeps two)."""
        kept: dict[str, tuple[str, YMap, int]] = {}
        for name, entry, line in column_entries:
            if name in kept:
                self.warnings.append(
                    ContractWarning(
                        self.path,
                        f"{owner}: column '{name}' is declared twice (also line "
                        f"{kept[name][2]}): dbt keeps the last entry, and so does the gate",
                        line,
                    )
                )
            kept[name] = (name, entry, line)
        return list(kept.values())

    def project_test_config(self, target: str, column: str | None, check: Check) -> data_tests.Said:
        """What ``dbt_project.yml``'s ``data_tests:`` gives ``check`` of model ``target``
        (``orders_v2`` for a version) and ``column``: by the file's folders and its name."""
        if self.project is None or self.test_prefix is None:
            return {}
        name = data_tests.fqn_name(check, target, column)
        return self.project.resolve_test_config((*self.test_prefix, name))

    def dataset(
        self,
        dataset_id: str,
        line: int,
        column_entries: list[tuple[str, YMap, int]],
        constraint_owner: YMap,
        tests_owner: YMap,
        enforced: bool,
        view: bool = False,
        target: str | None = None,
    ) -> Dataset:
        """``target``: the model's name in its tests' names (``orders_v2``), if not ``dataset_id``."""
        owner = f"model '{dataset_id}'"
        columns: list[Column] = []
        flagged: list[str] = []
        foreign_keys: list[Relationship] = []
        for index, (_name, entry, c_line) in enumerate(self.last_entries(column_entries, owner)):
            column, is_key, column_keys = dbt_columns.column(
                self.path,
                entry,
                index,
                c_line,
                self.warnings,
                partial(self.project_test_config, target or dataset_id, _name),
            )
            columns.append(column)
            foreign_keys.extend(column_keys)
            if is_key:
                flagged.append(column.name)
        reject_duplicate_columns(columns, self.path, owner)
        known = [column.name for column in columns]
        checks = list(data_tests.tests(self.path, tests_owner, owner, ()))
        view_only: list[tuple[str, int | None]] = []
        table_only: list[tuple[str, int | None]] = []
        model_level = constraints.model_level(
            self.path,
            constraint_owner,
            owner,
            known,
            self.warnings if view else None,
            self.warnings,
            view_only,
            table_only,
        )
        checks.extend(model_level.checks)
        foreign_keys.extend(model_level.foreign_keys)
        key = model_level.key
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
                required=True if column.name in model_level.required else column.required,
                unique=column.unique or column.name in model_level.unique,
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
            relationships=tuple(foreign_keys),
            view_only=tuple(view_only),
            table_only=tuple(table_only),
        )

    def version(
        self,
        dataset_id: str,
        line: int,
        entries: tuple[YMap, YMap, list[tuple[str, YMap, int]]],
        owner: str,
        enforced: bool,
        view: bool = False,
    ) -> Dataset:
        """One version's dataset: its columns, constraints and tests, or the model's.

        ``entries`` is (version, model, the model's column entries).
        """
        version, model, top = entries
        tests = version.get("data_tests") is not None or version.get("tests") is not None
        name, _, label = dataset_id.rpartition(".v")
        return self.dataset(
            dataset_id,
            line,
            dbt_columns.version_columns(self.path, version, top, owner),
            version if version.get("constraints") is not None else model,
            version if tests else model,
            enforced,
            view,
            f"{name}_v{label}",
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
        enforced = settings.enforced(model, self.path, owner, found, top_level=True)
        enabled = settings.enabled(model, self.path, owner, found)
        m_access = settings.access(model, self.path, owner, top_level=True, found=found)
        model_level = tuple(found)
        m_decided = {
            s
            for s, v in (
                (dbt_flags.ENFORCED, enforced),
                (dbt_flags.ENABLED, enabled),
                (dbt_flags.ACCESS, m_access),
            )
            if v is not None
        }
        deprecation = settings.deprecation_date(model, self.path, owner)
        top = dbt_columns.column_entries(self.path, model, owner)
        versions = optional_list(model, "versions", self.path, f"{owner}: 'versions'")
        if not versions:
            p_enforced, p_enabled = self.project_settings(name, (name,))
            resolved = settings.first(enforced, p_enforced, False)
            view = self.is_view((model,), (name, (name,)))
            dataset = self.read(
                name,
                line,
                resolved,
                lambda: self.dataset(name, line, top, model, model, resolved, view),
            )
            return [
                replace(
                    dataset,
                    enabled=settings.first(enabled, p_enabled, True),
                    access=self.access((m_access,), name, (name,)),
                    deprecation_date=deprecation,
                    aliases=settings.alias(model),
                    model_names=(name,),
                    materialized_said=self.materialization_said((model,), (name, (name,))),
                    relation=self.relation(((model, owner),), (name, (name,)), name, resolved),
                    unevaluable=self.project_unevaluable(name, (name,), model_level, m_decided),
                )
            ]
        # Every version repeats its model's columns (``include: all``): 100 KB of
        # 1,000 versions and 2,000 columns were 2,000,000 columns and 98 s.
        self.expanded += len(versions) * len(top)
        if self.expanded > MAX_VERSION_COLUMNS:
            raise ContractError(
                self.path,
                f"{owner}: {len(versions):,} versions of {len(top):,} columns; the versions "
                f"of one file may repeat at most {MAX_VERSION_COLUMNS:,} columns in all "
                "(split the file, or give old versions fewer columns)",
                line,
            )
        datasets: list[Dataset] = []
        labels: list[str] = []
        for v_index, v_entry, v_line in items(versions):
            version, label = dbt_versions.entry(self.path, v_entry, v_index, v_line, owner, labels)
            labels.append(label)
            v_owner = f"{owner} version {label}"
            ignored = settings.version_access(version, self.path, v_owner)
            if ignored is not None:
                self.warnings.append(ignored)
            stem = version.get("defined_in")
            stem = stem.strip() if isinstance(stem, str) and stem.strip() else f"{name}_v{label}"
            p_enforced, p_enabled = self.project_settings(stem, (name, f"v{label}"))
            v_found: list[Unevaluable] = []
            v_enforced = settings.enforced(version, self.path, v_owner, v_found)
            v_enabled = settings.enabled(version, self.path, v_owner, v_found)
            v_access = settings.access(version, self.path, v_owner, found=v_found)
            decided = {
                setting
                for setting, said in (
                    (dbt_flags.ENFORCED, v_enforced),
                    (dbt_flags.ENABLED, v_enabled),
                    (dbt_flags.ACCESS, v_access),
                )
                if said is not None
            }
            resolved = settings.first(v_enforced, enforced, p_enforced, False)
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
                    self.is_view((version, model), (stem, (name, f"v{label}"))),
                ),
            )
            datasets.append(
                replace(
                    dataset,
                    enabled=settings.first(v_enabled, enabled, p_enabled, True),
                    access=self.access((v_access, m_access), stem, (name, f"v{label}")),
                    deprecation_date=settings.deprecation_date(version, self.path, v_owner)
                    or deprecation,
                    model_names=(stem,),
                    materialized_said=self.materialization_said(
                        (version, model), (stem, (name, f"v{label}"))
                    ),
                    relation=self.relation(
                        ((version, v_owner), (model, owner)),
                        (stem, (name, f"v{label}")),
                        f"{name}_v{label.replace('.', '_')}",
                        resolved,
                    ),
                    unevaluable=dbt_flags.merge(
                        self.project_unevaluable(stem, (name, f"v{label}"), model_level, m_decided),
                        tuple(v_found),
                        decided,
                    ),
                )
            )
        return dbt_versions.mark_latest(
            datasets, labels, model, self.path, owner, name, self.warnings
        )


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
    return Contract(
        path=path, format=FORMAT, datasets=tuple(datasets), warnings=tuple(parser.warnings)
    )
