"""Which datasets declare a contract, and which of them are one contract.

- An unenforced (or disabled) dbt model is not a contract: it is never a second
  declaration of a dataset, and it never shadows an enforced model of the same
  id (two dbt projects may share a project name and model names).
- Within one format, two declarations of one dataset are ambiguous: the engine
  refuses them. Across formats they are the two-layer pattern (an enforced dbt
  model and an ODCS/DCS contract of the same table): two contracts, each
  compared with its own base, one per format.

Pure: datasets in, datasets out.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.model import Dataset


def declares(dataset: Dataset) -> bool:
    """Whether a dataset is a contract: enabled, and enforced when it is a dbt model."""
    return dataset.enabled and (dataset.format != "dbt" or dataset.enforced)


def without_shadows(side: Sequence[Dataset]) -> list[Dataset]:
    """``side`` without the unenforced dbt models whose id an enforced one of the
    same project declares (pairing is by id, and only the contract counts)."""
    contracts = {(d.project, d.id.casefold()) for d in side if d.format == "dbt" and declares(d)}
    return [
        d
        for d in side
        if d.format != "dbt"
        or declares(d)
        or not d.enabled
        or (d.project, d.id.casefold()) not in contracts
    ]


def by_format(
    base: Sequence[Dataset], head: Sequence[Dataset]
) -> list[tuple[list[Dataset], list[Dataset]]]:
    """(base, head) groups to compare apart: datasets whose id is declared in
    more than one format on either side are compared within their format; all
    others together (so a contract converted from one format to another still
    pairs with itself)."""
    formats: dict[str, set[str]] = {}
    for dataset in (*base, *head):  # an unenforced model too: pairing is by id
        formats.setdefault(dataset.id.casefold(), set()).add(dataset.format)
    layered = {key for key, found in formats.items() if len(found) > 1}
    if not layered:
        return [(list(base), list(head))]

    def group(dataset: Dataset) -> str:
        return dataset.format if dataset.id.casefold() in layered else ""

    keys = sorted({group(d) for d in (*base, *head)})
    return [
        ([d for d in base if group(d) == key], [d for d in head if group(d) == key]) for key in keys
    ]
