"""Consumers outside the repository: every configured source read, one deadline for all.

``external_reads`` dispatches per source kind (a dbt manifest, an OpenLineage
JSON Lines export, a Marquez-compatible lineage API) and turns each into
``ExternalRead`` values. A source that cannot be read is a warning naming it,
never an exit 2 and never a silent pass: its readers are unknown, which the
usage-aware severity must see (``gate.lineage.attach``).

The engine asks only when the run has a breaking change that wants consumers
(``gate.consumers.impact.wants_consumers``), so a run without one fetches
nothing. The sources are the base side's (``gate.lineage.settings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate.consumers.sql import ColumnsOf
from gate.lineage.dbt_mesh import ManifestError, read_manifest, unknown_columns
from gate.lineage.external import ExternalRead
from gate.lineage.fetch import Deadline, SourceError, fetch_url, is_url, read_path
from gate.lineage.openlineage import EventsResult, LineageSourceError
from gate.lineage.settings import LineageConfig
from gate.lineage.where import Where
from gate.workers import Workers


def _warning(source: str, why: str) -> str:
    return (
        f"lineage source {source} was not read ({why}); consumers it would name are not "
        "listed, and usage-aware severity lowers nothing in this run"
    )


def _bytes(where: Where, location: str, deadline: Deadline) -> bytes:
    if is_url(location):
        return fetch_url(location, deadline)
    deadline.left()
    return read_path(where.repo, where.base_commit, where.head_commit, location)


def external_reads(
    config: LineageConfig,
    where: Where,
    wanted: Callable[[str], bool],
    names: Sequence[str],
    dialect: str,
    columns_of: ColumnsOf | None = None,
    workers: Workers | None = None,
    changed_columns: Callable[[str], frozenset[str] | None] | None = None,
) -> tuple[list[ExternalRead], list[str]]:
    """(reads, warnings): the reads of ``wanted`` datasets in every configured source.

    ``wanted`` is asked with a source's dataset name (a dbt unique id, an
    OpenLineage ``namespace/name``); ``names`` are the external names of the
    changed datasets the config maps (``lineage.datasets``), what a lineage API
    is asked about. One warning per source that could not be read. ``workers``:
    the run's pool, where a manifest's readers are analysed (``columns_of``
    must then pickle). ``changed_columns``: the columns of a ``wanted`` dataset
    the run wants readers of (``None``: all), so a manifest reader whose SQL
    cannot read them is not parsed (``gate.lineage.dbt_mesh.cannot_read``).
    """
    deadline = Deadline.after(config.timeout_seconds)
    reads: list[ExternalRead] = []
    warnings: list[str] = []
    for location in config.dbt_manifests:
        try:
            data = _bytes(where, location, deadline)
            reads += read_manifest(
                data,
                location,
                dialect,
                wanted,
                columns_of or unknown_columns,
                deadline.left,
                workers,
                changed_columns,
                trust_unread=not config.usage_aware_severity,
            )
        except (SourceError, ManifestError) as exc:
            warnings.append(_warning(location, str(exc)))
    for location in config.openlineage_events:
        try:
            found = _events(_bytes(where, location, deadline), location, deadline)
        except (SourceError, LineageSourceError) as exc:
            warnings.append(_warning(location, str(exc)))
            continue
        reads += [r for r in found.reads if wanted(r.dataset)]
        warnings += _skipped(location, found.warnings)
    if config.openlineage_api:
        warnings += _api(config.openlineage_api, names, wanted, deadline, reads)
    return reads, warnings


def _events(data: bytes, location: str, deadline: Deadline) -> EventsResult:
    from gate.lineage.openlineage import read_events_with_warnings

    return read_events_with_warnings(data, location, tick=deadline.left)


#: Skipped lines of one export listed before the rest are counted.
SKIPPED_LISTED = 5


def _skipped(location: str, skipped: Sequence[str]) -> list[str]:
    """Lines of an export that were not read: named, so a reader is never lost silently."""
    if not skipped:
        return []
    listed = "; ".join(skipped[:SKIPPED_LISTED])
    more = len(skipped) - SKIPPED_LISTED
    tail = f" (and {more} more)" if more > 0 else ""
    return [
        f"lineage source {location}: {len(skipped)} part(s) not read, so the readers they "
        f"name are not listed and usage-aware severity lowers nothing in this run: "
        f"{listed}{tail}"
    ]


def _api(
    url: str,
    names: Sequence[str],
    wanted: Callable[[str], bool],
    deadline: Deadline,
    reads: list[ExternalRead],
) -> list[str]:
    """Ask a Marquez-compatible lineage API about the mapped datasets; warnings back."""
    from gate.lineage.marquez import read_api  # only when an API is configured

    if not names:
        return [
            _warning(
                url,
                "no changed dataset has an OpenLineage name in lineage.datasets, so there "
                "was nothing to ask it",
            )
        ]
    try:
        timeout = deadline.left()
        found = read_api(url, list(names), timeout)
    except (SourceError, LineageSourceError) as exc:
        return [_warning(url, str(exc))]
    reads += [r for r in found.reads if wanted(r.dataset)]
    return found.warnings()  # a dataset the API does not know: named, the rest listed
