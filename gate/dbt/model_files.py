"""dbt model files (``.sql``, ``.py``) and their own ``config()`` calls.

dbt ranks a model file's ``{{ config(contract=..., enabled=..., schema=...) }}`` above its
properties file and ``dbt_project.yml`` (``gate.formats.dbt.model_config`` reads it as
text). The model files of the dbt models a run compares are read (found beside
their properties file, else by name in the project's model paths), and a
changed model file whose settings changed brings the properties files that
name its model into the comparison. Other model files are never read.

dbt builds a model from its model file, not from its properties entry (an entry
without one is only a warning in dbt), so a deleted model file brings its
properties files in as well, and each compared model records whether its file
exists (``Dataset.model_file`` / ``model_file_missing``); the diff turns an
entry whose file was there at the base and is gone into ``model_removed``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gate.dbt.identity import bare_id
from gate.dbt.projects import MODEL_FILES, PROPERTY_GLOBS, literal, model_folders, model_path
from gate.formats.dbt import flags as dbt_flags
from gate.formats.dbt.model_config import MAX_FILE_BYTES, ModelSettings, read_settings
from gate.formats.dbt.project import Project
from gate.git import FileChange, Repo
from gate.model import ContractError, ContractWarning, Dataset, Relation

if TYPE_CHECKING:
    from gate.dbt.identity import bare_id
from gate.dbt.projects import ProjectIndex


def is_model_file(path: str) -> bool:
    return posixpath.splitext(path)[1] in (".sql", ".py")


def _read(repo: Repo, blob: str | None, path: str | None, blobs: Mapping[str, bytes]) -> bytes:
    if path is None:
        return b""
    return blobs[blob] if blob else repo.read_worktree(path)


def _settings(
    repo: Repo,
    blob: str | None,
    path: str | None,
    blobs: Mapping[str, bytes],
    max_bytes: int = MAX_FILE_BYTES,
    lenient: bool = False,
) -> ModelSettings:
    """A model file's ``config()`` settings; a ``.py`` file is a Python model (no Jinja).
    ``max_bytes``: the base side's ``limits.model_file_bytes``; ``lenient``: the base
    side's file (``read_settings``)."""
    python = path is not None and path.endswith(".py")
    source = _read(repo, blob, path, blobs)
    return read_settings(
        source, python=python, path=path or "", max_bytes=max_bytes, lenient=lenient
    )


def properties_of_changed_models(
    indexes: tuple[ProjectIndex, ProjectIndex],
    changes: Sequence[FileChange],
    negations: Sequence[str],
    known: set[str],
    implicated: set[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> list[FileChange]:
    """Properties files whose models' own ``config()`` (or, with folder configs,
    folder) changed in a model file, or whose model file is gone, so that the
    unchanged properties file is compared again. Only changed model files of
    dbt projects are read.

    Every such properties file, already compared or not, is added to
    ``implicated``: a properties file that moved unchanged is not a pure move
    when its model's file changed in the same PR.

    A model file deleted (or renamed to another name, or out of the model
    paths) while no file of its name was added to the same project leaves a
    properties entry that dbt only warns about: its model is gone. A file moved
    to another folder keeps its name, and dbt finds models by name.
    """
    repo = indexes[1].repo
    commits = (indexes[0].commit, indexes[1].commit)
    relevant: list[tuple[FileChange, Project | None, Project | None]] = []
    for change in changes:
        before = indexes[0].owner(change.old_path) if change.old_path else None
        after = indexes[1].owner(change.new_path) if change.new_path else None
        if before is not None or after is not None:
            relevant.append((change, before, after))
    if not relevant:
        return []
    arrived = {(after.root, _stem(c.new_path)) for c, _b, after in relevant if after and c.new_path}
    blobs = repo.read_blobs([b for c, _b, _a in relevant for b in (c.old_blob, c.new_blob) if b])
    names: dict[str, set[str]] = {}  # project folder -> model names to look for
    for change, before, after in relevant:
        old = _settings(repo, change.old_blob, change.old_path, blobs, max_bytes, True).meaning()
        try:
            new = _settings(repo, change.new_blob, change.new_path, blobs, max_bytes).meaning()
        except ContractError as exc:  # refused, unless the base holds the same (``_inherited``)
            same_path = change.old_path == change.new_path and change.new_path is not None
            at_base = change.old_blob if same_path else None
            new = _also_at_base(
                repo, (at_base, change.new_blob), change.new_path or "", exc, max_bytes
            ).meaning()
        moved = posixpath.dirname(change.old_path or "") != posixpath.dirname(change.new_path or "")
        folders_matter = any(p is not None and p.folder_configs for p in (before, after))
        gone = (
            before is not None
            and change.old_path is not None
            and (before.root, _stem(change.old_path)) not in arrived
        )
        if old == new and not (moved and folders_matter) and not gone:
            continue
        for project, path in ((before, change.old_path), (after, change.new_path)):
            if project is not None and path:
                stem = posixpath.splitext(posixpath.basename(path))[0]
                model = stem.rsplit("_v", 1)[0] if "_v" in stem else stem
                names.setdefault(project.root, set()).update({stem, model})
    out: list[FileChange] = []
    for root, wanted in names.items():
        globs = [f"{literal(root)}/{g}" if root else g for g in PROPERTY_GLOBS] + list(negations)
        # one search a side (the implicated files are the same search, unfiltered)
        found = {
            p for commit in commits for p in repo.files_containing(commit, globs, sorted(wanted))
        }
        paths = {p for p in found if p not in known}
        old_blobs = repo.existing(commits[0], sorted(paths))
        new_blobs = repo.existing(commits[1], sorted(paths))
        if implicated is not None:
            implicated.update(found)
        for path in sorted(paths):
            known.add(path)
            if path in old_blobs and path in new_blobs:
                out.append(FileChange("M", path, path, old_blobs[path], new_blobs[path]))
            elif path in old_blobs:
                out.append(FileChange("D", path, None, old_blobs[path], None))
            elif path in new_blobs:
                out.append(FileChange("A", None, path, None, new_blobs[path]))
    return out


def _names(dataset: Dataset) -> tuple[str, ...]:
    if dataset.model_names:
        return dataset.model_names
    name, dot_v, label = dataset.id.rpartition(".v")
    return (f"{name}_v{label}" if dot_v and name else dataset.id,)


def _locate(
    repo: Repo,
    commit: str | None,
    datasets: Sequence[Dataset],
    projects: Mapping[str, Project | None],
) -> tuple[dict[int, str | None], dict[str, str | None], set[int]]:
    """Each dbt dataset's model file at this side, the blob of every file found, and
    the datasets without one whose project's model paths hold other model files.

    ``None``: no file of the model's names is in the project's model paths (dbt
    builds nothing). Left out: datasets outside a dbt project, and a name held
    by two files (dbt refuses that; the gate cannot tell which one is meant).
    The names are tried in dbt's order; each one beside the properties file
    first, then by name in the model paths (a listing of names, made only on a miss).
    """
    wanted = [
        (i, _names(d), project)
        for i, d in enumerate(datasets)
        if d.format == "dbt" and (project := projects.get(d.path)) is not None
    ]
    if not wanted:
        return {}, {}, set()
    beside = {
        i: [
            path
            for name in names
            for ext in MODEL_FILES
            if model_path(
                project,
                path := posixpath.join(posixpath.dirname(datasets[i].path), f"{name}.{ext}"),
            )
            is not None
        ]
        for i, names, project in wanted
    }
    found = repo.existing(commit, [p for paths in beside.values() for p in paths])
    files: dict[int, str | None] = {}
    folders: dict[str, Mapping[str, tuple[str, ...] | None]] = {}
    elsewhere: dict[int, list[str]] = {}
    committed: set[int] = set()
    for i, names, project in wanted:
        first = [p for p in beside[i] if p in found and _stem(p) == names[0]]
        if first:
            files[i] = first[0]
            continue
        if project.root not in folders:
            folders[project.root] = (
                project.sql_folders
                if project.sql_folders is not None
                else model_folders(repo, commit, project)
            )
        listed = folders[project.root]
        name = next((n for n in names if n in listed), None)
        if name is None:
            files[i] = None
            if listed:
                committed.add(i)
            continue
        where = listed[name]
        if where is not None:
            elsewhere[i] = [
                posixpath.join(mp, *where, f"{name}.{ext}")
                for mp in project.model_paths
                for ext in MODEL_FILES
            ]
    if elsewhere:
        found.update(repo.existing(commit, [p for paths in elsewhere.values() for p in paths]))
    for i, paths in elsewhere.items():
        hit = next((p for p in paths if p in found), None)
        if hit is not None:
            files[i] = hit
    return files, found, committed


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def apply_model_configs(
    repo: Repo,
    commit: str | None,
    datasets: Sequence[Dataset],
    projects: Mapping[str, Project | None],
    max_bytes: int = MAX_FILE_BYTES,
    lenient: bool = False,
    base_commit: str | None = None,
    warnings: list[ContractWarning] | None = None,
) -> list[Dataset]:
    """Let each dbt model's own ``config()`` call override what the properties
    file and ``dbt_project.yml`` said, as dbt ranks it, and record where the
    model file is (``model_file``), or that there is none (``model_file_missing``):
    a properties entry whose model file is gone describes a model dbt no longer builds.

    ``projects`` maps a properties file's path to its project at this side;
    ``max_bytes`` is the base side's ``limits.model_file_bytes``; ``lenient``: this
    is the base side (an ``access`` dbt refuses is read, not refused: ``read_settings``).

    ``base_commit`` and ``warnings`` (the HEAD side): a model file refused for a
    value the same file at the base holds as well (``{{ config(access='Public') }}``
    on both sides) is read as the base is read, with a warning in ``warnings``
    naming its file and line: the pull request did not introduce it (``_inherited``).
    """
    files, found, committed = _locate(repo, commit, datasets, projects)
    blobs = repo.read_blobs([b for p in files.values() if p and (b := found[p])])
    out = list(datasets)
    for i, d in enumerate(datasets):
        if i not in files and d.format == "dbt" and projects.get(d.path) is not None:
            # Two files hold its name: whose config() counts is unknown, so is its relation.
            out[i] = replace(d, relation=None)
    for i, path in files.items():
        if path is None:
            out[i] = replace(out[i], model_file_missing=True, model_files_committed=i in committed)
            continue
        try:
            said = _settings(repo, found[path], path, blobs, max_bytes, lenient)
        except ContractError as exc:
            said = _inherited(repo, (base_commit, found[path]), path, exc, max_bytes, warnings)
        decided = {
            s
            for s, v in (
                (dbt_flags.ENFORCED, said.enforced),
                (dbt_flags.ENABLED, said.enabled),
                (dbt_flags.ACCESS, said.access),
            )
            if v is not None
        }
        out[i] = replace(
            out[i],
            model_file=path,
            relation=_over(out[i].relation, dict(said.relation)),
            enforced=out[i].enforced if said.enforced is None else said.enforced,
            enabled=out[i].enabled if said.enabled is None else said.enabled,
            access=out[i].access if said.access is None else said.access,
            materialized=said.materialized,
            unevaluable=dbt_flags.merge(
                out[i].unevaluable,
                tuple((s, e, path, line) for s, e, line in said.unevaluable),
                decided | {s for s, _e, _l in said.unevaluable},
            ),
        )
    return out


def _inherited(
    repo: Repo,
    commits: tuple[str | None, str | None],
    path: str,
    error: ContractError,
    max_bytes: int,
    warnings: list[ContractWarning] | None,
) -> ModelSettings:
    """A HEAD model file's settings despite ``error``, when the pull request did not
    introduce it (``_also_at_base``): dbt fails on both sides, so refusing would block
    every pull request that touches the model for a defect that is not its own. The
    file is read as the base is read (``read_settings(lenient=True)``: ``'Public'`` as
    public) and still compared, which keeps the run sound, and ``warnings`` says so
    with its file and line. Otherwise ``error`` stands: a value the pull request wrote
    is refused as before."""
    base_commit, blob = commits
    if base_commit is None or warnings is None:
        raise error
    at_base = repo.existing(base_commit, [path]).get(path)
    said = _also_at_base(repo, (at_base, blob), path, error, max_bytes)
    warnings.append(
        ContractWarning(
            path,
            f"{error.detail}; the base branch holds the same, so this pull request did not "
            "introduce it: read as the base is read (dbt parse fails on both sides: fix it)",
            error.line,
        )
    )
    return said


def _also_at_base(
    repo: Repo,
    blobs: tuple[str | None, str | None],
    path: str,
    error: ContractError,
    max_bytes: int,
) -> ModelSettings:
    """The HEAD file (blob ``blobs[1]``) read leniently, if the base's file (blob
    ``blobs[0]``, same path) is refused with the same message as ``error`` (the same
    value, wherever its line is now); else ``error`` is raised."""
    at_base, blob = blobs
    if at_base is None:
        raise error
    try:
        _settings(repo, at_base, path, repo.read_blobs([at_base]), max_bytes)
    except ContractError as base_error:
        if base_error.detail != error.detail:
            raise error from None
    else:
        raise error
    try:
        return _settings(repo, blob, path, repo.read_blobs([blob] if blob else []), max_bytes, True)
    except ContractError:
        raise error from None


def _over(relation: Relation | None, said: Mapping[str, str | None]) -> Relation | None:
    """The model file's relation parts over what the properties and project said."""
    if relation is None or not said:
        return relation
    return replace(
        relation,
        database=said.get("database", relation.database),
        schema=said.get("schema", relation.schema),
        alias=said.get("alias", relation.alias),
    )


def still_built(
    repo: Repo,
    commit: str | None,
    gone: Sequence[Dataset],
    projects: ProjectIndex | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    base_commit: str | None = None,
) -> set[str]:
    """Ids of ``gone`` dbt models (absent at HEAD) whose model file is still built at ``commit``.

    Deleting a model's properties entry deletes its contract, not its table:
    dbt still builds the model from ``<model>.sql`` (unless that file's own
    ``config()`` now disables it), so ``ref('<model>')`` still resolves and its
    readers still run. Only unversioned models count: a version's file without
    its ``versions:`` entry becomes another model, and ``ref('m', v=1)`` fails.
    ``projects`` is the HEAD side's dbt project index, built once per side.

    ``base_commit``: only a model file that is at this path at the base as well
    counts. A file the pull request adds (a new ``dbt_project.yml`` and
    ``models/orders.sql`` beside a deleted ``orders`` contract) is no evidence that
    anything still builds the table its readers read: the gate cannot tell a real
    project from a decoy, and trusting it would hide each broken reader.
    """
    wanted = {
        d.id: d.model_file
        for d in gone
        if d.format == "dbt" and d.model_file and not _is_version(d)
    }
    homes: dict[str, str] = {}
    named, off = _dbt_models_named(
        repo, commit, [d.id for d in gone if d.format != "dbt"], projects, homes
    )
    wanted.update(named)
    if not wanted:
        return set()
    found = repo.existing(commit, sorted(set(wanted.values())))
    if base_commit is not None:
        was = set(repo.existing(base_commit, sorted(found)))
        # A model moved to another folder of the same project in this pull request:
        # dbt built a model of that name in that project at the base too.
        moved = {i: p for i, p in named.items() if p in found and p not in was}
        if moved:
            base_homes: dict[str, str] = {}
            at_base, _off = _dbt_models_named(repo, base_commit, sorted(moved), None, base_homes)
            was.update(p for i, p in moved.items() if i in at_base and base_homes[i] == homes[i])
        found = {path: blob for path, blob in found.items() if path in was}
    blobs = repo.read_blobs([b for b in found.values() if b])
    built = set()
    for dataset_id, path in wanted.items():
        if path not in found:
            continue
        try:
            enabled = _settings(repo, found[path], path, blobs, max_bytes).enabled
        except ContractError as exc:  # refused, unless the base holds the same (``_inherited``)
            base_blob = repo.existing(base_commit, [path]).get(path) if base_commit else None
            enabled = _also_at_base(repo, (base_blob, found[path]), path, exc, max_bytes).enabled
        # The file's config() wins over dbt_project.yml, which may disable it (``off``).
        if enabled is True or (enabled is None and dataset_id not in off):
            built.add(dataset_id)
    return built


#: The repository's own dbt projects: an installed package (``dbt_packages/``, dbt < 1.0's
#: ``dbt_modules/``) is another project's code, as the contract and consumer globs say.
_OWN_PROJECTS = (
    "dbt_project.yml",
    "**/dbt_project.yml",
    "!**/dbt_packages/**",
    "!**/dbt_modules/**",
)


def _dbt_models_named(
    repo: Repo,
    commit: str | None,
    ids: Sequence[str],
    projects: ProjectIndex | None = None,
    homes: dict[str, str] | None = None,
) -> tuple[dict[str, str], set[str]]:
    """Dataset id -> the model file of the dbt model of that name at ``commit``, for
    the contracts of other formats (ODCS, DCS, Soda) that describe a dbt model's
    table: deleting such a contract deletes no table while dbt still builds the
    model, and ``ref('<model>')`` still resolves. Only a name one file holds in
    one project counts (dbt refuses two). Also the ids whose model
    ``dbt_project.yml`` disables (built only if the file's ``config()`` enables it).
    ``homes``, when given, gets each found id's project folder."""
    if not ids:
        return {}, set()
    roots = [posixpath.dirname(path) for path in repo.list_files(commit, _OWN_PROJECTS)]
    if not roots:
        return {}, set()
    off: set[str] = set()
    index = projects if projects is not None else ProjectIndex(repo, commit, "head")
    files: dict[str, list[str]] = {}
    root_of: dict[str, str] = {}  # a candidate model file -> its project folder
    for root in roots:
        try:
            project = index.project_in(root)
        except ContractError:
            continue  # an unreadable project builds nothing the gate can vouch for
        if project is None:
            continue
        listed = model_folders(repo, commit, project)
        for dataset_id in ids:
            # A Soda v4 id is qualified (``duckdb_ds/data/energy/main/stg_generation``):
            # the model's name is its last segment, as the consumer scan reads it.
            name = dataset_id.rpartition("/")[2]
            where = listed.get(name)
            if name not in listed or where is None:
                continue
            if project.resolve((project.name, *where, name))[1] is False:
                off.add(dataset_id)
            candidates = [
                posixpath.join(mp, *where, f"{name}.{ext}")
                for mp in project.model_paths
                for ext in MODEL_FILES
            ]
            root_of.update(dict.fromkeys(candidates, root))
            files.setdefault(dataset_id, []).extend(candidates)
    found = repo.existing(commit, sorted({p for paths in files.values() for p in paths}))
    out: dict[str, str] = {}
    for dataset_id, paths in files.items():
        hits = [p for p in paths if p in found]
        if len(hits) == 1:
            out[dataset_id] = hits[0]
            if homes is not None:
                homes[dataset_id] = root_of[hits[0]]
    return out, off


def _is_version(dataset: Dataset) -> bool:
    """``orders.v2``: one version of a versioned model (its file is ``orders_v2``)."""
    return dataset.model_names[:1] != (bare_id(dataset),)
