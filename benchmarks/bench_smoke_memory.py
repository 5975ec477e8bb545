"""Peak memory of the smoke test on a sample at the default size limits.

    python benchmarks/bench_smoke_memory.py [--rows 1000000] [--columns 20] [--all-bad]
                                            [--inline-bytes N]

Issue #13 asks that a 1M-row, 20-column sample fit the default driver memory.
This generates such a CSV sample (bigint, decimal, date, varchar and string
columns in turn; a unique id with a ``duplicate`` check; one bad value per
typed column), runs the whole smoke test in a fresh process with the default
settings (1 GiB driver heap) and prints the outcome with the peak resident
memory of the gate's Python process and of its JVM (``VmHWM``). A run that
needs more heap than the default fails with Spark's out-of-memory error,
which this prints. It also says whether the offending values came back with
the flags or from a second job (``checks.INLINE_TEXT_BYTES``, which
``--inline-bytes`` overrides to measure either route). No timing or memory is
asserted anywhere: a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TYPES = ["bigint", "decimal(12,2)", "date", "varchar(24)", "string"]

RUN = """
import json, resource, time
from pathlib import Path
from gate.formats import parse_contract
from gate.smoke import SmokeSettings, checks, run_smoke, session

asked = []
real = checks._offending_values
checks._offending_values = lambda *args: asked.append(1) or real(*args)
if {inline!r} is not None:
    checks.INLINE_TEXT_BYTES = {inline!r}
root = Path({root!r})
path = root / "contracts" / "wide.yaml"
datasets = parse_contract(path.read_bytes(), "contracts/wide.yaml").datasets
handle = session.start()
started = time.perf_counter()
report = run_smoke(datasets, root, SmokeSettings(), spark=handle.spark)
seconds = time.perf_counter() - started
pid = handle.spark._jvm.java.lang.ProcessHandle.current().pid()
jvm = [line for line in open(f"/proc/{{pid}}/status") if line.startswith("VmHWM")][0]
dataset = report.datasets[0]
print(json.dumps({{
    "status": dataset.status,
    "rows": dataset.rows,
    "error": dataset.error,
    "failed": sorted(f"{{r.name}}({{r.column}}): {{r.failed_rows}}" for r in dataset.results
                     if r.status == "failed"),
    "seconds": round(seconds, 1),
    "offending_values": "second job" if asked else "with the flags",
    "python_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    "jvm_peak_mb": int(jvm.split()[1]) // 1024,
}}))
handle.stop()
"""


def generate(root: Path, rows: int, columns: int, all_bad: bool = False) -> int:
    """The contract and its CSV sample; returns the sample's size in bytes.

    ``all_bad``: every value of every bigint, decimal and date column fails
    its type (a shifted CSV, say): about the most offending values a sample
    at the default size limit can hand back.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    folder = root / "contracts"
    folder.mkdir(parents=True)
    lines = ["dataset: bench/wide", "columns:"]
    data: dict[str, pa.Array] = {}
    rng = np.random.default_rng(7)
    index = np.arange(rows)
    for number in range(columns):
        kind = TYPES[number % len(TYPES)]
        name = "id" if number == 0 else f"col_{number:02d}"
        lines += [f"  - name: {name}", f"    data_type: {kind}"]
        if number == 0:
            lines += ["    checks:", "      - duplicate:"]
            values = (index + 1).astype(str).astype(object)
        elif kind == "bigint":
            values = rng.integers(0, 10**12, rows).astype(str).astype(object)
        elif kind.startswith("decimal"):
            values = np.char.mod("%.2f", rng.uniform(0, 10**6, rows)).astype(object)
        elif kind == "date":
            values = np.array([f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(rows)])
            values = values.astype(object)
        else:
            values = np.char.mod("v%07d", rng.integers(0, 10**7, rows)).astype(object)
        if all_bad and (kind in ("bigint", "date") or kind.startswith("decimal")):
            values = np.char.add("x", values.astype(str)).astype(object)  # not of its type
        elif kind != "string" and number != 0:
            values[rows // 2] = "not-a-value-of-this-type-at-all"
        data[name] = pa.array(values, pa.string())
    (folder / "wide.yaml").write_text("\n".join(lines) + "\n")
    path = folder / "wide.sample.csv"
    pacsv.write_csv(pa.table(data), path)
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument(
        "--all-bad",
        action="store_true",
        help="every bigint, decimal and date value fails its type: the worst case for memory",
    )
    parser.add_argument(
        "--inline-bytes",
        type=int,
        help="override checks.INLINE_TEXT_BYTES (0: always the second job)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-smoke-memory-") as folder:
        root = Path(folder)
        size = generate(root, args.rows, args.columns, args.all_bad)
        print(f"sample: {args.rows:,} rows x {args.columns} columns, {size / 2**20:.0f} MiB of CSV")
        proc = subprocess.run(
            [sys.executable, "-c", RUN.format(root=str(root), inline=args.inline_bytes)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=3600,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the smoke run failed:\n{proc.stderr[-3000:]}")
        print(json.dumps(json.loads(proc.stdout.strip().splitlines()[-1]), indent=2))


if __name__ == "__main__":
    main()
