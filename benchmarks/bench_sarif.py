"""The SARIF report of a huge run: its size (raw and gzip-compressed) and render time.

Run: ``python benchmarks/bench_sarif.py [FINDINGS]`` (default 100,000). The findings
are a third each blocking errors, acknowledged errors and additive notes, on
distinct columns of 1,000 datasets, each read by 3 consumers. The figures go in
docs/report-formats.md ("Size").
"""

from __future__ import annotations

import gzip
import sys
import time
from dataclasses import replace

from gate import rules
from gate.model import Change, Consumer
from gate.report import Report, sarif


def report(findings: int) -> Report:
    readers = tuple(Consumer(f"models/m{i}.sql", 3, f"m{i}", "selected") for i in range(3))
    changes = []
    for i in range(findings):
        kind = i % 3
        rule = rules.COLUMN_ADDED if kind == 2 else rules.COLUMN_REMOVED
        change = Change.of(
            rule,
            rule.severity,
            f"lake/shop/d{i % 1000}",
            f"contracts/d{i % 1000}.yaml",
            10 + i // 1000,
            "column changed",
            column=f"c{i}",
        )
        changes.append(replace(change, consumers=readers, acknowledged=kind == 1))
    return Report(changes=tuple(changes), base_ref="main", base_sha="0" * 40)


def main() -> None:
    findings = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    big = report(findings)
    start = time.perf_counter()
    text = sarif.render(big)
    seconds = time.perf_counter() - start
    raw = text.encode("utf-8")
    print(
        f"{findings:,} findings: {len(raw):,} bytes ({len(gzip.compress(raw)):,} gzip-compressed), "
        f"rendered in {seconds:.2f} s"
    )


if __name__ == "__main__":
    main()
