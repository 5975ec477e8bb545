"""Jobs that read a dataset, from an export of OpenLineage run events.

Why: a job in another repository (a Spark job, an Airflow task) that reads a
contract's dataset breaks when a column goes, and its code is not in this pull
request. OpenLineage run events are the open record of who read what: each
event names the job (``job.namespace``/``job.name``) and the datasets it read
(``inputs[]``), and Spark's integration adds the ``columnLineage`` facet on the
outputs, which names the input columns each output column comes from. This
module turns an export of such events (JSON Lines, one JSON array, one
pretty-printed event, or Marquez's ``GET /api/v1/events/lineage`` answer
``{"events": [...]}``) into ``ExternalRead`` values; it never runs a job,
never fetches anything, and treats the text as untrusted data.

What is read (OpenLineage spec 2-0-2, ColumnLineageDatasetFacet 1-2-0):

- ``job.namespace`` + ``job.name`` -> the consumer ``<namespace>/<name>``.
- ``inputs[].namespace`` + ``inputs[].name`` -> the dataset ``<namespace>/<name>``.
- ``inputs[].facets.symlinks.identifiers[]`` (Spark writes the Hive or catalog
  table there, e.g. ``default.orders`` beside ``file`` + ``/warehouse/orders``):
  each identifier gives one more read of the same job, with the dataset named
  ``<namespace>/<name>`` (just ``<name>`` when the identifier has no namespace),
  the same columns and the same location. Matching a contract to any one of
  the names is enough; the primary name always comes first.
- ``outputs[].facets.columnLineage.fields.<out>.inputFields[]`` and the facet's
  ``dataset[]`` list (indirect uses: filters, joins, grouping) -> the columns of
  each input the job reads, lower-cased.

Columns are known for a (job, input) only when every event of the job that
wrote outputs carried a ``columnLineage`` facet on each output and that facet
names at least one column of the input; otherwise ``columns`` is ``None`` (the
job may read any column). Events without outputs
(a START before the plan is known) say nothing about columns either way. Many
events of one job (START, RUNNING, COMPLETE; many runs) merge into one read
per dataset name.

Bounds: the text (or the file's bytes) is refused as a whole above
``max_chars`` (``LineageSourceError``),
parsing is one pass of msgspec's JSON decoder per line (``json.loads`` for a
line it refuses, so what reads and what warns is as before), and the work after it is
linear in the parsed size. A line that is not a JSON object, nests too deeply
or lacks a job is skipped with a warning naming its line; never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gate.lineage.external import ExternalRead

#: Characters of one export, checked before anything is parsed. Spark events
#: run to a few KB each (a plan facet can reach 100 KB); 64 MB is tens of
#: thousands of runs, and parses in a few seconds on a CI runner.
MAX_CHARS = 64 * 1024 * 1024

#: Warnings listed one by one; the rest are counted in one last line.
MAX_WARNINGS = 20


class LineageSourceError(Exception):
    """A lineage source that cannot be read as a whole; the message names it.

    The caller turns it into a warning naming the source (issue #25: an
    unreachable source is never a silent pass and never exit 2).
    """


@dataclass(frozen=True)
class EventsResult:
    """The reads found in an export, and one warning per skipped line or item."""

    reads: tuple[ExternalRead, ...]
    warnings: tuple[str, ...] = ()


def read_events(
    text: str | bytes, source: str, *, max_chars: int = MAX_CHARS
) -> list[ExternalRead]:
    """The reads in ``text`` (see the module docstring); skipped lines are dropped.

    Use :func:`read_events_with_warnings` to report the skipped lines.
    Raises ``LineageSourceError`` when the text is too large or is a JSON
    array that does not parse.
    """
    return list(read_events_with_warnings(text, source, max_chars=max_chars).reads)


def read_events_with_warnings(
    text: str | bytes,
    source: str,
    *,
    max_chars: int = MAX_CHARS,
    tick: Callable[[], object] | None = None,
) -> EventsResult:
    """The reads in ``text`` and a warning (``<source>:<line>: ...``) per skipped part.

    ``text`` may be the file's bytes (UTF-8; the bound then counts bytes,
    checked before decoding) or its text. ``tick`` is called every
    ``_TICK_LINES`` lines (the run's lineage deadline raises there): 16 MB of
    broken lines took 73 s of CPU.
    """
    unit = "bytes" if isinstance(text, bytes) else "characters"
    if len(text) > max_chars:
        raise LineageSourceError(
            f"{source}: {len(text):,} {unit} of OpenLineage events, more than the "
            f"{max_chars:,} read; split the export"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise LineageSourceError(
                f"{source}: not valid UTF-8 (byte {exc.start}); OpenLineage events are UTF-8 JSON"
            ) from None
    merger = _Merger(source)
    for line, event in _events(text, source, merger, tick):
        merger.add(line, event)
    return EventsResult(tuple(merger.reads()), tuple(merger.warnings()))


#: Lines (or array items) read between two calls of the deadline's ``tick``.
_TICK_LINES = 4096


def _events(
    text: str, source: str, merger: _Merger, tick: Callable[[], object] | None = None
) -> Iterator[tuple[int, Any]]:
    """Each event with its line: a JSON array as a whole, or one object per line
    (``tick`` also between broken lines, which yield nothing)."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("["):
        try:
            events = json.loads(stripped)
        except (ValueError, RecursionError) as exc:
            where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
            raise LineageSourceError(
                f"{source}{where}: not a JSON array of OpenLineage events ({_reason(exc)})"
            ) from None
        offset = text.count("\n", 0, len(text) - len(stripped))
        for index, event in enumerate(events):
            if tick is not None and index % _TICK_LINES == _TICK_LINES - 1:
                tick()
            # One array has no line per event; the item's number stands in for it.
            yield offset + 1, _Indexed(index, event)
        return
    if stripped.startswith("{") and "\n" in stripped.rstrip():
        # One pretty-printed event (as the OpenLineage clients' examples are
        # written); JSON Lines fail here with "Extra data" after the first line.
        try:
            event = json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            yield text.count("\n", 0, len(text) - len(stripped)) + 1, event
            return
    # JSON Lines end lines with "\n" only: str.splitlines would also split at
    # U+2028 and the like, which JSON strings may hold unescaped.
    loads = _line_decoder()
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        if tick is not None and number % _TICK_LINES == 0:
            tick()
        if not raw.strip():
            continue
        try:
            yield number, loads(raw)
        except (ValueError, RecursionError) as exc:
            merger.warn(number, f"not a JSON object ({_reason(exc)}); line skipped")


def _line_decoder() -> Callable[[str], Any]:
    """``json.loads`` of one line, by msgspec: half its CPU on Spark's events (a
    10,000-event export: 0.16 s against 0.30 s, docs/impact.md). A line msgspec
    refuses (not JSON, or JSON only the standard library reads: ``NaN``, a lone
    surrogate; nested too deeply) is read by ``json.loads``, whose value, or error
    and message, is the line's: the same events and the same warnings as before.
    msgspec is imported here, when an export is read."""
    import msgspec

    decode = msgspec.json.Decoder().decode

    def loads(raw: str) -> Any:
        try:
            return decode(raw)
        except (msgspec.DecodeError, RecursionError):
            return json.loads(raw)

    return loads


def _reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0][:120]


@dataclass(frozen=True)
class _Indexed:
    """An item of a JSON array export, with its position for warnings."""

    index: int
    event: Any


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _name(node: Any) -> str | None:
    """``<namespace>/<name>`` of a job, dataset or input field; ``None`` if either is missing."""
    if not isinstance(node, dict):
        return None
    namespace, name = _text(node.get("namespace")), _text(node.get("name"))
    if namespace is None or name is None:
        return None
    return f"{namespace}/{name}"


def _facet(node: Any, key: str) -> dict[str, Any] | None:
    """A facet of ``node``, unless absent, malformed or marked ``_deleted``."""
    facets = node.get("facets") if isinstance(node, dict) else None
    facet = facets.get(key) if isinstance(facets, dict) else None
    if not isinstance(facet, dict) or facet.get("_deleted") is True:
        return None
    return facet


def _aliases(dataset: dict[str, Any]) -> list[str]:
    """The names the ``symlinks`` facet gives a dataset (Spark: the Hive table)."""
    facet = _facet(dataset, "symlinks")
    identifiers = facet.get("identifiers") if facet else None
    names: list[str] = []
    for identifier in identifiers if isinstance(identifiers, list) else ():
        if not isinstance(identifier, dict):
            continue
        name = _text(identifier.get("name"))
        if name is None:
            continue
        namespace = _text(identifier.get("namespace"))
        names.append(f"{namespace}/{name}" if namespace else name)
    return names


def _column_lineage(outputs: list[Any]) -> dict[str, set[str]] | None:
    """Input columns per input dataset name, when every output has column lineage."""
    if not outputs:
        return None
    used: dict[str, set[str]] = {}
    for output in outputs:
        facet = _facet(output, "columnLineage")
        if facet is None:
            return None
        fields = facet.get("fields")
        inputs: list[Any] = []
        if isinstance(fields, dict):
            for lineage in fields.values():
                found = lineage.get("inputFields") if isinstance(lineage, dict) else None
                if isinstance(found, list):
                    inputs.extend(found)
        indirect = facet.get("dataset")
        if isinstance(indirect, list):
            inputs.extend(indirect)
        for item in inputs:
            name, column = _name(item), _text(item.get("field")) if isinstance(item, dict) else None
            if name is not None and column is not None:
                used.setdefault(name, set()).add(column.lower())
    return used


@dataclass
class _Read:
    """What the events so far say about one job reading one dataset."""

    location: str
    aliases: list[str] = field(default_factory=list)
    columns: set[str] = field(default_factory=set)
    #: Some event with outputs had no column lineage: the columns are not known.
    unknown: bool = False
    #: Some event gave the columns (an empty set then means "none read").
    known: bool = False


class _Merger:
    """Merges reads over events, keyed by (job, primary dataset name)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._reads: dict[tuple[str, str], _Read] = {}
        self._warnings: list[str] = []
        self._skipped = 0

    def warn(self, line: int, message: str) -> None:
        if len(self._warnings) < MAX_WARNINGS:
            self._warnings.append(f"{self.source}:{line}: {message}")
        else:
            self._skipped += 1

    def warnings(self) -> list[str]:
        if self._skipped:
            return [*self._warnings, f"{self.source}: {self._skipped} more lines or items skipped"]
        return list(self._warnings)

    def add(self, line: int, event: Any) -> None:
        where = f"item {event.index}" if isinstance(event, _Indexed) else None
        if isinstance(event, _Indexed):
            event = event.event
        prefix = f"{where}: " if where else ""
        if where is None and isinstance(event, dict) and "job" not in event:
            listed = event.get("events")
            if isinstance(listed, list):
                # Marquez's GET /api/v1/events/lineage: {"events": [...], "totalCount": n}.
                for index, item in enumerate(listed):
                    self.add(line, _Indexed(index, item))
                return
        if not isinstance(event, dict):
            self.warn(line, f"{prefix}not a JSON object; skipped")
            return
        if "job" not in event and "dataset" in event:
            return  # a DatasetEvent: no job reads anything
        job = _name(event.get("job"))
        if job is None:
            self.warn(line, f"{prefix}no job namespace and name; event skipped")
            return
        inputs = event.get("inputs")
        outputs = event.get("outputs")
        inputs = inputs if isinstance(inputs, list) else []
        outputs = outputs if isinstance(outputs, list) else []
        lineage = _column_lineage(outputs)
        location = f"{self.source}:{line}" + (f" ({where})" if where else "")
        seen: set[str] = set()
        for position, dataset in enumerate(inputs):
            name = _name(dataset)
            if name is None:
                self.warn(line, f"{prefix}input {position} has no namespace and name; skipped")
                continue
            aliases = _aliases(dataset)
            seen.add(name)
            seen.update(aliases)
            columns: set[str] | None = None
            if lineage is not None:
                columns = set(lineage.get(name, ()))
                for alias in aliases:
                    columns |= lineage.get(alias, set())
                # An input the facet names no column of is still read (a job reads
                # what it lists): emitters leave out filters and joins, so "no column"
                # would be a guess that lets usage-aware severity lower a real break.
                columns = columns or None
            self._record(job, name, aliases, columns, bool(outputs), location)
        # A dataset that column lineage names but inputs[] does not is read too.
        for name, columns in (lineage or {}).items():
            if name not in seen:
                self._record(job, name, [], set(columns), True, location)

    def _record(
        self,
        job: str,
        dataset: str,
        aliases: list[str],
        columns: set[str] | None,
        has_outputs: bool,
        location: str,
    ) -> None:
        read = self._reads.get((job, dataset))
        if read is None:
            read = self._reads[(job, dataset)] = _Read(location)
        for alias in aliases:
            if alias != dataset and alias not in read.aliases:
                read.aliases.append(alias)
        if columns is not None:
            read.known = True
            read.columns |= columns
        elif has_outputs:
            read.unknown = True

    def reads(self) -> list[ExternalRead]:
        found: list[ExternalRead] = []
        for (job, dataset), read in sorted(self._reads.items()):
            columns = frozenset(read.columns) if read.known and not read.unknown else None
            for name in (dataset, *read.aliases):
                found.append(
                    ExternalRead(
                        source=f"openlineage:{self.source}",
                        consumer=job,
                        dataset=name,
                        columns=columns,
                        location=read.location,
                    )
                )
        return found
