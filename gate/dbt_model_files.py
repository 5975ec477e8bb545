"""dbt model files (``.sql``, ``.py``) and their own ``config()`` calls.

dbt ranks a model file's ``{{ config(contract=..., enabled=...) }}`` above its
properties file and ``dbt_project.yml`` (``gate.formats.dbt_sql`` reads it as
text). The model files of the dbt models a run compares are read (found beside
their properties file, else by name in the project's model paths), and a
changed model file whose settings changed brings the properties files that
name its model into the comparison. Other model files are never read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gate.dbt_sources import MODEL_FILES, PROPERTY_GLOBS, literal, model_folders
from gate.formats.dbt_project import Project
from gate.formats.dbt_sql import model_settings
from gate.git_tree import FileChange, Repo
from gate.model import Dataset

if TYPE_CHECKING:
    from gate.dbt_sources import ProjectIndex


def is_model_file(path: str) -> bool:
    return posixpath.splitext(path)[1] in (".sql", ".py")


def _read(repo: Repo, blob: str | None, path: str | None, blobs: Mapping[str, bytes]) -> bytes:
    if path is None:
        return b""
    return blobs[blob] if blob else repo.read_worktree(path)


def properties_of_changed_models(
    repo: Repo,
    commits: tuple[str, str | None],
    indexes: tuple[ProjectIndex, ProjectIndex],
    changes: Sequence[FileChange],
    negations: Sequence[str],
    known: set[str],
) -> list[FileChange]:
    """Properties files whose models' own ``config()`` (or, with folder configs,
    folder) changed in a model file, so that the unchanged properties file is
    compared again. Only changed model files of dbt projects are read."""
    relevant: list[tuple[FileChange, Project | None, Project | None]] = []
    for change in changes:
        before = indexes[0].owner(change.old_path) if change.old_path else None
        after = indexes[1].owner(change.new_path) if change.new_path else None
        if before is not None or after is not None:
            relevant.append((change, before, after))
    if not relevant:
        return []
    blobs = repo.read_blobs([b for c, _b, _a in relevant for b in (c.old_blob, c.new_blob) if b])
    names: dict[str, set[str]] = {}  # project folder -> model names to look for
    for change, before, after in relevant:
        old = model_settings(_read(repo, change.old_blob, change.old_path, blobs))
        new = model_settings(_read(repo, change.new_blob, change.new_path, blobs))
        moved = posixpath.dirname(change.old_path or "") != posixpath.dirname(change.new_path or "")
        folders_matter = any(p is not None and p.folder_configs for p in (before, after))
        if old == new and not (moved and folders_matter):
            continue
        for project, path in ((before, change.old_path), (after, change.new_path)):
            if project is not None and path:
                stem = posixpath.splitext(posixpath.basename(path))[0]
                model = stem.rsplit("_v", 1)[0] if "_v" in stem else stem
                names.setdefault(project.root, set()).update({stem, model})
    out: list[FileChange] = []
    for root, wanted in names.items():
        globs = [f"{literal(root)}/{g}" if root else g for g in PROPERTY_GLOBS] + list(negations)
        paths = {
            p
            for commit in commits
            for p in repo.files_containing(commit, globs, sorted(wanted))
            if p not in known
        }
        old_blobs = repo.existing(commits[0], sorted(paths))
        new_blobs = repo.existing(commits[1], sorted(paths))
        for path in sorted(paths):
            known.add(path)
            if path in old_blobs and path in new_blobs:
                out.append(FileChange("M", path, path, old_blobs[path], new_blobs[path]))
            elif path in old_blobs:
                out.append(FileChange("D", path, None, old_blobs[path], None))
            elif path in new_blobs:
                out.append(FileChange("A", None, path, None, new_blobs[path]))
    return out


def apply_model_configs(
    repo: Repo,
    commit: str | None,
    datasets: Sequence[Dataset],
    projects: Mapping[str, Project | None],
) -> list[Dataset]:
    """Let each dbt model's own ``config()`` call override what the properties
    file and ``dbt_project.yml`` said, as dbt ranks it.

    ``projects`` maps a properties file's path to its project at this side. A
    model file is looked for beside its properties file, then by name in the
    project's model paths (a listing of names, made only on a miss).
    """
    wanted: list[tuple[int, str, Project]] = []
    for index, dataset in enumerate(datasets):
        project = projects.get(dataset.path)
        if project is None or dataset.format != "dbt":
            continue
        name, dot_v, label = dataset.id.rpartition(".v")
        stem = f"{name}_v{label}" if dot_v and name else dataset.id
        wanted.append((index, stem, project))
    if not wanted:
        return list(datasets)
    beside = {
        i: [
            posixpath.join(posixpath.dirname(datasets[i].path), f"{stem}.{ext}")
            for ext in MODEL_FILES
        ]
        for i, stem, _p in wanted
    }
    found = repo.existing(commit, [p for paths in beside.values() for p in paths])
    missing = [(i, stem, p) for i, stem, p in wanted if not any(c in found for c in beside[i])]
    folders: dict[str, Mapping[str, tuple[str, ...]]] = {}
    elsewhere: dict[int, list[str]] = {}
    for i, stem, project in missing:
        if project.root not in folders:
            folders[project.root] = project.sql_folders or model_folders(repo, commit, project)
        where = folders[project.root].get(stem)
        if where is not None:
            elsewhere[i] = [
                posixpath.join(mp, *where, f"{stem}.{ext}")
                for mp in project.model_paths
                for ext in MODEL_FILES
            ]
    if elsewhere:
        found.update(repo.existing(commit, [p for paths in elsewhere.values() for p in paths]))
    files = {
        i: next((p for p in [*beside[i], *elsewhere.get(i, [])] if p in found), None)
        for i, _s, _p in wanted
    }
    blobs = repo.read_blobs([b for p in files.values() if p and (b := found[p])])
    out = list(datasets)
    for i, path in files.items():
        if path is None:
            continue
        enforced, enabled = model_settings(_read(repo, found[path], path, blobs))
        if enforced is not None or enabled is not None:
            out[i] = replace(
                out[i],
                enforced=out[i].enforced if enforced is None else enforced,
                enabled=out[i].enabled if enabled is None else enabled,
            )
    return out
