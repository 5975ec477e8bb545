"""Time ``python -m gate`` end to end on a generated monorepo, next to its floor.

    python benchmarks/bench_gate.py --contracts 10000 --changed 100 --changed 10000

Builds (once, cached under benchmarks/out/) a git repository of N Soda contracts
with 20 columns each on ``main``, then one branch per K with K contracts changed
(a column widened, a column added, every 10th also a column dropped). For each
K it times the gate comparing the branch with main, and the *floor*: Python
start-up with the gate's imports plus ``git diff --name-status`` between the
same two commits, i.e. what any gate must at least pay. Prints a Markdown table
for docs/performance.md. No timing is asserted anywhere: this is a measurement.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"

TYPES = ["bigint", "int", "string", "decimal(12,2)", "timestamp", "date", "varchar(64)", "double"]


def contract(index: int, changed: bool) -> str:
    lines = [f"dataset: lake/domain_{index % 50}/table_{index}", "columns:"]
    for col in range(20):
        data_type = TYPES[(index + col) % len(TYPES)]
        if changed and col == 1 and data_type == "int":
            data_type = "bigint"
        if changed and col == 2:
            data_type = {"int": "bigint", "float": "double"}.get(data_type, data_type)
        if changed and col == 19 and index % 10 == 0:
            continue  # a dropped column: breaking
        lines += [f"  - name: col_{col}", f"    data_type: {data_type}"]
        if col == 0:
            lines += ["    checks:", "      - missing:", "      - duplicate:"]
    if changed:
        lines += ["  - name: added_col", "    data_type: string", "    optional: true"]
    lines += ["checks:", "  - row_count:", ""]
    return "\n".join(lines)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def build(n: int, ks: list[int]) -> Path:
    repo = OUT / f"repo-{n}"
    marker = repo / ".built"
    if marker.exists() and all(f"k{k}" in marker.read_text().split() for k in ks):
        return repo
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    base = repo / "soda" / "contracts"
    for i in range(n):
        path = base / f"domain_{i % 50}" / f"table_{i}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(contract(i, changed=False))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for k in ks:
        git(repo, "checkout", "-q", "-B", f"k{k}", "main")
        step = max(1, n // k)
        for i in range(0, n, step)[:k]:
            (base / f"domain_{i % 50}" / f"table_{i}.yaml").write_text(contract(i, changed=True))
        git(repo, "commit", "-q", "-am", f"change {k}")
    git(repo, "checkout", "-q", "main")
    marker.write_text(" ".join(f"k{k}" for k in ks))
    return repo


def timed(cmd: list[str], cwd: Path, repeat: int) -> tuple[float, subprocess.CompletedProcess]:
    samples = []
    proc = None
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), proc  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contracts", type=int, default=10_000, help="N contracts (default 10000)")
    parser.add_argument(
        "--changed", type=int, action="append", help="K changed contracts (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
    ks = args.changed or [100, 10_000]
    repo = build(args.contracts, ks)
    env_py = [sys.executable]
    imports = "import gate.cli, gate.engine, gate.types, gate.git_tree, sqlglot, yaml"
    startup, _ = timed([*env_py, "-c", imports], ROOT, args.repeat)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"N = {args.contracts} contracts x 20 columns")
    print()
    print("| K changed | gate (s) | floor: startup + git diff (s) | ratio | findings | exit |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in ks:
        diff_time, _ = timed(["git", "diff", "--name-status", "main", f"k{k}"], repo, args.repeat)
        cmd = [*env_py, "-m", "gate", "--base", "main", "--head", f"k{k}", "--format", "json"]
        env_cmd = ["env", f"PYTHONPATH={ROOT}", *cmd]
        gate_time, proc = timed(env_cmd, repo, args.repeat)
        if proc.returncode not in (0, 1):
            print(proc.stderr, file=sys.stderr)
            return 2
        import json

        findings = len(json.loads(proc.stdout)["changes"])
        floor = startup + diff_time
        print(
            f"| {k:,} | {gate_time:.2f} | {floor:.2f} | {gate_time / floor:.1f}x "
            f"| {findings:,} | {proc.returncode} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
