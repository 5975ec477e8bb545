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
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from gate.formats.dbt_project import PROJECT_FILE, Project, is_project_file, parse_project
from gate.git_tree import FileChange, Repo
from gate.model import ContractError

#: What dbt reads as properties files, wherever a project puts its resource paths.
PROPERTY_GLOBS: tuple[str, ...] = ("**/*.yml", "**/*.yaml")
_MODEL_FILES = ("sql", "py")


@dataclass(frozen=True)
class Entry:
    """One file to compare and the dbt project each side of it belongs to."""

    change: FileChange
    base: Project | None
    head: Project | None


def _folders(path: str) -> list[str]:
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


def _negations(globs: Sequence[str]) -> list[str]:
    """The user's exclusions (``!legacy/**``) apply to discovered files too."""
    return [g for g in globs if g.startswith("!")]


class ProjectIndex:
    """The dbt projects at one side (a commit, or the working tree when ``None``)."""

    def __init__(self, repo: Repo, commit: str | None, side: str) -> None:
        self.repo = repo
        self.commit = commit
        self.side = side
        self._at: dict[str, Project | None] = {}

    def project_in(self, folder: str) -> Project | None:
        """The project whose ``dbt_project.yml`` sits in ``folder``, if any."""
        self._load([folder])
        return self._at[folder]

    def locate(self, paths: Iterable[str]) -> dict[str, Project | None]:
        """path -> the project that reads it as a properties file (``None``: not dbt's)."""
        paths = list(paths)
        self._load([f for path in paths for f in _folders(path)])
        out: dict[str, Project | None] = {}
        for path in paths:
            owner = next((p for f in _folders(path) if (p := self._at[f]) is not None), None)
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
                if self.side == "base":
                    raise ContractError(
                        exc.path, f"{exc.detail} (in the base version)", exc.line
                    ) from None
                raise
            if project.folder_configs:
                project = replace(project, sql_folders=self._model_folders(project))
            self._at[folder] = project

    def _model_folders(self, project: Project) -> dict[str, tuple[str, ...]]:
        """Model file stem -> folders below its model path (names only, no blob read).

        A stem found in two folders is left out: the properties file's folder is
        then the best evidence left.
        """
        globs = [
            f"{mp}/**/*.{ext}" if mp else f"**/*.{ext}"
            for mp in project.model_paths
            for ext in _MODEL_FILES
        ]
        seen: dict[str, tuple[str, ...] | None] = {}
        for path in self.repo.list_files(self.commit, globs):
            stem = posixpath.splitext(posixpath.basename(path))[0]
            mp = next(m for m in project.model_paths if not m or path.startswith(f"{m}/"))
            rel = path[len(mp) + 1 :] if mp else path
            folders = tuple(f for f in posixpath.dirname(rel).split("/") if f)
            seen[stem] = folders if stem not in seen else None
        return {stem: folders for stem, folders in seen.items() if folders is not None}


def _merge(
    from_globs: Sequence[FileChange], from_dbt: Sequence[FileChange]
) -> list[tuple[FileChange, bool]]:
    """Glob-matched changes as they are, plus the dbt candidates they do not cover.

    A candidate that shares one side with a glob-matched change (git paired the
    files differently in the two listings) keeps only its other side.
    """
    covered = {p for c in from_globs for p in (c.old_path, c.new_path) if p}
    out = [(c, True) for c in from_globs]
    for c in from_dbt:
        old = c.old_path if c.old_path and c.old_path not in covered else None
        new = c.new_path if c.new_path and c.new_path not in covered else None
        if old and new:
            out.append((c, False))
        elif old:
            out.append((FileChange("D", old, None, c.old_blob, None), False))
        elif new:
            out.append((FileChange("A", None, new, None, c.new_blob), False))
    return out


def _changed_projects(
    changes: Sequence[FileChange], base: ProjectIndex, head: ProjectIndex
) -> list[str]:
    """Folders of projects whose ``dbt_project.yml`` changed in a way that matters."""
    folders: list[str] = []
    for change in changes:
        old = change.old_path if change.old_path and is_project_file(change.old_path) else None
        new = change.new_path if change.new_path and is_project_file(change.new_path) else None
        if not old and not new:
            continue
        before = base.project_in(posixpath.dirname(old)) if old else None
        after = head.project_in(posixpath.dirname(new)) if new else None
        if before != after:
            folders.extend(posixpath.dirname(p) for p in (old, new) if p)
    return list(dict.fromkeys(folders))


def _whole_projects(
    repo: Repo,
    base: str,
    head: str | None,
    folders: Sequence[str],
    negations: Sequence[str],
    known: set[str],
) -> list[FileChange]:
    """Every YAML file under the given project folders, both sides, as changes."""
    globs = [
        f"{folder}/{glob}" if folder else glob for folder in folders for glob in PROPERTY_GLOBS
    ]
    old = repo.list_files(base, [*globs, *negations])
    new = repo.list_files(head, [*globs, *negations])
    out: list[FileChange] = []
    for path in sorted(set(old) | set(new)):
        if path in known:
            continue
        if path in old and path in new:
            out.append(FileChange("M", path, path, old[path], new[path]))
        elif path in old:
            out.append(FileChange("D", path, None, old[path], None))
        else:
            out.append(FileChange("A", None, path, None, new[path]))
    return out


def collect(
    repo: Repo,
    base: str,
    head: str | None,
    globs: Sequence[str],
    from_globs: Sequence[FileChange],
) -> list[Entry]:
    """The files to compare: the glob-matched changes and the changed dbt
    properties files, each side with the dbt project it belongs to."""
    negations = _negations(globs)
    from_dbt = repo.changed(base, head, [*PROPERTY_GLOBS, *negations])
    base_index, head_index = ProjectIndex(repo, base, "base"), ProjectIndex(repo, head, "head")
    merged = _merge(from_globs, from_dbt)
    refresh = _changed_projects([c for c, _g in merged], base_index, head_index)
    if refresh:
        known = {p for c, _g in merged for p in (c.old_path, c.new_path) if p}
        extra = _whole_projects(repo, base, head, refresh, negations, known)
        merged.extend((c, False) for c in extra)
    base_of = base_index.locate(c.old_path for c, _g in merged if c.old_path)
    head_of = head_index.locate(c.new_path for c, _g in merged if c.new_path)
    entries: list[Entry] = []
    for change, by_glob in merged:
        before = base_of.get(change.old_path) if change.old_path else None
        after = head_of.get(change.new_path) if change.new_path else None
        if not by_glob:
            change = _keep_dbt_sides(change, before is not None, after is not None)
            if change is None:
                continue
        entries.append(Entry(change, before, after))
    return entries


def _keep_dbt_sides(change: FileChange, old: bool, new: bool) -> FileChange | None:
    """A discovered change, cut down to the sides where the file is dbt's."""
    if old and new:
        return change
    if old and change.old_path:
        return FileChange("D", change.old_path, None, change.old_blob, None)
    if new and change.new_path:
        return FileChange("A", None, change.new_path, None, change.new_blob)
    return None


def is_pure_move(entry: Entry) -> bool:
    """A moved file with the same content and the same dbt context cannot change
    any dataset; with folder-level configs the folder itself is context."""
    c = entry.change
    if c.status != "R" or c.old_blob != c.new_blob or entry.base != entry.head:
        return False
    project = entry.base
    if project is None or not project.folder_configs:
        return True
    return posixpath.dirname(c.old_path or "") == posixpath.dirname(c.new_path or "")


def property_files(
    repo: Repo, head: str | None, globs: Sequence[str]
) -> dict[str, tuple[str | None, Project]]:
    """Every dbt properties file at one side: path -> (blob, project).

    Walks the repository for ``dbt_project.yml`` files, so only the checks that
    look at every contract use it (the full smoke test, an empty diff).
    """
    negations = _negations(globs)
    projects = repo.list_files(head, [f"**/{PROJECT_FILE}", *negations])
    if not projects:
        return {}
    index = ProjectIndex(repo, head, "head")
    folders = [posixpath.dirname(p) for p in projects]
    sources = [
        f"{source}/{glob}" if source else glob
        for folder in folders
        if (project := index.project_in(folder)) is not None
        for source in project.source_paths
        for glob in PROPERTY_GLOBS
    ]
    files = repo.list_files(head, [*sources, *negations]) if sources else {}
    located = index.locate(files)
    return {p: (files[p], proj) for p, proj in located.items() if proj is not None}
