"""Which broken readers are dbt models that dbt does not build at HEAD (``enabled: false``).

A disabled dbt model is compiled by nothing: a read in it breaks no run, so it
is no ``consumer_broken`` (``gate.consumers.impact``). Asked only about the few
readers already found broken, never about every reader. ``enabled`` is resolved
as dbt resolves it: the model file's own ``config(enabled=...)`` over its
properties entry's ``config: {enabled: ...}`` over the ``+enabled`` of the
``dbt_project.yml`` levels its fqn walks (the model file's folder), default
``true``. Fail closed: a value the gate cannot evaluate (Jinja), a file it cannot
read, a name two entries hold, a versioned entry, all read as enabled, so the
reader stays broken. A reader outside a dbt project's model paths (plain SQL, a
notebook, a PySpark job) is never disabled here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from gate.dbt.projects import MODEL_FILES, PROPERTY_GLOBS, ProjectIndex, literal, model_path
from gate.formats.dbt.model_config import read_settings
from gate.formats.dbt.project import Project
from gate.formats.dbt.settings import enabled as entry_enabled
from gate.git import Repo, TooLarge
from gate.model import ContractError
from gate.yaml_load import YMap, load_yaml

#: A properties entry's verdict: ``None`` = says nothing, ``True`` = enabled or unknown.
_Said = bool | None
#: The one way YAML spells a string without its characters: a double-quoted escape
#: (``\x65``, ``\u0065``). An alias (``*n``) repeats an anchor spelled in the same file;
#: a folded line adds a space, which no model name holds.
_ESCAPE = "\\"


def readers_off(
    repo: Repo, commit: str | None, projects: ProjectIndex, max_bytes: int
) -> Callable[[Sequence[str]], set[str]]:
    """``disabled_readers`` for one side, for ``impact.explain`` to call on its broken readers."""
    return partial(disabled_readers, repo, commit, projects, max_bytes)


def disabled_readers(
    repo: Repo,
    commit: str | None,
    projects: ProjectIndex,
    max_bytes: int,
    paths: Sequence[str],
) -> set[str]:
    """The ``paths`` (reader files at ``commit``) that are dbt models dbt does not build."""
    models: dict[str, tuple[Project, str]] = {}  # path -> (project, model name)
    for path in dict.fromkeys(paths):
        if posixpath.splitext(path)[1][1:] not in MODEL_FILES:
            continue
        try:
            project = projects.owner(path)
        except ContractError:
            continue  # an unreadable project: nothing to vouch for
        if project is not None:
            models[path] = (project, posixpath.splitext(posixpath.basename(path))[0])
    if not models:
        return set()
    from_file = _file_settings(repo, commit, sorted(models), max_bytes)
    from_entries = _entry_settings(repo, commit, projects, models, from_file)
    out: set[str] = set()
    for path, (project, name) in models.items():
        said = from_file.get(path, True)
        if said is None:
            said = from_entries.get(path)
        if said is None:
            said = project.resolve((project.name, *_folders(project, path), name))[1]
        if said is False:
            out.add(path)
    return out


def _folders(project: Project, path: str) -> tuple[str, ...]:
    """The folders between the model path and the model file: its fqn's middle."""
    root = model_path(project, path) or ""
    inner = path[len(root) + 1 :] if root else path
    return tuple(f for f in posixpath.dirname(inner).split("/") if f)


def _file_settings(
    repo: Repo, commit: str | None, paths: Sequence[str], max_bytes: int
) -> dict[str, _Said]:
    """Each model file's own ``config(enabled=...)``; a file it cannot read: ``True``."""
    found = repo.existing(commit, list(paths))
    blobs = repo.read_blobs([b for b in found.values() if b])
    out: dict[str, _Said] = {}
    for path in paths:
        if path not in found:
            out[path] = True
            continue
        blob = found[path]
        try:
            source = blobs[blob] if blob else repo.read_worktree(path, max_bytes)
            said = read_settings(
                source, python=path.endswith(".py"), path=path, max_bytes=max_bytes
            )
        except (ContractError, TooLarge, OSError, KeyError):
            out[path] = True
            continue
        out[path] = said.enabled  # an unevaluable value already reads as True
    return out


def _entry_settings(
    repo: Repo,
    commit: str | None,
    projects: ProjectIndex,
    models: dict[str, tuple[Project, str]],
    from_file: dict[str, _Said],
) -> dict[str, _Said]:
    """Each model's properties entry's ``config.enabled``, for the files that left it open."""
    wanted: dict[str, dict[str, list[str]]] = {}  # project root -> name -> paths
    roots: dict[str, Project] = {}
    for path, (project, name) in models.items():
        if from_file.get(path, True) is None:
            wanted.setdefault(project.root, {}).setdefault(name, []).append(path)
            roots[project.root] = project
    out: dict[str, _Said] = {}
    for root, names in wanted.items():
        globs = [f"{literal(root)}/{g}" if root else g for g in PROPERTY_GLOBS]
        # A name is spelled as it is, or with a double-quoted YAML escape (``"ord\x65rs"``):
        # one search finds both, and ``_entries`` compares the parsed names.
        files = repo.files_containing(commit, globs, [*sorted(names), _ESCAPE])
        try:
            owners = projects.locate(files)
        except ContractError:
            owners = {f: roots[root] for f in files}
        mine = [f for f in files if (o := owners.get(f)) is not None and o.root == root]
        said = _entries(repo, commit, mine, set(names))
        for name, paths in names.items():
            for path in paths:
                out[path] = said.get(name)
    return out


def _entries(
    repo: Repo, commit: str | None, files: Sequence[str], names: set[str]
) -> dict[str, _Said]:
    """name -> its entry's ``config.enabled`` across ``files``; ``True`` when unknown
    (a file that does not load, two entries of one name, a versioned entry)."""
    found = repo.existing(commit, list(files))
    blobs = repo.read_blobs([b for b in found.values() if b])
    seen: dict[str, list[_Said]] = {}
    for path in files:
        blob = found.get(path)
        try:
            data = blobs[blob] if blob else repo.read_worktree(path)
        except (TooLarge, OSError, KeyError, ContractError):
            for name in names:  # it may hold any of them: unknown, so enabled
                seen.setdefault(name, []).append(True)
            continue
        text = data.decode("utf-8", "replace")
        # The names the file may hold: written out, or any of them behind an escape.
        here = set(names) if _ESCAPE in text else {n for n in names if n in text}
        try:
            doc = load_yaml(data, path)
        except ContractError:
            for name in here:
                seen.setdefault(name, []).append(True)
            continue
        for name, value in _models(doc, path, here):
            seen.setdefault(name, []).append(value)
    return {name: values[0] if len(values) == 1 else True for name, values in seen.items()}


def _models(doc: Any, path: str, names: set[str]) -> list[tuple[str, _Said]]:
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, list):
        return []
    out: list[tuple[str, _Said]] = []
    for entry in models:
        name = entry.get("name") if isinstance(entry, YMap) else None
        if not isinstance(name, str) or name not in names:
            continue
        if entry.get("versions"):
            out.append((name, True))  # which version is which file: not read here
            continue
        try:
            value = entry_enabled(entry, path, f"model '{name}'", [])
        except ContractError:
            value = True
        out.append((name, value))
    return out
