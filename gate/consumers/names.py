"""Which table names consumers use for a contracted dataset.

A contract's dataset id is rarely what SQL writes: Soda ids are qualified
(``datasource/db/schema/table``), dbt versions are ``orders.v2`` while the
relation is ``orders_v2``, ODCS has a logical ``name`` and a ``physicalName``.
Each dataset gets a set of names (tuples of lower-cased parts); a table as
written matches a name when their common trailing parts agree, and the longest
agreement wins, so ``analytics.orders`` matches ``.../analytics/orders`` before a
bare ``orders``. Teams whose naming differs add names in the config
(``consumers.tables``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gate.model import Dataset

Name = tuple[str, ...]

_DBT_VERSION = re.compile(r"^(?P<model>.+)\.v(?P<version>[^.]+)$")


def split_name(text: str) -> Name:
    """``a/b.c`` or ``a.b.c`` as lower-cased parts; quotes and brackets dropped."""
    parts = re.split(r"[/.]", text.strip().strip('`"[]').lower())
    return tuple(p.strip('`"[]') for p in parts if p.strip('`"[]'))


def dataset_names(dataset: Dataset, extra: Sequence[str] = ()) -> set[Name]:
    """Every name a consumer may use for ``dataset``."""
    names: set[Name] = set()
    version = _DBT_VERSION.match(dataset.id) if dataset.format == "dbt" else None
    if version:
        model, label = version["model"], version["version"]
        names |= {(model.lower(),), (f"{model}_v{label}".lower(),)}
    else:
        names.add(split_name(dataset.id))
    for alias in (*dataset.aliases, *extra):
        if alias:
            names.add(split_name(alias))
    return {n for n in names if n}


def _overlap(written: Name, name: Name) -> int:
    """How many trailing parts agree; 0 unless all of the shorter one agree."""
    size = min(len(written), len(name))
    if size == 0 or written[-size:] != name[-size:]:
        return 0
    return size


class NameIndex:
    """Dataset ids by the table names consumers write."""

    def __init__(
        self, datasets: Iterable[Dataset], extra: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        extra = extra or {}
        self._by_last: dict[str, list[tuple[Name, str]]] = {}
        for dataset in datasets:
            for name in dataset_names(dataset, extra.get(dataset.id, ())):
                entries = self._by_last.setdefault(name[-1], [])
                if (name, dataset.id) not in entries:
                    entries.append((name, dataset.id))

    def lookup(self, written: Name) -> set[str]:
        """The dataset ids a table reference names (several only on a true tie)."""
        if not written:
            return set()
        best = 0
        found: set[str] = set()
        for name, dataset_id in self._by_last.get(written[-1], ()):
            score = _overlap(written, name)
            if score > best:
                best, found = score, {dataset_id}
            elif score and score == best:
                found.add(dataset_id)
        return found

    def needles(self) -> set[str]:
        """The last part of every name: what ``git grep -F -i`` looks for."""
        return set(self._by_last)
