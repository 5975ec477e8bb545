"""One copy of each base dataset: a duplicate on the base side is a notice, not findings.

HEAD refuses a dataset two files declare (pairing would be ambiguous), but the
base branch may already hold two copies: merged before the gate ran, or while
it was off. Compared as they are, each copy is a dataset of its own: deleting
the spare copy reads as ``model_removed`` (with a ``consumer_broken`` for every
reader, though the other copy still declares the table), and deleting both
reports each removal and each broken reader twice. So the base keeps one copy
per dataset, and the reviewer gets a notice naming the files. Pure: datasets in,
datasets and notices out.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.model import Dataset


def _key(dataset: Dataset) -> tuple[str, str | None, str]:
    """One format's declaration of a dataset: a dbt model and an ODCS contract of
    one table are two contracts (``gate.declarations``), never copies of one."""
    return dataset.format, dataset.project, dataset.id


def single(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    still_declared: Sequence[tuple[Dataset, Dataset]] = (),
) -> tuple[list[Dataset], list[str]]:
    """``base`` with one copy per dataset, and a notice for each dataset that had more.

    ``still_declared`` pairs a base dataset gone from the changed files with an
    unchanged file's declaration of it (``gate.duplicates.still_declared``): that
    dataset is not gone, so its changed copies are dropped. Of several changed
    copies, the one in a file that declares the dataset at HEAD is kept (it
    pairs with its own next version), else the first. Disabled dbt models do not
    count (dbt allows one beside an enabled model of that name).
    """
    kept_elsewhere: dict[tuple[str, str | None, str], list[str]] = {}
    dropped: set[int] = set()
    for dataset, other in still_declared:
        kept_elsewhere.setdefault(_key(dataset), [other.path])
        dropped.add(id(dataset))
    groups: dict[tuple[str, str | None, str], list[Dataset]] = {}
    for dataset in base:
        if dataset.enabled:
            groups.setdefault(_key(dataset), []).append(dataset)
    head_paths = {(_key(d), d.path) for d in head}
    notices: list[str] = []
    for key, copies in groups.items():
        elsewhere = kept_elsewhere.get(key, [])
        paths = sorted({*(c.path for c in copies), *elsewhere})
        if len(paths) < 2:
            continue
        if elsewhere:
            what = f"{elsewhere[0]} still declares it, so removing the other copies removes nothing"
        else:
            keep = next((c for c in copies if (key, c.path) in head_paths), copies[0])
            dropped |= {id(c) for c in copies if c is not keep}
            what = f"compared once, as declared in {keep.path}"
        notices.append(
            f"dataset '{key[2]}' is declared in {len(paths)} files at the base "
            f"({', '.join(paths)}): {what}"
        )
    return [d for d in base if id(d) not in dropped], notices
