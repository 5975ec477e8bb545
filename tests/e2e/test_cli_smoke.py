"""``--smoke-test`` through the real CLI: same run, same report, same exit codes.

The report of a failing sample is asserted over Spark Connect (the shared
``connect_url`` server of tests/conftest.py), with no JVM of this process's own:
what it asserts is the CLI's (exit code, JSON, acknowledgements); the same shop
runs on a local session in-process in tests/smoke/test_smoke_cli.py. The runs
that need a local JVM (limits, memory, hostile samples) are in
tests/e2e/test_smoke_security.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, gate_env, run_gate_process
from tests.gitrepo import GitRepo
from tests.smoke_repos import BAD, C, make_shop
from tests.spark_fixtures import java_missing, pyspark_missing


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    return make_shop(tmp_path)


def needs_spark() -> None:
    reason = pyspark_missing() or java_missing()
    if reason:
        pytest.skip(reason)


@pytest.mark.spark
def test_failing_sample_fails_the_run_and_acks_do_not_silence_it(
    shop: GitRepo, connect_url: str
) -> None:
    needs_spark()
    shop.write(f"{C}/orders.sample.csv", BAD)
    shop.write(
        f"{C}/items.yaml", "dataset: lake/shop/items\ncolumns:\n  - name: n\n"
    )  # sku removed: breaking
    proc = run_gate_process(
        shop.path,
        "--base",
        "main",
        "--smoke-test",
        "--format",
        "json",
        "--accept",
        "shop.items",
        "--spark-remote",
        connect_url,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["unacknowledged"] == 0  # the break is acknowledged...
    smoke = report["smoke"]
    assert smoke["failed"] is True  # ...but the data does not fit the contract
    by_dataset = {d["dataset"]: d for d in smoke["datasets"]}
    assert by_dataset["lake/shop/items"]["status"] == "no_sample"
    orders = by_dataset["lake/shop/orders"]
    assert orders["status"] == "failed" and orders["rows"] == 2
    failed = {(r["kind"], r["column"]) for r in orders["results"] if r["status"] == "failed"}
    assert ("coercion", "qty") in failed and ("check", "order_id") in failed
    coercion = next(
        r for r in orders["results"] if r["kind"] == "coercion" and r["column"] == "qty"
    )
    assert coercion["samples"] == ["12a"] and coercion["failed_rows"] == 1
    assert "the smoke test failed" in report["message"]


def test_sample_data_outside_the_repo_is_refused(shop: GitRepo, tmp_path: Path) -> None:
    needs_spark()
    (tmp_path / "outside").mkdir()
    proc = run_gate_process(
        shop.path, "--base", "main", "--smoke-test", "--sample-data", str(tmp_path / "outside")
    )
    assert proc.returncode == 2
    assert "outside" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_without_pyspark_the_smoke_test_says_how_to_install_it(shop: GitRepo) -> None:
    # Make `import pyspark` fail as it does where the extra is not installed.
    code = (
        "import sys; sys.modules['pyspark'] = None; "
        "from gate.cli import main; raise SystemExit(main(sys.argv[1:]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "--base", "main", "--smoke-test"],
        cwd=shop.path,
        env=gate_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "schema-contract-gate[spark]" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_java_the_smoke_test_exits_2(shop: GitRepo, tmp_path: Path) -> None:
    if pyspark_missing():
        pytest.skip(pyspark_missing())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    os.symlink(git, bin_dir / "git")
    env = gate_env(PATH=str(bin_dir))
    env.pop("JAVA_HOME", None)
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "--base", "main", "--smoke-test"],
        cwd=shop.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Java" in proc.stderr and "Traceback" not in proc.stderr


def test_importing_the_cli_does_not_import_pyspark() -> None:
    code = "import sys, gate.cli, gate.engine, gate.report; print('pyspark' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.stdout.strip() == "False", proc.stderr
