"""dbt projects as dbt itself sees them: which changed YAML files are dbt
properties files, and which ``dbt_project.yml`` each one obeys.

A YAML file belongs to the project of the nearest folder above it that holds a
``dbt_project.yml``, and is a properties file when it lies under one of that
project's resource paths (``model-paths`` and the others dbt reads properties
from). Projects are found from the changed files upwards, never by walking the
repository: one ``git diff`` lists the changed YAML, one batch lookup per side
asks which folders above them hold a ``dbt_project.yml``, and only those are
read. The cost grows with the changed files, with two exceptions that are
bounded by one project, not the repository:

- a ``dbt_project.yml`` whose paths or model configs changed can change which
  models are enforced in files that did not change, so every properties file
  of that project is compared (both sides, read in the same batch);
- folder-level configs (``+contract`` below the project level) place a model by
  its SQL file, so that project's model file *names* are listed (no blob read).

``gate.dbt.changes`` decides what to compare with this; ``gate.dbt.model_files``
reads the models' own ``config()`` calls.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gate.formats.dbt.project import PROJECT_FILE, Project, is_project_file, parse_project
from gate.git import Repo
from gate.model import ContractError
from gate.yaml_load import load_yaml

#: What dbt reads as properties files, wherever a project puts its resource paths.
PROPERTY_GLOBS: tuple[str, ...] = ("**/*.yml", "**/*.yaml")
MODEL_FILES = ("sql", "py")
MODEL_GLOBS: tuple[str, ...] = tuple(f"**/*.{ext}" for ext in MODEL_FILES)


def folders_above(path: str) -> list[str]:
    """Every folder above ``path``, nearest first, ending with the root ("")."""
    out: list[str] = []
    folder = posixpath.dirname(path)
    while True:
        out.append(folder)
        if not folder:
            return out
        folder = posixpath.dirname(folder)


def _project_file(folder: str) -> str:
    return posixpath.join(folder, PROJECT_FILE) if folder else PROJECT_FILE


def literal(folder: str) -> str:
    """A folder name inside a git glob: ``[``, ``*``, ``?`` and ``\\`` match themselves,
    and a leading ``!`` is no exclusion: ``!shop/**/*.yml`` took the project's own
    files out of every listing built from it, so such a folder is written
    ``./!shop`` (``pathspecs`` drops the ``.``; outside brackets git's wildmatch
    reads ``!`` as the character)."""
    escaped = re.sub(r"([\\*?\[])", r"\\\1", folder)
    return f"./{escaped}" if escaped.startswith("!") else escaped


def exclusions(globs: Sequence[str]) -> list[str]:
    """The user's exclusions (``!legacy/**``) apply to discovered files too."""
    return [g for g in globs if g.startswith("!")]


class ProjectIndex:
    """The dbt projects at one side (a commit, or the working tree when ``None``)."""

    def __init__(
        self, repo: Repo, commit: str | None, side: str, fallback: ProjectIndex | None = None
    ) -> None:
        self.repo = repo
        self.commit = commit
        self.side = side
        #: The HEAD index a base index falls back on for a ``dbt_project.yml``
        #: unreadable at the base: a PR that fixes it is not refused for it.
        self.fallback = fallback
        self.warnings: list[str] = []
        self._at: dict[str, Project | None] = {}
        self._groups: dict[str, Mapping[str, Any]] = {}

    def project_in(self, folder: str) -> Project | None:
        """The project whose ``dbt_project.yml`` sits in ``folder``, if any."""
        self._load([folder])
        return self._at[folder]

    def locate(self, paths: Iterable[str]) -> dict[str, Project | None]:
        """path -> the project that reads it as a properties file (``None``: not dbt's)."""
        paths = list(paths)
        self._load([f for path in paths for f in folders_above(path)])
        out: dict[str, Project | None] = {}
        for path in paths:
            owner = next((p for f in folders_above(path) if (p := self._at[f]) is not None), None)
            readable = owner is not None and not is_project_file(path)
            out[path] = owner if readable and owner.source_path_of(path) else None  # type: ignore[union-attr]
        return out

    def _load(self, folders: Iterable[str]) -> None:
        unknown = [f for f in dict.fromkeys(folders) if f not in self._at]
        if not unknown:
            return
        found = self.repo.existing(self.commit, [_project_file(f) for f in unknown])
        blobs = self.repo.read_blobs([sha for sha in found.values() if sha])
        for folder in unknown:
            path = _project_file(folder)
            if path not in found:
                self._at[folder] = None
                continue
            sha = found[path]
            data = blobs[sha] if sha else self.repo.read_worktree(path)
            try:
                project = parse_project(data, path)
            except ContractError as exc:
                if self.side != "base":
                    raise
                at_head = self.fallback.project_in(folder) if self.fallback else None
                if at_head is None:
                    raise ContractError(
                        exc.path, f"{exc.detail} (in the base version)", exc.line
                    ) from None
                where = f"{exc.path}:{exc.line}" if exc.line else exc.path
                self.warnings.append(
                    f"warning: the base version of {where} is unreadable ({exc.detail}); "
                    "the HEAD version describes the project on both sides"
                )
                self._at[folder] = at_head
                continue
            if project.folder_configs:
                project = replace(
                    project, sql_folders=model_folders(self.repo, self.commit, project)
                )
            self._at[folder] = project

    def owners(self, paths: Iterable[str]) -> dict[str, Project | None]:
        """path -> the project whose model paths hold it; one batch lookup for all."""
        paths = list(paths)
        self._load([f for path in paths for f in folders_above(path)])
        return {path: self.owner(path) for path in paths}

    def owner(self, path: str) -> Project | None:
        """The project whose model paths hold the model file ``path``."""
        self._load(folders_above(path))
        project = next((p for f in folders_above(path) if (p := self._at[f]) is not None), None)
        if project is None or model_path(project, path) is None:
            return None
        return project

    def groups(self, project: Project) -> Mapping[str, Any]:
        """The project's dbt groups, name -> ``owner``, from every properties file.

        dbt reads ``groups:`` from any properties file of the project (a
        central ``models/_groups.yml``, or beside the models), and a model
        names its group by name only. Read once per project and side: one
        ``git grep -F groups`` over the project's resource paths, then one
        batch read of the files it names. A group declared twice (dbt refuses
        the project) has no owner here, so an approval that needs it fails
        closed; an unreadable file declares nothing.
        """
        if project.root not in self._groups:
            self._groups[project.root] = _read_groups(self, project)
        return self._groups[project.root]


def _read_groups(index: ProjectIndex, project: Project) -> Mapping[str, Any]:
    globs = [
        f"{literal(source)}/{glob}" if source else glob
        for source in project.source_paths
        for glob in PROPERTY_GLOBS
    ]
    found = index.repo.files_containing(index.commit, globs, ["groups"])
    mine = [
        p
        for p, owner in index.locate(found).items()
        if owner is not None and owner.root == project.root
    ]
    owners: dict[str, Any] = {}
    twice: set[str] = set()
    for path, data in sorted(index.repo.read_optional(index.commit, mine).items()):
        try:
            doc = load_yaml(data, path, duplicate_keys=[]) if data is not None else None
        except ContractError:
            continue
        groups = doc.get("groups") if isinstance(doc, dict) else None
        for group in groups if isinstance(groups, list) else []:
            name = group.get("name") if isinstance(group, dict) else None
            if not isinstance(name, str):
                continue
            if name in owners and owners[name] != group.get("owner"):
                twice.add(name)
            owners.setdefault(name, group.get("owner"))
    return {name: owner for name, owner in owners.items() if name not in twice}


def model_path(project: Project, path: str) -> str | None:
    return next(
        (
            m
            for m in sorted(project.model_paths, key=len, reverse=True)
            if not m or path.startswith(f"{m}/")
        ),
        None,
    )


def model_folders(
    repo: Repo, commit: str | None, project: Project
) -> dict[str, tuple[str, ...] | None]:
    """Model file stem -> folders below its model path (names only, no blob read).

    A stem found in two folders maps to ``None``: the properties file's folder
    is then the best evidence left, and the model is not missing either.
    """
    globs = [
        f"{literal(mp)}/**/*.{ext}" if mp else f"**/*.{ext}"
        for mp in project.model_paths
        for ext in MODEL_FILES
    ]
    seen: dict[str, tuple[str, ...] | None] = {}
    for path in repo.list_files(commit, globs):
        mp = model_path(project, path)
        if mp is None:
            continue
        stem = posixpath.splitext(posixpath.basename(path))[0]
        rel = path[len(mp) + 1 :] if mp else path
        folders = tuple(f for f in posixpath.dirname(rel).split("/") if f)
        seen[stem] = folders if stem not in seen else None
    return seen


def property_files(
    index: ProjectIndex, globs: Sequence[str]
) -> dict[str, tuple[str | None, Project]]:
    """Every dbt properties file at the index's side: path -> (blob, project).

    Walks the repository for ``dbt_project.yml`` files, so only the checks that
    look at every contract use it (the full smoke test, an empty diff).
    """
    repo, head = index.repo, index.commit
    negations = exclusions(globs)
    projects = repo.list_files(head, [f"**/{PROJECT_FILE}", *negations])
    if not projects:
        return {}
    folders = [posixpath.dirname(p) for p in projects]
    sources = [
        f"{literal(source)}/{glob}" if source else glob
        for folder in folders
        if (project := index.project_in(folder)) is not None
        for source in project.source_paths
        for glob in PROPERTY_GLOBS
    ]
    files = repo.list_files(head, [*sources, *negations]) if sources else {}
    located = index.locate(files)
    return {p: (files[p], proj) for p, proj in located.items() if proj is not None}
