"""A Marquez-compatible lineage API served on 127.0.0.1 -> the jobs that read a dataset."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from gate.lineage.marquez import fetch_reads, split_dataset
from gate.lineage.openlineage import LineageSourceError
from tests.local_http import Drip, LocalHTTPServer, garbage_server

NAMESPACE = "postgres://db.internal:5432"
NAME = "analytics.public.orders"
NODE = f"dataset:{NAMESPACE}:{NAME}"


def job_node(
    namespace: str, name: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]
) -> dict[str, Any]:
    """A JOB GraphNode as Marquez 0.51 answers it (spec/openapi.yml, Job)."""
    node_id = f"job:{namespace}:{name}"
    return {
        "id": node_id,
        "type": "JOB",
        "data": {
            "id": {"namespace": namespace, "name": name},
            "type": "BATCH",
            "name": name,
            "simpleName": name.rsplit(".", 1)[-1],
            "parentJobName": None,
            "createdAt": "2026-11-20T06:00:01.123Z",
            "updatedAt": "2026-11-20T06:00:09.456Z",
            "namespace": namespace,
            "inputs": [{"namespace": n, "name": d} for n, d in inputs],
            "outputs": [{"namespace": n, "name": d} for n, d in outputs],
            "location": f"https://git.example/{name}.py",
            "description": None,
            "latestRun": None,
        },
        "inEdges": [{"origin": f"dataset:{n}:{d}", "destination": node_id} for n, d in inputs],
        "outEdges": [{"origin": node_id, "destination": f"dataset:{n}:{d}"} for n, d in outputs],
    }


def dataset_node(readers: list[str], writers: list[str]) -> dict[str, Any]:
    """The DATASET GraphNode (Marquez's api/src/test/resources/lineage/node.json shape)."""
    return {
        "id": NODE,
        "type": "DATASET",
        "data": {
            "id": {"namespace": NAMESPACE, "name": NAME},
            "type": "DB_TABLE",
            "name": NAME,
            "physicalName": NAME,
            "createdAt": "2026-11-20T06:00:01.123Z",
            "updatedAt": "2026-11-20T06:00:09.456Z",
            "namespace": NAMESPACE,
            "sourceName": "analytics_db",
            "fields": [
                {"name": "order_id", "type": "BIGINT", "tags": [], "description": None},
                {"name": "discount_code", "type": "VARCHAR", "tags": [], "description": None},
            ],
            "tags": [],
            "lastModifiedAt": "2026-11-20T06:00:09.456Z",
            "description": None,
        },
        "inEdges": [{"origin": w, "destination": NODE} for w in writers],
        "outEdges": [{"origin": NODE, "destination": r} for r in readers],
    }


def lineage_graph() -> dict[str, Any]:
    orders = (NAMESPACE, NAME)
    reader = job_node("spark_jobs", "orders_enrichment.fct_orders", [orders], [("file", "/wh/fct")])
    writer = job_node("dbt", "analytics.orders", [("pg", "raw_orders")], [orders])
    # A reader known only from the dataset's out-edge (its data lists no inputs).
    edge_only = job_node("airflow", "exports.orders_to_s3", [], [("s3://exports", "orders")])
    return {
        "graph": [
            dataset_node([reader["id"], edge_only["id"]], [writer["id"]]),
            reader,
            writer,
            edge_only,
        ]
    }


@dataclass
class Api:
    """A lineage API on 127.0.0.1: ``routes`` maps a path to a handler."""

    url: str
    port: int
    routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)


def send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    handler.send_response(status)
    for key, value in (headers or {"Content-Type": "application/json"}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def api() -> Iterator[Api]:
    state: dict[str, Api] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served = state["api"]
            served.requests.append(self.path)
            route = served.routes.get(urllib.parse.urlsplit(self.path).path)
            if route is None:
                send(self, 404, b'{"code":404,"message":"HTTP 404 Not Found"}')
            else:
                route(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    state["api"] = Api(url=f"http://127.0.0.1:{port}/api/v1", port=port)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state["api"]
    finally:
        server.shutdown()
        server.server_close()


def serve_json(value: Any) -> Callable[[BaseHTTPRequestHandler], None]:
    return lambda handler: send(handler, 200, json.dumps(value).encode())


def test_the_jobs_reading_a_dataset_are_named_and_the_writer_is_not(api: Api) -> None:
    api.routes["/api/v1/lineage"] = serve_json(lineage_graph())
    reads = fetch_reads(api.url, [f"{NAMESPACE}/{NAME}"], timeout=5)
    assert [(r.consumer, r.dataset, r.columns) for r in reads] == [
        ("airflow/exports.orders_to_s3", f"{NAMESPACE}/{NAME}", None),
        ("spark_jobs/orders_enrichment.fct_orders", f"{NAMESPACE}/{NAME}", None),
    ]
    assert {r.source for r in reads} == {f"openlineage:{api.url}"}
    assert reads[1].location == "https://git.example/orders_enrichment.fct_orders.py"
    # The request is Marquez's: nodeId=dataset:<namespace>:<name>, depth=1.
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(api.requests[0]).query)
    assert query == {"nodeId": [NODE], "depth": ["1"]}


def test_a_namespace_and_name_pair_is_taken_as_it_is(api: Api) -> None:
    api.routes["/api/v1/lineage"] = serve_json(lineage_graph())
    reads = fetch_reads(api.url + "/", [(NAMESPACE, NAME)], timeout=5)
    assert len(reads) == 2
    assert reads[0].dataset == f"{NAMESPACE}/{NAME}"


def test_a_graph_without_readers_gives_no_reads(api: Api) -> None:
    graph = lineage_graph()
    graph["graph"] = [node for node in graph["graph"] if node["id"].startswith("job:dbt")]
    api.routes["/api/v1/lineage"] = serve_json(graph)
    assert fetch_reads(api.url, [f"{NAMESPACE}/{NAME}"], timeout=5) == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [(404, "HTTP 404"), (500, "HTTP 500")],
)
def test_http_errors_name_the_url(api: Api, status: int, expected: str) -> None:
    api.routes["/api/v1/lineage"] = lambda h: send(h, status, b'{"code": 1}')
    with pytest.raises(LineageSourceError) as error:
        fetch_reads(api.url, ["pg/orders"], timeout=5)
    message = str(error.value)
    assert message.startswith(f"{api.url}/lineage?nodeId=dataset%3Apg%3Aorders&depth=1: ")
    assert expected in message


def test_a_dataset_marquez_does_not_know_is_an_error_quoting_its_answer(api: Api) -> None:
    # Marquez's answer (BaseResource.throwIfNotExists -> DatasetNotFoundException).
    body = b'{"code":404,"message":"Dataset \'orders\\u0007\' not found."}'
    api.routes["/api/v1/lineage"] = lambda h: send(h, 404, body)
    with pytest.raises(LineageSourceError) as error:
        fetch_reads(api.url, ["pg/orders"], timeout=5)
    assert str(error.value).endswith("HTTP 404 Not Found: Dataset 'orders ' not found.")


def test_a_wrong_api_root_is_an_error(api: Api) -> None:
    with pytest.raises(LineageSourceError, match="HTTP 404"):
        fetch_reads(f"http://127.0.0.1:{api.port}/nope", ["pg/orders"], timeout=5)


def test_a_slow_api_times_out(api: Api) -> None:
    # The answer waits for the test (a minute at most): the client can only see
    # "timed out" by giving up on its own, before anything was answered.
    release, answered = threading.Event(), threading.Event()

    def slow(handler: BaseHTTPRequestHandler) -> None:
        release.wait(60)
        answered.set()
        send(handler, 200, b"{}")

    api.routes["/api/v1/lineage"] = slow
    try:
        with pytest.raises(LineageSourceError, match=r"127\.0\.0\.1.*timed out"):
            fetch_reads(api.url, ["pg/orders"], timeout=0.5)
        assert not answered.is_set()
    finally:
        release.set()


def test_a_slow_drip_answer_is_stopped_by_the_overall_timeout(api: Api) -> None:
    """Asserted by bytes, not wall time: the 1 s timeout gives up while the drip
    (a byte every 0.1 s, 600 of them) is still going."""
    drip = Drip({"Content-Type": "application/json"})
    api.routes["/api/v1/lineage"] = drip
    try:
        with pytest.raises(LineageSourceError, match="timed out"):
            fetch_reads(api.url, ["pg/orders"], timeout=1)
        assert drip.stopped_mid_drip(), drip.sent
    finally:
        drip.stop.set()


def test_an_oversized_answer_is_refused(api: Api) -> None:
    body = json.dumps({"graph": [], "padding": "x" * 5000}).encode()
    api.routes["/api/v1/lineage"] = lambda h: send(h, 200, body)
    with pytest.raises(LineageSourceError, match="more than the 1,000 read"):
        fetch_reads(api.url, ["pg/orders"], timeout=5, max_bytes=1000)

    def no_length(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body)

    api.routes["/api/v1/lineage"] = no_length
    with pytest.raises(LineageSourceError, match="larger than the 1,000 bytes read"):
        fetch_reads(api.url, ["pg/orders"], timeout=5, max_bytes=1000)


def test_a_redirect_to_another_host_is_refused(api: Api) -> None:
    elsewhere = f"http://localhost:{api.port}/api/v1/moved"
    api.routes["/api/v1/lineage"] = lambda h: send(h, 302, b"", {"Location": elsewhere})
    api.routes["/api/v1/moved"] = serve_json(lineage_graph())
    with pytest.raises(
        LineageSourceError, match=r"redirected to another host \(localhost\); refused"
    ):
        fetch_reads(api.url, [f"{NAMESPACE}/{NAME}"], timeout=5)
    assert not any(path.startswith("/api/v1/moved") for path in api.requests)


def test_a_redirect_on_the_same_host_is_followed(api: Api) -> None:
    api.routes["/api/v1/lineage"] = lambda h: send(h, 301, b"", {"Location": "/api/v1/moved"})
    api.routes["/api/v1/moved"] = serve_json(lineage_graph())
    assert len(fetch_reads(api.url, [f"{NAMESPACE}/{NAME}"], timeout=5)) == 2


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>Marquez</html>", "the answer is not JSON"),
        (b'{"nodes": []}', "no 'graph' list"),
        (b"[" * 100_000, "the answer is not JSON"),
    ],
)
def test_an_answer_that_is_not_a_lineage_graph_is_an_error(
    api: Api, body: bytes, expected: str
) -> None:
    api.routes["/api/v1/lineage"] = lambda h: send(h, 200, body)
    with pytest.raises(LineageSourceError, match=expected):
        fetch_reads(api.url, ["pg/orders"], timeout=5)


def test_a_closed_port_is_an_error(api: Api) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LineageSourceError, match=rf"^http://127\.0\.0\.1:{port}/lineage"):
        fetch_reads(f"http://127.0.0.1:{port}", ["pg/orders"], timeout=5)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://marquez.example/api/v1", "must be https://, or http:// to 127.0.0.1 or localhost"),
        ("ftp://127.0.0.1/api", "must be https://"),
        ("file:///etc/passwd", "must be https://"),
        (
            "https://user:secret@marquez.example/api/v1",
            "credentials in the lineage API URL are refused",
        ),
        ("https://marquez.example/api/v1?x=1", "takes no query or fragment"),
        ("https://marquez.example:99999/api", "not a valid URL"),
    ],
)
def test_urls_outside_https_and_the_local_machine_are_refused(url: str, expected: str) -> None:
    with pytest.raises(LineageSourceError, match=expected) as error:
        fetch_reads(url, ["pg/orders"], timeout=1)
    assert "secret" not in str(error.value)


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        (
            "postgres://db:5432/analytics.public.orders",
            ("postgres://db:5432", "analytics.public.orders"),
        ),
        ("s3://bucket/path/to/orders", ("s3://bucket", "path/to/orders")),
        ("file//tmp/warehouse/orders", ("file", "/tmp/warehouse/orders")),
        ("bigquery/project.dataset.orders", ("bigquery", "project.dataset.orders")),
    ],
)
def test_split_dataset(dataset: str, expected: tuple[str, str]) -> None:
    assert split_dataset(dataset) == expected


@pytest.mark.parametrize("dataset", ["orders", "pg/", "/orders", "s3://bucket"])
def test_a_dataset_without_namespace_or_name_is_an_error(dataset: str) -> None:
    with pytest.raises(ValueError, match="is not <namespace>/<name>"):
        split_dataset(dataset)
    with pytest.raises(LineageSourceError, match="is not <namespace>/<name>"):
        fetch_reads("https://marquez.example/api/v1", [dataset], timeout=1)


def test_an_api_answering_garbage_is_an_error_not_a_traceback() -> None:
    """``http.client.BadStatusLine`` is neither an ``OSError`` nor a ``ValueError``."""
    with garbage_server() as url, pytest.raises(LineageSourceError, match="BadStatusLine"):
        fetch_reads(f"{url}/api/v1", ["ns/t"], 5)


def _by_node(known: dict[str, Any]) -> Callable[[BaseHTTPRequestHandler], None]:
    """Marquez's ``/lineage``: the graph of a known ``nodeId``, else its 404 answer."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(handler.path).query)
        node = query["nodeId"][0]
        if node in known:
            send(handler, 200, json.dumps(known[node]).encode())
        else:
            name = node.rsplit(":", 1)[-1]
            send(
                handler,
                404,
                json.dumps({"code": 404, "message": f"Dataset '{name}' not found."}).encode(),
            )

    return answer


def test_a_dataset_the_api_does_not_know_is_named_and_the_others_readers_stay(api: Api) -> None:
    from gate.lineage.marquez import read_api

    api.routes["/api/v1/lineage"] = _by_node({NODE: lineage_graph()})
    found = read_api(api.url, [f"{NAMESPACE}/{NAME}", "pg/refunds"], timeout=5)
    assert [r.consumer for r in found.reads] == [
        "airflow/exports.orders_to_s3",
        "spark_jobs/orders_enrichment.fct_orders",
    ]
    assert [dataset for dataset, _ in found.unknown] == ["pg/refunds"]
    assert found.warnings() == [
        f"lineage source {api.url} does not know dataset pg/refunds (HTTP 404 Not Found: "
        "Dataset 'refunds' not found.); its readers there are unknown, and usage-aware "
        "severity lowers nothing on it"
    ]
    assert [w.dataset for w in found.warnings()] == ["pg/refunds"]  # type: ignore[attr-defined]
    # fetch_reads keeps its contract: any failure raises, naming the request
    with pytest.raises(
        LineageSourceError, match=r"nodeId=dataset%3Apg%3Arefunds&depth=1: HTTP 404"
    ):
        fetch_reads(api.url, [f"{NAMESPACE}/{NAME}", "pg/refunds"], timeout=5)


def test_a_404_for_every_dataset_is_the_whole_source_unread(api: Api) -> None:
    """A wrong API root answers 404 for everything, as Marquez does for unknown datasets."""
    from gate.lineage.marquez import read_api

    api.routes["/api/v1/lineage"] = _by_node({})
    with pytest.raises(LineageSourceError, match=r"dataset%3Apg%3Aa&depth=1: HTTP 404"):
        read_api(api.url, ["pg/a", "pg/b"], timeout=5)


def test_any_other_failure_of_one_dataset_is_the_whole_source_unread(api: Api) -> None:
    from gate.lineage.marquez import read_api

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if "refunds" in handler.path:
            send(handler, 500, b'{"code":500,"message":"boom"}')
        else:
            send(handler, 200, json.dumps(lineage_graph()).encode())

    api.routes["/api/v1/lineage"] = answer
    with pytest.raises(LineageSourceError, match="HTTP 500"):
        read_api(api.url, [f"{NAMESPACE}/{NAME}", "pg/refunds"], timeout=5)
