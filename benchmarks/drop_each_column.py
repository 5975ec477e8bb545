"""Drop each column of one enforced contract in turn and compare the gate's consumers
with a plain text search (the reviewer's ``grep``).

    python benchmarks/drop_each_column.py /path/to/clone models/x/_models.yml dim_departments

For each column C of model M: a scratch commit on a temporary branch removes C's
entry from the properties file; the gate runs against the parent; the consumers it
names for ``column_removed M.C`` are compared with the lines of files that
reference M (``ref('M')``) and mention C as a word. Prints a Markdown table for
docs/impact.md. The clone is restored afterwards; nothing is copied from it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    env |= {"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x"}
    env |= {"GIT_COMMITTER_EMAIL": "x@x"}
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
    ).stdout


def model_block(lines: list[str], model: str) -> tuple[int, int]:
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {model}")
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    return start, end


def drop(text: str, model: str, column: str) -> str:
    lines = text.splitlines(keepends=True)
    start, end = model_block(lines, model)
    for i in range(start, end):
        if lines[i].strip() == f"- name: {column}":
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            while j < end and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent:
                j += 1
            return "".join(lines[:i] + lines[j:])
    raise SystemExit(f"column {column} not found")


def columns(text: str, model: str) -> list[str]:
    lines = text.splitlines()
    start, end = model_block([line + "\n" for line in lines], model)
    block = lines[start + 1 : end]
    col_indent = min(
        (len(x) - len(x.lstrip()) for x in block if x.strip().startswith("- name:")), default=0
    )
    return [
        x.strip()[len("- name: ") :]
        for x in block
        if x.strip().startswith("- name:") and len(x) - len(x.lstrip()) == col_indent
    ]


def grep_truth(repo: Path, model: str, column: str) -> set[tuple[str, int]]:
    """Lines in files that ref the model and mention the column as a word."""
    out = git(repo, "grep", "-l", "-F", f"ref('{model}')", "HEAD", "--", "*.sql")
    found: set[tuple[str, int]] = set()
    for entry in out.split():
        path = entry.split(":", 1)[1]
        text = git(repo, "show", f"HEAD:{path}")
        for number, line in enumerate(text.splitlines(), start=1):
            if re.search(rf"\b{re.escape(column)}\b", line, re.I):
                found.add((path, number))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("file")
    parser.add_argument("model")
    args = parser.parse_args()
    repo: Path = args.repo
    start = git(repo, "rev-parse", "HEAD").strip()
    original = git(repo, "show", f"HEAD:{args.file}")
    print(
        "| column dropped | consumers named by the gate | consumer_broken | grep lines not named |"
    )
    print("|---|---|---:|---|")
    try:
        for column in columns(original, args.model):
            truth = grep_truth(repo, args.model, column)
            git(repo, "checkout", "-q", "--detach", start)
            (repo / args.file).write_text(drop(original, args.model, column))
            git(repo, "commit", "-q", "-am", f"drop {column}")
            cmd = [sys.executable, "-m", "gate", "--repo", str(repo), "--base", start]
            cmd += ["--head", "HEAD", "--format", "json"]
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            )
            report = json.loads(proc.stdout)
            change = next(
                c
                for c in report["changes"]
                if c["rule"] == "column_removed" and c["column"] == column
            )
            named = {(c["path"], c["line"]) for c in change["consumers"]}
            broken = sum(
                1
                for c in report["changes"]
                if c["rule"] == "consumer_broken" and c["column"] == column
            )
            text = ", ".join(
                f"{c['path'].rsplit('/', 1)[-1]}:{c['line']} {c['usage']}"
                for c in change["consumers"]
            )
            missed = ", ".join(f"{p.rsplit('/', 1)[-1]}:{n}" for p, n in sorted(truth - named))
            print(f"| `{column}` | {text or 'none'} | {broken} | {missed or '—'} |")
    finally:
        git(repo, "checkout", "-q", "--detach", start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
