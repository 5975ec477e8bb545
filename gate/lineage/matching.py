"""Which contract dataset an external source's dataset name is.

Sources name datasets their own way: another dbt project's manifest by dbt's
unique id (``model.<project>.<model>``, ``model.<project>.<model>.v2`` for a
version), OpenLineage by ``<namespace>/<name>`` (``postgres://db:5432/shop.public.orders``),
a catalog by ``catalog.schema.table``. The rules, in order (docs/impact.md,
"Dataset matching"):

1. **Configured names.** ``lineage.datasets`` maps a contract dataset id to the
   external names it goes by; a name listed there (case-insensitive, exact)
   means that dataset and no other.
2. **dbt unique ids** (``model.``/``seed.``/``snapshot.`` + project + name) match
   only a dbt contract of that project (any project when the contract's is not
   known) whose model is that name, a version as ``<model>.v<N>``.
3. **Any other name** (a relation, an OpenLineage ``namespace/name``) is split on
   ``/`` and ``.``, without a ``scheme://authority`` namespace, and matched like
   a table in SQL (``gate.consumers.names``):
   the trailing parts agree with one of the contract's names (its id, its dbt
   alias, its ODCS ``physicalName``, ``consumers.tables``). Every contract that
   agrees is named, not only the longest agreement (``_agreeing`` says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gate.consumers.names import Name, configured, dataset_names, split_name
from gate.dbt.identity import bare_id
from gate.lineage.external import ExternalRead
from gate.model import Dataset

#: dbt resource types whose unique id is ``<type>.<project>.<name>[.v<N>]``.
_DBT_TYPES = ("model", "seed", "snapshot")


def dbt_unique_id(name: str) -> tuple[str, str] | None:
    """(project, name) of a dbt unique id, ``None`` for any other name."""
    kind, _, rest = name.partition(".")
    project, _, model = rest.partition(".")
    if kind not in _DBT_TYPES or not project or not model:
        return None
    return project.lower(), model.lower()


def _without_namespace(name: str) -> str:
    """An OpenLineage ``scheme://authority/name`` as its name (``postgres://db:5432/shop.orders``
    -> ``shop.orders``): a host is not a catalog, and would keep the trailing parts
    from agreeing with a contract's qualified id."""
    scheme, found, rest = name.partition("://")
    if not found or not scheme:
        return name
    return rest.partition("/")[2]


class DatasetMatcher:
    """Contract dataset ids by the names external sources give them."""

    def __init__(
        self,
        datasets: Iterable[Dataset],
        mapping: Mapping[str, Sequence[str]] | None = None,
        tables: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        datasets = list({d.id: d for d in datasets}.values())
        self._configured: dict[str, set[str]] = {}
        for dataset_id, names in (mapping or {}).items():
            for name in names:
                self._configured.setdefault(name.strip().lower(), set()).add(dataset_id)
        self._dbt: dict[tuple[str | None, str], set[str]] = {}
        for d in datasets:
            if d.format == "dbt":
                key = (d.project.lower() if d.project else None, bare_id(d).lower())
                self._dbt.setdefault(key, set()).add(d.id)
        #: Last name part -> (name, dataset id): every contract's names (rule 3).
        self._names: dict[str, list[tuple[Name, str]]] = {}
        for d in datasets:
            for known in dataset_names(d, configured(tables or {}, d)):
                self._names.setdefault(known[-1], []).append((known, d.id))

    def match(self, name: str) -> set[str]:
        """The contract dataset ids an external name means (empty: none of them)."""
        exact = self._configured.get(name.strip().lower())
        if exact:
            return set(exact)
        unique = dbt_unique_id(name.strip())
        if unique is not None:
            project, model = unique
            return self._dbt.get((project, model), set()) | self._dbt.get((None, model), set())
        return self._agreeing(split_name(_without_namespace(name)))

    def _agreeing(self, written: Name) -> set[str]:
        """Every contract with a name whose trailing parts agree with ``written``.

        Not only the longest agreement, as in-repo SQL is attributed: a pull
        request adding a contract with a more specific name (``warehouse.orders``
        beside ``orders``) must not take an external reader away from a break,
        which usage-aware severity would then grade a warning."""
        if not written:
            return set()
        found: set[str] = set()
        for known, dataset_id in self._names.get(written[-1], ()):
            size = min(len(written), len(known))
            if written[-size:] == known[-size:]:
                found.add(dataset_id)
        return found

    def reads_of(self, reads: Sequence[ExternalRead]) -> dict[str, list[ExternalRead]]:
        """Each contract dataset id and the external reads of it, in source order."""
        out: dict[str, list[ExternalRead]] = {}
        memo: dict[str, set[str]] = {}
        for read in reads:
            ids = memo.get(read.dataset)
            if ids is None:
                ids = memo[read.dataset] = self.match(read.dataset)
            for dataset_id in sorted(ids):
                out.setdefault(dataset_id, []).append(read)
        return out
