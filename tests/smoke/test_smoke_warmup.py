"""The class warm-up of a fresh session (``gate/smoke/warmup.py``), on a real JVM.

What must hold: the recorded list is class names and nothing else; the JVM
loads the ones it has and skips the rest; a failure is recorded, never raised;
a run with the warm-up reports exactly what a run without it reports.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gate.smoke import SmokeSettings, run_smoke, warmup
from tests.conftest import ROOT
from tests.spark_fixtures import (
    comparable,
    datasets_in,
    spark,  # noqa: F401  (the session fixture)
    write_files,
)

CONTRACT = """\
dataset: shop/orders
columns:
  - name: id
    data_type: bigint
    checks:
      - duplicate:
  - name: amount
    data_type: decimal(10,2)
    checks:
      - invalid:
          valid_min: 0
  - name: email
    checks:
      - invalid:
          valid_format:
            name: email
            regex: '^[^@ ]+@[^@ ]+$'
"""
SAMPLE = "id,amount,email\n1,12.50,a@x\n2,12a,b@x\n2,-1,nope\n"


def test_the_recorded_list_holds_class_names_only() -> None:
    names = warmup.class_names()
    assert len(names) > 1000
    assert len(set(names)) == len(names)
    assert any(name.startswith("org.apache.arrow.") for name in names)
    assert any(name.startswith("org.codehaus.janino.") for name in names)
    assert all("/" not in name and "$$Lambda" not in name for name in names)  # hidden classes


def test_odd_lines_never_reach_the_jvm() -> None:
    text = "# a comment\njava.lang.String\n\n  a.b.C$D  \nfoo(); System.exit(1)\nx y\n1a.B\n"
    assert warmup.parse_names(text) == ["java.lang.String", "a.b.C$D"]


def test_off_by_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(warmup.WARMUP_ENV, "0")
    assert not warmup.enabled()
    assert warmup.start_if_useful() is None


def test_off_with_one_usable_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(warmup.WARMUP_ENV, raising=False)
    monkeypatch.setattr(warmup, "default_count", lambda: 1)
    assert not warmup.enabled()
    monkeypatch.setattr(warmup, "default_count", lambda: 2)
    assert warmup.enabled()


def test_an_error_that_cannot_describe_itself_is_still_recorded() -> None:
    class Gone(Exception):
        def __str__(self) -> str:
            raise ConnectionError("the JVM is gone")

    assert warmup._describe(Gone()) == "Gone"
    assert warmup._describe(RuntimeError("first\nsecond")) == "RuntimeError: first"


@pytest.mark.spark
def test_the_jvm_loads_the_classes_it_has(spark: Any) -> None:  # noqa: F811
    from pyspark import SparkContext

    names = ["java.lang.String", "no.such.Klass", "org.apache.spark.sql.catalyst.expressions.Add"]
    assert warmup.preload(SparkContext._jvm, SparkContext._gateway, names) == 2
    assert warmup.preload(SparkContext._jvm, SparkContext._gateway, []) == 0


@pytest.mark.spark
def test_nothing_to_warm_once_a_jvm_is_up(spark: Any) -> None:  # noqa: F811
    assert warmup.start_if_useful() is None


@pytest.mark.spark
def test_a_failing_warmup_is_recorded_not_raised(
    spark: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: Any) -> int:
        raise RuntimeError("no Janino here")

    monkeypatch.setattr(warmup, "preload", broken)
    warm = warmup.Warmup().start()
    warm.join(30)
    assert warm.result is None
    assert warm.error == "RuntimeError: no Janino here"


@pytest.mark.spark
def test_a_fresh_run_warms_up_and_reports_what_a_warm_jvm_reports(
    spark: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A fresh process (its own JVM) with the warm-up, against the test session without it."""
    from pyspark import SparkContext

    if not warmup.enabled():
        pytest.skip("the warm-up is off here (one CPU, or GATE_SPARK_WARMUP=0)")
    # What this Spark has of the list: the fresh JVM must find the same.
    here = warmup.preload(SparkContext._jvm, SparkContext._gateway, warmup.class_names())
    write_files(tmp_path, {"c/orders.yaml": CONTRACT, "c/orders.sample.csv": SAMPLE})
    expected = comparable(
        run_smoke(datasets_in(tmp_path, "c/orders.yaml"), tmp_path, SmokeSettings(), spark=spark)
    )
    code = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from gate.smoke import SmokeSettings, run_smoke, warmup
        from tests.spark_fixtures import comparable, datasets_in
        started = []
        start = warmup.start_if_useful
        def recorded():
            warm = start()
            started.append(warm)
            return warm
        warmup.start_if_useful = recorded
        root = Path({str(tmp_path)!r})
        report = run_smoke(datasets_in(root, "c/orders.yaml"), root, SmokeSettings())
        warm = started[0]
        warm.join(60)
        print(json.dumps({{"loaded": warm.result, "error": warm.error,
                          "report": comparable(report)}}))
        """
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != warmup.WARMUP_ENV}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] is None and out["loaded"] is not None, out["error"]
    assert out["loaded"] == here > 0
    assert out["report"] == expected
    assert expected[0]["status"] == "failed"  # the comparison covers failures and values


@pytest.mark.parametrize(
    ("master", "warms"), [(None, True), ("local[2]", True), ("spark://host:7077", False)]
)
def test_only_a_local_session_the_gate_launches_is_warmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, master: str | None, warms: bool
) -> None:
    """A cluster's executors load their own classes: the driver's warm-up would be wasted."""
    from gate.model import UsageError
    from gate.smoke import runner

    calls: list[str] = []

    def refused(*_args: Any) -> Any:
        raise UsageError("no session in this test")

    monkeypatch.setattr(runner.warmup, "start_if_useful", lambda: calls.append("warm"))
    monkeypatch.setattr(runner.session, "start", refused)
    monkeypatch.setattr(runner.session, "require_pyspark", lambda remote: None)
    monkeypatch.setattr(runner.session, "require_java", lambda: None)
    write_files(tmp_path, {"c/orders.yaml": CONTRACT, "c/orders.sample.csv": SAMPLE})
    with pytest.raises(UsageError):
        runner.run(
            datasets_in(tmp_path, "c/orders.yaml"),
            tmp_path,
            sample_data=None,
            spark_master=master,
            spark_remote=None,
            quarantine_dir=None,
            dialect="spark",
        )
    assert calls == (["warm"] if warms else [])
