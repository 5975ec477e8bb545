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

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gate.consumers.sql import ColumnsOf
from gate.git import Repo
from gate.lineage.dbt_mesh import ManifestError, read_manifest
from gate.lineage.external import ExternalRead
from gate.lineage.fetch import Deadline, SourceError, fetch_url, is_url, read_path
from gate.lineage.settings import LineageConfig

#: What a run says when an OpenLineage source is configured but its reader is not
#: part of this build (the modules of gate/lineage/openlineage.py and marquez.py).
OPENLINEAGE_MISSING = "OpenLineage source not available in this build"


@dataclass(frozen=True)
class Where:
    """Where the run reads path sources: the repository, its base and HEAD commits."""

    repo: Repo
    base_commit: str
    head_commit: str | None


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


def _optional(module: str, name: str) -> Callable[..., list[ExternalRead]] | None:
    """A function of another source module, or ``None`` when this build has none."""
    try:
        found = importlib.import_module(f"gate.lineage.{module}")
    except ImportError:
        return None
    function = getattr(found, name, None)
    return function if callable(function) else None


def external_reads(
    config: LineageConfig,
    where: Where,
    wanted: Callable[[str], bool],
    names: Sequence[str],
    dialect: str,
    columns_of: ColumnsOf = lambda _name: None,
) -> tuple[list[ExternalRead], list[str]]:
    """(reads, warnings): the reads of ``wanted`` datasets in every configured source.

    ``wanted`` is asked with a source's dataset name (a dbt unique id, an
    OpenLineage ``namespace/name``); ``names`` are the external names of the
    changed datasets the config maps (``lineage.datasets``), what a lineage API
    is asked about. One warning per source that could not be read.
    """
    deadline = Deadline.after(config.timeout_seconds)
    reads: list[ExternalRead] = []
    warnings: list[str] = []
    for location in config.dbt_manifests:
        try:
            data = _bytes(where, location, deadline)
            reads += read_manifest(data, location, dialect, wanted, columns_of, deadline.left)
        except (SourceError, ManifestError) as exc:
            warnings.append(_warning(location, str(exc)))
    read_events = _optional("openlineage", "read_events") if config.openlineage_events else None
    for location in config.openlineage_events:
        if read_events is None:
            warnings.append(_warning(location, OPENLINEAGE_MISSING))
            continue
        try:
            text = _bytes(where, location, deadline).decode("utf-8")
            reads += [r for r in read_events(text, location) if wanted(r.dataset)]
        except SourceError as exc:
            warnings.append(_warning(location, str(exc)))
        except UnicodeDecodeError:
            warnings.append(_warning(location, "not UTF-8 text"))
        except Exception as exc:  # the reader's LineageSourceError, or a bug: never exit 2
            warnings.append(_warning(location, str(exc) or type(exc).__name__))
    if config.openlineage_api:
        warnings += _api(config.openlineage_api, names, wanted, deadline, reads)
    return reads, warnings


def _api(
    url: str,
    names: Sequence[str],
    wanted: Callable[[str], bool],
    deadline: Deadline,
    reads: list[ExternalRead],
) -> list[str]:
    """Ask a Marquez-compatible lineage API about the mapped datasets; warnings back."""
    fetch_reads = _optional("marquez", "fetch_reads")
    if fetch_reads is None:
        return [_warning(url, OPENLINEAGE_MISSING)]
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
        reads += [r for r in fetch_reads(url, list(names), timeout) if wanted(r.dataset)]
    except SourceError as exc:
        return [_warning(url, str(exc))]
    except Exception as exc:  # the reader's LineageSourceError, or a bug: never exit 2
        return [_warning(url, str(exc) or type(exc).__name__)]
    return []


def changed_notice(base: LineageConfig, head: LineageConfig, file: str | None) -> list[str]:
    """A notice when the pull request edits ``lineage:``: the base's applies until merged."""
    if base == head:
        return []
    return [
        f"this PR changes lineage: in {file or 'the config'}; the base branch's lineage "
        "settings apply until it is merged"
    ]
