"""Time the gate on the worst input of each class it bounds (issue #8).

    python benchmarks/bench_security.py            # every class
    python benchmarks/bench_security.py types      # one class: bytes nodes columns depth types

Each case commits a contract on ``main``, writes the hostile version in a
branch's working tree and runs ``python -m gate --base main --format json`` as
a subprocess, as CI would. Prints a Markdown table for docs/github-action.md
("Security model"): the exit code, wall seconds and the CPU seconds the gate
and its git children used (on a shared machine, CPU time is the honest figure;
wall time includes waiting for other processes). Cases "under the limit" are
the most expensive inputs the limits still accept. Nothing is asserted: this is
a measurement, not a test.
"""

from __future__ import annotations

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
    proc = subprocess.run(
        [sys.executable, "-m", "gate", "--base", "main", "--format", "json"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answer = proc.stderr.strip().removeprefix("schema-gate: error: ") or "ok"
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


CLASSES = {"bytes": bytes_, "nodes": nodes, "columns": columns_, "depth": depth, "types": types}

if __name__ == "__main__":
    print("| input | exit | wall s | CPU s | answer |")
    print("|---|---:|---:|---:|---|")
    for name in sys.argv[1:] or list(CLASSES):
        CLASSES[name]()
