"""``dbt_project.yml``: where a dbt project keeps its properties files, and which
models it enforces or disables from folder-level configs.

dbt reads properties files (``.yml``/``.yaml``) from every resource path of the
project (``model-paths``, ``seed-paths``, ``snapshot-paths``, ``analysis-paths``,
``macro-paths``, ``test-paths``, ``function-paths``; dbt-core's
``Project.all_source_paths``), so the gate does the same. A model's config is
resolved as dbt's ``ContextConfig.calculate_node_config`` does: the
``models:`` tree of ``dbt_project.yml`` walked along the model's fqn
(``[project, folder, ..., model, version]``; dbt-core's ``fqn_search``), the
most specific level winning, then the properties file's ``config:`` on top.
In the tree a key starting with ``+`` is a config, a key whose value is not a
mapping is a config, and any other mapping is a folder (so ``contract:``
without ``+`` names a folder, in dbt and here).

Only ``contract.enforced`` and ``enabled`` are read as settings: they decide
whether a model is a contract at all; ``database``/``schema``/``alias`` (and
BigQuery's ``project``/``dataset``) are read as ``relations`` (where its table
lives, ``gate.formats.dbt.relation``), with the project's ``quoting:``; a literal
``materialized`` only says whether a model is a view (dbt renders no constraint
DDL for one, ``gate.formats.dbt.constraints``). Constant Jinja (``"{{ false }}"``) is folded; any
other Jinja value (``"{{ target.name == 'prod' }}"``) cannot be evaluated
without a warehouse profile, so it counts as ``true``: the gate then guards the
model rather than silently skipping it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gate.formats.common import describe, require_mapping
from gate.formats.dbt import data_tests, relation
from gate.formats.dbt import flags as dbt_flags
from gate.formats.dbt.flags import (
    ACCESS,
    ENABLED,
    ENFORCED,
    Unevaluable,
    fold,
    is_jinja,
)
from gate.formats.dbt.settings import checked_access
from gate.model import ContractError
from gate.yaml_load import YMap, load_yaml

PROJECT_FILE = "dbt_project.yml"

#: Resource paths and their defaults (dbt-core ``Project.from_project_config``).
#: The second key of a pair is the deprecated spelling dbt still honours.
_PATH_KEYS: tuple[tuple[str, str | None, str], ...] = (
    ("model-paths", "source-paths", "models"),
    ("seed-paths", "data-paths", "seeds"),
    ("snapshot-paths", None, "snapshots"),
    ("analysis-paths", None, "analyses"),
    ("macro-paths", None, "macros"),
    ("test-paths", None, "tests"),
    ("function-paths", None, "functions"),
)

#: ``(enforced, enabled)`` set at one level of the ``models:`` tree; ``None`` = not said.
Settings = tuple[bool | None, bool | None]


@dataclass(frozen=True)
class Project:
    """One dbt project as its ``dbt_project.yml`` describes it.

    Paths are repository-relative posix paths. ``levels`` maps each level of
    the ``models:`` tree (a tuple of keys; ``()`` is the root) to what it sets.
    ``sql_folders`` maps a model file's stem (``orders``, ``orders_v2``) to its
    folder below the model path (``None`` when two folders hold one); the engine
    fills it when folder-level configs make a model's folder matter (dbt places
    a model by its SQL file).
    """

    path: str = field(compare=False)
    root: str
    name: str
    model_paths: tuple[str, ...]
    source_paths: tuple[str, ...]
    levels: Mapping[tuple[str, ...], Settings]
    #: Level -> the relation parts it sets (only levels that set one).
    relations: Mapping[tuple[str, ...], relation.Said] = field(default_factory=dict)
    #: Level -> the ``+access`` it sets (only levels that set one).
    accesses: Mapping[tuple[str, ...], str] = field(default_factory=dict)
    #: Level -> the ``+materialized`` it sets, lower case (only levels that set one; a
    #: value not a string as its ``repr``: said, so never dbt's default view).
    materializations: Mapping[tuple[str, ...], str] = field(default_factory=dict)
    #: The relation parts ``quoting:`` quotes (``database``, ``schema``, ``alias``).
    quoted: frozenset[str] = frozenset()
    #: Level -> (setting, expression, line) of the ``+enabled``, ``+contract.enforced``
    #: and ``+access`` it sets in Jinja the gate cannot fold: reported, as the same
    #: Jinja in a properties entry is (``dbt_config_unevaluable``), where the model's
    #: own entry and file leave the setting to the project.
    unevaluable: Mapping[tuple[str, ...], tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: (level, setting) -> its line in ``unevaluable``: a line that moved changes nothing.
    unevaluable_lines: Mapping[tuple[tuple[str, ...], str], int] = field(
        default_factory=dict, compare=False
    )
    sql_folders: Mapping[str, tuple[str, ...] | None] | None = field(default=None, compare=False)
    #: Level of the ``data_tests:`` (old spelling ``tests:``) tree -> the ``+severity``,
    #: ``+enabled`` and ``+error_if`` it sets (``data_tests.setting_value``): compared, so
    #: a project that makes its tests warn-only compares its properties files again (an
    #: ``accepted_values`` then gives no enum).
    test_configs: Mapping[tuple[str, ...], Mapping[str, Any]] = field(default_factory=dict)

    @property
    def folder_configs(self) -> bool:
        """Whether any level below the project's own sets something (folders, models).
        ``+materialized`` counts: a model nothing makes a table is dbt's default view
        (``gate.dbt.undeclared_constraints``), so a folder's table must be found by the
        model's SQL file, not by its properties file's folder."""
        return any(
            len(level) > 1 and said != (None, None) for level, said in self.levels.items()
        ) or any(
            len(level) > 1 for level in (*self.relations, *self.accesses, *self.materializations)
        )

    def source_path_of(self, path: str) -> tuple[str, tuple[str, ...]] | None:
        """The resource path holding ``path`` and the folders between them, or ``None``."""
        for source in sorted(self.source_paths, key=len, reverse=True):  # nested paths
            prefix = f"{source}/" if source else ""
            if path.startswith(prefix):
                folders = tuple(posixpath.dirname(path[len(prefix) :]).split("/"))
                return source, tuple(f for f in folders if f)
        return None

    def resolve(self, fqn: Sequence[str]) -> Settings:
        """``(enforced, enabled)`` from the ``models:`` tree for one model's fqn."""
        enforced: bool | None = None
        enabled: bool | None = None
        for depth in range(len(fqn) + 1):
            settings = self.levels.get(tuple(fqn[:depth]))
            if settings is None:
                break  # fqn_search stops at the first level that is not a mapping
            if settings[0] is not None:
                enforced = settings[0]
            if settings[1] is not None:
                enabled = settings[1]
        return enforced, enabled

    def resolve_access(self, fqn: Sequence[str]) -> str | None:
        """The ``+access`` the ``models:`` tree gives one model's fqn (most specific wins)."""
        return self._most_specific(self.accesses, fqn)

    def _most_specific(self, said: Mapping[tuple[str, ...], str], fqn: Sequence[str]) -> str | None:
        """What the deepest level of the ``models:`` tree along ``fqn`` sets in ``said``."""
        out: str | None = None
        for depth in range(len(fqn) + 1):
            if tuple(fqn[:depth]) not in self.levels:
                break  # as resolve(): the walk stops where the tree does
            out = said.get(tuple(fqn[:depth]), out)
        return out

    def resolve_unevaluable(self, fqn: Sequence[str]) -> tuple[Unevaluable, ...]:
        """The unevaluable ``+`` settings the ``models:`` tree leaves one model's fqn with:
        for each setting, the most specific level that sets it decides, and counts only
        if its value is Jinja the gate could not fold (as ``resolve`` walks the tree)."""
        out: dict[str, Unevaluable] = {}
        for depth in range(len(fqn) + 1):
            level = tuple(fqn[:depth])
            settings = self.levels.get(level)
            if settings is None:
                break
            said = {
                s
                for s, v in (
                    (dbt_flags.ENFORCED, settings[0]),
                    (dbt_flags.ENABLED, settings[1]),
                    (dbt_flags.ACCESS, self.accesses.get(level)),
                )
                if v is not None
            }
            for setting in said:
                out.pop(setting, None)
            for setting, expression in self.unevaluable.get(level, ()):
                line = self.unevaluable_lines.get((level, setting))
                out[setting] = (setting, expression, self.path, line)
        return tuple(out[s] for s in sorted(out))

    def resolve_test_config(self, fqn: Sequence[str]) -> dict[str, Any]:
        """The test configs the ``data_tests:`` tree gives a test of fqn ``fqn`` (project,
        the properties file's folders, the test's name): for each, the most specific
        level that says it (dbt-core's ``fqn_search``: the walk stops where the tree does)."""
        out: dict[str, Any] = {}
        for depth in range(len(fqn) + 1):
            level = tuple(fqn[:depth])
            if level not in self.test_configs:
                break
            out.update(self.test_configs.get(level, {}))
        return out

    def resolve_materialized(self, fqn: Sequence[str]) -> str | None:
        """The ``+materialized`` the ``models:`` tree gives one model's fqn (most specific wins)."""
        return self._most_specific(self.materializations, fqn)

    def resolve_relation(self, fqn: Sequence[str]) -> relation.Said:
        """The relation parts the ``models:`` tree gives one model's fqn (most specific wins)."""
        out: relation.Said = {}
        for depth in range(len(fqn) + 1):
            if tuple(fqn[:depth]) not in self.levels:
                break  # as resolve(): the walk stops where the tree does
            out.update(self.relations.get(tuple(fqn[:depth]), {}))
        return out


def is_project_file(path: str) -> bool:
    return posixpath.basename(path) == PROJECT_FILE


def _flag(
    value: Any, path: str, what: str, line: int, setting: str, found: list[Unevaluable]
) -> bool:
    if isinstance(value, bool):
        return value
    if is_jinja(value):
        folded = fold(value)  # "{{ false }}" is false; anything else is unknowable
        if folded is None:  # fail closed: guard the model, and say so where it changes
            found.append((setting, dbt_flags.shown(value), path, line))
        return True if folded is None else folded
    raise ContractError(path, f"{what} must be true or false, found {describe(value)}", line)


def _paths(doc: YMap, key: str, old_key: str | None, default: str, path: str) -> list[str]:
    """One resource-path list, normalised and kept inside the repository.

    dbt resolves each folder against the project's root, ``..`` included: sibling
    projects share one (Obsidian-Owl/floe: ``macro-paths: ["../macros"]``), which
    dbt builds; a folder that leaves the repository is refused (the gate reads
    nothing outside it)."""
    use = key if key in doc or old_key is None or old_key not in doc else old_key
    value = doc.get(use)
    line = doc.key_line(use)
    if value is None:
        return [default]
    if isinstance(value, str) or not isinstance(value, list):
        raise ContractError(
            path, f"'{use}' must be a list of folders, found {describe(value)}", line
        )
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ContractError(
                path, f"'{use}' must hold folder names, found {describe(item)}", line
            )
        norm = posixpath.normpath(item.strip().replace("\\", "/")).rstrip("/")
        in_repo = posixpath.normpath(posixpath.join(posixpath.dirname(path), norm))
        if (
            norm.startswith("/")
            or in_repo.startswith("../")
            or in_repo == ".."
            or any(c in norm for c in "*?[]")
        ):
            raise ContractError(
                path,
                f"'{use}': '{item}' must be a folder inside the project (or beside it, in the repository)",
                line,
            )
        out.append("" if norm == "." else norm)
    return out


def _levels(
    tree: YMap, path: str
) -> tuple[
    dict[tuple[str, ...], Settings],
    dict[tuple[str, ...], relation.Said],
    dict[tuple[str, ...], str],
    dict[tuple[str, ...], str],
    dict[tuple[tuple[str, ...], str], Unevaluable],
]:
    """Flatten the ``models:`` config tree into level -> (enforced, enabled), level ->
    the relation parts it sets, level -> its ``+access`` and its ``+materialized``,
    and level -> the settings it gives in Jinja the gate cannot fold
    (``Project.unevaluable``)."""
    levels: dict[tuple[str, ...], Settings] = {}
    relations: dict[tuple[str, ...], relation.Said] = {}
    accesses: dict[tuple[str, ...], str] = {}
    materializations: dict[tuple[str, ...], str] = {}
    unevaluable: dict[tuple[tuple[str, ...], str], Unevaluable] = {}
    stack: list[tuple[tuple[str, ...], YMap]] = [((), tree)]
    while stack:
        level, node = stack.pop()
        enforced: bool | None = None
        enabled: bool | None = None
        found: dict[str, Unevaluable] = {}  # a repeated setting: dbt keeps the last
        for key, value in node.items():
            key_text = str(key)
            config = key_text.startswith("+") or not isinstance(value, dict)
            name = key_text[1:].strip() if key_text.startswith("+") else key_text
            line = node.key_line(key)
            if not config:
                if len(level) >= 64:
                    raise ContractError(path, "'models' nests deeper than 64 levels", line)
                stack.append(((*level, key_text), require_mapping(value, path, name, line)))
            elif name in relation.KEYS and (value is not None or key_text.startswith("+")):
                part = relation.KEYS[name]
                said = relations.setdefault(level, {})
                said[part] = relation.value(value, path, f"'{key_text}'", line)
            elif name == "enabled" and value is not None:
                noted: list[Unevaluable] = []
                enabled = _flag(value, path, f"'{key_text}'", line, ENABLED, noted)
                _keep(found, ENABLED, noted)
            elif name == "access" and value is not None:
                noted = []
                accesses[level] = checked_access(value, path, line, f"'{key_text}'", noted)
                _keep(found, ACCESS, noted)
            elif name == "materialized":
                # Not a string (null, a list): said all the same, never dbt's default view.
                said_as = value.strip().lower() if isinstance(value, str) else f"{value!r}"
                materializations[level] = said_as
            elif name == "contract" and value is not None:
                contract = require_mapping(value, path, f"'{key_text}'", line)
                if contract.get("enforced") is not None:
                    noted = []
                    enforced = _flag(
                        contract["enforced"],
                        path,
                        f"'{key_text}.enforced'",
                        contract.key_line("enforced"),
                        ENFORCED,
                        noted,
                    )
                    _keep(found, ENFORCED, noted)
        levels[level] = (enforced, enabled)
        unevaluable.update(((level, setting), said) for setting, said in found.items())
    return levels, relations, accesses, materializations, unevaluable


def _test_configs(root: YMap) -> dict[tuple[str, ...], dict[str, Any]]:
    """Level -> ``+severity``/``+enabled``/``+error_if`` of the project's ``data_tests:``
    tree (dbt-core reads ``tests:`` when there is no ``data_tests:``); every level, said
    or not, is a key (``resolve_test_config`` walks them as dbt's ``fqn_search``). A tree
    dbt would refuse (not a mapping) sets nothing here: every test then stays a promise."""
    key = "data_tests" if "data_tests" in root else "tests"
    tree = root.get(key)
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    if not isinstance(tree, dict):
        return out
    stack: list[tuple[tuple[str, ...], dict[Any, Any]]] = [((), tree)]
    while stack:
        level, node = stack.pop()
        said = out.setdefault(level, {})
        for key_, value in node.items():
            key_text = str(key_)
            if key_text.startswith("+") or not isinstance(value, dict):
                name = key_text.lstrip("+").strip()
                if name in data_tests.TEST_SETTINGS:
                    read = data_tests.setting_value(name, value)
                    if read is not None:
                        said[name] = read
            elif len(level) < 64:
                stack.append(((*level, key_text), value))
    return out


def _by_level(
    found: Mapping[tuple[tuple[str, ...], str], Unevaluable],
) -> dict[tuple[str, ...], tuple[tuple[str, str], ...]]:
    out: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
    for (level, setting), (_s, expression, _p, _l) in sorted(found.items()):
        out[level] = (*out.get(level, ()), (setting, expression))
    return out


def _keep(found: dict[str, Unevaluable], setting: str, noted: list[Unevaluable]) -> None:
    """A level's latest value of ``setting`` decides (dbt keeps a repeated key's last)."""
    found.pop(setting, None)
    if noted:
        found[setting] = noted[-1]


def _quoted(root: YMap) -> frozenset[str]:
    """The relation parts the project's ``quoting:`` quotes (a literal ``true``)."""
    quoting = root.get("quoting")
    if not isinstance(quoting, dict):
        return frozenset()
    parts = {"database": "database", "schema": "schema", "identifier": "alias"}
    return frozenset(part for key, part in parts.items() if quoting.get(key) is True)


def _template(data: bytes | str, error: ContractError) -> ContractError:
    """A ``dbt_project.yml`` that is no YAML because of Jinja markup is a template.

    dbt renders Jinja in a project's values only after YAML has parsed them, so
    an unquoted ``{{NAME}}:`` key fails dbt too: the refusal stands, but it says
    why and gives the line that stops the gate reading the template's folder
    (a skill's or a generator's project skeleton, seen in public repositories).
    """
    from gate.formats import exclude_hint, unquoted_jinja

    raw = data.encode() if isinstance(data, str) else data
    found = unquoted_jinja(raw)
    if found is None:
        return error
    line = raw.count(b"\n", 0, found.start()) + 1
    folder = posixpath.dirname(error.path)
    excluded = f"{folder}/**" if folder else error.path
    hint = exclude_hint(excluded).replace(
        "if it is not a contract", "if it is no project you build"
    )
    return ContractError(
        error.path,
        f"{error.detail}; the file holds Jinja markup ('{found.group().decode()}' at line "
        f"{line}): a dbt project template, which dbt cannot parse either; {hint}",
        error.line,
    )


def parse_project(data: bytes | str, path: str) -> Project:
    """Read one ``dbt_project.yml``; every failure is a ``ContractError`` naming it."""
    # dbt keeps a repeated key's last value (DuplicateYAMLKeysDeprecation in
    # 1.10): a project dbt builds is read as dbt reads it, not refused.
    try:
        doc = load_yaml(data, path, duplicate_keys=[])
    except ContractError as exc:
        raise _template(data, exc) from None
    root = require_mapping(doc, path, "dbt_project.yml's top level", 1)
    name = root.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ContractError(path, "a dbt project needs a 'name'", root.key_line("name"))
    base = posixpath.dirname(path)
    resolved: dict[str, list[str]] = {
        key: _paths(root, key, old, default, path) for key, old, default in _PATH_KEYS
    }

    def in_repo(folders: list[str]) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(
                posixpath.normpath(posixpath.join(base, f)).rstrip("/") if f else base
                for f in folders
            )
        )

    models = root.get("models")
    tree = require_mapping(models, path, "'models'", root.key_line("models")) if models else None
    levels, relations, accesses, materializations, unevaluable = (
        _levels(tree, path) if tree is not None else ({(): (None, None)}, {}, {}, {}, {})
    )
    return Project(
        path=path,
        root=base,
        name=name.strip(),
        model_paths=in_repo(resolved["model-paths"]),
        source_paths=in_repo([p for paths in resolved.values() for p in paths]),
        levels=levels,
        relations=relations,
        accesses=accesses,
        materializations=materializations,
        quoted=_quoted(root),
        unevaluable=_by_level(unevaluable),
        unevaluable_lines={k: line for k, (_s, _e, _p, line) in unevaluable.items() if line},
        test_configs=_test_configs(root),
    )
