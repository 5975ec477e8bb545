"""The database a dbt project's profile targets, as its ``profiles.yml`` says it.

dbt's default ``generate_database_name`` builds a model without a ``database``
config into the target's database. A model that now sets ``database: analytics``
explicitly stays where it was when the target's database *is* ``analytics``; the
gate can only tell when the repository holds that profile. It is looked up as
dbt and the dialect detection (gate/repo_dialect.py) look: the ``profile`` that
``dbt_project.yml`` names, in ``profiles.yml`` in the project folder, then at the
repository root, then in a folder below the project (CI's ``--profiles-dir``);
several files of the profile that name different databases leave it unknown.

Only an unambiguous answer counts: the profile's ``target`` output sets a literal
database (``database``, Postgres/Redshift ``dbname``, BigQuery ``project``,
Databricks ``catalog``) and no other output of the profile names another one (CI
may pass ``--target``). A Jinja value (``{{ env_var('DBT_DATABASE') }}``) is
unknown: the gate renders no Jinja. Read from the **base** side by the caller, so
a pull request cannot make its own move look like a restatement by editing
``profiles.yml``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from gate.dbt.projects import literal
from gate.git import Repo
from gate.model import ContractError, GitError, UsageError
from gate.repo_dialect import profile_candidates, templated
from gate.yaml_load import load_yaml

#: Output keys that name the target's database, by adapter (the first present counts).
DATABASE_KEYS = ("database", "dbname", "project", "catalog")
#: Bytes of one file read here; real ones are a few hundred.
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class TargetDatabase:
    """The target's database (``None``: unknown) and where it came from, or why it is unknown."""

    value: str | None
    source: str


def _yaml(repo: Repo, commit: str | None, paths: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, data in repo.read_optional(commit, paths).items():
        if data is None or len(data) > _MAX_BYTES:
            continue
        try:
            out[path] = load_yaml(data, path, duplicate_keys=[])  # dbt keeps the last
        except ContractError:
            continue  # unreadable here: the database stays unknown
    return out


def target_database(repo: Repo, commit: str | None, root: str) -> TargetDatabase:
    """The database the profile of the project in folder ``root`` targets, at ``commit``."""
    try:
        return _target_database(repo, commit, root)
    except (UsageError, GitError) as exc:
        return TargetDatabase(None, f"its profiles.yml was not read: {exc}")


def _target_database(repo: Repo, commit: str | None, root: str) -> TargetDatabase:
    project_file = posixpath.join(root, "dbt_project.yml")
    project = _yaml(repo, commit, [project_file]).get(project_file)
    name = project.get("profile") if isinstance(project, dict) else None
    if templated(name):
        return TargetDatabase(None, f"{project_file} names no profile as plain text")
    below = sorted(
        repo.list_files(
            commit,
            (
                f"{literal(root)}/**/profiles.yml" if root else "**/profiles.yml",
                "!**/dbt_packages/**",
                "!**/dbt_modules/**",
            ),
        )
    )
    candidates = profile_candidates(root, below)
    docs = _yaml(repo, commit, candidates)
    found = [
        _from_profile(doc[name], str(name), path)
        for path in candidates
        if isinstance(doc := docs.get(path), dict) and isinstance(doc.get(name), dict)
    ]
    if not found:
        return TargetDatabase(None, f"the repository holds no profiles.yml with profile '{name}'")
    # Several files of the profile (CI passes --profiles-dir): only one answer counts.
    if len({f.value for f in found}) > 1:
        said = "; ".join(f"{f.source}: {f.value or 'unknown'}" for f in found)
        return TargetDatabase(None, f"profiles.yml files disagree ({said})")
    return found[0]


def _database(output: Any) -> Any:
    if not isinstance(output, dict):
        return None
    return next((output[key] for key in DATABASE_KEYS if output.get(key) is not None), None)


def _from_profile(profile: dict[str, Any], name: str, path: str) -> TargetDatabase:
    outputs = profile.get("outputs")
    target = profile.get("target")
    where = f"{path}, profile '{name}'"
    if not isinstance(outputs, dict) or templated(target) or target not in outputs:
        return TargetDatabase(None, f"{where} names no target output as plain text")
    said = _database(outputs[target])
    if said is None:
        return TargetDatabase(None, f"{where}: target '{target}' sets no database")
    if templated(said) or isinstance(said, bool) or not isinstance(said, (str, int)):
        return TargetDatabase(
            None,
            f"{where}: target '{target}' sets database '{said}', which the gate does not render",
        )
    value = str(said).strip()
    others = sorted(
        str(out)
        for out, output in outputs.items()
        if out != target and (db := _database(output)) is not None and str(db).strip() != value
    )
    if others:
        return TargetDatabase(
            None,
            f"{where}: outputs {', '.join(others)} name another database than target "
            f"'{target}' ('{value}'), and CI may pass --target",
        )
    return TargetDatabase(value, f"{where}, target '{target}'")
