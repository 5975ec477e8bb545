"""The smoke test through a real Spark Connect server: same findings as a local session.

The server is Spark's own (``SparkConnectPlugin``, what ``sbin/start-connect-server.sh``
runs) on 127.0.0.1, in the JVM of the shared local session (the fixture
``connect_url`` of tests/conftest.py, tests/spark_fixtures.py), started once per test
process and shared with the end-to-end tests that run the CLI on it
(tests/e2e/test_cli_smoke.py). The client's sessions are the server's own, apart
from the local session's: its own settings, its own plan and catalog.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gate.model import UsageError
from gate.smoke import SmokeSettings, run_smoke
from tests.spark_fixtures import (
    by_id,
    check_repo,
    comparable,
    datasets_in,
    find,
    spark,  # noqa: F401  (the local session, for comparison)
    write_files,
)

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_remote_findings_equal_local_findings(
    spark: Any,  # noqa: F811
    connect_url: str,
    tmp_path: Path,
) -> None:
    root, datasets = check_repo(tmp_path)
    local = run_smoke(datasets, root, SmokeSettings(), spark=spark)
    remote = run_smoke(datasets, root, SmokeSettings(spark_remote=connect_url))
    assert comparable(remote) == comparable(local)
    assert remote.master == connect_url
    assert remote.spark_version == local.spark_version
    assert remote.session_seconds > 0
    assert remote.failed and by_id(remote)["v4_pass"].status == "passed"
    # The process is back in classic mode: the local session still works.
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ
    assert run_smoke(datasets[:1], root, SmokeSettings(), spark=spark).datasets[0].rows == 5


def test_remote_reads_parquet_and_writes_quarantine_on_this_machine(
    connect_url: str,
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {"c/big.yaml": "dataset: big\ncolumns:\n  - name: id\n    data_type: int\n"},
    )
    table = pa.table({"id": pa.array([1, 3_000_000_000, None], pa.int64())})
    pq.write_table(table, tmp_path / "c" / "big.sample.parquet")
    report = run_smoke(
        datasets_in(tmp_path, "c/big.yaml"),
        tmp_path,
        SmokeSettings(spark_remote=connect_url, quarantine="quarantine"),
    )
    result = find(report.datasets[0], "cast_to_int", "id")
    assert (result.failed_rows, result.samples) == (1, ("3000000000",))
    written = pq.read_table(tmp_path / "quarantine" / "big.quarantine.parquet").to_pylist()
    assert written == [{"id": 3_000_000_000, "_violated_checks": ["cast_to_int(id)"]}]


def test_an_unreachable_server_is_a_usage_error_at_once(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_files(
        tmp_path, {"c/o.yaml": "dataset: o\ncolumns:\n  - name: id\n", "c/o.sample.csv": "id\n1\n"}
    )
    settings = SmokeSettings(spark_remote=f"sc://127.0.0.1:{port}/;token=secret")
    with pytest.raises(UsageError, match=f"cannot reach Spark Connect at sc://127.0.0.1:{port}:"):
        run_smoke(datasets_in(tmp_path, "c/o.yaml"), tmp_path, settings)
