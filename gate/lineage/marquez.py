"""Jobs that read a dataset, asked of a Marquez-compatible lineage API.

Why: teams that collect OpenLineage events usually keep them in Marquez (or a
service speaking its API) rather than in files. The gate asks it, per dataset,
which jobs read the dataset, and names those jobs as external consumers.

The request follows Marquez's OpenAPI description (MarquezProject/marquez,
``spec/openapi.yml``, 0.51: ``GET /lineage``, operation ``getLineage``)::

    GET {url}/lineage?nodeId=dataset:<namespace>:<name>&depth=1

``url`` is the API root, e.g. ``https://marquez.example/api/v1``. The answer is
a ``LineageGraph``: ``{"graph": [GraphNode, ...]}`` where a node has ``id``
(``dataset:<ns>:<name>`` or ``job:<ns>:<name>``), ``type`` (``DATASET`` or
``JOB``), ``data`` (a ``Dataset`` or a ``Job``; a Job lists its ``inputs`` as
``{namespace, name}``) and ``inEdges``/``outEdges`` (``{origin, destination}``).
A job reads the dataset when the dataset is among its ``data.inputs`` or the
dataset's node has an out-edge to it; a job that only writes the dataset is
not a reader. The API gives no per-job columns, so ``columns`` is ``None``.

Why ``depth=1`` is enough: Marquez starts from one job of the dataset, its
writer when there is one, else a reader (``LineageDao.getJobFromInputOrOutput``
orders outputs first), and one level adds every job sharing a dataset with that
job (``LineageDao.getLineage``): every reader of the dataset. Marquez resolves
a symlink name in ``nodeId`` to the dataset's primary name, but the graph then
names the primary, so readers are matched on the name asked: ask with the
primary name, as Marquez's UI shows it.

Datasets are named as OpenLineage names them, ``<namespace>/<name>``, and
split as :func:`split_dataset` says; a ``(namespace, name)`` pair is taken as
it is.

Safety: only ``https://`` URLs, or ``http://`` to the local machine
(``127.0.0.1``, ``localhost``, ``::1``); no credentials in the URL; a redirect
to another scheme, host or port is refused; each answer is bounded in bytes
and the whole call in time (the shared reader, ``gate.lineage.fetch.read_bounded``,
with a same-origin redirect policy). Any failure raises ``LineageSourceError``
naming the URL; the caller makes it a warning. Except, in :func:`read_api`, a
404 for some of the datasets asked: those are named (``ApiReads.unknown``) and
the others' readers kept.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gate.lineage.external import ExternalRead
from gate.lineage.fetch import Deadline, HttpFailure, SourceError, origin, read_bounded, url_problem
from gate.lineage.openlineage import LineageSourceError

#: Bytes of one answer. A depth-1 graph is the dataset and its adjacent jobs:
#: a few KB each, with their schema fields and latest run.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


def split_dataset(dataset: str) -> tuple[str, str]:
    """``(namespace, name)`` of an OpenLineage ``<namespace>/<name>``.

    OpenLineage namespaces are ``scheme://authority`` (``s3://bucket``,
    ``postgres://host:5432``) or a plain word (``bigquery``, ``file``): with
    ``://`` the namespace runs to the first ``/`` after the authority,
    otherwise to the first ``/``. ``file//tmp/x`` is ``("file", "/tmp/x")``.
    Raises ``ValueError`` when there is no name.
    """
    start = dataset.find("://")
    start = start + 3 if start >= 0 else 0
    cut = dataset.find("/", start)
    if cut <= 0 or cut == len(dataset) - 1:
        raise ValueError(f"'{dataset}' is not <namespace>/<name>")
    return dataset[:cut], dataset[cut + 1 :]


def _check_url(url: str) -> str:
    """The API root without a trailing slash, or ``LineageSourceError``."""
    problem = url_problem(url)
    if problem == "invalid":
        raise LineageSourceError(f"{url}: not a valid URL")
    if problem == "credentials":
        host = urllib.parse.urlsplit(url).hostname
        raise LineageSourceError(f"{host}: credentials in the lineage API URL are refused")
    if problem == "scheme":
        raise LineageSourceError(
            f"{url}: the lineage API must be https://, or http:// to 127.0.0.1 or localhost"
        )
    parts = urllib.parse.urlsplit(url)
    if parts.query or parts.fragment:
        raise LineageSourceError(f"{url}: the lineage API URL takes no query or fragment")
    return url.rstrip("/")


def _same_origin(came_from: str, newurl: str) -> None:
    """The API's redirect policy: the same scheme, host and port only."""
    if origin(newurl) != origin(came_from):
        raise LineageSourceError(
            f"{came_from}: redirected to another host ({origin(newurl)[1] or newurl}); refused"
        )


def _get(url: str, deadline: float, max_bytes: int) -> bytes:
    """GET ``url`` within ``deadline`` (monotonic) and ``max_bytes``: the shared
    bounded reader (``gate.lineage.fetch.read_bounded``), worded for the API."""
    if deadline - time.monotonic() <= 0:
        raise LineageSourceError(f"{url}: timed out")
    try:
        return read_bounded(url, Deadline(deadline), max_bytes, _same_origin, env_proxies=False)
    except SourceError:  # only the deadline raises it here
        raise LineageSourceError(f"{url}: timed out") from None
    except HttpFailure as failure:
        raise _ApiFailure(url, failure, max_bytes) from None


def _api_words(failure: HttpFailure, max_bytes: int) -> str:
    """What went wrong, in the API's words (the caller puts the URL before it)."""
    cause = failure.cause
    if failure.kind == "declared":
        return f"answer of {failure.size:,} bytes, more than the {max_bytes:,} read"
    if failure.kind == "over":
        return f"answer larger than the {max_bytes:,} bytes read"
    if isinstance(cause, urllib.error.HTTPError):
        said = _error_message(cause)
        return f"HTTP {cause.code} {cause.reason}" + (f": {said}" if said else "")
    if isinstance(cause, urllib.error.URLError):
        reason = cause.reason
        return "timed out" if isinstance(reason, TimeoutError) else str(reason)
    if failure.kind == "timeout":
        return "timed out"
    return f"{cause.__class__.__name__}: {cause}"  # resets, bad status lines


class _ApiFailure(LineageSourceError):
    """A request that failed: ``f"{url}: {detail}"``; ``status`` is the HTTP
    status, when there was one."""

    def __init__(self, url: str, failure: HttpFailure, max_bytes: int) -> None:
        self.detail = _api_words(failure, max_bytes)
        super().__init__(f"{url}: {self.detail}")
        cause = failure.cause
        self.status = cause.code if isinstance(cause, urllib.error.HTTPError) else None


def _get_json(url: str, deadline: float, max_bytes: int) -> Any:
    """GET ``url`` as JSON within ``deadline`` (monotonic) and ``max_bytes``."""
    body = _get(url, deadline, max_bytes)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise LineageSourceError(f"{url}: the answer is not JSON") from None


def _error_message(exc: urllib.error.HTTPError) -> str | None:
    """The ``message`` of a Marquez (Dropwizard) error body, one short line.

    Marquez answers an unknown dataset with 404 and
    ``{"code": 404, "message": "Dataset '<name>' not found."}``: quoting it
    tells a wrong name from a wrong API root.
    """
    try:
        body = exc.read(4096)
        message = json.loads(body).get("message")
    except (OSError, ValueError, RecursionError, AttributeError):
        return None
    if not isinstance(message, str):
        return None
    line = "".join(ch if ch.isprintable() else " " for ch in message).strip()
    return line[:200] or None


def _node_name(data: Any) -> str | None:
    """``<namespace>/<name>`` of a Marquez Job or Dataset (``id`` or top-level keys)."""
    if not isinstance(data, dict):
        return None
    for node in (data.get("id"), data):
        if isinstance(node, dict):
            namespace, name = node.get("namespace"), node.get("name")
            if isinstance(namespace, str) and isinstance(name, str) and namespace and name:
                return f"{namespace}/{name}"
    return None


def _readers(
    graph: Any, node_id: str, namespace: str, name: str, url: str
) -> list[tuple[str, str]]:
    """``(job, location)`` of each job node that reads the dataset ``node_id``."""
    nodes = graph.get("graph") if isinstance(graph, dict) else None
    if not isinstance(nodes, list):
        raise LineageSourceError(
            f"{url}: the answer has no 'graph' list (not a Marquez lineage graph)"
        )
    via_edges: set[str] = set()
    for node in nodes:
        if isinstance(node, dict) and node.get("id") == node_id:
            for edge in node.get("outEdges") or ():
                if isinstance(edge, dict) and edge.get("origin") == node_id:
                    destination = edge.get("destination")
                    if isinstance(destination, str):
                        via_edges.add(destination)
    readers: list[tuple[str, str]] = []
    for node in nodes:
        if not isinstance(node, dict) or node.get("type") != "JOB":
            continue
        data = node.get("data")
        inputs = data.get("inputs") if isinstance(data, dict) else None
        reads = node.get("id") in via_edges or any(
            isinstance(item, dict)
            and item.get("namespace") == namespace
            and item.get("name") == name
            for item in (inputs if isinstance(inputs, list) else ())
        )
        if not reads:
            continue
        job = _node_name(data)
        if job is None:
            node_id_text = node.get("id")
            if not isinstance(node_id_text, str):
                continue
            job = node_id_text.removeprefix("job:")
        location = data.get("location") if isinstance(data, dict) else None
        readers.append((job, location if isinstance(location, str) and location else url))
    return readers


class DatasetWarning(str):
    """A warning about one dataset of a source, not the source as a whole.

    A ``str`` (a notice like any other) that also names the ``dataset``, so
    usage-aware severity can hold back that dataset's changes only
    (``gate.lineage.run``) instead of every change of the run.
    """

    dataset: str

    def __new__(cls, text: str, dataset: str) -> DatasetWarning:
        made = super().__new__(cls, text)
        made.dataset = dataset
        return made


@dataclass(frozen=True)
class ApiReads:
    """What one lineage API said: the reads, and the datasets it does not know.

    Why apart: Marquez answers 404 for a dataset it has never seen an event
    of. That dataset's readers are unknown (the caller fails closed for it),
    but the readers the API named for the other datasets are real evidence
    and stay listed.
    """

    #: The API root asked (no trailing slash).
    url: str
    reads: tuple[ExternalRead, ...]
    #: ``(dataset, error)`` for each dataset the API answered 404 for.
    unknown: tuple[tuple[str, _ApiFailure], ...] = ()

    def warnings(self) -> list[str]:
        """One warning per unknown dataset, naming it (a ``DatasetWarning``)."""
        return [
            DatasetWarning(
                f"lineage source {self.url} does not know dataset {dataset} ({error.detail}); "
                "its readers there are unknown, and usage-aware severity lowers nothing "
                "on it",
                dataset,
            )
            for dataset, error in self.unknown
        ]


def fetch_reads(
    url: str,
    datasets: Sequence[str | tuple[str, str]],
    timeout: float,
    *,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> list[ExternalRead]:
    """The jobs the API at ``url`` knows to read each of ``datasets``.

    ``timeout`` bounds the whole call (every dataset), in seconds. Raises
    ``LineageSourceError`` naming the URL on any failure: a refused URL, a
    connection error, an HTTP error (404 included: Marquez answers 404 for a
    dataset it does not know, and an API root that is wrong looks the same),
    a timeout, an oversized answer, a redirect elsewhere, an answer that is not
    a lineage graph. :func:`read_api` keeps the reads of the known datasets
    when some answer 404.
    """
    found = read_api(url, datasets, timeout, max_bytes=max_bytes)
    if found.unknown:
        raise found.unknown[0][1]
    return list(found.reads)


def read_api(
    url: str,
    datasets: Sequence[str | tuple[str, str]],
    timeout: float,
    *,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> ApiReads:
    """The jobs the API at ``url`` knows to read each of ``datasets``, and the
    datasets it answered 404 for.

    Raises ``LineageSourceError`` as :func:`fetch_reads` does for every other
    failure, and for a 404 on every dataset asked: then the API root may be
    the wrong one (a wrong root answers 404 too), and the source as a whole is
    unread.
    """
    root = _check_url(url)
    deadline = time.monotonic() + timeout
    reads: list[ExternalRead] = []
    unknown: list[tuple[str, _ApiFailure]] = []
    for dataset in datasets:
        if isinstance(dataset, tuple):
            namespace, name = dataset
            label = f"{namespace}/{name}"
        else:
            try:
                namespace, name = split_dataset(dataset)
            except ValueError as exc:
                raise LineageSourceError(f"{root}: {exc}") from None
            label = dataset
        node_id = f"dataset:{namespace}:{name}"
        query = urllib.parse.urlencode({"nodeId": node_id, "depth": 1})
        request_url = f"{root}/lineage?{query}"
        try:
            graph = _get_json(request_url, deadline, max_bytes)
        except _ApiFailure as failure:
            if failure.status != 404:
                raise
            unknown.append((label, failure))
            continue
        for job, location in _readers(graph, node_id, namespace, name, request_url):
            reads.append(
                ExternalRead(
                    source=f"openlineage:{root}",
                    consumer=job,
                    dataset=label,
                    columns=None,
                    location=location,
                )
            )
    if unknown and len(unknown) == len(datasets):
        raise unknown[0][1]
    ordered = sorted(set(reads), key=lambda read: (read.dataset, read.consumer))
    return ApiReads(root, tuple(ordered), tuple(unknown))
