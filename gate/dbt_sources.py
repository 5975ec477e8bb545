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

A model file's own ``{{ config(contract=..., enabled=...) }}`` outranks both
(``gate.formats.dbt_sql``): the model files of the parsed dbt models are read
(found beside their properties file, else by name in the project), and a
changed model file whose config changed brings the properties files that name
the model into the comparison.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gate.formats.dbt_project import PROJECT_FILE, Project, is_project_file, parse_project
from gate.formats.dbt_sql import model_settings
from gate.git_tree import FileChange, Repo
from gate.model import ContractError, Dataset

#: What dbt reads as properties files, wherever a project puts its resource paths.
PROPERTY_GLOBS: tuple[str, ...] = ("**/*.yml", "**/*.yaml")
_MODEL_FILES = ("sql", "py")
MODEL_GLOBS: tuple[str, ...] = tuple(f"**/*.{ext}" for ext in _MODEL_FILES)


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


def _literal(folder: str) -> str:
    """A folder name inside a git glob: ``[``, ``*``, ``?`` and ``\\`` match themselves."""
    return re.sub(r"([\\*?\[])", r"\\\1", folder)


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
                project = replace(
                    project, sql_folders=model_folders(self.repo, self.commit, project)
                )
            self._at[folder] = project

    def owner(self, path: str) -> Project | None:
        """The project whose model paths hold the model file ``path``."""
        self._load(_folders(path))
        project = next((p for f in _folders(path) if (p := self._at[f]) is not None), None)
        if project is None or _model_path(project, path) is None:
            return None
        return project


def _model_path(project: Project, path: str) -> str | None:
    return next(
        (
            m
            for m in sorted(project.model_paths, key=len, reverse=True)
            if not m or path.startswith(f"{m}/")
        ),
        None,
    )


def model_folders(repo: Repo, commit: str | None, project: Project) -> dict[str, tuple[str, ...]]:
    """Model file stem -> folders below its model path (names only, no blob read).

    A stem found in two folders is left out: the properties file's folder is
    then the best evidence left.
    """
    globs = [
        f"{_literal(mp)}/**/*.{ext}" if mp else f"**/*.{ext}"
        for mp in project.model_paths
        for ext in _MODEL_FILES
    ]
    seen: dict[str, tuple[str, ...] | None] = {}
    for path in repo.list_files(commit, globs):
        mp = _model_path(project, path)
        if mp is None:
            continue
        stem = posixpath.splitext(posixpath.basename(path))[0]
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
        f"{_literal(folder)}/{glob}" if folder else glob
        for folder in folders
        for glob in PROPERTY_GLOBS
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
    listed = repo.changed(base, head, [*PROPERTY_GLOBS, *MODEL_GLOBS, *negations])
    from_dbt = [c for c in listed if not _is_model_file(c.new_path or c.old_path or "")]
    model_files = [c for c in listed if _is_model_file(c.new_path or c.old_path or "")]
    base_index, head_index = ProjectIndex(repo, base, "base"), ProjectIndex(repo, head, "head")
    merged = _merge(from_globs, from_dbt)
    refresh = _changed_projects([c for c, _g in merged], base_index, head_index)
    known = {p for c, _g in merged for p in (c.old_path, c.new_path) if p}
    if refresh:
        extra = _whole_projects(repo, base, head, refresh, negations, known)
        merged.extend((c, False) for c in extra)
        known.update(p for c in extra for p in (c.old_path, c.new_path) if p)
    if model_files:
        extra = _properties_of_changed_models(
            repo, (base, head), (base_index, head_index), model_files, negations, known
        )
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


def _is_model_file(path: str) -> bool:
    return posixpath.splitext(path)[1] in (".sql", ".py")


def _read(repo: Repo, blob: str | None, path: str | None, blobs: Mapping[str, bytes]) -> bytes:
    if path is None:
        return b""
    return blobs[blob] if blob else repo.read_worktree(path)


def _properties_of_changed_models(
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
        globs = [f"{_literal(root)}/{g}" if root else g for g in PROPERTY_GLOBS] + list(negations)
        paths = {
            p
            for commit in commits
            for p in repo.files_containing(commit, globs, sorted(wanted))
            if p not in known
        }
        old = repo.existing(commits[0], sorted(paths))
        new = repo.existing(commits[1], sorted(paths))
        for path in sorted(paths):
            known.add(path)
            if path in old and path in new:
                out.append(FileChange("M", path, path, old[path], new[path]))
            elif path in old:
                out.append(FileChange("D", path, None, old[path], None))
            elif path in new:
                out.append(FileChange("A", None, path, None, new[path]))
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
            for ext in _MODEL_FILES
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
                for ext in _MODEL_FILES
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
        f"{_literal(source)}/{glob}" if source else glob
        for folder in folders
        if (project := index.project_in(folder)) is not None
        for source in project.source_paths
        for glob in PROPERTY_GLOBS
    ]
    files = repo.list_files(head, [*sources, *negations]) if sources else {}
    located = index.locate(files)
    return {p: (files[p], proj) for p, proj in located.items() if proj is not None}
