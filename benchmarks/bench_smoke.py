"""Benchmark the smoke test: 20 datasets x 10,000 rows against a bare Spark start.

    python benchmarks/bench_smoke.py [--datasets 20] [--rows 10000] [--repeat 3]

Generates Soda contracts (a few checks each: missing, duplicate, invalid
values / range / format, row_count, typed columns) and their samples (CSV,
JSON Lines and Parquet) in a temporary repository, then times, each in a fresh
Python process so every run pays for its own JVM:

- a bare local SparkSession start (``gate.smoke.session.start``, the settings
  the smoke test uses) and PySpark's plain ``SparkSession.builder.getOrCreate()``;
- the whole smoke test (``run_smoke``), session start included.

The target is "session start + 1 s per dataset". Needs Java and the ``spark``
extra (pyarrow for the Parquet samples).
"""

from __future__ import annotations

import argparse
import json
import random
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


def generate(root: Path, datasets: int, rows: int) -> None:
    """Contracts under contracts/, samples beside them; a few bad values in each."""
    rng = random.Random(42)
    folder = root / "contracts"
    folder.mkdir(parents=True)
    for index in range(datasets):
        name = f"table_{index:02d}"
        (folder / f"{name}.yaml").write_text(CONTRACT.format(name=name))
        records = []
        for row in range(rows):
            amount = f"{rng.uniform(0, 5000):.2f}"
            status = rng.choice(STATUSES)
            if row % 997 == 0:
                amount = "12a"  # the classic silent coercion
            if row % 1499 == 0:
                status = "lost"
            records.append(
                {
                    "id": str(row + 1),
                    "email": f"user{row}@example.com",
                    "status": status,
                    "amount": amount,
                    "created": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                    "note": "x" * rng.randint(0, 30),
                }
            )
        kind = "parquet" if index % 10 == 9 else "jsonl" if index % 5 == 4 else "csv"
        path = folder / f"{name}.sample.{kind}"
        if kind == "csv":
            header = list(records[0])
            lines = [",".join(header)] + [",".join(r[k] for k in header) for r in records]
            path.write_text("\n".join(lines) + "\n")
        elif kind == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(records), path)


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object last."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


GATE_START = """
import json, time
t = time.perf_counter()
from gate.smoke import session
handle = session.start()
print(json.dumps({"seconds": time.perf_counter() - t}))
"""

PLAIN_START = """
import json, time
t = time.perf_counter()
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[*]").getOrCreate()
print(json.dumps({"seconds": time.perf_counter() - t}))
"""

SMOKE = """
import json, time
from pathlib import Path
t = time.perf_counter()
from gate.formats import parse_contract
from gate.smoke import SmokeSettings, run_smoke
root = Path({root!r})
datasets = []
for path in sorted((root / "contracts").glob("*.yaml")):
    rel = path.relative_to(root).as_posix()
    datasets.extend(parse_contract(path.read_bytes(), rel).datasets)
report = run_smoke(datasets, root, SmokeSettings())
print(json.dumps({{
    "wall": time.perf_counter() - t,
    "seconds": report.seconds,
    "session": report.session_seconds,
    "datasets": [[d.dataset, d.status, d.rows, d.seconds] for d in report.datasets],
    "version": report.spark_version,
}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=20)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-smoke-") as folder:
        root = Path(folder)
        generate(root, args.datasets, args.rows)
        gate_starts, plain_starts, runs = [], [], []
        for _ in range(args.repeat):
            gate_starts.append(_fresh(GATE_START)["seconds"])
            plain_starts.append(_fresh(PLAIN_START)["seconds"])
            runs.append(_fresh(SMOKE.format(root=str(root))))
    best = min(runs, key=lambda run: run["seconds"])
    per_dataset = [row[3] for row in best["datasets"]]
    statuses = sorted({row[1] for row in best["datasets"]})
    start = statistics.median(gate_starts)
    totals = [run["seconds"] for run in runs]
    total = statistics.median(totals)
    budget = start + args.datasets
    print(
        f"Spark {best['version']}, {args.datasets} datasets x {args.rows:,} rows, "
        f"median of {args.repeat} fresh processes"
    )
    print(
        f"  bare SparkSession start (gate settings): {start:6.2f} s "
        f"(runs: {', '.join(f'{s:.2f}' for s in gate_starts)})"
    )
    print(f"  bare SparkSession start (pyspark defaults): {statistics.median(plain_starts):6.2f} s")
    print(
        f"  whole smoke test (session included):       {total:6.2f} s "
        f"(runs: {', '.join(f'{seconds:.2f}' for seconds in totals)})"
    )
    print(f"    session start in that run:               {best['session']:6.2f} s")
    print(
        f"    per dataset: first {per_dataset[0]:.2f} s (JVM warm-up), then median "
        f"{statistics.median(per_dataset[1:]):.2f} s, max {max(per_dataset[1:]):.2f} s"
    )
    print(f"    dataset statuses: {', '.join(statuses)}")
    verdict = "within" if total <= budget else "OVER"
    print(f"  target: session start + 1 s per dataset = {budget:.2f} s -> {verdict}")


if __name__ == "__main__":
    main()
