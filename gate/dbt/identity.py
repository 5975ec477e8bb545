"""Which dbt models are one dataset: dbt keys a model by project *and* name.

dbt builds a node's ``unique_id`` as ``model.<project>.<model>`` (plus
``.v<N>`` for a version), so two projects of one repository (a dbt Mesh
monorepo) may each have a ``stg_orders``; a cross-project
``ref('platform', 'stg_orders')`` names one of them. Inside one project a
name is unique (dbt refuses a second one), and the gate fails closed there
too.

A dataset's id stays the bare model name while that is unambiguous in the
run, so single-project repositories read exactly as before. When datasets of
one model name belong to two projects on either side of the comparison, or
a model's project changed between the sides, each of them is shown as
``<project>.<model>`` (dbt's ``unique_id`` without the ``model.`` prefix, and
the two-argument ``ref`` spelled with a dot), on both sides, so base and
HEAD pair by project and name. A project renamed in place is the same
project. Pure: datasets in, datasets out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from gate.diff import SeverityFn
from gate.formats.dbt.settings import UNKNOWN_ACCESS
from gate.model import Dataset
from gate.rules import Severity

_VERSION = re.compile(r"^(?P<model>.+)\.v[^.]+$")


def model_name(dataset: Dataset) -> str:
    """The dbt model a dataset belongs to (``orders`` for ``orders.v2``)."""
    match = _VERSION.match(dataset.id) if dataset.format == "dbt" else None
    return match["model"] if match else dataset.id


def same_dataset(a: Dataset, b: Dataset) -> bool:
    """Whether two declarations claim one dataset (a clash when in two files).

    Ids that differ only by case count as one (most warehouses resolve them to
    one table); two dbt models in different projects never do, nor do two
    formats (an enforced dbt model beside an ODCS contract of its table is two
    contracts: ``gate.declarations``).
    """
    if a.id.casefold() != b.id.casefold() or a.format != b.format:
        return False
    return a.project is None or b.project is None or a.project == b.project


def _projects(side: Iterable[Dataset]) -> dict[str, set[str]]:
    """Model name (case-folded) -> the projects that have it."""
    projects: dict[str, set[str]] = {}
    for dataset in side:
        if dataset.project is not None:
            projects.setdefault(model_name(dataset).casefold(), set()).add(dataset.project)
    return projects


def shared_names(base: Iterable[Dataset], head: Iterable[Dataset]) -> set[str]:
    """Model names (case-folded) whose project tells datasets apart in this run.

    A name two projects use on one side, and a name whose project changed
    between the sides (a model moved to another project: dbt's ``unique_id``
    changed, and ``ref('platform', 'm')`` no longer finds it).
    """
    before, after = _projects(base), _projects(head)
    shared = {name for side in (before, after) for name, found in side.items() if len(found) > 1}
    return shared | {name for name in before.keys() & after.keys() if before[name] != after[name]}


def follow_renames(base: Iterable[Dataset], renamed: Mapping[str, str]) -> list[Dataset]:
    """Base datasets with their project's HEAD name when the project was renamed
    in place (its ``dbt_project.yml`` ``name:`` changed, not its folder): the
    same project, so its models still pair with themselves.

    A model that was ``public`` keeps its base project: other projects read it
    as ``ref('<project>', '<model>')``, which no longer compiles under the new
    name, so its ``unique_id`` changed as for a model moved to another project
    (``model_renamed``). Only public models can be read across projects; an
    ``access`` the gate cannot evaluate (Jinja) may be public, so it does not follow.
    """
    return [
        replace(d, project=renamed[d.project])
        if d.project is not None
        and d.project in renamed
        and d.access not in ("public", UNKNOWN_ACCESS)
        else d
        for d in base
    ]


def _qualified(dataset: Dataset, shared: set[str]) -> Dataset:
    if dataset.project is None or model_name(dataset).casefold() not in shared:
        return dataset
    unpinned = dataset.unpinned_name
    return replace(
        dataset,
        id=f"{dataset.project}.{dataset.id}",
        unpinned_name=f"{dataset.project}.{unpinned}" if unpinned else None,
    )


def qualify(
    base: Sequence[Dataset], head: Sequence[Dataset]
) -> tuple[list[Dataset], list[Dataset]]:
    """Both sides with ``<project>.<model>`` ids where the project tells models apart."""
    shared = shared_names(base, head)
    if not shared:
        return list(base), list(head)
    return [_qualified(d, shared) for d in base], [_qualified(d, shared) for d in head]


def bare_id(dataset: Dataset) -> str:
    """The id without the project a shared name was qualified with."""
    prefix = f"{dataset.project}."
    if dataset.project is not None and dataset.id.startswith(prefix):
        return dataset.id[len(prefix) :]
    return dataset.id


def ack_names(datasets: Iterable[Dataset]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(exact, short) extra acknowledgement names per dataset id.

    Exact: ``<project>.<model>`` and dbt's ``model.<project>.<model>`` for every
    dbt model in a project, shared name or not (the precise token keeps working
    when another project later adds the same name). Short: the bare model name
    of a qualified id, which acknowledges only when it names one changed
    dataset (``gate.acks`` reports it as ambiguous otherwise).
    """
    exact: dict[str, set[str]] = {}
    short: dict[str, set[str]] = {}
    for dataset in datasets:
        if dataset.project is None:
            continue
        bare = bare_id(dataset)
        qualified = f"{dataset.project}.{bare}"
        exact.setdefault(dataset.id, set()).update({qualified, f"model.{qualified}"})
        if bare != dataset.id:
            short.setdefault(dataset.id, set()).add(bare)
    return exact, short


def policy_severity(
    severity_of: SeverityFn,
    datasets: Iterable[Dataset],
    renamed_projects: Mapping[str, str] | None = None,
) -> SeverityFn:
    """``severity_of`` where a policy may name a dbt model either way.

    A policy written for ``stg_orders`` still covers ``platform.stg_orders``
    when the run qualifies the name, and ``platform.*`` covers every model of
    the ``platform`` project whether or not its name is shared. Policies only
    ever raise a severity to ``error``, so a model gets the strictest answer
    over its names. A project renamed in place (``renamed_projects``: base name
    -> HEAD name) keeps its base name too: a pull request that renames it must
    not slip out of the base config's ``platform.*`` policy.
    """
    before = {new: old for old, new in (renamed_projects or {}).items()}
    names: dict[str, set[str]] = {}
    for dataset in datasets:
        if dataset.project is not None:
            bare = bare_id(dataset)
            projects = {dataset.project, before.get(dataset.project, dataset.project)}
            names.setdefault(dataset.id, set()).update({bare, *(f"{p}.{bare}" for p in projects)})
            names[dataset.id].discard(dataset.id)
    if not names:
        return severity_of

    def of(rule_id: str, dataset_id: str, breaks: str | None = None) -> Severity:
        severity = severity_of(rule_id, dataset_id, breaks)
        if severity is Severity.ERROR:
            return severity
        for other in sorted(names.get(dataset_id, ())):
            if severity_of(rule_id, other, breaks) is Severity.ERROR:
                return Severity.ERROR
        return severity

    return of
