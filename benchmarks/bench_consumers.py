"""Time the gate with in-repo consumers on a generated monorepo, next to its floor.

    python benchmarks/bench_consumers.py --contracts 10000 --changed 100 --sql-models 5000

The contracts and branches are those of bench_gate.py (its generator is
imported, so both benchmarks measure the same repository); what this one adds
is the SQL models.

Builds (once, cached under benchmarks/out/) a git repository of N Soda contracts
with 20 columns each and M dbt-style SQL models (``--sql-models``, default 5000;
model m reads tables 2m and 2m+1 through ``source()``, a CTE, ``select *``, a
join, a filter and aggregates) on ``main``, then one branch per K with K
contracts changed (a column widened, a column added, every 10th also a column
dropped, which every model reading it still selects). For each K it times the
gate comparing the branch with main, the same run with consumers switched off
(``consumers: false``), and the *floor*: Python start-up with the gate's imports
plus ``git diff --name-status`` between the same two commits, i.e. what any
gate must at least pay. Prints a Markdown table for docs/performance.md. No
timing is asserted anywhere: this is a measurement.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_gate import contract, git  # run as a script: benchmarks/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out" / "consumers"

NO_CONSUMERS = "no-consumers.schema-gate.yml"


def sql_model(m: int, n: int) -> str:
    """A dbt model over two contracted tables: refs resolved, columns used every way."""
    a, b = (2 * m) % n, (2 * m + 1) % n
    return (
        "{{ config(materialized='table') }}\n\n"
        "with a as (\n"
        f"    select * from {{{{ source('domain_{a % 50}', 'table_{a}') }}}}\n"
        "),\n"
        "b as (\n"
        f"    select col_0, col_3, col_19 from domain_{b % 50}.table_{b}\n"
        ")\n"
        "select\n"
        "    a.col_0,\n"
        "    a.col_1,\n"
        "    sum(b.col_3) as total,\n"
        "    max(a.col_19) as latest\n"
        "from a\n"
        "join b on a.col_0 = b.col_0\n"
        "where a.col_2 is not null\n"
        "group by 1, 2\n"
    )


def build(n: int, ks: list[int], models: int) -> Path:
    repo = OUT / f"repo-{n}-sql{models}"
    marker = repo / ".built"
    built = marker.read_text().split() if marker.exists() else []
    if built and all(f"k{k}" in built for k in ks):
        return repo
    if built:  # main is there: add only the missing branches
        add_branches(repo, n, [k for k in ks if f"k{k}" not in built])
        marker.write_text(" ".join([*built, *(f"k{k}" for k in ks if f"k{k}" not in built)]))
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
    for m in range(models):
        path = repo / "models" / f"area_{m % 50}" / f"model_{m}.sql"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sql_model(m, n))
    (repo / NO_CONSUMERS).write_text("consumers: false\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    add_branches(repo, n, ks)
    marker.write_text(" ".join(f"k{k}" for k in ks))
    return repo


def add_branches(repo: Path, n: int, ks: list[int]) -> None:
    """One branch per K off main, with K contracts changed."""
    base = repo / "soda" / "contracts"
    for k in ks:
        git(repo, "checkout", "-q", "-B", f"k{k}", "main")
        step = max(1, n // k)
        for i in range(0, n, step)[:k]:
            (base / f"domain_{i % 50}" / f"table_{i}.yaml").write_text(contract(i, changed=True))
        git(repo, "commit", "-q", "-am", f"change {k}")
    git(repo, "checkout", "-q", "main")


#: CPU seconds (user + system, children included) of the last ``timed`` command:
#: on a shared, loaded machine CPU time is a steadier measure than wall time.
CPU: dict[str, float] = {}


def timed(cmd: list[str], cwd: Path, repeat: int) -> tuple[float, subprocess.CompletedProcess]:
    samples = []
    cpu = []
    proc = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        samples.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    CPU["last"] = statistics.median(cpu)
    return statistics.median(samples), proc  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contracts", type=int, default=10_000, help="N contracts (default 10000)")
    parser.add_argument(
        "--changed", type=int, action="append", help="K changed contracts (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument(
        "--sql-models", type=int, default=5_000, help="M dbt SQL models (default 5000)"
    )
    parser.add_argument(
        "--jobs", type=int, help="passed to the gate (default: its own, one per usable CPU)"
    )
    args = parser.parse_args()
    ks = args.changed or [100, 10_000]
    repo = build(args.contracts, ks, args.sql_models)
    env_py = [sys.executable]
    # BENCH_PYTHONPATH puts e.g. a sqlglotc build in front, for the [fast] figures;
    # the floor imports from the same path, so both pay for the same modules.
    prefix = os.environ.get("BENCH_PYTHONPATH")
    pythonpath = f"PYTHONPATH={prefix + ':' if prefix else ''}{ROOT}"
    imports = "import gate.cli, gate.engine, gate.lattice, gate.git.tree, sqlglot, yaml"
    startup, _ = timed(["env", pythonpath, *env_py, "-c", imports], ROOT, args.repeat)
    startup_cpu = CPU["last"]
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        f", {git_version.strip()}, sqlglot {_sqlglot()}"
    )
    print(f"N = {args.contracts} contracts x 20 columns, M = {args.sql_models} SQL models")
    print(f"gate --jobs: {args.jobs or 'default'}; medians of {args.repeat} runs")
    print(f"load average before: {_load()}")
    print()
    print(
        "| K changed | gate (s) | without consumers (s) | floor: startup + git diff (s) "
        "| ratio | CPU s: gate / without / floor | CPU ratio | findings | consumer lines | exit |"
    )
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for k in ks:
        diff_time, _ = timed(["git", "diff", "--name-status", "main", f"k{k}"], repo, args.repeat)
        floor_cpu = startup_cpu + CPU["last"]
        cmd = [*env_py, "-m", "gate", "--base", "main", "--head", f"k{k}", "--format", "json"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        env_cmd = ["env", pythonpath, *cmd]
        gate_time, proc = timed(env_cmd, repo, args.repeat)
        gate_cpu = CPU["last"]
        if proc.returncode not in (0, 1):
            print(proc.stderr, file=sys.stderr)
            return 2
        import json

        report = json.loads(proc.stdout)
        findings = len(report["changes"])
        consumers = sum(len(c["consumers"]) for c in report["changes"])
        bare_time, _ = timed([*env_cmd, "--config", NO_CONSUMERS], repo, args.repeat)
        bare_cpu = CPU["last"]
        floor = startup + diff_time
        print(
            f"| {k:,} | {gate_time:.2f} | {bare_time:.2f} | {floor:.2f} | {gate_time / floor:.1f}x "
            f"| {gate_cpu:.2f} / {bare_cpu:.2f} / {floor_cpu:.2f} | {gate_cpu / floor_cpu:.1f}x "
            f"| {findings:,} | {consumers:,} | {proc.returncode} |"
        )
    print(f"\nload average after: {_load()} (wall times on a loaded machine are not the floor's)")
    return 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _sqlglot() -> str:
    """The sqlglot version, and whether its compiled (sqlglotc) build is in use."""
    # sqlglotc installs compiled modules inside the sqlglot package: ask the parser.
    code = (
        "import sqlglot, sqlglot.parser as p; "
        "print(sqlglot.__version__, '(pure Python)' if p.__file__.endswith('.py') else '(compiled)')"
    )
    env = dict(os.environ, PYTHONPATH=os.environ.get("BENCH_PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    ).stdout
    return out.strip() or "?"


if __name__ == "__main__":
    raise SystemExit(main())
