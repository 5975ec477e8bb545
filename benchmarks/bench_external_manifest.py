"""Cost of reading another dbt project's manifest.json for external consumers (issue #25).

Builds a manifest in the shape dbt writes (tests/lineage/dbt_mesh/) with N models
of a downstream project, R of which read one of K changed upstream models through
a cross-project ref (dbt style: a ``select *`` CTE, then named columns), and
times what the gate does with it in a run: the JSON parse, one pass over the
nodes, matching each upstream id to the contracts, and sqlglot over the compiled
SQL of the R readers only.

    python benchmarks/bench_external_manifest.py --models 5000 --changed 100 --readers 100

``--plain`` writes the readers without the star CTE (``select src.id, src.amount_<i>
from ... src``) and has the run want ``col_19``, which no reader spells: what
the textual prefilter (``gate.lineage.dbt_mesh.cannot_read``) saves, timed with
and without it. ``--spread`` keeps the star CTE, each reader naming ``col_0``
and ``col_<i % 20>`` (one in 20 the wanted ``col_19``): what the star
prefilter (``stars_end_inside``) saves.

``--gate`` times whole runs instead: bench_consumers.py's repository (10,000
Soda contracts, 5,000 dbt models, a PR changing 100 contracts, every 10th
dropping ``col_19``) with a ``lineage:`` section committed at the base that
names an untracked downstream manifest (a downloaded CI artifact) of
``--models`` models, ``--readers`` of which read the dropped column of a
broken contract (the worst case: every reader is analysed). Alternating run by
run: the gate with lineage, the same gate without it (``--config
no-lineage.schema-gate.yml``) and bench_gate.py's floor; ``--also DIR`` times
another checkout's gate beside it (before/after; a DIR holding ``gate`` and a
``sqlglot`` with sqlglotc's modules times the ``[fast]`` extra; ``--jobs N`` is
passed to every gate). Two floors:
bench_gate.py's (imports, ``git diff``, the changed contracts' YAML) and
bench_consumers.py's (the gate's imports plus ``git diff``), by which issue
#25's "within 2x the floor" is judged. ``--rt`` runs every command, floors
included, at real-time priority (``chrt -f 10``) on a shared machine. ``--plain``:
readers that read other columns without a star; ``--spread``: dbt style readers
spread over the broken contracts, one in 20 naming the dropped column (see
``lineage_repo``).
Medians of wall and CPU. ``--real-shape``: each node also carries the fields
dbt 1.10 writes (tests/lineage/dbt_mesh/'s nodes) and 6 described columns,
~3.9 KB a node as in real manifests (the default nodes are ~600 bytes): what the
JSON decode costs on a manifest of real size. ``--cache``: also this gate with
the analysis cache (``gate.lineage.analysis_cache``) cold (``$SCHEMA_GATE_LINEAGE_CACHE``
emptied before each run, by ``rm -rf`` in a ``sh`` wrapper whose cost is in the
figure) and warm (filled by one run before the timing); the other gates run
without one.

    python benchmarks/bench_external_manifest.py --gate --repeat 7 --also /tmp/before
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_gate, bench_consumers

SQL = """with src as (
    select * from "warehouse"."platform"."{upstream}"
),
other as (
    select * from "warehouse"."finance"."model_{other}"
)
select src.{first}, src.{column}, sum(other.total) as total
from src left join other on src.id = other.id
group by 1, 2
"""


PLAIN = """select src.{first}, src.{column}, other.total
from "warehouse"."platform"."{upstream}" as src
left join "warehouse"."finance"."model_{other}" as other on src.id = other.id
"""


def manifest(
    models: int,
    changed: int,
    readers: int,
    upstreams: list[str] | None = None,
    columns: tuple[str, str] | None = None,
    template: str = SQL,
    spread: bool = False,
    real_shape: bool = False,
) -> bytes:
    """``models`` nodes of project ``finance``; the first ``readers`` read an upstream
    of project ``platform`` (``stg_<k>`` for k < ``changed``, or ``upstreams``).

    ``spread``: reader ``i`` names ``col_0`` and ``col_<i % 20>`` of its upstream
    (one reader in 20 names the dropped ``col_19``), not ``columns``."""
    ups = upstreams or [f"stg_{k}" for k in range(changed)]
    nodes = {}
    for i in range(models):
        uid = f"model.finance.model_{i}"
        depends = [f"model.finance.model_{(i + 1) % models}"]
        upstream = None
        if i < readers:
            upstream = ups[i % len(ups)]
            depends.append(f"model.platform.{upstream}")
        first, column = columns or ("id", f"amount_{i}")
        if spread:
            first, column = "col_0", f"col_{i % 20}"
        sql = template.format(
            upstream=upstream or f"model_{i}", other=i + 1, first=first, column=column
        )
        nodes[uid] = {
            "unique_id": uid,
            "name": f"model_{i}",
            "resource_type": "model",
            "package_name": "finance",
            "original_file_path": f"models/model_{i}.sql",
            "depends_on": {"macros": [], "nodes": depends},
            "relation_name": f'"warehouse"."finance"."model_{i}"',
            "compiled_code": sql,
        }
    for name in ups:
        uid = f"model.platform.{name}"
        nodes[uid] = {
            "unique_id": uid,
            "name": name,
            "resource_type": "model",
            "package_name": "platform",
            "relation_name": f'"warehouse"."platform"."{name}"',
            "depends_on": {"nodes": []},
        }
    if real_shape:
        for node in nodes.values():
            node.update({**_real_fields(node), **node})
    data = {"metadata": {"project_name": "finance", "adapter_type": "snowflake"}, "nodes": nodes}
    return json.dumps(data).encode()


@functools.cache
def _real_node() -> dict:
    committed = Path(__file__).resolve().parents[1] / "tests/lineage/dbt_mesh"
    real = json.loads((committed / "jaffle_finance.manifest.json").read_text())
    return real["nodes"]["model.jaffle_finance.customer_orders"]


def _real_fields(node: dict) -> dict:
    """The fields dbt 1.10 writes beside those the gate reads (the shape of
    tests/lineage/dbt_mesh/jaffle_finance.manifest.json's models), with 6 columns."""
    name = node["name"]
    template = dict(_real_node())
    template.update(
        name=name,
        alias=name,
        path=f"{name}.sql",
        fqn=["finance", name],
        raw_code=node.get("compiled_code") or "",
        columns={
            f"col_{c}": {
                "name": f"col_{c}",
                "description": f"The {c}th column of {name}, as documented in its YAML.",
                "meta": {},
                "data_type": "varchar",
                "constraints": [],
                "quote": None,
                "config": {"meta": {}, "tags": []},
                "tags": [],
                "granularity": None,
                "doc_blocks": [],
            }
            for c in range(6)
        },
    )
    return template


def in_process(args: argparse.Namespace) -> None:
    from gate.lineage.dbt_mesh import read_manifest
    from gate.lineage.matching import DatasetMatcher
    from gate.model import Column, Dataset

    data = manifest(
        args.models,
        args.changed,
        args.readers,
        template=PLAIN if args.plain else SQL,
        spread=args.spread,
        real_shape=args.real_shape,
    )
    datasets = [
        Dataset(
            id=f"stg_{k}",
            path="models/_models.yml",
            format="dbt",
            project="platform",
            columns=(Column("id"), Column(f"amount_{k}")),
        )
        for k in range(args.changed)
    ]
    ids = {d.id for d in datasets}
    modes = {"prefilter off": None, "prefilter on": lambda _u: frozenset({"col_19"})}
    if not (args.plain or args.spread):
        modes = {"": None}
    if args.cache:  # the analysis cache, cold (emptied before each run) and warm
        import shutil
        import tempfile

        changed = modes.get("prefilter on")
        modes = {"no cache": changed, "cache cold": changed, "cache warm": changed}
        folder = Path(tempfile.mkdtemp(prefix="bench-lineage-cache-"))
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    for _ in range(args.repeat):
        for mode, changed in modes.items():  # alternating
            if args.cache:
                cold = folder / "cold"
                shutil.rmtree(cold, ignore_errors=True)
                where = {"no cache": None, "cache cold": cold, "cache warm": folder / "warm"}[mode]
                os.environ.pop("SCHEMA_GATE_LINEAGE_CACHE", None)
                if where is not None:
                    os.environ["SCHEMA_GATE_LINEAGE_CACHE"] = str(where)
            start = time.process_time()
            matcher = DatasetMatcher(datasets)
            reads = read_manifest(
                data,
                "m.json",
                "spark",
                lambda u, m=matcher: bool(m.match(u) & ids),
                changed_columns=changed,
            )
            matcher.reads_of(reads)
            times[mode].append(time.process_time() - start)
    for mode, spent in times.items():
        print(
            f"{args.models} models, {len(data) / 1e6:.1f} MB, {len(reads)} external reads of "
            f"{args.changed} changed models{', ' + mode if mode else ''}: "
            f"{statistics.median(spent):.3f} CPU s (median of {args.repeat})"
        )


MANIFEST = "target/finance/manifest.json"
NO_LINEAGE = "no-lineage.schema-gate.yml"


def lineage_repo(
    n: int,
    k: int,
    sql_models: int,
    models: int,
    readers: int,
    plain: bool = False,
    spread: bool = False,
    real_shape: bool = False,
) -> Path:
    """bench_consumers.py's repository, with ``lineage:`` at the base and a manifest.

    ``plain``: the readers read ``col_0`` and ``col_18`` without a star, not the
    dropped ``col_19`` (the textual prefilter skips every one of them).
    ``spread``: a mesh's shape: dbt style readers (the ``select *`` CTE) spread
    over the broken contracts, each naming ``col_0`` and one other column, one
    in 20 the dropped ``col_19``."""
    from bench_consumers import OUT as CONSUMERS
    from bench_consumers import build
    from bench_gate import git

    source = build(n, [k], sql_models)
    shape = ("-plain" if plain else "-spread" if spread else "") + ("-real" if real_shape else "")
    name = f"repo-{n}-sql{sql_models}-k{k}-m{models}-r{readers}{shape}"
    repo = CONSUMERS.parent / "external" / name
    if (repo / ".built").exists():
        return repo
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.parent.mkdir(parents=True, exist_ok=True)
    git(repo.parent, "clone", "-q", str(source), str(repo))
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    step = max(1, n // k)
    broken = [i for i in range(0, n, step)[:k] if i % 10 == 0]  # bench_gate drops col_19
    mapped = "".join(
        f"    lake/domain_{i % 50}/table_{i}: [model.platform.table_{i}]\n" for i in broken
    )
    (repo / ".schema-gate.yml").write_text(
        f"lineage:\n  dbt_manifests: [{MANIFEST}]\n  timeout_seconds: 60\n  datasets:\n{mapped}"
    )
    (repo / NO_LINEAGE).write_text("consumers: true\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lineage")
    git(repo, "checkout", "-q", "-B", "pr", "main")
    git(repo, "cherry-pick", f"origin/k{k}")
    git(repo, "checkout", "-q", "main")
    path = repo / MANIFEST
    path.parent.mkdir(parents=True)
    upstreams = [f"table_{i}" for i in broken]
    read = ("col_0", "col_18") if plain else ("col_0", "col_19")
    template = PLAIN if plain else SQL
    path.write_bytes(
        manifest(
            models,
            len(upstreams),
            readers,
            upstreams,
            read,
            template,
            spread=spread,
            real_shape=real_shape,
        )
    )
    (repo / ".built").write_text("")
    return repo


def gate_runs(args: argparse.Namespace) -> int:
    from bench_gate import FLOOR, ROOT, alternating, compile_gate, git

    repo = lineage_repo(
        args.contracts,
        args.changed,
        args.sql_models,
        args.models,
        args.readers,
        args.plain,
        args.spread,
        args.real_shape,
    )
    roots = {"gate": ROOT, **{f"gate@{Path(d).name}": Path(d).resolve() for d in args.also}}
    for root in roots.values():
        compile_gate(root)
    merge_base = git(repo, "merge-base", "main", "pr").strip()
    head = git(repo, "rev-parse", "pr").strip()
    rt = ["chrt", "-f", "10"] if args.rt else []
    imports = "import gate.cli, gate.engine, gate.lattice, gate.git.tree, sqlglot, yaml"
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor": ([*rt, sys.executable, "-c", FLOOR, merge_base, head], None),
        # bench_consumers.py's floor, the one issue #25's 2x is judged by: the
        # gate's imports, then `git diff --name-status` (two commands, summed)
        "imports": ([*rt, sys.executable, "-c", imports], {**os.environ, "PYTHONPATH": str(ROOT)}),
        "git diff": ([*rt, "git", "diff", "--name-status", merge_base, head], None),
    }
    bare = {k: v for k, v in os.environ.items() if k != "SCHEMA_GATE_LINEAGE_CACHE"}
    for name, root in roots.items():
        env = {**bare, "PYTHONPATH": str(root)}
        cmd = [
            *rt,
            sys.executable,
            "-m",
            "gate",
            "--base",
            "main",
            "--head",
            "pr",
            "--format",
            "json",
            *(["--jobs", str(args.jobs)] if args.jobs else []),
        ]
        commands[f"{name} lineage"] = (cmd, env)
        commands[f"{name} no lineage"] = ([*cmd, "--config", NO_LINEAGE], env)
        if args.cache and root == ROOT:
            cache = repo / "cache"
            cold, warm = cache / "cold", cache / "warm"
            subprocess.run(["rm", "-rf", str(cache)], check=True)
            filled = {**env, "SCHEMA_GATE_LINEAGE_CACHE": str(warm)}
            subprocess.run(cmd[len(rt) :], cwd=repo, env=filled, capture_output=True)
            wrapper = f'rm -rf "{cold}" && exec "$@"'
            commands[f"{name} lineage, cache cold"] = (
                [*rt, "sh", "-c", wrapper, "sh", *cmd[len(rt) :]],
                {**env, "SCHEMA_GATE_LINEAGE_CACHE": str(cold)},
            )
            commands[f"{name} lineage, cache warm"] = (cmd, filled)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores (shared), Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start"
    )
    print(
        f"N = {args.contracts:,} contracts, {args.sql_models:,} SQL models, K = {args.changed}; "
        f"manifest of {args.models:,} models, {args.readers} reading a broken contract; "
        f"medians of {args.repeat} alternating runs"
    )
    result = alternating(commands, repo, args.repeat)
    floor_wall, floor_cpu, _ = result["floor"]
    wall_c = result["imports"][0] + result["git diff"][0]
    cpu_c = result["imports"][1] + result["git diff"][1]
    print(
        "\n| gate | lineage | wall s | CPU s | ratio wall / CPU | to bench_consumers' floor "
        "| external reads | exit |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print(f"| floor (bench_gate) | | {floor_wall:.2f} | {floor_cpu:.2f} | | | | |")
    print(f"| floor (bench_consumers) | | {wall_c:.2f} | {cpu_c:.2f} | | | | |")
    for name in roots:
        modes = [m.removeprefix(f"{name} ") for m in result if m.startswith(f"{name} ")]
        for mode in modes:
            wall, cpu, proc = result[f"{name} {mode}"]
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 2
            report = json.loads(proc.stdout)
            external = sum(len(c["external_consumers"]) for c in report["changes"])
            print(
                f"| {name} | {mode} | {wall:.2f} | {cpu:.2f} | "
                f"{wall / floor_wall:.1f}x / {cpu / floor_cpu:.1f}x | "
                f"{wall / wall_c:.2f}x / {cpu / cpu_c:.2f}x | {external} | "
                f"{proc.returncode} |"
            )
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gate", action="store_true", help="time whole runs (see above)")
    parser.add_argument("--plain", action="store_true", help="readers without a star (above)")
    parser.add_argument("--spread", action="store_true", help="a mesh's shape (above)")
    parser.add_argument(
        "--real-shape", action="store_true", help="nodes of a real manifest's size (above)"
    )
    parser.add_argument("--contracts", type=int, default=10_000, help="--gate: N contracts")
    parser.add_argument("--sql-models", type=int, default=5_000, help="--gate: in-repo models")
    parser.add_argument("--cache", action="store_true", help="--gate: analysis cache (above)")
    parser.add_argument("--also", metavar="DIR", action="append", default=[])
    parser.add_argument(
        "--rt", action="store_true", help="--gate: every command at real-time priority (chrt -f 10)"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        help="--gate: passed to every gate (default: the gate's own, which forks a worker "
        "only onto an idle CPU: on a loaded machine, none; with --rt, --jobs 2 times "
        "what a 2-core runner of its own does)",
    )
    args = parser.parse_args()
    if args.gate:
        return gate_runs(args)
    in_process(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
