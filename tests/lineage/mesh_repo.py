"""A real git repository holding the upstream dbt project of tests/lineage/dbt_mesh/.

``jaffle_platform`` (its ``stg_orders`` contract, and ``stg_payments`` which no
other project reads) lives in the repository; the downstream ``jaffle_finance``
does not: only its ``manifest.json``, as dbt wrote it, is there (a downloaded
CI artifact) or served on 127.0.0.1.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from tests.gitrepo import GitRepo
from tests.local_http import LocalHTTPServer

FIXTURES = Path(__file__).resolve().parent / "dbt_mesh"
FINANCE = (FIXTURES / "jaffle_finance.manifest.json").read_bytes()
FINANCE_PARSED = (FIXTURES / "jaffle_finance.parsed.manifest.json").read_bytes()
PROPERTIES = "models/_models.yml"

MODELS = """models:
  - name: stg_orders
    access: public
    config:
      contract: {enforced: true}
    columns:
      - name: order_id
        data_type: integer
      - name: customer_id
        data_type: integer
      - name: discount_code
        data_type: varchar
      - name: amount
        data_type: double
      - name: ordered_at
        data_type: date
  - name: stg_payments
    access: public
    config:
      contract: {enforced: true}
    columns:
      - name: payment_id
        data_type: integer
      - name: method
        data_type: varchar
"""

FILES = {
    "dbt_project.yml": "name: jaffle_platform\nversion: '1.0.0'\nprofile: mesh\n",
    "models/stg_orders.sql": (
        "select 1 as order_id, 10 as customer_id, 'SAVE10' as discount_code, "
        "25.0 as amount, current_date as ordered_at\n"
    ),
    "models/stg_payments.sql": "select 1 as payment_id, 'card' as method\n",
    PROPERTIES: MODELS,
}


def drop(text: str, column: str) -> str:
    """The properties without ``column`` (its name and data_type lines)."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {column}")
    return "".join(lines[:start] + lines[start + 2 :])


def make(path: Path, config: str | None, extra: dict[str, str | bytes] | None = None) -> GitRepo:
    """The platform project on main (with ``config`` as .schema-gate.yml), on branch feature."""
    repo = GitRepo(path)
    for name, text in {**FILES, **(extra or {})}.items():
        repo.write(name, text)
    if config is not None:
        repo.write(".schema-gate.yml", config)
    repo.commit("platform")
    repo.branch("feature")
    return repo


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, bytes]] = {}
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = self.routes.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve(routes: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 in a thread: (base URL, the paths asked for)."""
    handler = type("Handler", (_Handler,), {"routes": routes, "hits": []})
    server = LocalHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
