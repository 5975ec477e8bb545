"""Worker processes through the CLI: the same report and the same error whatever ``--jobs``.

A pull request of 40 changed contracts (80 files to parse, both sides) and 30
SQL models reading them is over both fork thresholds (engine and consumer
scan), so ``--jobs 2`` and ``--jobs 3`` parse and analyse in worker processes
while ``--jobs 1`` stays in-process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate.consumers import scan
from gate.workers import fork_is_safe
from tests.conftest import gate_env, run_gate_process
from tests.gitrepo import GitRepo
from tests.processes import assert_all_end

C = "soda/contracts"
N = 40
MODELS = 30


def contract(i: int, *, dropped: bool = False) -> str:
    columns = [("id", "bigint"), ("amount", "decimal(12, 2)"), ("note", "string")]
    if dropped:
        columns = [(n, "int" if n == "id" else t) for n, t in columns if n != "note"]
    body = "".join(f"  - name: {n}\n    data_type: {t}\n" for n, t in columns)
    return f"dataset: lake/shop/t{i:02d}\ncolumns:\n{body}"


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    """40 contracts and 30 models on main; on feature every contract drops ``note``
    and narrows ``id``, so every model that reads them breaks."""
    repo = GitRepo(tmp_path / "shop")
    for i in range(N):
        repo.write(f"{C}/t{i:02d}.yaml", contract(i))
    for m in range(MODELS):
        a, b = m, m + 10  # every table is read, ten by two models
        repo.write(
            f"models/m{m:02d}.sql",
            f"select x.id, x.note, y.amount\nfrom shop.t{a:02d} as x\n"
            f"join shop.t{b:02d} as y on x.id = y.id\nwhere y.note is not null\n",
        )
    repo.commit("contracts and models")
    repo.branch("feature")
    for i in range(N):
        repo.write(f"{C}/t{i:02d}.yaml", contract(i, dropped=True))
    repo.commit("drop note, narrow id")
    return repo


def test_the_batches_are_big_enough_to_use_workers() -> None:
    from gate import engine

    assert 2 * N >= engine._FORK_THRESHOLD
    assert MODELS >= scan._FORK_THRESHOLD


@pytest.mark.skipif(not fork_is_safe(), reason="forking workers needs Linux")
def test_same_report_whatever_the_worker_count(shop: GitRepo) -> None:
    outputs = {}
    for jobs in ("1", "2", "3"):
        proc = run_gate_process(
            shop.path, "--base", "main", "--head", "feature", "--format", "json", "--jobs", jobs
        )
        assert proc.returncode == 1, proc.stderr
        outputs[jobs] = json.loads(proc.stdout)
    assert outputs["2"] == outputs["1"]
    assert outputs["3"] == outputs["1"]
    report = outputs["1"]
    broken = [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert {c["path"] for c in broken} == {f"models/m{m:02d}.sql" for m in range(MODELS)}
    removed = [c for c in report["changes"] if c["rule"] == "column_removed"]
    assert len(removed) == N
    assert all(c["consumers"] for c in removed)  # every table is read by some model


@pytest.mark.parametrize(
    "bad",
    [
        (3, 33),  # the first file is the caller's own; a later one too
        (21,),  # in the middle: a worker's chunk
        (39,),  # the last file: a chunk the caller may take back
        (26, 39),
        (0, 9, 17, 21, 30, 39),  # in every chunk
    ],
)
def test_every_bad_contract_in_a_parallel_batch_is_one_line_in_input_order(
    shop: GitRepo, bad: tuple[int, ...]
) -> None:
    for i in bad:
        shop.write(f"{C}/t{i:02d}.yaml", f"dataset: lake/shop/t{i:02d}\ncolumns: [unclosed\n")
    expected = [f"schema-gate: error: {C}/t{i:02d}.yaml:3: invalid YAML" for i in bad]
    if len(bad) > 1:
        expected.append(f"schema-gate: refused {len(bad)} contract files; nothing was compared")
    seen = {}
    for jobs in ("1", "2", "4"):
        proc = run_gate_process(shop.path, "--base", "main", "--jobs", jobs)  # the working tree
        assert proc.returncode == 2, (jobs, proc.stderr)
        assert proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert len(lines) == len(expected), (jobs, proc.stderr)
        for line, start in zip(lines, expected, strict=True):
            assert line.startswith(start), (jobs, line)
        assert "Traceback" not in proc.stderr
        seen[jobs] = proc.stderr
    assert seen["2"] == seen["1"] and seen["4"] == seen["1"]


#: ``python -m gate`` whose forked workers die for real (SIGKILL, as the kernel's
#: out-of-memory killer sends it) at their first contract. The gate's own share
#: waits until one has died, so a chunk surely reached the pool: otherwise the
#: calling process could take every chunk back and no worker would run. A batch's
#: first file is parsed before the pool forks (``engine.parse_many``): that one
#: does not wait, or it would wait out the deadline for a worker not yet there.
DYING = """
import os, signal, sys, time
from gate import cli, engine

parent = os.getpid()
marker, pids = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
os.register_at_fork(after_in_child=lambda: open(pids, "a").write(f"{os.getpid()}\\n"))
parse = engine._parse_one
calls = []

def dying_parse(limits, item):
    if os.getpid() != parent:
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    calls.append(item)
    if len(calls) == 1:
        return parse(limits, item)
    deadline = time.monotonic() + 120
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
    return parse(limits, item)

engine._parse_one = dying_parse
cli.entry()
"""


@pytest.mark.skipif(not fork_is_safe() or not Path("/proc").is_dir(), reason="forks, reads /proc")
def test_a_worker_killed_mid_run_is_one_line_exit_2_and_no_orphan(
    shop: GitRepo, tmp_path: Path
) -> None:
    script = tmp_path / "dying_gate.py"
    script.write_text(DYING)
    marker, pids = tmp_path / "died", tmp_path / "pids"
    args = ["--base", "main", "--head", "feature", "--jobs", "3"]
    proc = subprocess.run(
        [sys.executable, str(script), str(marker), str(pids), *args],
        cwd=shop.path,
        env=gate_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert marker.exists(), "no worker ran a contract: the test proved nothing"
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""  # no report: a run missing a worker's share decides nothing
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("schema-gate: error: a worker process died (SIGKILL"), lines[0]
    assert "--jobs 1" in lines[0]
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) >= 2
    assert_all_end(workers)
