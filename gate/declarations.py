"""Which datasets declare a contract, and which of them are one contract.

- An unenforced (or disabled) dbt model is not a contract: it is never a second
  declaration of a dataset, and it never shadows an enforced model of the same
  id (two dbt projects may share a project name and model names).
- Within one format, two declarations of one dataset are ambiguous: the engine
  refuses them. Across formats *on one side* they are the two-layer pattern (an
  enforced dbt model and an ODCS/DCS contract of the same table): two contracts,
  each compared with its own base, one per format.
- A contract in one format at the base and another at HEAD, of one table, is a
  contract converted between formats (Soda -> ODCS, DCS -> ODCS...): one
  contract, compared with itself (gate/diff/conversion.py).

Pure: datasets in, datasets out.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.model import Dataset

#: Formats one contract may be converted between (dbt models are the other layer).
CONVERTIBLE = frozenset({"soda", "dcs", "odcs"})


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
    """(base, head) groups to compare apart: an id declared in two formats on one
    side (the two-layer pattern) is compared within each format; all others
    together, so a contract converted from one format to another pairs with itself.

    A conversion is an id that leaves exactly one format and gains exactly one other
    across the pull request, both contract formats (Soda, DCS, ODCS): with a dbt
    model of the id on both sides, an ODCS contract rewritten as DCS is still one
    contract, and the dbt model stays in its own group. A dbt model is never paired
    with another format (an unenforced model would read as enforcement dropped).
    """
    at_base: dict[str, set[str]] = {}
    at_head: dict[str, set[str]] = {}
    for side, found in ((base, at_base), (head, at_head)):
        for dataset in side:  # an unenforced model too: pairing is by id
            found.setdefault(dataset.id.casefold(), set()).add(dataset.format)
    together: dict[str, frozenset[str]] = {}
    for key in at_base.keys() | at_head.keys():
        before, after = at_base.get(key, set()), at_head.get(key, set())
        if len(before | after) == 1:
            continue
        # A dbt model gained or lost beside it is its own layer, not part of a conversion.
        gone, came = (before - after) & CONVERTIBLE, (after - before) & CONVERTIBLE
        if len(gone) == 1 and len(came) == 1 and gone | came <= CONVERTIBLE:
            together[key] = frozenset(gone | came)
        else:
            together[key] = frozenset()
    if not together:
        return [(list(base), list(head))]

    def group(dataset: Dataset) -> str:
        key = dataset.id.casefold()
        return "" if key not in together or dataset.format in together[key] else dataset.format

    keys = sorted({group(d) for d in (*base, *head)})
    return [
        ([d for d in base if group(d) == key], [d for d in head if group(d) == key]) for key in keys
    ]
