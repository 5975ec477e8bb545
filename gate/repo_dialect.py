"""The SQL dialect a repository declares: its dbt profile's adapter, or SQLMesh's default.

``numeric -> numeric(18,2)`` is a widening in Spark (``DECIMAL(10,0)``) and a
narrowing in DuckDB (``DECIMAL(18,3)``), Snowflake and Postgres, so a repository
on DuckDB must not be graded as Spark silently. When neither ``--dialect`` nor
the config's ``dialect:`` says, the gate reads what the repository already
tells its own tools, as those tools read it:

- dbt: ``dbt_project.yml`` names a ``profile``; ``profiles.yml`` beside it (dbt
  looks in the project directory since 1.3) or at the repository root holds
  that profile's ``target`` and its ``outputs``; the target's ``type`` is the
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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gate.git_tree import Repo
from gate.model import ContractError
from gate.types import DIALECTS
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
_SQLMESH_GLOBS = ("**/config.yaml", "**/config.yml", "**/config.py")


@dataclass(frozen=True)
class Found:
    """A dialect and where it came from, for the report."""

    dialect: str
    source: str


def adapter_dialect(adapter: str) -> str | None:
    """The sqlglot dialect of a dbt adapter type, or ``None`` when sqlglot has none."""
    key = adapter.strip().lower()
    key = ADAPTER_DIALECTS.get(key, key)
    return key if key in DIALECTS else None


def _templated(value: Any) -> bool:
    return not isinstance(value, str) or "{{" in value or "{%" in value or not value.strip()


def _read_yaml(repo: Repo, commit: str, path: str, notices: list[str]) -> Any:
    data = repo.read_file(commit, path)
    if data is None:
        return None
    if len(data) > _MAX_BYTES:
        notices.append(f"{path} is over {_MAX_BYTES:,} bytes; its dialect was not read")
        return None
    try:
        return load_yaml(data, path)
    except ContractError as exc:
        notices.append(f"the dialect was not read from {exc.path}: {exc.detail}")
        return None


def _dbt_one(repo: Repo, commit: str, project_file: str, notices: list[str]) -> Found | None:
    project = _read_yaml(repo, commit, project_file, notices)
    if not isinstance(project, dict) or _templated(project.get("profile")):
        return None
    name = project["profile"]
    folder = posixpath.dirname(project_file)
    for candidate in dict.fromkeys([posixpath.join(folder, "profiles.yml"), "profiles.yml"]):
        profiles = _read_yaml(repo, commit, candidate, notices)
        if isinstance(profiles, dict) and isinstance(profiles.get(name), dict):
            return _from_profile(profiles[name], name, candidate, notices)
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
        if isinstance(o, dict) and not _templated(o.get("type"))
    }
    if not _templated(target) and target in types:
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


def _sqlmesh_one(repo: Repo, commit: str, path: str, notices: list[str]) -> Found | None:
    if path.endswith(".py"):
        data = repo.read_file(commit, path) or b""
        if len(data) > _MAX_BYTES:
            return None
        said = _sqlmesh_py(data.decode("utf-8", "replace"))
    else:
        doc = _read_yaml(repo, commit, path, notices)
        defaults = doc.get("model_defaults") if isinstance(doc, dict) else None
        said = defaults.get("dialect") if isinstance(defaults, dict) else None
    if _templated(said):
        return None
    # SQLMesh accepts dialect settings after a comma: "snowflake,normalization_strategy=..."
    name = str(said).split(",")[0].strip().lower()
    if name not in DIALECTS:
        notices.append(f"{path}: SQLMesh dialect '{said}' is not a sqlglot dialect")
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


def detect(repo: Repo, commit: str, notices: list[str]) -> Found | None:
    """The dialect the repository's dbt profiles, else SQLMesh config, declare at ``commit``."""
    projects = sorted(repo.list_files(commit, _PROJECT_GLOBS))
    dbt = _agree(
        (f for p in projects if (f := _dbt_one(repo, commit, p, notices)) is not None),
        "the dbt profiles",
        notices,
    )
    if dbt is not None:
        return dbt
    configs = repo.files_containing(commit, _SQLMESH_GLOBS, ["model_defaults"])
    return _agree(
        (f for p in sorted(configs) if (f := _sqlmesh_one(repo, commit, p, notices)) is not None),
        "the SQLMesh configs",
        notices,
    )
