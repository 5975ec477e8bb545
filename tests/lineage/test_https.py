"""A manifest named by an https URL (issue #25: "paths or https URLs"), served on
127.0.0.1 with TLS: a certificate the machine trusts is read like a path, one it
does not is a warning naming the URL (never exit 2, never a silent pass)."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import gate_env, run_main
from tests.lineage.mesh_repo import FINANCE, LocalHTTPServer, _Handler, make
from tests.lineage.test_cli_lineage import REVENUE, pr_drops, removed

pytestmark = pytest.mark.skipif(not shutil.which("openssl"), reason="needs the openssl CLI")


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (``openssl req``), and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    words = "req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1"
    san = ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        ["openssl", *words.split(), *san, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def run(repo, **env: str) -> tuple[int, dict]:
    argv = ("--base", "main", "--head", "feature", "--format", "json")
    proc = run_main(repo.path, *argv, env=gate_env(**env))
    return proc.returncode, json.loads(proc.stdout)


@contextmanager
def serve_tls(routes: dict[str, bytes], cert: Path, key: Path) -> Iterator[tuple[str, list[str]]]:
    handler = type("Handler", (_Handler,), {"routes": routes, "hits": []})
    server = LocalHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", handler.hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_manifest_at_an_https_url_is_read(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    with serve_tls({"/finance/manifest.json": FINANCE}, cert, key) as (url, hits):
        repo = make(tmp_path / "r", f"lineage:\n  dbt_manifests: [{url}/finance/manifest.json]\n")
        pr_drops(repo, "discount_code")
        code, report = run(repo, SSL_CERT_FILE=str(cert))  # the machine trusts it
    assert hits == ["/finance/manifest.json"], report["notices"]
    assert code == 1 and REVENUE in removed(report, "discount_code")["external_consumers"]


def test_an_https_url_whose_certificate_is_not_trusted_is_a_warning(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    with serve_tls({"/finance/manifest.json": FINANCE}, cert, key) as (url, hits):
        repo = make(tmp_path / "r", f"lineage:\n  dbt_manifests: [{url}/finance/manifest.json]\n")
        pr_drops(repo, "discount_code")
        code, report = run(repo)
    assert hits == []
    assert code == 1 and removed(report, "discount_code")["external_consumers"] == []
    warning = next(n for n in report["notices"] if f"{url}/finance/manifest.json" in n)
    assert "was not read" in warning and "CERTIFICATE_VERIFY_FAILED" in warning.upper()
