"""Time the gate on the worst input of each class it bounds (issue #8).

    python benchmarks/bench_security.py            # every class
    python benchmarks/bench_security.py types      # one class: bytes nodes columns depth types consumers
    BENCH_CPU_LIMIT=60 python benchmarks/bench_security.py consumers  # stop at 60 s of CPU

Each case commits a contract on ``main``, writes the hostile version in a
branch's working tree and runs ``python -m gate --base main --format json`` as
a subprocess, as CI would. Prints a Markdown table for docs/github-action.md
("Security model"): the exit code, wall seconds and the CPU seconds the gate
and its git children used (on a shared machine, CPU time is the honest figure;
wall time includes waiting for other processes). Cases "under the limit" are
the most expensive inputs the limits still accept. Nothing is asserted: this is
a measurement, not a test.

``consumers`` (issue #27) commits a contract for table ``t`` and one hostile
consumer file of it on ``main`` (each under the default consumer size bound),
drops column ``a`` in the branch so that consumers are read, and times the
run. To measure the code before a fix, run this file from a checkout of it;
``BENCH_CPU_LIMIT`` (seconds of CPU, ``RLIMIT_CPU``) ends runs that would not
finish; a CPU limit, not a wall-clock one, so a busy machine does not end them early.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.gitrepo import GitRepo, git_env  # noqa: E402

C = "soda/contracts"
MB = 1 << 20
SMALL = "dataset: d\ncolumns:\n  - name: a\n    data_type: int\n"


def run(repo: GitRepo) -> tuple[int, float, float, str]:
    env = git_env()
    env["PYTHONPATH"] = str(ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    limit = int(os.environ.get("BENCH_CPU_LIMIT") or 0)

    def cap() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

    proc = subprocess.run(
        [sys.executable, "-m", "gate", "--base", "main", "--format", "json"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=cap,
    )
    if proc.returncode < 0:
        proc.stderr = f"stopped by signal {-proc.returncode} after {limit} s of CPU"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answer = proc.stderr.strip().removeprefix("schema-gate: error: ") or "ok"
    if answer == "ok" and proc.stdout:
        reasons = [n["reason"] for n in json.loads(proc.stdout).get("consumers_not_analysed", [])]
        answer = "not analysed: " + reasons[0] if reasons else "ok"
    return proc.returncode, wall, cpu, answer


def case(name: str, base: str, head: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitRepo(Path(tmp) / "r")
        repo.write(f"{C}/a.yaml", base)
        repo.commit("base")
        repo.branch("feature")
        repo.write(f"{C}/a.yaml", head)
        code, wall, cpu, answer = run(repo)
    if len(answer) > 90:
        answer = answer[:87] + "..."
    print(f"| {name} | {code} | {wall:.2f} | {cpu:.2f} | {answer} |", flush=True)


def columns(count: int, data_type: Callable[[int], str]) -> str:
    return "dataset: d\ncolumns:\n" + "".join(
        f"  - name: c{i}\n    data_type: {data_type(i)}\n" for i in range(count)
    )


def typed(data_type: str) -> str:
    return f'dataset: d\ncolumns:\n  - name: a\n    data_type: "{data_type}"\n'


def bytes_() -> None:
    for size in (10, 65):
        case(
            f"{size} MB one-line contract",
            SMALL,
            '{dataset: d, description: "' + "y" * size * MB + '"}\n',
        )
    case(
        "2 MiB one-line contract (under the limit)",
        SMALL,
        '{dataset: d, description: "' + "y" * (2 * MB - 64) + '"}\n',
    )


def nodes() -> None:
    case(
        "100,000 columns (1.5 MB)",
        SMALL,
        "dataset: d\ncolumns:\n" + "".join(f"  - name: c{i}\n" for i in range(100_000)),
    )
    case(
        "1 MB of `[a,a,a,...]` (500,000 nodes)", SMALL, "dataset: d\nx: [" + "a," * 500_000 + "]\n"
    )
    case(
        "99,990 tiny nodes on both sides (under the limit)",
        "dataset: d\nx: [" + "a," * 99_990 + "]\n",
        "dataset: d\nx: [" + "b," * 99_990 + "]\n",
    )


def columns_() -> None:
    case(
        "10,000 columns on both sides, every one widened (under the limit)",
        columns(10_000, lambda i: "int"),
        columns(10_000, lambda i: "bigint"),
    )
    case("10,000 columns removed (under the limit)", columns(10_000, lambda i: "int"), SMALL)
    renamed = "dataset: d\ncolumns:\n" + "".join(
        f"  - name: x{i}\n    data_type: int\n" for i in range(10_000)
    )
    case("10,000 columns renamed (under the limit)", columns(10_000, lambda i: "int"), renamed)
    case("10,001 columns", SMALL, columns(10_001, lambda i: "int"))


def depth() -> None:
    case("50,000 nested `[`", SMALL, "dataset: d\nc: " + "[" * 50_000 + "]" * 50_000 + "\n")
    case("50,000 compact `- - - ...`", SMALL, "dataset: d\nc:\n" + "- " * 50_000 + "x\n")
    long = "x" * 10_000
    bomb = (
        f'dataset: d\nnote: &s "{long}"\nx: &l ['
        + ", ".join(["*s"] * 300)
        + "]\ny: ["
        + ", ".join(["*l"] * 300)
        + "]\n"
    )
    case("alias bomb: a 10 KB string reused 90,000 times", SMALL, bomb)


def types() -> None:
    case(
        "`data_type`: decimal with 50,000 parameters",
        SMALL,
        typed("decimal(" + ",".join(["1"] * 50_000) + ")"),
    )
    case(
        "`data_type`: struct of 10,000 fields",
        SMALL,
        typed("struct<" + ", ".join(f"f{i}: int" for i in range(10_000)) + ">"),
    )
    wide = "struct<" + ",".join(f"c{i} int" for i in range(999)) + ">"
    case(
        "struct of 999 fields changed (under the limits)",
        typed(wide),
        typed(wide.replace("c1 int", "c1 bigint")),
    )
    case(
        "1,400 distinct `varchar(n)` widened (under type_chars_per_file)",
        columns(1_400, lambda i: f"varchar({i + 1})"),
        columns(1_400, lambda i: f"varchar({i + 2})"),
    )
    case("3,000 distinct `varchar(n)`", SMALL, columns(3_000, lambda i: f"varchar({i + 1})"))


T_BASE = "dataset: t\ncolumns:\n  - name: a\n    data_type: int\n  - name: k\n    data_type: int\n"
T_HEAD = "dataset: t\ncolumns:\n  - name: k\n    data_type: int\n"


def consumer_case(name: str, path: str, text: str) -> None:
    """A contract for ``t`` and one consumer of it; the branch drops column ``a``."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitRepo(Path(tmp) / "r")
        repo.write(f"{C}/t.yaml", T_BASE)
        repo.write(path, text)
        repo.commit("base")
        repo.branch("feature")
        repo.write(f"{C}/t.yaml", T_HEAD)
        code, wall, cpu, answer = run(repo)
    if len(answer) > 90:
        answer = answer[:87] + "..."
    size = len(text.encode())
    print(f"| {name} ({size:,} B) | {code} | {wall:.2f} | {cpu:.2f} | {answer} |", flush=True)


def consumers() -> None:
    levels = ["c0 as (select * from t)"] + [
        f"c{i} as (select * from c{i - 1} x join c{i - 1} y on x.k = y.k)" for i in range(1, 25)
    ]
    consumer_case(
        "24 CTEs, each reading the previous one twice",
        "models/deep.sql",
        "with " + ",\n".join(levels) + "\nselect a from c24\n",
    )
    consumer_case(
        "SQLMesh model with 20,000 unclosed `@a(`",
        "models/m.sql",
        "MODEL (name shop.m);\nselect a from t where " + "@a(" * 20_000 + "\n",
    )
    consumer_case(
        "40 empty `/* */` before a query (SQLMesh header test)",
        "models/c.sql",
        "/* */" * 40 + "\nselect a from t\n",
    )
    consumer_case(
        "dbt model with 48,000 `{{x}}`",
        "models/tags.sql",
        "select a from t where " + "{{x}}" * 48_000 + "\n",
    )
    consumer_case(
        "`a + a + ... + a`, 14,000 terms (under the token budget)",
        "models/sum.sql",
        "select " + " + ".join(["a"] * 14_000) + " as total\nfrom t\n",
    )
    consumer_case(
        "7,400 aliased columns, 29,600 tokens (under the token budget)",
        "models/wide.sql",
        "select " + ", ".join(f"a as c{i}" for i in range(7_400)) + "\nfrom t\n",
    )
    consumer_case(
        "3,000 `JOIN x USING (a)`: 9 million reads (the step budget)",
        "models/using.sql",
        "select a from t\n" + "".join(f"join x{i} using (a)\n" for i in range(3_000)),
    )
    consumer_case(
        "PySpark: 20 `spark.sql` strings of 2,000 columns",
        "jobs/many.py",
        "".join("spark.sql('select " + ", ".join(["a"] * 2_000) + " from t')\n" for _ in range(20)),
    )
    consumer_case(
        "Python: 100,000 unary minus signs (parser MemoryError)",
        "jobs/deep.py",
        "df = spark.table('t')\nx = " + "-" * 100_000 + "1\n",
    )
    consumer_case(
        "a 20 MB consumer file (over the size bound)",
        "models/huge.sql",
        "select a from t\n" + ("-- " + "x" * 97 + "\n") * 200_000,
    )


CLASSES = {
    "bytes": bytes_,
    "nodes": nodes,
    "columns": columns_,
    "depth": depth,
    "types": types,
    "consumers": consumers,
}

if __name__ == "__main__":
    print("| input | exit | wall s | CPU s | answer |")
    print("|---|---:|---:|---:|---|")
    for name in sys.argv[1:] or list(CLASSES):
        CLASSES[name]()
