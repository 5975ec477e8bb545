"""The one bounded HTTP reader of the lineage sources, and each caller's redirect policy."""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler

import pytest

from gate.lineage.fetch import Deadline, HttpFailure, fetch_url, read_bounded
from gate.lineage.marquez import fetch_reads
from tests.lineage.mesh_repo import serve
from tests.lineage.test_marquez import NAME, NAMESPACE, lineage_graph
from tests.local_http import LocalHTTPServer


class Refused(Exception):
    pass


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_policy_decides_each_redirect_and_its_own_error_passes_through() -> None:
    seen: list[tuple[str, str]] = []

    def allow(came_from: str, to: str) -> None:
        seen.append((came_from, to))

    def refuse(came_from: str, to: str) -> None:
        raise Refused(f"{came_from} -> {to}")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/b":
                body = b'{"ok": 1}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_response(302)
                self.send_header("Location", "/b")
                self.send_header("Content-Length", "0")
                self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert read_bounded(f"{base}/a", Deadline.after(5), 100, allow) == b'{"ok": 1}'
        assert seen == [(f"{base}/a", f"{base}/b")]
        with pytest.raises(Refused, match=r"/a -> .*/b$"):
            read_bounded(f"{base}/a", Deadline.after(5), 100, refuse)
        with pytest.raises(HttpFailure) as failure:
            read_bounded(f"{base}/b", Deadline.after(5), 3, allow)
        assert failure.value.kind == "declared" and failure.value.size == 9
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_lineage_api_ignores_proxy_variables_and_manifests_honour_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As before the two readers became one: the API is asked directly (a sidecar on
    this machine is not reached through a proxy), a manifest as urllib would."""
    query = urllib.parse.urlencode({"nodeId": f"dataset:{NAMESPACE}:{NAME}", "depth": 1})
    body = json.dumps(lineage_graph()).encode()
    with serve({f"/api/v1/lineage?{query}": body, "/m.json": b"{}"}) as (url, hits):
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{_closed_port()}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert len(fetch_reads(f"{url}/api/v1", [f"{NAMESPACE}/{NAME}"], timeout=5)) == 2
        with pytest.raises(Exception, match="unreachable"):
            fetch_url(f"{url}/m.json", Deadline.after(5))
    assert hits == [f"/api/v1/lineage?{query}"]
