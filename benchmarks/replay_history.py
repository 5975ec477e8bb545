"""Replay a repository's history through the gate: every commit that touched a contract.

    python benchmarks/replay_history.py /path/to/clone [--dialect duckdb] [--limit 200]

For each first-parent commit C that changed a file matching the contract globs,
runs ``python -m gate --base C^ --head C --no-merge-base --format json`` and
prints one Markdown row per breaking change with the consumers the gate named
(and the files it could not analyse). Used for the real-repository table in
docs/impact.md; nothing here is asserted, and nothing of the replayed
repository is copied.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLOBS = ["models/**/*.yml", "models/**/*.yaml", "**/*.odcs.yaml", "soda/contracts/**/*.yaml"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--dialect", default=None)
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()
    commits = git(
        args.repo, "log", "--first-parent", "--format=%H", f"-{args.limit}", "--", *GLOBS
    ).split()
    rows: list[str] = []
    totals = {"commits": 0, "breaking": 0, "with_consumers": 0, "broken": 0, "not_analysed": 0}
    for sha in reversed(commits):
        parents = git(args.repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        if not parents:
            continue
        totals["commits"] += 1
        cmd = [sys.executable, "-m", "gate", "--repo", str(args.repo), "--base", parents[0]]
        cmd += ["--head", sha, "--no-merge-base", "--format", "json"]
        if args.dialect:
            cmd += ["--dialect", args.dialect]
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        subject = git(args.repo, "log", "-1", "--format=%s", sha).strip()[:60]
        if proc.returncode == 2:
            rows.append(f"| `{sha[:8]}` {subject} | exit 2: {proc.stderr.strip()[:120]} | | |")
            continue
        report = json.loads(proc.stdout)
        na = report.get("consumers_not_analysed", [])
        totals["not_analysed"] += len(na)
        for change in report["changes"]:
            if change["rule"] == "consumer_broken":
                totals["broken"] += 1
                continue
            if change["severity"] != "error":
                continue
            totals["breaking"] += 1
            readers = change.get("consumers", [])
            if readers:
                totals["with_consumers"] += 1
            named = ", ".join(f"{c['path']}:{c['line']} ({c['usage']})" for c in readers) or "none"
            broken = [
                c
                for c in report["changes"]
                if c["rule"] == "consumer_broken"
                and c["dataset"] == change["dataset"]
                and c["column"] == change["column"]
            ]
            target = change["dataset"] + (f".{change['column']}" if change["column"] else "")
            rows.append(
                f"| `{sha[:8]}` {subject} | `{change['rule']}` {target} | {named} | {len(broken)} |"
            )
        for item in na:
            rows.append(f"| `{sha[:8]}` | not analysed: {item['path']} | {item['reason']} | |")
    print("| commit | breaking change | consumers named (path:line, usage) | consumer_broken |")
    print("|---|---|---|---:|")
    print("\n".join(rows))
    print()
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
