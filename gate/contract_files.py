"""Contract files read from a side and handed to the run's parser.

Every blob comes through one batch read; worktree files are read from disk
inside the repository only. Parsing itself is the engine's (``Parse``: its
worker pool and its limits), so this module only says what to parse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from gate.dbt import model_files as dbt_model_files
from gate.dbt import projects as dbt_projects
from gate.dbt import undeclared_constraints
from gate.formats.dbt.project import Project
from gate.git import Repo
from gate.limits import DEFAULT_LIMITS
from gate.model import Contract, ContractError, ContractErrors, Dataset
from gate.side import Side

#: The side label of a HEAD file the PR did not change (compared because its dbt
#: project or a model file changed, or searched for a clash): parsed like the
#: base, and a problem in it is a warning, never a refusal.
UNTOUCHED = "head, unchanged"
#: The side label of a file the PR changed whose base version is refused with the same
#: message (``gate.read_sides``): both read again leniently, an ``access`` dbt refuses
#: read as the base reads a model file's (``settings.lenient_access``), and compared.
INHERITED = "inherited"


class Item(NamedTuple):
    """What one parse needs (sent to a worker process as it is)."""

    data: bytes
    path: str
    #: ``"base"``, ``"head"`` or ``UNTOUCHED``: all but ``"head"`` are read leniently.
    side: str
    project: Project | None


class FileEntry(NamedTuple):
    """A file to read from a side."""

    path: str
    blob: str | None  # ``None``: the working tree
    side: str
    project: Project | None


#: The run's parser: items in, each one's contract or refusal out, in input order.
Parse = Callable[[Sequence[Item]], list[Contract | ContractError]]


def load(
    repo: Repo, entries: Sequence[FileEntry], parse: Parse
) -> list[tuple[str, Contract | ContractError]]:
    """Read and parse entries: each one's side label and its contract or refusal."""
    blobs = repo.read_blobs(sorted({blob for _path, blob, _side, _p in entries if blob}))
    items = [
        Item(blobs[blob] if blob else repo.read_worktree(path), path, side, project)
        for path, blob, side, project in entries
    ]
    contracts = parse(items)
    return [(item.side, contract) for item, contract in zip(items, contracts, strict=True)]


def refuse(errors: Sequence[ContractError], order: Sequence[str] = ()) -> None:
    """Raise ``ContractErrors`` if there are any, ordered by file as in ``order``.

    The order is the input's (git lists changed files sorted), never the order
    workers finished in; errors of one file, or of files not in ``order``, keep
    the order they were found in.
    """
    if not errors:
        return
    rank = {path: i for i, path in reversed(list(enumerate(order)))}
    ranked = sorted(errors, key=lambda e: rank.get(e.path, len(rank)))
    raise ContractErrors(tuple(ranked))


def every_contract(
    side: Side,
    globs: Sequence[str],
    parse: Parse,
    model_file_bytes: int = DEFAULT_LIMITS.model_file_bytes,
) -> list[Dataset]:
    """Every dataset of every contract file at ``side`` (the full smoke test): a
    file that cannot be parsed is refused, with the others that cannot.
    ``model_file_bytes``: the base side's ``limits.model_file_bytes``."""
    files = side.repo.list_files(side.commit, globs)
    dbt_files = dbt_projects.property_files(side.projects, globs)
    entries = [
        FileEntry(
            path,
            files[path] if path in files else dbt_files[path][0],
            side.name,
            dbt_files[path][1] if path in dbt_files else None,
        )
        for path in sorted(set(files) | set(dbt_files))
    ]
    loaded = [c for _side, c in load(side.repo, entries, parse)]
    refuse([c for c in loaded if isinstance(c, ContractError)], [e.path for e in entries])
    datasets = [d for c in loaded if not isinstance(c, ContractError) for d in c.datasets]
    projects = {p: proj for p, _b, _s, proj in entries}
    datasets = dbt_model_files.apply_model_configs(
        side.repo, side.commit, datasets, projects, model_file_bytes
    )
    # A constraint the warehouse fails, once the model file says table or view.
    refuse(undeclared_constraints.refusals(datasets), [e.path for e in entries])
    return datasets


def has_contracts(side: Side, globs: Sequence[str]) -> bool:
    """Whether any contract file (globbed, or a dbt properties file) is at ``side``."""
    return bool(
        side.repo.has_files(side.commit, globs) or dbt_projects.property_files(side.projects, globs)
    )
