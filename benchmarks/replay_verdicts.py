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
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
    args = parser.parse_args()
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
