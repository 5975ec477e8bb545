"""The SQL dialect a repository declares: its dbt profile's adapter, or SQLMesh's default.

``numeric -> numeric(18,2)`` is a widening in Spark (``DECIMAL(10,0)``) and a
narrowing in DuckDB (``DECIMAL(18,3)``), Snowflake and Postgres, so a repository
on DuckDB must not be graded as Spark silently. When neither ``--dialect`` nor
the config's ``dialect:`` says, the gate reads what the repository already
tells its own tools, as those tools read it:

- dbt: ``dbt_project.yml`` names a ``profile``; ``profiles.yml`` beside it (dbt
  looks in the project directory since 1.3) or at the repository root holds
  that profile's ``target`` and its ``outputs`` (else a ``profiles.yml`` in a
  folder below the project, as CI passes with ``--profiles-dir``); the target's ``type`` is the
  adapter (``duckdb``, ``snowflake``, ``databricks``...). A target that is a
  Jinja expression (``{{ env_var('DBT_TARGET', 'dev') }}``) is not rendered: if
  every output uses one adapter, that one.
- SQLMesh: ``config.yaml``/``config.yml`` (``model_defaults: dialect:``) or
  ``config.py`` (``ModelDefaultsConfig(dialect=...)``, read as a syntax tree,
  never run) at a project root.

These files are read from the **base** side: a pull request cannot switch the
dialect to grade its own change more kindly (gate/policy.py). What cannot be
read or disagrees becomes a notice, and the default applies.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gate.git import Repo
from gate.lattice import DIALECTS
from gate.model import ContractError, GitError, UsageError
from gate.yaml_load import load_yaml

#: dbt adapter ``type`` -> sqlglot dialect, where the two names differ or the
#: adapter speaks another engine's SQL. Any other type that is a sqlglot
#: dialect (duckdb, snowflake, postgres, bigquery, databricks, spark,
#: redshift, trino, athena, clickhouse, oracle, ...) maps to itself.
ADAPTER_DIALECTS = {
    "sqlserver": "tsql",
    "synapse": "tsql",
    "azuresynapse": "tsql",
    "fabric": "fabric",
    "fabricspark": "spark",
    "glue": "spark",
    "impala": "hive",
    "mariadb": "mysql",
    "greenplum": "postgres",
    "alloydb": "postgres",
    "cratedb": "postgres",
    "starburst": "trino",
}

#: Bytes of one file read here; real ones are a few hundred.
_MAX_BYTES = 256 * 1024
_PROJECT_GLOBS = ("**/dbt_project.yml", "!**/dbt_packages/**", "!**/dbt_modules/**")
_PROFILES_GLOBS = ("**/profiles.yml", *_PROJECT_GLOBS[1:])
_SQLMESH_GLOBS = ("**/config.yaml", "**/config.yml", "**/config.py")
#: The files a dialect is read from: a pull request that changes none keeps it.
_SOURCE_GLOBS = ("**/dbt_project.yml", "**/profiles.yml", *_SQLMESH_GLOBS, *_PROJECT_GLOBS[1:])


@dataclass(frozen=True)
class Found:
    """A dialect and where it came from, for the report.

    ``by_project`` holds each dbt project's own dialect (folder, dialect) where
    the repository's projects name different ones (NYC Planning's
    data-engineering: Postgres products beside DuckDB ones): each project's
    types are read as its warehouse reads them (Postgres' ``int8`` is a
    ``bigint``, Spark's a ``tinyint``), and ``dialect`` applies elsewhere.
    """

    dialect: str
    source: str
    by_project: tuple[tuple[str, str], ...] = ()


def adapter_dialect(adapter: str) -> str | None:
    """The sqlglot dialect of a dbt adapter type, or ``None`` when sqlglot has none."""
    key = adapter.strip().lower()
    key = ADAPTER_DIALECTS.get(key, key)
    return key if key in DIALECTS else None


def templated(value: Any) -> bool:
    """A value the gate cannot know without rendering Jinja (or no text at all)."""
    return not isinstance(value, str) or "{{" in value or "{%" in value or not value.strip()


def profile_candidates(folder: str, below: Iterable[str]) -> list[str]:
    """Where the ``profiles.yml`` of the dbt project in ``folder`` may be, in dbt's
    order: the project folder, the working directory (the repository's root), then
    the files ``below`` the project, one of which CI passes as ``--profiles-dir``
    (``profile/profiles.yml`` in mattermost-data-warehouse); each once."""
    return list(dict.fromkeys([posixpath.join(folder, "profiles.yml"), "profiles.yml", *below]))


class _Docs:
    """The YAML of files read in one batch, each parsed once, on first use."""

    def __init__(
        self, repo: Repo, commit: str | None, paths: list[str], notices: list[str]
    ) -> None:
        self.data = repo.read_optional(commit, paths) if paths else {}
        self.notices = notices
        self.parsed: dict[str, Any] = {}

    def raw(self, path: str) -> bytes | None:
        data = self.data.get(path)
        if data is not None and len(data) > _MAX_BYTES:
            self.notices.append(f"{path} is over {_MAX_BYTES:,} bytes; its dialect was not read")
            return None
        return data

    def yaml(self, path: str) -> Any:
        if path not in self.parsed:
            data = self.raw(path)
            try:
                # dbt keeps a repeated key's last value; so does the dialect read
                self.parsed[path] = (
                    load_yaml(data, path, duplicate_keys=[]) if data is not None else None
                )
            except ContractError as exc:
                self.notices.append(f"the dialect was not read from {exc.path}: {exc.detail}")
                self.parsed[path] = None
        return self.parsed[path]


def _dbt_one(docs: _Docs, project_file: str, profiles: list[str]) -> Found | None:
    project = docs.yaml(project_file)
    if not isinstance(project, dict) or templated(project.get("profile")):
        return None
    name = project["profile"]
    folder = posixpath.dirname(project_file)
    below = [p for p in profiles if not folder or p.startswith(f"{folder}/")]
    for candidate in profile_candidates(folder, below):
        doc = docs.yaml(candidate)
        if isinstance(doc, dict) and isinstance(doc.get(name), dict):
            return _from_profile(doc[name], name, candidate, docs.notices)
    return None


def _from_profile(
    profile: dict[str, Any], name: str, path: str, notices: list[str]
) -> Found | None:
    outputs = profile.get("outputs")
    if not isinstance(outputs, dict) or not outputs:
        return None
    target = profile.get("target")
    types: dict[Any, str] = {
        out: str(o.get("type"))
        for out, o in outputs.items()
        if isinstance(o, dict) and not templated(o.get("type"))
    }
    if not templated(target) and target in types:
        adapter, said = types[target], f"target '{target}'"
    elif len(set(types.values())) == 1 and len(types) == len(outputs):
        adapter = next(iter(types.values()))
        said = "every target"
    else:
        notices.append(
            f"{path}: profile '{name}' has outputs of several types and its target "
            "names none of them as plain text; set 'dialect:' in the config"
        )
        return None
    dialect = adapter_dialect(adapter)
    if dialect is None:
        notices.append(f"{path}: dbt adapter type '{adapter}' has no sqlglot dialect")
        return None
    return Found(dialect, f"{path}: profile '{name}', {said}, type {adapter}")


def _sqlmesh_py(text: str) -> str | None:
    """``dialect=`` of a ``ModelDefaultsConfig(...)`` call (or a ``model_defaults`` dict)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        for keyword in node.keywords:
            value = keyword.value
            literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
            if called == "ModelDefaultsConfig" and keyword.arg == "dialect" and literal:
                return value.value  # type: ignore[attr-defined]
            if keyword.arg == "model_defaults" and isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "dialect"
                        and isinstance(item, ast.Constant)
                        and isinstance(item.value, str)
                    ):
                        return item.value
    return None


def _sqlmesh_one(docs: _Docs, path: str) -> Found | None:
    if path.endswith(".py"):
        data = docs.raw(path)
        said = _sqlmesh_py(data.decode("utf-8", "replace")) if data is not None else None
    else:
        doc = docs.yaml(path)
        defaults = doc.get("model_defaults") if isinstance(doc, dict) else None
        said = defaults.get("dialect") if isinstance(defaults, dict) else None
    if templated(said):
        return None
    # SQLMesh accepts dialect settings after a comma: "snowflake,normalization_strategy=..."
    name = str(said).split(",")[0].strip().lower()
    if name not in DIALECTS:
        docs.notices.append(f"{path}: SQLMesh dialect '{said}' is not a sqlglot dialect")
        return None
    return Found(name, f"{path}: SQLMesh model_defaults dialect")


def _agree(found: Iterable[Found], what: str, notices: list[str]) -> Found | None:
    found = list(found)
    dialects = sorted({f.dialect for f in found})
    if len(dialects) == 1:
        return found[0]
    if dialects:
        shown = "; ".join(f"{f.source} -> {f.dialect}" for f in found)
        notices.append(
            f"{what} name different dialects ({shown}); set 'dialect:' in the config to choose"
        )
    return None


def detect(repo: Repo, commit: str | None, notices: list[str]) -> Found | None:
    """The dialect the repository's dbt profiles, else SQLMesh config, declare at ``commit``
    (``None``: the working tree).

    A file that cannot be listed (a ``profiles.yml`` symlinked to ``~/.dbt``,
    outside the repository) is a notice: the dialect is a hint, not a contract.
    """
    try:
        return _detect(repo, commit, notices)
    except (UsageError, GitError) as exc:
        notices.append(f"the repository's dialect was not read: {exc}")
        return None


#: The file names the globs above end with: one tree walk tells where they are.
_NAMES = ("dbt_project.yml", "profiles.yml", "config.yaml", "config.yml", "config.py")
_VENDORED = frozenset({"dbt_packages", "dbt_modules"})  # the globs' exclusions


def _listed(
    repo: Repo, commit: str | None, present: dict[str, str] | None, name: str, globs: Sequence[str]
) -> list[str]:
    """``sorted(repo.list_files(commit, globs))`` for ``globs`` = ``**/<name>`` minus the
    vendored folders, from ``present`` (``Repo.named``) when that says it all: a
    symlink among them is left to ``list_files`` (it follows, or refuses, links)."""
    if present is None:
        return sorted(repo.list_files(commit, globs))
    paths = [
        path
        for path, mode in present.items()
        if path.rpartition("/")[2] == name
        and mode != "160000"  # a submodule is no file (list_files drops it too)
        and _VENDORED.isdisjoint(path.split("/")[:-1])
    ]
    if any(present[path] == "120000" for path in paths):
        return sorted(repo.list_files(commit, globs))
    return sorted(paths)


def _detect(repo: Repo, commit: str | None, notices: list[str]) -> Found | None:
    # At a commit, one walk finds every file the dialect may be read from (~13 ms
    # of CPU at 10,000 files), instead of a listing per glob and a git grep (~30 ms).
    present = repo.named(commit, _NAMES) if commit is not None else None
    projects = _listed(repo, commit, present, "dbt_project.yml", _PROJECT_GLOBS)
    profiles = _listed(repo, commit, present, "profiles.yml", _PROFILES_GLOBS) if projects else []
    docs = _Docs(repo, commit, [*projects, *profiles], notices)
    per_project = {
        posixpath.dirname(p): found
        for p in projects
        if (found := _dbt_one(docs, p, profiles)) is not None
    }
    if len({f.dialect for f in per_project.values()}) > 1:
        return _each_project(per_project, _sqlmesh(repo, commit, present, notices))
    if per_project:
        return next(iter(per_project.values()))
    return _sqlmesh(repo, commit, present, notices)


def _sqlmesh(
    repo: Repo, commit: str | None, present: dict[str, str] | None, notices: list[str]
) -> Found | None:
    if present is not None and not any(p.rpartition("/")[2] in _NAMES[2:] for p in present):
        return None  # no config.yaml/.yml/.py at all: git grep would find none
    configs = sorted(repo.files_containing(commit, _SQLMESH_GLOBS, ["model_defaults"]))
    docs = _Docs(repo, commit, configs, notices)
    return _agree(
        (f for p in configs if (f := _sqlmesh_one(docs, p)) is not None),
        "the SQLMesh configs",
        notices,
    )


def _each_project(per_project: dict[str, Found], elsewhere: Found | None) -> Found:
    """Projects on different warehouses: each read in its own dialect, ``elsewhere``
    (the SQLMesh config's, else the default) outside them."""
    counts: dict[str, int] = {}
    for found in per_project.values():
        counts[found.dialect] = counts.get(found.dialect, 0) + 1
    shown = ", ".join(f"{d} for {n}" for d, n in sorted(counts.items()))
    dialect, source = (
        (elsewhere.dialect, elsewhere.source) if elsewhere else ("spark", "the default")
    )
    return Found(
        dialect,
        f"{source}; each dbt project's own profile in its folder: {shown}",
        tuple(sorted((root, found.dialect) for root, found in per_project.items())),
    )


def project_dialect(path: str, found: Found | None) -> str | None:
    """The own dialect of the innermost dbt project in ``found`` holding ``path``;
    ``None`` when none does (or ``found`` has one dialect for all): the run's applies."""
    if found is None or not found.by_project:
        return None
    best = max(
        (
            (root, dialect)
            for root, dialect in found.by_project
            if not root or path.startswith(f"{root}/")
        ),
        key=lambda pair: len(pair[0]),
        default=None,
    )
    return None if best is None else best[1]


def changed_at_head(repo: Repo, base: str, head: str | None, at_base: Found | None) -> Found | None:
    """What HEAD declares, when the pull request changes it (and it differs from the base's).

    The base side's dialect applies; this names the change a reviewer should see.
    One ``git diff`` when the PR touches no file the dialect is read from.
    """
    try:
        if not repo.changed(base, head, _SOURCE_GLOBS):
            return None
        found = _detect(repo, head, [])
    except (UsageError, GitError):
        return None
    if found is None or (
        at_base is not None
        and (found.dialect, found.by_project) == (at_base.dialect, at_base.by_project)
    ):
        return None
    return found
