"""Benchmark the smoke test against a bare Spark session, side by side in one run.

    python benchmarks/bench_smoke.py [--only 20x10000,100x10000,5x1000000] [--repeat 1]
                                     [--parallel N]

For each row of issue #13's table (20 datasets x 10k rows, 100 x 10k, 5 x 1M)
it generates Soda contracts (missing, duplicate, invalid values / range /
format, row_count, typed bigint/decimal/date/varchar columns) and their samples
(CSV, JSON Lines and Parquet; a few bad values in each) in a temporary folder,
then times, alternating, each in a fresh Python process so each pays for its
own JVM:

- bare: a local SparkSession with the gate's settings plus one trivial query;
- smoke: the whole smoke test (``run_smoke``), as the command runs it;

each from its session's start to its stop, and prints bare, smoke and the smoke test's own cost per dataset
((smoke - bare) / datasets), the CPU seconds of each run's process and its
JVM (medians), and the machine's load average before and after the row: on a
shared machine the wall times drift with the load, the CPU times much less.
Needs Java and the ``spark`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONTRACT = """\
dataset: bench/shop/{name}
columns:
  - name: id
    data_type: bigint
    checks:
      - missing:
      - duplicate:
  - name: email
    checks:
      - invalid:
          valid_format:
            name: email
            regex: '^[^@ ]+@[^@ ]+$'
  - name: status
    data_type: varchar(10)
    checks:
      - invalid:
          valid_values: [new, paid, shipped, returned]
  - name: amount
    data_type: decimal(10,2)
    checks:
      - invalid:
          valid_min: 0
          threshold:
            metric: percent
            must_be_less_than: 1
  - name: created
    data_type: date
  - name: note
    optional: true
checks:
  - row_count:
      threshold:
        must_be_greater_than: 1000
"""

STATUSES = ["new", "paid", "shipped", "returned"]


def records(rows: int, seed: int) -> object:
    """A pyarrow table of ``rows`` string records; bad values every 997th/1499th row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    index = np.arange(rows)
    amount = np.char.mod("%.2f", rng.uniform(0, 5000, rows)).astype(object)
    amount[index % 997 == 0] = "12a"  # the classic silent coercion
    status = np.array(STATUSES, dtype=object)[rng.integers(0, 4, rows)]
    status[index % 1499 == 0] = "lost"
    month = rng.integers(1, 13, rows)
    day = rng.integers(1, 29, rows)
    ids = pa.array(index + 1).cast(pa.string())
    return pa.table(
        {
            "id": ids,
            "email": pc.binary_join_element_wise("user", ids, "@example.com", ""),
            "status": pa.array(status, pa.string()),
            "amount": pa.array(amount, pa.string()),
            "created": pa.array(
                [f"2024-{m:02d}-{d:02d}" for m, d in zip(month, day, strict=True)], pa.string()
            ),
            "note": pa.array(["x" * (i % 31) for i in range(rows)], pa.string()),
        }
    )


def generate(root: Path, datasets: int, rows: int) -> None:
    """Contracts under contracts/, samples beside them (CSV, some JSON Lines and Parquet)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    folder = root / "contracts"
    folder.mkdir(parents=True)
    for index in range(datasets):
        name = f"table_{index:03d}"
        (folder / f"{name}.yaml").write_text(CONTRACT.format(name=name))
        table = records(rows, index)
        kind = "parquet" if index % 10 == 9 else "jsonl" if index % 5 == 4 else "csv"
        path = folder / f"{name}.sample.{kind}"
        if kind == "csv":
            options = pacsv.WriteOptions(quoting_style="needed")
            pacsv.write_csv(table, path, write_options=options)
        elif kind == "jsonl":
            with path.open("w") as out:
                for batch in table.to_batches(100_000):
                    out.writelines(json.dumps(row) + "\n" for row in batch.to_pylist())
        else:
            pq.write_table(table, path)


def _fresh(code: str, env: dict[str, str]) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object last."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: CPU seconds of this process and its JVM (read before the session stops).
CPU = """
def _cpu(spark):
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    own = os.times()
    return (int(fields[11]) + int(fields[12])) / ticks + own.user + own.system
"""

BARE = (
    """
import json, os, time
t = time.perf_counter()
from gate.smoke import session
handle = session.start()
handle.spark.range(1).count()
"""
    + CPU
    + """
cpu = _cpu(handle.spark)
handle.stop()
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "cpu": cpu}))
"""
)

# run_smoke starts and stops its own session, as the command does (so the
# first large sample is read while the JVM starts); the session's stop is
# wrapped to read the JVM's CPU time first. The timing includes the start and
# the stop, as BARE's includes its start.
SMOKE = (
    """
import json, os, time
from pathlib import Path
t = time.perf_counter()
from gate.formats import parse_contract
from gate.smoke import SmokeSettings, run_smoke, session
"""
    + CPU.replace("{", "{{").replace("}", "}}")
    + """
used = {{}}
stop = session.SparkHandle.stop
def measured_stop(handle):
    used["cpu"] = _cpu(handle.spark)
    stop(handle)
session.SparkHandle.stop = measured_stop
root = Path({root!r})
datasets = []
for path in sorted((root / "contracts").glob("*.yaml")):
    rel = path.relative_to(root).as_posix()
    datasets.extend(parse_contract(path.read_bytes(), rel).datasets)
report = run_smoke(datasets, root, SmokeSettings())
seconds = time.perf_counter() - t
print(json.dumps({{
    "seconds": seconds,
    "cpu": used["cpu"],
    "statuses": sorted({{d.status for d in report.datasets}}),
    "rows": sorted({{d.rows for d in report.datasets}}),
    "version": report.spark_version,
}}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="20x10000,100x10000,5x1000000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--parallel", help="GATE_SPARK_PARALLEL for the smoke runs")
    args = parser.parse_args()
    env = {"GATE_SPARK_PARALLEL": args.parallel} if args.parallel else {}
    print(f"{os.cpu_count()} cores; fresh process per run; median of {args.repeat}")
    print("| samples | bare session | smoke test | own cost | CPU (bare / smoke) | load |")
    print("|---|---|---|---|---|---|")
    for spec in args.only.split(","):
        datasets, rows = (int(part) for part in spec.lower().split("x"))
        with tempfile.TemporaryDirectory(prefix="bench-smoke-") as folder:
            root = Path(folder)
            generate(root, datasets, rows)
            load = os.getloadavg()[0]
            bare, smoke, runs = [], [], []
            for _ in range(args.repeat):
                bare.append(_fresh(BARE, env))
                run = _fresh(SMOKE.format(root=str(root)), env)
                runs.append(run)
                smoke.append(run)
        b = statistics.median(run["seconds"] for run in bare)
        s = statistics.median(run["seconds"] for run in smoke)
        b_cpu = statistics.median(run["cpu"] for run in bare)
        s_cpu = statistics.median(run["cpu"] for run in smoke)
        own = (s - b) / datasets
        print(
            f"| {datasets} datasets x {rows:,} rows | {b:.1f} s | {s:.1f} s | "
            f"{own:.2f} s per dataset | {b_cpu:.0f} s / {s_cpu:.0f} s | "
            f"{load:.1f} to {os.getloadavg()[0]:.1f} |  (statuses "
            f"{', '.join(runs[0]['statuses'])}; Spark {runs[0]['version']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
