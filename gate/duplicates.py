"""One dataset declared by two files: a clash, within the compared files or with an unchanged one.

Only changed files are parsed, so the files the PR did not touch are searched
as text (``git grep``) for the ids in question and only the few that mention
one are parsed, leniently, at the head side:

- a dataset the PR adds that an unchanged file already declares is a clash
  (``declared_elsewhere``), so a copied contract is not ``model_added``;
- a dataset gone from the changed files that an unchanged file still declares
  was a second copy (``still_declared``, then ``gate.base_copies``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gate import declarations
from gate.contract_files import UNTOUCHED, Item, Parse
from gate.dbt import identity as dbt_identity
from gate.dbt import projects as dbt_projects
from gate.dbt.changes import Entry
from gate.model import Contract, ContractError, ContractWarning, Dataset
from gate.side import Side


def clash(dataset: Dataset, other: Dataset) -> ContractError:
    """``dataset`` is also declared in another file, as ``other``."""
    same = (
        ""
        if other.id == dataset.id
        else f" (as '{other.id}'): ids differing only in case name one table in most warehouses"
    )
    return ContractError(
        dataset.path, f"dataset '{dataset.id}' is also declared in {other.path}{same}", dataset.line
    )


def duplicates(datasets: Sequence[Dataset]) -> list[ContractError]:
    """Two files declaring one dataset make pairing ambiguous: each clash is a refusal.

    Ids that differ only by case count as one, as they do inside one file:
    most warehouses and Delta Lake resolve them to the same table. A third file
    declaring it clashes with the first, so each clash names the file to look at.
    Two dbt projects may each have a model of one name (``gate.dbt.identity``).
    """
    seen: dict[str, list[Dataset]] = {}
    clashes: list[ContractError] = []
    for dataset in datasets:
        firsts = seen.setdefault(dataset.id.casefold(), [])
        for first in firsts:
            if first.path != dataset.path and dbt_identity.same_dataset(first, dataset):
                clashes.append(clash(dataset, first))
                break
        else:
            firsts.append(dataset)
    return clashes


def _declaration_key(dataset: Dataset) -> tuple[str, str | None, str]:
    return dataset.format, dataset.project, dataset.id.casefold()


def drop_old_clashes(
    base: list[Dataset], head: list[Dataset], untouched: set[str], warnings: list[str]
) -> tuple[list[Dataset], list[Dataset]]:
    """A clash between two files the PR did not change (compared only because
    their dbt project or a model file changed) was there before: a warning, and
    that dataset is compared on neither side. When a file the PR changed declares
    it too, the clash is the PR's: it stays, for ``duplicates`` to refuse."""
    declaring = [d for d in head if declarations.declares(d)]
    quiet = [d for d in declaring if d.path in untouched]
    if len(quiet) < 2:
        return base, head
    touched = {_declaration_key(d) for d in declaring if d.path not in untouched}
    gone: set[tuple[str, str | None, str]] = set()
    for found_clash in duplicates(quiet):
        found = next(d for d in quiet if (d.path, d.line) == (found_clash.path, found_clash.line))
        if _declaration_key(found) in touched:
            continue
        gone.add(_declaration_key(found))
        warnings.append(
            f"warning: {found_clash.path}:{found_clash.line}: {found_clash.detail}; neither "
            "file changed in this PR, so the dataset is not compared"
        )
    if not gone:
        return base, head
    return (
        [d for d in base if _declaration_key(d) not in gone],
        [d for d in head if _declaration_key(d) not in gone],
    )


def _unchanged_mentioning(
    head: Side,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    ids: Iterable[str],
    parse: Parse,
) -> list[Contract | ContractError]:
    """The unchanged contract files at HEAD whose text mentions one of ``ids``, parsed.

    A text search finds the few unchanged files worth parsing; only those are read.
    """
    repo = head.repo
    changed = {e.change.new_path for e in file_changes if e.change.new_path}
    # A dbt version's id (``orders.v2``) is not in its file's text; its model name is.
    needles = sorted({*ids, *(i.rpartition(".v")[0] for i in ids if i.rpartition(".v")[0])})
    candidates = [
        path
        for path in repo.files_containing(head.commit, globs, needles, ignore_case=True)
        if path not in changed
    ]
    # Unchanged dbt properties files outside the globs, where dbt itself reads them.
    dbt_globs = [*dbt_projects.PROPERTY_GLOBS, *(g for g in globs if g.startswith("!"))]
    mentions = [
        p
        for p in repo.files_containing(head.commit, dbt_globs, needles, ignore_case=True)
        if p not in changed and p not in candidates
    ]
    projects = head.projects.locate([*candidates, *mentions])
    candidates += [p for p in mentions if projects[p] is not None]
    if not candidates:
        return []
    items = [
        Item(repo.read_file(head.commit, path) or b"", path, UNTOUCHED, projects[path])
        for path in candidates
    ]
    return parse(items)


def declared_elsewhere(
    head: Side,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    base_datasets: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    parse: Parse,
    unreadable: list[ContractWarning] | None = None,
) -> list[ContractError]:
    """Each "new" dataset whose id an unchanged contract already declares: a clash.

    Only changed files are parsed, so a copied contract would otherwise pass as
    ``model_added``. A text search finds the few unchanged files that mention a
    new id; only those are parsed, leniently. One that cannot be read at all is
    a warning in ``unreadable`` (a file the PR did not touch never blocks it);
    without that list, it is refused. Only contracts clash: an unenforced dbt
    model is none, and two formats declaring one table are two contracts.
    """
    known = {_declaration_key(d) for d in base_datasets if declarations.declares(d)}
    new: dict[str, list[Dataset]] = {}
    for d in head_datasets:
        if _declaration_key(d) not in known and declarations.declares(d):
            new.setdefault(d.id.casefold(), []).append(d)
    if not new:
        return []
    found: list[ContractError] = []
    for contract in _unchanged_mentioning(head, globs, file_changes, new, parse):
        if isinstance(contract, ContractError):
            if unreadable is None:
                found.append(contract)
            else:
                unreadable.append(
                    ContractWarning(
                        contract.path,
                        f"this unchanged file mentions a dataset the PR adds but cannot be read "
                        f"({contract.detail}); it was not checked for declaring that dataset too",
                        contract.line,
                    )
                )
            continue
        for other in contract.datasets:
            for dataset in new.get(other.id.casefold(), ()) if declarations.declares(other) else ():
                if dbt_identity.same_dataset(dataset, other):
                    found.append(clash(dataset, other))
    return found


def still_declared(
    head: Side,
    globs: Sequence[str],
    file_changes: Sequence[Entry],
    base_datasets: Sequence[Dataset],
    head_datasets: Sequence[Dataset],
    parse: Parse,
) -> list[tuple[Dataset, Dataset]]:
    """Each base dataset gone from the changed files that an unchanged contract
    still declares, with that declaration: a second copy the base held.

    Deleting one of two copies removes nothing (``gate.base_copies``). An
    unchanged file that cannot be parsed is no evidence either way: skipped. A
    dbt entry counts only where dbt still reads it (a properties file inside a
    project's model paths at HEAD) and only if it is a contract: after
    ``model-paths`` moves or ``dbt_project.yml`` goes, the old properties file
    still matches the contract globs, yet dbt builds nothing from it.
    """
    present = {_declaration_key(d) for d in head_datasets}
    gone: dict[str, list[Dataset]] = {}
    for d in base_datasets:
        if _declaration_key(d) not in present and d.enabled:
            gone.setdefault(d.id.casefold(), []).append(d)
    if not gone:
        return []
    found: list[tuple[Dataset, Dataset]] = []
    parsed = [
        c
        for c in _unchanged_mentioning(head, globs, file_changes, gone, parse)
        if not isinstance(c, ContractError)
    ]
    read_by_dbt = head.projects.locate(sorted({c.path for c in parsed}))  # one lookup for all
    for contract in parsed:
        for other in contract.datasets:
            if not declarations.declares(other) or (
                other.format == "dbt" and read_by_dbt.get(other.path) is None
            ):
                continue
            for dataset in gone.get(other.id.casefold(), ()):
                if (
                    other.id == dataset.id
                    and other.format == dataset.format
                    and dbt_identity.same_dataset(dataset, other)
                ):
                    found.append((dataset, other))
    return found
