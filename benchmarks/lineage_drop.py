"""Drop each column of one contracted model in turn and measure downstream lineage.

    python benchmarks/lineage_drop.py /path/to/scratch-clone models/x/_models.yml stg_orders

For each column C of model M: a scratch commit on a detached HEAD removes C's
entry from the properties file; the gate runs in-process against the parent with a
trace, and the first readers, downstream paths (hops, distinct downstream
columns, ends) and the seconds of the consumer scan and of the lineage walk
are printed as a Markdown table for docs/impact.md. The clone is restored
afterwards; nothing is copied from it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.drop_each_column import columns, drop, git  # noqa: E402
from gate.engine import Settings, run  # noqa: E402
from gate.tracing import CONSUMERS, LINEAGE  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("file")
    parser.add_argument("model")
    parser.add_argument("-v", action="store_true", help="print every path")
    args = parser.parse_args()
    repo: Path = args.repo
    start = git(repo, "rev-parse", "HEAD").strip()
    original = git(repo, "show", f"HEAD:{args.file}")
    print(
        "| column dropped | first readers | downstream paths | downstream columns | longest "
        "| ends | consumers s | lineage s | run s |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    seconds: dict[str, float] = {}

    def trace(step: str, summary: str, took: float, details: Sequence[str] = ()) -> None:
        seconds[step] = seconds.get(step, 0.0) + took

    try:
        for column in columns(original, args.model):
            git(repo, "checkout", "-q", "--detach", start)
            (repo / args.file).write_text(drop(original, args.model, column))
            git(repo, "commit", "-q", "-am", f"drop {column}")
            seconds.clear()

            began = time.perf_counter()
            report = run(Settings(repo=str(repo), base=start, head="HEAD", trace=trace))
            total = time.perf_counter() - began
            change = next(
                c for c in report.changes if c.rule == "column_removed" and c.column == column
            )
            paths = change.downstream
            hopped = {(h.model, h.column) for p in paths for h in p.hops}
            ends: dict[str, int] = {}
            for p in paths:
                ends[p.end] = ends.get(p.end, 0) + 1
            print(
                f"| `{column}` | {len(change.consumers)} | {len(paths)} | {len(hopped)} "
                f"| {max((len(p.hops) for p in paths), default=0)} "
                f"| {', '.join(f'{k} {v}' for k, v in sorted(ends.items())) or '—'} "
                f"| {seconds.get(CONSUMERS, 0):.3f} | {seconds.get(LINEAGE, 0):.3f} | {total:.2f} |"
            )
            if args.v:
                for p in paths:
                    print("   ", p.arrow(), "::", p.ending())
    finally:
        git(repo, "checkout", "-q", "--detach", start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
