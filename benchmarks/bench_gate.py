"""Time ``python -m gate`` end to end on a generated monorepo, next to its floor.

    python benchmarks/bench_gate.py --contracts 10000 --also ../main
    python benchmarks/bench_gate.py --format odcs --changed 100 --validators

Builds (once, cached under benchmarks/out/) a git repository of N Soda contracts
with 20 columns each on ``main``, then one branch per K with K contracts changed
(a column widened, a column added, every 10th also a column dropped; K = 0 adds a
README and changes no contract). For each
K it checks the branch out and times, alternating run by run, the *floor* as
issue #26 defines it (``FLOOR``: Python start-up, ``import sqlglot, yaml``,
``git diff --name-status`` between the merge-base and HEAD, one ``git cat-file
--batch`` for both sides of the changed files, a C-YAML parse of those blobs),
the gate on the working tree (no ``--head``) and the gate with ``--head HEAD``;
``--also DIR`` times another checkout's gate beside it (before/after). Medians
of wall and CPU (user + sys) time; on a shared machine the CPU column is the
steadier one. Prints a Markdown table for docs/performance.md. No timing is
asserted anywhere: this is a measurement.

Each timed checkout's ``gate/`` is byte-compiled first (``compileall``), as an
installed package is (pip compiles at install, the Action's image too): with
``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__``, every run would compile
the gate's sources again (about 0.3-0.5 s of CPU), which ``sqlglot`` and
``yaml`` in site-packages never pay. ``--no-compile`` measures that case.

N = 50,000 in reasonable time: ``--changed 1 --changed 100`` limits the
branches built and timed (generation writes N files once, cached under
benchmarks/out/), ``--repeat`` the runs per median, ``--modes head`` one mode.

``--rt`` runs every timed process, the floor included, at real-time priority
(``chrt -f 10``, as bench_external_manifest.py's ``--rt``): each gets a core at
once, as on an idle runner, so that other jobs on a shared machine do not
distort the wall times (issue #26 states its goals in wall time).

``--format odcs`` writes ODCS v3.1 contracts instead (same columns), whose
schema validation is the costliest; ``--validators`` also times validating the
changed contracts with jsonschema alone against the compiled fastjsonschema
check, cold (compiling) and warm (cached code). ``--cold`` runs the gate with
an empty validator cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
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


def odcs_contract(index: int, changed: bool) -> str:
    """The same table as ``contract`` in ODCS v3.1 (physicalType carries the SQL type)."""
    lines = [
        "apiVersion: v3.1.0",
        "kind: DataContract",
        f"id: contract-{index}",
        "version: 1.0.0",
        "status: active",
        "schema:",
        f"  - name: table_{index}",
        f"    physicalName: lake_domain_{index % 50}_table_{index}",
        "    properties:",
    ]
    for col in range(20):
        data_type = TYPES[(index + col) % len(TYPES)]
        if changed and col == 1 and data_type == "int":
            data_type = "bigint"
        if changed and col == 19 and index % 10 == 0:
            continue
        lines += [f"      - name: col_{col}", f"        physicalType: {data_type}"]
        if col == 0:
            lines += ["        required: true", "        unique: true"]
    if changed:
        lines += ["      - name: added_col", "        logicalType: string"]
    return "\n".join(lines) + "\n"


FORMATS = {
    "soda": (contract, "soda/contracts", "yaml"),
    "odcs": (odcs_contract, "odcs", "odcs.yaml"),
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def build(n: int, ks: list[int], fmt: str = "soda") -> Path:
    write, folder, suffix = FORMATS[fmt]
    repo = OUT / (f"repo-{n}" if fmt == "soda" else f"repo-{fmt}-{n}")
    marker = repo / ".built"
    built = marker.read_text().split() if marker.exists() else []
    if all(f"k{k}" in built for k in ks):
        return repo
    base = repo / folder
    if not built:
        if repo.exists():
            subprocess.run(["rm", "-rf", str(repo)], check=True)
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.email", "bench@example.com")
        git(repo, "config", "user.name", "bench")
        for i in range(n):
            path = base / f"domain_{i % 50}" / f"table_{i}.{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(write(i, changed=False))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
    # a repository already built gets only the branches it lacks
    for k in [k for k in ks if f"k{k}" not in built]:
        built.append(f"k{k}")
        git(repo, "checkout", "-q", "-B", f"k{k}", "main")
        if k == 0:  # a pull request that changes no contract (a README)
            (repo / "README.md").write_text("# contracts\n")
            git(repo, "add", "README.md")
        step = max(1, n // max(k, 1))
        for i in range(0, n, step)[:k]:
            (base / f"domain_{i % 50}" / f"table_{i}.{suffix}").write_text(write(i, changed=True))
        git(repo, "commit", "-q", "-am", f"change {k}")
    git(repo, "checkout", "-q", "main")
    marker.write_text(" ".join(built))
    return repo


def validators(repo: Path, k: int, fmt: str) -> None:
    """Validate both sides of the K changed contracts with each validator, in-process."""
    sys.path.insert(0, str(ROOT))
    import importlib

    from gate.yaml_load import load_yaml

    validate = importlib.import_module("gate.formats.validate")
    names = git(repo, "diff", "--name-only", "main", f"k{k}").split()
    docs = []
    for name in names:
        for ref in ("main", f"k{k}"):
            docs.append(load_yaml(git(repo, "show", f"{ref}:{name}"), name))
    schema = validate.schema_name(fmt, docs[0]) if fmt != "soda" else None
    print(f"validating {len(docs)} documents ({k} changed contracts, both sides), {fmt}:")
    if schema is None:
        start = time.perf_counter()
        for doc in docs:
            validate.validate(fmt, doc, "x")
        print(f"  Soda key set: {time.perf_counter() - start:.3f} s")
        return
    start = time.perf_counter()
    import jsonschema.validators  # noqa: F401

    slow = validate._validator(schema)
    for doc in docs:
        list(slow.iter_errors(doc))
    print(f"  jsonschema (import + build + validate): {time.perf_counter() - start:.2f} s")
    import fastjsonschema

    os.environ["SCHEMA_GATE_CACHE"] = tempfile.mkdtemp(prefix="gate-cold-")
    start = time.perf_counter()
    fast = validate._fast(schema)
    compiled = time.perf_counter() - start
    for doc in docs:
        fast(doc)
    print(
        f"  fastjsonschema {fastjsonschema.VERSION} cold: compile {compiled:.2f} s, "
        f"total {time.perf_counter() - start:.2f} s"
    )
    validate._fast.cache_clear()
    start = time.perf_counter()
    fast = validate._fast(schema)
    loaded = time.perf_counter() - start
    for doc in docs:
        fast(doc)
    print(
        f"  fastjsonschema warm (cached code): load {loaded:.3f} s, "
        f"total {time.perf_counter() - start:.3f} s"
    )
    print()


#: The floor, as issue #26 defines it, in one process: Python start-up, ``import
#: sqlglot, yaml``, ``git diff --name-status`` between the merge-base and HEAD, one
#: ``git cat-file --batch`` for both sides of the changed files, and a C-YAML
#: parse of those blobs. What any implementation of the gate must at least pay.
FLOOR = """
import subprocess, sys
import sqlglot, yaml
base, head = sys.argv[1:3]
out = subprocess.run(["git", "diff", "--name-status", base, head], capture_output=True,
                     check=True).stdout.decode()
wanted = []
for line in out.splitlines():
    status, *paths = line.split("\\t")
    if status[0] in "MR":
        wanted += [f"{base}:{paths[0]}", f"{head}:{paths[-1]}"]
    elif status[0] == "A":
        wanted.append(f"{head}:{paths[0]}")
    elif status[0] == "D":
        wanted.append(f"{base}:{paths[0]}")
batch = subprocess.run(["git", "cat-file", "--batch"], input="\\n".join(wanted).encode() + b"\\n",
                       capture_output=True, check=True).stdout
pos = parsed = 0
while pos < len(batch):
    eol = batch.index(b"\\n", pos)
    size = int(batch[pos:eol].split()[2])
    yaml.load(batch[eol + 1 : eol + 1 + size], Loader=yaml.CSafeLoader)
    parsed += 1
    pos = eol + 1 + size + 1
print(parsed)
"""


def compile_gate(root: Path) -> None:
    """Byte-compile ``root``'s gate package, as pip does at install, and fill its table
    of dataclass code (gate/_dataclass_code.py) as the Action's image does; a
    checkout without that module (an older gate) just does without."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "gate")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run(
        [sys.executable, "-P", "-c", "from gate._dataclass_code import warm; warm()"],
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU (user + sys, the process and its children) seconds of one run."""
    cpu = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, _cpu() - cpu, proc


def alternating(
    commands: dict[str, tuple[list[str], dict[str, str] | None]], cwd: Path, repeat: int
) -> dict[str, tuple[float, float, subprocess.CompletedProcess]]:
    """Each command ``repeat`` times, in turn (a, b, c, a, b, c, ...), so that a
    change in the machine's load hits all of them alike; medians of wall and CPU."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    last: dict[str, subprocess.CompletedProcess] = {}
    for _ in range(repeat):
        for name, (cmd, env) in commands.items():
            wall, cpu, proc = once(cmd, cwd, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            last[name] = proc
    return {
        name: (statistics.median(walls[name]), statistics.median(cpus[name]), last[name])
        for name in commands
    }


def help_cpu(root: Path, repeat: int, rt: list[str] | None = None) -> tuple[float, float]:
    """Median wall and CPU seconds of ``python -m gate --help``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [*(rt or []), sys.executable, "-m", "gate", "--help"]
    result = alternating({"help": (cmd, env)}, root, repeat)
    wall, cpu, _ = result["help"]
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contracts", type=int, default=10_000, help="N contracts (default 10000)")
    parser.add_argument(
        "--changed", type=int, action="append", help="K changed contracts (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--format", choices=sorted(FORMATS), default="soda")
    parser.add_argument("--validators", action="store_true", help="also time the validators")
    parser.add_argument("--cold", action="store_true", help="empty validator cache per run")
    parser.add_argument(
        "--rt",
        action="store_true",
        help="run every timed process, floor included, at real-time priority (chrt -f 10)",
    )
    parser.add_argument(
        "--no-compile", action="store_true", help="do not byte-compile the timed gate/ first"
    )
    parser.add_argument(
        "--modes",
        choices=["both", "worktree", "head"],
        default="both",
        help="the working tree, --head HEAD, or both (default)",
    )
    parser.add_argument(
        "--also",
        metavar="DIR",
        action="append",
        default=[],
        help="also time the gate of another checkout (e.g. the main branch), alternating",
    )
    args = parser.parse_args()
    ks = args.changed or [1, 100, 1_000, 10_000]
    repo = build(args.contracts, ks, args.format)
    if args.validators:
        validators(repo, ks[0], args.format)
    roots = {"gate": ROOT, **{f"gate@{Path(d).name}": Path(d).resolve() for d in args.also}}
    if not args.no_compile:
        for root in roots.values():
            compile_gate(root)
    modes = {
        "both": (("worktree", []), ("--head HEAD", ["--head", "HEAD"])),
        "worktree": (("worktree", []),),
        "head": (("--head HEAD", ["--head", "HEAD"]),),
    }[args.modes]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start "
        "(a shared machine: wall times carry its load; CPU times less so)"
    )
    rt = ["chrt", "-f", "10"] if args.rt else []
    for name, root in roots.items():
        wall, cpu = help_cpu(root, args.repeat, rt)
        print(f"{name} --help: {wall:.3f} s wall, {cpu:.3f} s CPU (median of {args.repeat})")
    print(
        f"N = {args.contracts:,} {args.format} contracts x 20 columns, median of {args.repeat}"
        + (", gate/ not byte-compiled" if args.no_compile else ", gate/ byte-compiled")
        + (", every process at real-time priority (chrt -f 10)" if args.rt else "")
    )
    print()
    header = "| K changed | mode | floor wall / CPU (s) |"
    header += "".join(f" {name} wall / CPU (s) | ratio wall / CPU |" for name in roots)
    print(header + " findings | exit |")
    print("|---:|---|---:|" + "---:|---:|" * len(roots) + "---:|---:|")
    for k in ks:
        git(repo, "checkout", "-q", f"k{k}")
        try:
            merge_base = git(repo, "merge-base", "main", "HEAD").strip()
            head = git(repo, "rev-parse", "HEAD").strip()
            commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
                "floor": ([*rt, sys.executable, "-c", FLOOR, merge_base, head], None)
            }
            for mode, extra in modes:
                for name, root in roots.items():
                    env = {**os.environ, "PYTHONPATH": str(root)}
                    if args.cold:
                        env["SCHEMA_GATE_CACHE"] = tempfile.mkdtemp(prefix="gate-cold-")
                    cmd = [*rt, sys.executable, "-m", "gate", "--base", "main", *extra]
                    commands[f"{mode} {name}"] = ([*cmd, "--format", "json"], env)
            result = alternating(commands, repo, args.repeat)
        finally:
            git(repo, "checkout", "-q", "main")
        floor_wall, floor_cpu, floor_proc = result["floor"]
        if floor_proc.returncode != 0:
            print(floor_proc.stderr, file=sys.stderr)
            return 2
        for mode, _extra in modes:
            cells = []
            proc = None
            for name in roots:
                wall, cpu, proc = result[f"{mode} {name}"]
                if proc.returncode not in (0, 1):
                    print(proc.stderr, file=sys.stderr)
                    return 2
                cells.append(
                    f" {wall:.2f} / {cpu:.2f} | {wall / floor_wall:.2f}x / {cpu / floor_cpu:.2f}x |"
                )
            assert proc is not None
            findings = len(json.loads(proc.stdout)["changes"])
            print(
                f"| {k:,} | {mode} | {floor_wall:.2f} / {floor_cpu:.2f} |"
                + "".join(cells)
                + f" {findings:,} | {proc.returncode} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
