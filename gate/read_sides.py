"""Both sides of every compared file, read and parsed, with what a side's problems mean.

A base file that cannot be read is a warning (a contract invalid on the base
branch must not block the pull request that fixes it); a HEAD file the PR
changed that cannot be read is a refusal; a HEAD file the PR did not change is
read leniently like the base, and if even that fails it is a warning and the
file is compared on neither side: whether a run is refused never depends on
files the PR did not touch.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate import declarations
from gate.contract_files import INHERITED, UNTOUCHED, FileEntry, Parse, load
from gate.dbt import model_files as dbt_model_files
from gate.dbt import relation_macros, undeclared_constraints
from gate.dbt.changes import Entry
from gate.duplicates import drop_old_clashes, duplicates
from gate.limits import DEFAULT_LIMITS
from gate.model import ContractError, ContractWarning, Dataset
from gate.side import Side


def _base_warning(error: ContractError) -> str:
    where = f"{error.path}:{error.line}" if error.line else error.path
    return (
        f"warning: the base version of {where} is unreadable ({error.detail}); its "
        "datasets are compared as new, so a PR that fixes the file is not blocked"
    )


def _lenient_warning(warning: ContractWarning, which: str) -> ContractWarning:
    return ContractWarning(
        warning.path,
        f"{which} is broken ({warning.detail}); it was read leniently and compared, so a PR "
        "that fixes it is not blocked",
        warning.line,
    )


def _untouched_warning(error: ContractError) -> str:
    where = f"{error.path}:{error.line}" if error.line else error.path
    return (
        f"warning: {where} is unreadable ({error.detail}); this PR did not change it, "
        "so it is not compared"
    )


def _inherited_warning(error: ContractError) -> str:
    where = f"{error.path}:{error.line}" if error.line else error.path
    return (
        f"warning: {where} is unreadable ({error.detail}); its base version is refused the "
        "same way, so this PR did not introduce it; both sides are read as the base reads "
        "a model file's access and compared (dbt parse fails on both sides: fix it)"
    )


def _inherited(
    head_side: Side,
    inherited: Sequence[tuple[FileEntry, FileEntry, ContractError]],
    parse: Parse,
    warnings: list[str],
    refused: list[ContractError],
    head: list[Dataset],
) -> list[Dataset]:
    """The base datasets of files refused the same way on both sides, read again with an
    ``access`` dbt refuses read leniently (``INHERITED``); their HEAD datasets go to
    ``head``. A file that still cannot be read on either side is refused: nothing in
    it could be compared, so whatever the pull request changed there would pass."""
    if not inherited:
        return []
    entries = [FileEntry(b.path, b.blob, INHERITED, b.project) for b, _h, _e in inherited] + [
        h for _b, h, _e in inherited
    ]
    read = [c for _side, c in load(head_side.repo, entries, parse)]
    out: list[Dataset] = []
    for i, (_b, _h, error) in enumerate(inherited):
        was, now = read[i], read[len(inherited) + i]
        if isinstance(was, ContractError) or isinstance(now, ContractError):
            refused.append(error)
            continue
        warnings.append(_inherited_warning(error))
        out.extend(was.datasets)
        head.extend(now.datasets)
    return out


def _unreadable_contracts(
    base: list[Dataset], head: list[Dataset], warnings: list[str], refused: list[ContractError]
) -> tuple[list[Dataset], list[Dataset]]:
    """dbt entries left unread because their properties file did not enforce them
    (``Dataset.unreadable``) that their model file's ``config()`` does enforce:
    a refusal at HEAD, a warning (and not compared) at the base."""

    def error(d: Dataset) -> ContractError:
        detail, line = d.unreadable or ("", None)
        return ContractError(d.path, detail, line)

    for d in head:
        if d.unreadable and declarations.declares(d):
            refused.append(error(d))
    kept = []
    for d in base:
        if d.unreadable and declarations.declares(d):
            warnings.append(_base_warning(error(d)))
        else:
            kept.append(d)
    return kept, head


def _undeclared_constraints(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    warnings: list[str],
    refused: list[ContractError],
    schema_warnings: list[ContractWarning],
) -> None:
    """Model-level constraints naming an undeclared column, on a model dbt builds as a
    table once its model file's ``config()`` is read (``gate.dbt.undeclared_constraints``):
    refused at HEAD. Not this pull request's defect when the base refuses the same
    constraint of the same model (by project and name: a properties file the pull
    request moves keeps its defect): then a warning, as an inherited refusal is. One
    its model file makes a view is a warning (not compared)."""
    at_base: dict[tuple[str | None, str], set[str]] = {}
    for d in base:
        at_base.setdefault((d.project, d.id), set()).update(
            r.detail for r in undeclared_constraints.decide(d)[0]
        )
    for d in head:
        found, notes = undeclared_constraints.decide(d)
        schema_warnings += notes
        for detail, error in found:
            if detail not in at_base.get((d.project, d.id), set()):
                refused.append(error)
                continue
            where = f"{error.path}:{error.line}" if error.line else error.path
            warnings.append(
                f"warning: {where}: {error.detail}; the base branch holds the same, so this "
                "pull request did not introduce it (dbt run fails on both sides: fix it)"
            )


def read_sides(
    base_side: Side,
    head_side: Side,
    file_changes: Sequence[Entry],
    parse: Parse,
    warnings: list[str],
    refused: list[ContractError],
    schema_warnings: list[ContractWarning],
    model_file_bytes: int = DEFAULT_LIMITS.model_file_bytes,
) -> tuple[list[Dataset], list[Dataset]]:
    """Read and parse both sides of every changed contract file.

    dbt models then take their model file's own ``config()`` into account. An
    unreadable base file adds a warning to ``warnings`` and contributes no
    datasets; an unreadable HEAD file, and a dataset two HEAD files declare,
    adds to ``refused`` (the run goes on collecting, then refuses them all).
    Schema warnings go to ``schema_warnings``: HEAD's as they are, a base file
    read leniently as "the base version is broken", an unchanged HEAD file as
    "this unchanged file is broken".
    """
    entries: list[FileEntry] = []
    for entry in file_changes:
        change = entry.change
        if change.old_path and change.old_blob:
            entries.append(FileEntry(change.old_path, change.old_blob, base_side.name, entry.base))
        if change.new_path:
            side = head_side.name if entry.touched else UNTOUCHED
            entries.append(FileEntry(change.new_path, change.new_blob, side, entry.head))
    base: list[Dataset] = []
    head: list[Dataset] = []
    skipped: set[str] = set()
    refused_at_base: dict[str, str] = {}  # a dbt file's path -> its base version's refusal
    base_entries = {e.path: e for e in entries if e.side == base_side.name}
    inherited: list[tuple[FileEntry, FileEntry, ContractError]] = []
    for (path, blob, _side, project), (side, contract) in zip(
        entries, load(head_side.repo, entries, parse), strict=True
    ):
        if isinstance(contract, ContractError):
            if side == base_side.name:
                warnings.append(_base_warning(contract))
                if project is not None:
                    refused_at_base[path] = contract.detail
            elif side == UNTOUCHED:
                warnings.append(_untouched_warning(contract))
                skipped.add(path)
            elif refused_at_base.get(path) == contract.detail:
                # A dbt file whose base is refused the same way: not this PR's defect. Both
                # sides are read again leniently and compared below; skipping the file
                # would pass any column the PR narrows or drops in it.
                inherited.append(
                    (base_entries[path], FileEntry(path, blob, INHERITED, project), contract)
                )
            else:
                refused.append(contract)
            continue
        if side == base_side.name:
            schema_warnings += [_lenient_warning(w, "the base version") for w in contract.warnings]
        elif side == UNTOUCHED:
            schema_warnings += [
                _lenient_warning(w, "this unchanged file") for w in contract.warnings
            ]
        else:
            schema_warnings += contract.warnings
        (base if side == base_side.name else head).extend(contract.datasets)
    base += _inherited(head_side, inherited, parse, warnings, refused, head)
    base = [d for d in base if d.path not in skipped]
    old_projects = {e.change.old_path: e.base for e in file_changes if e.change.old_path}
    new_projects = {e.change.new_path: e.head for e in file_changes if e.change.new_path}
    base = dbt_model_files.apply_model_configs(
        base_side.repo, base_side.commit, base, old_projects, model_file_bytes, lenient=True
    )
    head = dbt_model_files.apply_model_configs(
        head_side.repo,
        head_side.commit,
        head,
        new_projects,
        model_file_bytes,
        base_commit=base_side.commit,
        warnings=schema_warnings,
    )
    head = relation_macros.mark(
        head_side.projects, head, new_projects, base, base_side.projects, base_side.floor_commit
    )
    _undeclared_constraints(base, head, warnings, refused, schema_warnings)
    base, head = _unreadable_contracts(base, head, warnings, refused)
    # dbt allows a disabled model beside an enabled one of the same name.
    untouched = {e.path for e in entries if e.side == UNTOUCHED}
    base, head = drop_old_clashes(base, head, untouched, warnings)
    refused += duplicates([d for d in head if declarations.declares(d)])
    return base, head
