"""Which files a run compares, and the dbt project each side of them obeys.

The glob-matched changes come first, as they are; the changed YAML that lies
in a dbt project's resource paths is added (``gate.dbt.projects`` finds the
projects). Two kinds of change reach beyond the changed files:

- a ``dbt_project.yml`` whose paths or contract/enabled configs changed: every
  YAML file of that project is compared, both sides;
- a model file whose own ``config()`` changed, or that is gone with no file
  of its name added to the project (``gate.dbt.model_files``): the properties
  files that name the model are compared.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from gate.dbt.folder_links import refuse_folder_links
from gate.dbt.model_files import is_model_file, properties_of_changed_models
from gate.dbt.projects import MODEL_GLOBS, PROPERTY_GLOBS, ProjectIndex, exclusions, literal
from gate.formats.dbt.model_config import MAX_FILE_BYTES
from gate.formats.dbt.project import Project, is_project_file
from gate.git import FileChange, Repo


@dataclass(frozen=True)
class Entry:
    """One file to compare and the dbt project each side of it belongs to."""

    change: FileChange
    base: Project | None
    head: Project | None
    #: A model file of a model this file describes changed (deleted, renamed,
    #: its ``config()`` edited): then even an unchanged move must be compared.
    model_file_changed: bool = False
    #: The PR changed this file (git lists it). ``False`` for a file compared only
    #: because its project's ``dbt_project.yml`` or a model file changed: a
    #: problem in it is not this PR's, so it never refuses the run.
    touched: bool = True


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
        f"{literal(folder)}/{glob}" if folder else glob
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
    base_index: ProjectIndex,
    head_index: ProjectIndex,
    globs: Sequence[str],
    from_globs: Sequence[FileChange],
    warnings: list[str] | None = None,
    model_file_bytes: int = MAX_FILE_BYTES,
) -> list[Entry]:
    """The files to compare: the glob-matched changes and the changed dbt
    properties files, each side with the dbt project it belongs to.

    Each index is the run's one for its side (its repository and commit are
    the side's); a ``dbt_project.yml`` unreadable at the base only adds to
    ``warnings``."""
    repo, head = head_index.repo, head_index.commit
    base = base_index.commit
    if base is None:
        raise ValueError("the base side of a comparison is a commit, never the working tree")
    negations = exclusions(globs)

    @functools.cache
    def links_alike() -> bool:
        """Every symlink of the repository the same at both sides, leading to the same
        object (a link inside a linked folder may lead anywhere). Asked once a run."""
        links = repo.symlinks(base)
        if head is None or links != repo.symlinks(head):
            return False
        return repo.resolved(base, links) == repo.resolved(head, links)

    def unchanged(folders: Sequence[str]) -> bool:
        """Whether dbt reads the same files in ``folders`` at both sides: each the same
        tree, and the links alike. The working tree has no ids to compare."""
        if head is None or not links_alike():
            return False
        before, after = repo.resolved(base, folders), repo.resolved(head, folders)
        return before == after and all(before[f][0] == "tree" for f in folders)

    for index in (base_index, head_index):
        refuse_folder_links(index, negations, unchanged)
    # Every changed yml/sql/py of the repository: a link among them that leads
    # nowhere is absent here, not an error (only contract globs refuse one).
    listed = repo.changed(
        base, head, [*PROPERTY_GLOBS, *MODEL_GLOBS, *negations], lenient_links=True
    )
    from_dbt = [c for c in listed if not is_model_file(c.new_path or c.old_path or "")]
    model_files = [c for c in listed if is_model_file(c.new_path or c.old_path or "")]
    merged = _merge(from_globs, from_dbt)
    refresh = _changed_projects([c for c, _g in merged], base_index, head_index)
    known = {p for c, _g in merged for p in (c.old_path, c.new_path) if p}
    implicated: set[str] = set()
    untouched: set[str] = set()
    if refresh:
        extra = _whole_projects(repo, base, head, refresh, negations, known)
        merged.extend((c, False) for c in extra)
        known.update(p for c in extra for p in (c.old_path, c.new_path) if p)
        untouched.update(c.new_path for c in extra if c.new_path and c.old_path == c.new_path)
    if model_files:
        extra = properties_of_changed_models(
            (base_index, head_index), model_files, negations, known, implicated, model_file_bytes
        )
        merged.extend((c, False) for c in extra)
        untouched.update(c.new_path for c in extra if c.new_path and c.old_path == c.new_path)
    base_of = base_index.locate(c.old_path for c, _g in merged if c.old_path)
    head_of = head_index.locate(c.new_path for c, _g in merged if c.new_path)
    if warnings is not None:
        warnings.extend(base_index.warnings)
    entries: list[Entry] = []
    for change, by_glob in merged:
        before = base_of.get(change.old_path) if change.old_path else None
        after = head_of.get(change.new_path) if change.new_path else None
        if not by_glob:
            kept = _keep_dbt_sides(change, before is not None, after is not None)
            if kept is None:
                continue
            change = kept
        implicated_here = bool({change.old_path, change.new_path} & implicated)
        entries.append(
            Entry(change, before, after, implicated_here, change.new_path not in untouched)
        )
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
    any dataset; with folder-level configs the folder itself is context, and the
    model files of its models are too (a deleted one removes the model)."""
    c = entry.change
    if entry.model_file_changed:
        return False
    if c.status != "R" or c.old_blob != c.new_blob or entry.base != entry.head:
        return False
    project = entry.base
    if project is None or not project.folder_configs:
        return True
    return posixpath.dirname(c.old_path or "") == posixpath.dirname(c.new_path or "")
