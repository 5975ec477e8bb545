"""Which table names consumers use for a contracted dataset.

A contract's dataset id is rarely what SQL writes: Soda ids are qualified
(``datasource/db/schema/table``), dbt versions are ``orders.v2`` while the
relation is ``orders_v2``, ODCS has a logical ``name`` and a ``physicalName``.
Each dataset gets a set of names (tuples of lower-cased parts); a table as
written matches a name when their common trailing parts agree, and the longest
agreement wins, so ``analytics.orders`` matches ``.../analytics/orders`` before a
bare ``orders``. Teams whose naming differs add names in the config
(``consumers.tables``).

A contract the pull request adds, or a name it gives a kept one, competes only
for names no base contract agrees with (``added_ids``, ``added_names``,
``NameIndex.lookup``): adding ``db/warehouse/orders``
must not take the reader of ``warehouse.orders`` away from the base's ``orders``,
or dropping ``orders.note`` would break that reader unseen. Where the added
contract would have won, the name still resolves at HEAD (``NameIndex.claimants``),
so a contract moved to a longer name does not break the readers that follow it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gate.dbt.identity import bare_id
from gate.model import Change, Dataset

Name = tuple[str, ...]

_DBT_VERSION = re.compile(r"^(?P<model>.+)\.v(?P<version>[^.]+)$")


def split_name(text: str) -> Name:
    """``a/b.c`` or ``a.b.c`` as lower-cased parts; quotes and brackets dropped."""
    parts = re.split(r"[/.]", text.strip().strip('`"[]').lower())
    return tuple(p.strip('`"[]') for p in parts if p.strip('`"[]'))


def dataset_names(dataset: Dataset, extra: Sequence[str] = ()) -> set[Name]:
    """Every name a consumer may use for ``dataset``.

    A dbt model in a project also goes by ``(project, model)``: the Jinja
    pre-pass writes ``ref('platform', 'stg_orders')`` as ``platform.stg_orders``.
    A dbt version ``orders.v2`` goes by ``orders_v2`` (a pinned
    ``ref('orders', v=2)``), and by ``orders`` only while it is the version an
    unpinned ``ref('orders')`` resolves to (``unpinned_name``: dbt's
    ``latest_version``, else the greatest version): a prerelease ``v3`` above
    ``latest_version: 2`` has no unpinned readers.
    """
    names: set[Name] = set()
    dataset_id = bare_id(dataset)
    version = _DBT_VERSION.match(dataset_id) if dataset.format == "dbt" else None
    if version:
        model, label = version["model"], version["version"]
        names.add((f"{model}_v{label}".lower(),))
        if dataset.unpinned_name:
            names.add((model.lower(),))
    else:
        names.add(split_name(dataset_id))
    if dataset.project is not None:
        project = dataset.project.lower()
        names |= {(project, *n) for n in names if len(n) == 1}
    for alias in (*dataset.aliases, *extra):
        if alias:
            names.add(split_name(alias))
    return {n for n in names if n}


def search_words(dataset: Dataset, extra: Sequence[str] = ()) -> set[str]:
    """The words a file must contain to possibly read ``dataset`` (``git grep -w``).

    A pinned ``ref('orders', v=1)`` has the word ``orders``, not ``orders_v1``,
    so every version is looked for under its model name too, latest or not.
    """
    words = {name[-1] for name in dataset_names(dataset, extra)}
    version = _DBT_VERSION.match(bare_id(dataset)) if dataset.format == "dbt" else None
    if version:
        words.add(version["model"].lower())
    return words


def as_resolved_at_head(base: Sequence[Dataset], head: Sequence[Dataset]) -> list[Dataset]:
    """Both sides' datasets, with each unpinned dbt name where HEAD resolves it.

    Consumers are read at HEAD, so an unpinned ``ref('orders')`` reads HEAD's
    latest version: a base version loses ``unpinned_name`` when HEAD has the
    model (the same project and unpinned name) or the same version, unless
    that is the very dataset HEAD resolves it to. Only a model gone from HEAD
    altogether keeps the base's answer (its unpinned readers are broken).
    """
    at_head: dict[tuple[str | None, str], str] = {
        (d.project, d.unpinned_name): d.id for d in head if d.unpinned_name
    }
    head_ids = {(d.project, d.id) for d in head}
    out: list[Dataset] = []
    for dataset in base:
        if dataset.unpinned_name:
            key = (dataset.project, dataset.unpinned_name)
            moved = at_head.get(key, dataset.id) != dataset.id
            if moved or (key not in at_head and (dataset.project, dataset.id) in head_ids):
                dataset = replace(dataset, unpinned_name=None)
        out.append(dataset)
    return [*out, *head]


def added_ids(
    base: Sequence[Dataset], head: Sequence[Dataset], changes: Sequence[Change]
) -> frozenset[str]:
    """Datasets new in the pull request: at HEAD only, and not a rename's new id.

    A renamed dataset (``model_renamed``: the pair carries ``old_dataset``)
    succeeds a base dataset and keeps competing for its names; a dataset the
    diff could not pair with a base one (a move with new columns) is new.
    """
    renamed = {c.dataset for c in changes if c.old_dataset and c.old_dataset != c.dataset}
    base_ids = {d.id for d in base}
    return frozenset(d.id for d in head if d.id not in base_ids and d.id not in renamed)


def added_names(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    extra: Mapping[str, Sequence[str]] | None = None,
) -> frozenset[tuple[Name, str]]:
    """Aliases the pull request gives a dataset the base side already has: ``(name, id)``.

    A kept contract that gains a name (an ODCS object's logical ``name``, a dbt
    ``config.alias``) is as much the pull request's word as an added contract:
    ``misc_tbl`` newly named ``warehouse.orders`` must not take the reader of
    ``warehouse.orders`` from the base's ``orders`` either. Only aliases count:
    the names an id and a dbt version make (the unpinned one moves with
    ``latest_version``, ``as_resolved_at_head``) stay as they are. Added and
    renamed datasets are left to ``added_ids``.
    """
    extra = extra or {}
    before: dict[str, set[Name]] = {}
    for dataset in base:
        before.setdefault(dataset.id, set()).update(
            dataset_names(dataset, configured(extra, dataset))
        )
    out: set[tuple[Name, str]] = set()
    for dataset in head:
        known = before.get(dataset.id)
        if known is None:
            continue
        for alias in dataset.aliases:
            name = split_name(alias) if alias else ()
            if name and name not in known:
                out.add((name, dataset.id))
    return frozenset(out)


def configured(extra: Mapping[str, Sequence[str]], dataset: Dataset) -> Sequence[str]:
    """The ``consumers.tables`` names of a dataset: by its id, or by its bare dbt
    model name when the run shows it as ``<project>.<model>``."""
    return extra.get(dataset.id) or extra.get(bare_id(dataset), ())


def _overlap(written: Name, name: Name) -> int:
    """How many trailing parts agree; 0 unless all of the shorter one agree."""
    size = min(len(written), len(name))
    if size == 0 or written[-size:] != name[-size:]:
        return 0
    return size


#: Narrows one tier's best matches (``ScopedIndex``: dbt resolves refs by project).
Narrow = Callable[[set[str]], set[str]]


class NameIndex:
    """Dataset ids by the table names consumers write.

    ``added``: ids of datasets the pull request adds (``added_ids``);
    ``added_names``: names it gives datasets the base has (``added_names``).
    They own only reads that no other name agrees with; ``claimants`` names
    their datasets where they would have won.
    """

    def __init__(
        self,
        datasets: Iterable[Dataset],
        extra: Mapping[str, Sequence[str]] | None = None,
        added: Collection[str] = frozenset(),
        added_names: Collection[tuple[Name, str]] = frozenset(),
    ) -> None:
        extra = extra or {}
        #: last part -> (name, dataset id, whether the name is the pull request's own)
        self._by_last: dict[str, list[tuple[Name, str, bool]]] = {}
        #: dbt model ids -> their project (lower-cased), for ``DbtScope``.
        self.projects: dict[str, str] = {}
        #: dbt model ids -> the model file stems that build them (lower-cased).
        self.models: dict[str, frozenset[str]] = {}
        self.added = frozenset(added)
        new_names = frozenset(added_names)
        #: Whether any dataset or name is the pull request's own (then reads are tiered).
        self.tiered = bool(self.added or new_names)
        seen: set[tuple[Name, str]] = set()
        for dataset in datasets:
            if dataset.project is not None:
                self.projects[dataset.id] = dataset.project.lower()
                self.models[dataset.id] = frozenset(m.lower() for m in dataset.model_names)
            for name in dataset_names(dataset, configured(extra, dataset)):
                if (name, dataset.id) not in seen:
                    seen.add((name, dataset.id))
                    new = dataset.id in self.added or (name, dataset.id) in new_names
                    self._by_last.setdefault(name[-1], []).append((name, dataset.id, new))

    def best(self, written: Name, tier: bool | None = None) -> set[str]:
        """The ids whose names agree longest with ``written`` (several only on a
        true tie), among all names (``tier=None``), the pull request's own
        (``True``: ``added``, ``added_names``) or the others (``False``)."""
        return {dataset_id for dataset_id, _new in self._winners(written, tier)}

    def _winners(self, written: Name, tier: bool | None) -> set[tuple[str, bool]]:
        if not written:
            return set()
        best = 0
        found: set[tuple[str, bool]] = set()
        for name, dataset_id, new in self._by_last.get(written[-1], ()):
            if tier is not None and new != tier:
                continue
            score = _overlap(written, name)
            if score > best:
                best, found = score, {(dataset_id, new)}
            elif score and score == best:
                found.add((dataset_id, new))
        return found

    def lookup(self, written: Name, narrow: Narrow | None = None) -> set[str]:
        """The dataset ids a table reference reads: the base's datasets first, the
        added ones only for a name none of those agrees with (after ``narrow``)."""
        if not self.tiered:
            found = self.best(written)
            return narrow(found) if narrow is not None and found else found
        for tier in (False, True):
            found = self.best(written, tier)
            if narrow is not None and found:
                found = narrow(found)
            if found:
                return found
        return set()

    def claimants(self, written: Name, narrow: Narrow | None = None) -> set[str]:
        """Datasets that ``written`` names, by a name the pull request gave them, at
        least as well as any other: the table still exists at HEAD under an added
        contract or name (a move, a rename the diff could not pair), though the
        read stays its base owner's."""
        if not self.tiered:
            return set()
        winners = self._winners(written, None)
        found = {dataset_id for dataset_id, _new in winners}
        if narrow is not None and found:
            found = narrow(found)
        return {dataset_id for dataset_id, new in winners if new and dataset_id in found}

    def needles(self) -> set[str]:
        """The last part of every name: what ``git grep -F -i`` looks for."""
        return set(self._by_last)


@dataclass(frozen=True)
class DbtScope:
    """Where a dbt model file sits: its project and the model names that project has.

    ``local`` is every model file stem of the project (``stg_orders``,
    ``orders_v2``): a one-argument ``ref`` to one of them resolves inside the
    project, as dbt resolves it (the current project first), even when that
    model has no contract. ``ref_projects`` are the projects the file names in
    two-argument refs.

    A model never reads its own relation by name (``ref`` to itself is a cycle
    dbt refuses), so ``source('other', 'orders')`` in ``orders.sql`` reads
    another project's ``orders`` (or a table outside dbt), never the file's own
    model: ``ScopedIndex`` drops it.
    """

    project: str
    local: frozenset[str] = frozenset()
    ref_projects: frozenset[str] = frozenset()
    #: The file's own model (its stem, lower case; ``""`` for a properties file):
    #: a table name it reads that names that model is another relation.
    own: str = ""

    def is_local(self, name: str) -> bool:
        """Whether the project has a model ``name`` (``orders_v2.sql`` is ``orders`` too)."""
        if name in self.local:
            return True
        version = re.compile(rf"{re.escape(name)}_v\d[\w.]*")
        return any(version.fullmatch(stem) for stem in self.local)


class ScopedIndex:
    """A ``NameIndex`` as seen from one dbt model file: refs resolve as dbt resolves them.

    - ``ref('p', 'm')`` (written ``p.m``) names project ``p``'s model: dbt
      models of other projects drop out;
    - ``ref('m')`` names the file's own project's ``m`` when the project has
      one (contracted or not); only when it has none may it be another
      project's model.

    Non-dbt datasets (a Soda or ODCS contract on the same table) and dbt
    models outside any project are kept as the plain index finds them.
    """

    def __init__(self, index: NameIndex, scope: DbtScope) -> None:
        self.index = index
        self.scope = scope

    def lookup(self, written: Name) -> set[str]:
        return self.index.lookup(written, lambda found: self._narrow(written, found))

    def claimants(self, written: Name) -> set[str]:
        return self.index.claimants(written, lambda found: self._narrow(written, found))

    def _narrow(self, written: Name, found: set[str]) -> set[str]:
        projects = self.index.projects
        if self.scope.own:
            found = {
                i
                for i in found
                if projects.get(i) != self.scope.project
                or self.scope.own not in self.index.models.get(i, ())
            }
        dbt = {i for i in found if i in projects}
        if not dbt:
            return found
        others = found - dbt
        known = self.scope.ref_projects | {self.scope.project} | set(projects.values())
        if len(written) >= 2 and written[-2] in known:
            return others | {i for i in dbt if projects[i] == written[-2]}
        if len(written) == 1:
            own = {i for i in dbt if projects[i] == self.scope.project}
            if own:
                return others | own
            if self.scope.is_local(written[0]):
                return others
        return found
