"""Replay public histories through the gate and print one verdict per commit, to judge by hand.

    python benchmarks/replay_verdicts.py CLONE [CLONE ...] [--limit 40] [--json out.json]

For each first-parent commit C of each clone that touched a contract, a dbt
properties file or a dbt project file, runs the gate as a pull request from C's
parent to C (``--base C^ --head C --no-merge-base --format json``) and prints a
Markdown row: the exit code, the blocking findings (rule and dataset) or the
first refusal line, and the warnings. ``--json`` keeps every row for a later
side-by-side (``--compare old.json new.json`` prints the rows whose verdict
changed). Nothing of the replayed repositories is copied or stored here: the
clones live outside this repository (docs/precision.md lists them with their
commits) and the table in the docs is written from this output by a person who
read each diff.

The judged verdicts are kept as baselines, one JSON file per repository under
``benchmarks/replay_baselines/`` (the public repository's name, the clone's
folder, the gate arguments, and per commit only its sha, exit code and the ids
of the blocking rules: no file of the repository). One command replays every
stored commit with this checkout's gate and lists the verdicts that moved:

    python benchmarks/replay_verdicts.py --check [--clones /work/fetched] [NAME ...]

(exit 1 when one moved, a clone that is missing is named and skipped). After a
person has judged a moved verdict right, ``--check --update`` rewrites the
baselines from that run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINES = Path(__file__).resolve().parent / "replay_baselines"
PATHSPECS = [
    ":(glob)**/*.yml",
    ":(glob)**/*.yaml",
    ":(glob)**/*.json",
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def verdict(repo: Path, parent: str, sha: str, extra: list[str]) -> dict[str, object]:
    """One run of the gate over ``parent..sha`` as a pull request, summarised."""
    cmd = [sys.executable, "-m", "gate", "--repo", str(repo), "--base", parent]
    cmd += ["--head", sha, "--no-merge-base", "--format", "json", *extra]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    row: dict[str, object] = {"sha": sha, "exit": proc.returncode}
    if proc.returncode == 2:
        row["refused"] = [line for line in proc.stderr.splitlines() if line.strip()][:5]
        return row
    report = json.loads(proc.stdout)
    blocking = [c for c in report["changes"] if c["breaking"] and not c["acknowledged"]]
    row["blocking"] = sorted({f"{c['rule']} {c['dataset']}" for c in blocking})
    row["rules"] = sorted({str(c["rule"]) for c in blocking})
    row["changes"] = len(report["changes"])
    row["warnings"] = [str(n) for n in report.get("notices", [])][:5]
    return row


def replay(
    repo: Path,
    limit: int,
    extra: list[str],
    log_args: list[str] | None = None,
    pathspecs: list[str] | None = None,
) -> list[dict[str, object]]:
    """``log_args`` narrow git's choice of commits (``-G REGEX``: the commits whose diff
    adds or removes a matching line); ``pathspecs`` add to the files that count."""
    paths = [*PATHSPECS, *(pathspecs or [])]
    log = git(
        repo, "log", "--first-parent", "--format=%H", f"-{limit}", *(log_args or []), "--", *paths
    )
    rows = []
    for sha in reversed(log.split()):
        parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        if not parents:
            continue
        row = verdict(repo, parents[0], sha, extra)
        row["repo"] = repo.name
        row["subject"] = git(repo, "log", "-1", "--format=%s", sha).strip()[:70]
        rows.append(row)
    return rows


def describe(row: dict[str, object]) -> str:
    if row["exit"] == 2:
        return "exit 2: " + " / ".join(row.get("refused", []))[:200]  # type: ignore[arg-type]
    found = ", ".join(row.get("blocking", [])) or "clean"  # type: ignore[arg-type]
    return f"exit {row['exit']}: {found}"[:200]


def rules_of(row: dict[str, object]) -> list[str]:
    """The blocking rule ids of a row (rows written before ``rules`` was kept carry
    them as the first word of each ``blocking`` entry)."""
    if "rules" in row:
        return sorted(row["rules"])  # type: ignore[call-overload]
    return sorted({str(b).split()[0] for b in row.get("blocking", [])})  # type: ignore[attr-defined]


def baseline_entry(row: dict[str, object]) -> dict[str, object]:
    """What a baseline keeps of a verdict: the exit code and the blocking rule ids."""
    return {"sha": row["sha"], "exit": row["exit"], "rules": rules_of(row)}


def check(clones: Path, names: list[str], update: bool, workers: int, out: Path | None) -> int:
    """Replay every commit of every baseline (or of ``names``) and print the moved verdicts."""
    files = sorted(BASELINES.glob("*.json"))
    if names:
        files = [f for f in files if f.stem in names or json.loads(f.read_text())["repo"] in names]
    moved = 0
    total = 0
    rows_out: list[dict[str, object]] = []
    for path in files:
        base = json.loads(path.read_text())
        clone = clones / base["clone"]
        if not (clone / ".git").exists():
            print(f"- {base['repo']}: no clone at {clone}, skipped")
            continue
        commits = base["commits"]

        def run(
            entry: dict[str, object], clone: Path = clone, base: dict[str, Any] = base
        ) -> dict[str, object]:
            sha = str(entry["sha"])
            parents = git(clone, "rev-list", "--parents", "-n", "1", sha).split()[1:]
            row = verdict(clone, parents[0], sha, list(base.get("gate_args", [])))
            row["repo"] = base["repo"]
            return row

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            rows = list(pool.map(run, commits))
        for entry, row in zip(commits, rows, strict=True):
            total += 1
            rows_out.append(row)
            now = baseline_entry(row)
            if (now["exit"], now["rules"]) != (entry["exit"], entry["rules"]):
                moved += 1
                print(
                    f"| {base['repo']} | `{str(entry['sha'])[:8]}` | "
                    f"{entry['exit']} {' '.join(entry['rules'])} | {describe(row)} |"
                )
                sys.stdout.flush()
        if update:
            base["commits"] = [baseline_entry(r) for r in rows]
            path.write_text(json.dumps(base, indent=1) + "\n")
    if out:
        out.write_text(json.dumps(rows_out, indent=1))
    print(f"\n{total} commits replayed, {moved} verdicts moved")
    return 1 if moved and not update else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", type=Path, nargs="*")
    parser.add_argument("--limit", type=int, default=40, help="commits per repository")
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("OLD", "NEW"))
    parser.add_argument("--gate-arg", action="append", default=[], help="passed to the gate")
    parser.add_argument(
        "--log-arg",
        action="append",
        default=[],
        help="passed to git log to choose the commits (-G REGEX: diffs that touch it)",
    )
    parser.add_argument(
        "--pathspec", action="append", default=[], help="more files that count (:(glob)**/*.sql)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="replay the commits of benchmarks/replay_baselines/ and list the moved verdicts",
    )
    parser.add_argument(
        "--clones", type=Path, default=Path("/work/fetched"), help="where the clones live"
    )
    parser.add_argument("--update", action="store_true", help="with --check: rewrite baselines")
    parser.add_argument("--workers", type=int, default=1, help="gate runs at once")
    args = parser.parse_args()
    if args.check:
        names = [str(r) for r in args.repos]
        return check(args.clones, names, args.update, args.workers, args.json)
    if args.compare:
        old = {r["sha"]: r for r in json.loads(args.compare[0].read_text())}
        for row in json.loads(args.compare[1].read_text()):
            before = old.get(row["sha"])
            if before is None or describe(before) != describe(row):
                print(f"| {row['repo']} `{row['sha'][:8]}` {row['subject']} |")
                print(f"|   before: {describe(before) if before else 'not run'} |")
                print(f"|   after:  {describe(row)} |")
        return 0
    rows: list[dict[str, object]] = []
    print("| repository | commit | verdict | warnings |")
    print("|---|---|---|---|")
    for repo in args.repos:
        for row in replay(repo.resolve(), args.limit, args.gate_arg, args.log_arg, args.pathspec):
            rows.append(row)
            warn = "; ".join(row.get("warnings", []))[:120]  # type: ignore[arg-type]
            print(
                f"| {row['repo']} | `{row['sha'][:8]}` {row['subject']} | {describe(row)} | {warn} |"
            )
            sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    counts = {code: sum(1 for r in rows if r["exit"] == code) for code in (0, 1, 2)}
    print(f"\n{len(rows)} commits: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
