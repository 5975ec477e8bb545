"""When the run's contract parse is shared with worker processes (gate.engine.parse_many).

Without ``--jobs`` a batch of contracts is shared only from the spawn threshold
up: at 100 changed contracts (200 files) a forked worker cost ~12% more CPU for
2% of wall time even on a core of its own (docs/performance.md, #26). An explicit
``--jobs`` shares from the fork threshold, as before. Same result either way.
"""

from __future__ import annotations

import sys

import pytest

from gate import engine
from gate.workers import Workers, fork_is_safe

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not fork_is_safe(), reason="the fork path is Linux's"
)


def items(count: int) -> list[engine._Item]:
    body = "dataset: lake/t{i}\ncolumns:\n  - name: id\n    data_type: bigint\n"
    return [(body.format(i=i).encode(), f"soda/t{i}.yaml", "head", None) for i in range(count)]


def test_without_jobs_a_pull_request_of_100_contracts_is_parsed_here(monkeypatch) -> None:
    monkeypatch.setattr("gate.workers.idle_count", lambda usable: usable - 1)  # all idle
    monkeypatch.setattr("gate.workers.default_count", lambda: 2)
    batch = items(200)
    with Workers() as auto:
        alone = engine.parse_many(batch, workers=auto)
        assert auto.start_method is None
        big = engine.parse_many(items(engine._SPAWN_THRESHOLD), workers=auto)
        # A thread of this test process (a Spark session's, under xdist) makes a
        # fork unsafe: workers are spawned then, from the spawn threshold only.
        forked = fork_is_safe()
        assert auto.start_method == ("fork" if forked else "spawn")
    with Workers(2) as two:
        shared = engine.parse_many(batch, workers=two)
        assert two.start_method == ("fork" if forked else None)
    assert alone == shared
    assert len(big) == engine._SPAWN_THRESHOLD
    assert [c.path for c in alone] == [f"soda/t{i}.yaml" for i in range(200)]
