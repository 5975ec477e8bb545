"""The run's worker pool with real processes: order, errors, and when it forks at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gate.model import ContractError
from gate.workers import WorkerDied, Workers, default_count, fork_is_safe, idle_count
from tests.processes import assert_all_end

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the fork path is Linux's"
)


def square(offset: int, item: int) -> int:
    return item * item + offset


def pid_of(pause: float, _item: int) -> int:
    time.sleep(pause)
    return os.getpid()


def fail_at(bad: frozenset[int], item: int) -> int:
    if item in bad:
        raise ContractError(f"c{item}.yaml", "bad contract", item)
    return item


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_keep_input_order_whatever_the_worker_count(jobs: int) -> None:
    items = list(range(301))
    with Workers(jobs) as workers:
        first = workers.map(square, 7, items, fork_threshold=2, spawn_threshold=2)
        again = workers.map(square, 1, items[:50], fork_threshold=2, spawn_threshold=2)
        assert (workers.start_method is not None) == (jobs > 1)  # one start, both batches
    assert first == [i * i + 7 for i in items]
    assert again == [i * i + 1 for i in range(50)]


def test_the_pool_really_runs_items_elsewhere() -> None:
    with Workers(2) as workers:
        # 160 x 20 ms: time enough for a forked worker to start even on a loaded
        # runner (at 2 ms a busy CI machine let the caller finish alone).
        pids = workers.map(pid_of, 0.02, list(range(160)), fork_threshold=2, spawn_threshold=2)
    assert len(pids) == 160
    # The calling process takes the first chunk instead of waiting; the worker
    # claims the next ones while that chunk runs, so both did some of the work.
    assert pids[0] == os.getpid()
    assert len(set(pids)) == 2


LOADS = [0]


class Shared:
    """Counts its unpickling in the process that unpickles it."""

    def __init__(self, pause: float) -> None:
        self.pause = pause

    def __setstate__(self, state: dict) -> None:
        LOADS[0] += 1
        self.__dict__.update(state)


def loads_seen(shared: Shared, _item: int) -> tuple[int, int]:
    time.sleep(shared.pause)
    return os.getpid(), LOADS[0]


def test_shared_is_unpickled_once_per_batch_in_a_worker() -> None:
    with Workers(2) as workers:
        for batch in (1, 2):
            seen = workers.map(
                loads_seen,
                Shared(0.02),  # see test_the_pool_really_runs_items_elsewhere
                list(range(160)),
                fork_threshold=2,
                spawn_threshold=2,
            )
            in_worker = {count for pid, count in seen if pid != os.getpid()}
            assert in_worker == {batch}  # many chunks, one unpickling per batch
            assert {count for pid, count in seen if pid == os.getpid()} == {0}


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_first_error_in_item_order_is_raised_whatever_ran_where(jobs: int) -> None:
    items = list(range(200))
    # One error early (the caller's own chunk), one late (a chunk it may take back).
    for bad in (frozenset({3, 190}), frozenset({120, 199}), frozenset({199})):
        with Workers(jobs) as workers, pytest.raises(ContractError) as caught:
            workers.map(fail_at, bad, items, fork_threshold=2, spawn_threshold=2)
        assert caught.value.path == f"c{min(bad)}.yaml"
        assert caught.value.line == min(bad)  # survives the trip through pickle intact


def wait_for_a_worker(marker: str) -> None:
    """Hold the caller's first item until a worker has claimed a chunk.

    Without this the test depends on a race: a spawned worker re-imports the
    gate (a second or more on a busy runner), and by then the calling process
    has claimed and run every chunk itself, so no worker ever ran the item
    that was meant to fail in one.
    """
    deadline = time.monotonic() + 60
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.005)


def die_in_a_worker(shared: tuple[int, str], item: int) -> int:
    parent, marker = shared
    if os.getpid() != parent:
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer would
    wait_for_a_worker(marker)
    return item


def test_a_worker_killed_mid_batch_fails_the_batch_and_the_next_starts_afresh(
    tmp_path: Path,
) -> None:
    shared = (os.getpid(), str(tmp_path / "claimed"))
    with Workers(2) as workers:
        with pytest.raises(WorkerDied, match=r"a worker process died \(SIGKILL, often the out-of"):
            workers.map(
                die_in_a_worker, shared, list(range(100)), fork_threshold=2, spawn_threshold=2
            )
        assert workers.start_method is None  # the dead pool is gone, not reused
        # Fork when this is the sole thread; in a full run Spark's Py4J threads
        # may still be alive here, and then the fresh pool must spawn instead.
        expected = "fork" if fork_is_safe() else "spawn"
        again = workers.map(square, 0, list(range(40)), fork_threshold=2, spawn_threshold=2)
        assert again == [i * i for i in range(40)]
        assert workers.start_method == expected


def unpicklable_error_in_a_worker(shared: tuple[int, str], item: int) -> int:
    parent, marker = shared
    if os.getpid() != parent:
        Path(marker).touch()
        raise LookupError(lambda: item)  # a lambda cannot be pickled back
    wait_for_a_worker(marker)
    return item


def test_an_error_that_cannot_be_pickled_still_arrives_as_its_message(tmp_path: Path) -> None:
    shared = (os.getpid(), str(tmp_path / "claimed"))
    with Workers(2) as workers, pytest.raises(RuntimeError, match=r"^LookupError: <function "):
        workers.map(
            unpicklable_error_in_a_worker,
            shared,
            list(range(160)),
            fork_threshold=2,
            spawn_threshold=2,
        )


def test_small_batches_and_one_job_stay_in_process() -> None:
    with Workers(2) as workers:
        assert workers.map(square, 0, [1, 2, 3], fork_threshold=4, spawn_threshold=4) == [1, 4, 9]
        assert workers.start_method is None
    with Workers(1) as workers:
        assert workers.map(square, 0, list(range(500)), fork_threshold=2, spawn_threshold=2)
        assert workers.start_method is None


def test_no_fork_while_another_thread_runs() -> None:
    """A forked child would inherit locks the other thread holds: the spawn
    threshold applies instead, and the batch below it stays in-process."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not fork_is_safe()
        with Workers(2) as workers:
            out = workers.map(square, 0, list(range(100)), fork_threshold=2, spawn_threshold=400)
            assert workers.start_method is None
        assert out == [i * i for i in range(100)]
    finally:
        stop.set()
        other.join()


def test_with_another_thread_a_big_batch_spawns_instead_of_forking() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with Workers(2) as workers:
            out = workers.map(square, 3, list(range(40)), fork_threshold=2, spawn_threshold=10)
            assert workers.start_method == "spawn"
        assert out == [i * i + 3 for i in range(40)]
    finally:
        stop.set()
        other.join()


def test_default_count_is_the_usable_cpus_capped() -> None:
    assert 1 <= default_count() <= min(8, os.cpu_count() or 1)
    assert Workers().jobs == default_count()
    assert Workers(0).jobs == 1


KILLED = """
import os, signal, sys, time
from gate.workers import Workers

def pid_of(pause, _item):
    time.sleep(pause)
    return os.getpid()

workers = Workers(3)
pids = workers.map(pid_of, 0.002, list(range(200)), fork_threshold=2, spawn_threshold=2)
print(" ".join(str(p) for p in sorted(set(pids) - {os.getpid()})), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # as a CI timeout would, with no clean-up
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_workers_end_when_the_gate_is_killed(tmp_path: Path) -> None:
    out = tmp_path / "pids"
    with out.open("w") as sink:  # a file, not a pipe: a live worker cannot hold it open
        proc = subprocess.run(
            [sys.executable, "-c", KILLED], stdout=sink, stderr=sink, timeout=120, check=False
        )
    assert proc.returncode == -9, out.read_text()
    workers = [int(p) for p in out.read_text().split()]
    assert workers  # the pool had started and done some of the work
    assert_all_end(workers)


def test_idle_count_reads_the_runnable_tasks_of_this_instant() -> None:
    idle = idle_count(os.cpu_count() or 1)
    assert idle is not None  # Linux has /proc/loadavg
    assert 0 <= idle < (os.cpu_count() or 1)  # this process itself is running


def test_by_default_a_short_batch_forks_only_onto_an_idle_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker on a busy machine costs CPU and gains no time: the default pool
    keeps a batch under the spawn threshold in-process then, with the same result."""
    monkeypatch.setattr("gate.workers.idle_count", lambda usable: 0)
    monkeypatch.setattr("gate.workers.default_count", lambda: 2)
    with Workers() as workers:
        out = workers.map(square, 1, list(range(100)), fork_threshold=2, spawn_threshold=400)
        assert workers.start_method is None
        # From the spawn threshold up, the work is long enough to share anyway.
        big = workers.map(square, 1, list(range(400)), fork_threshold=2, spawn_threshold=400)
        assert workers.start_method == ("fork" if fork_is_safe() else "spawn")
    assert out == [i * i + 1 for i in range(100)]
    assert big == [i * i + 1 for i in range(400)]
    with Workers(2) as workers:  # an explicit --jobs is not second-guessed
        workers.map(square, 1, list(range(100)), fork_threshold=2, spawn_threshold=400)
        assert workers.start_method == ("fork" if fork_is_safe() else None)


ONE_IDLE_CPU = """
import json, os, time
import gate.workers
from gate.workers import Workers, fork_is_safe

def pid_of(pause, _item):
    time.sleep(pause)
    return os.getpid()

gate.workers.idle_count = lambda usable: 1  # one idle CPU of four usable
gate.workers.default_count = lambda: 4
safe = fork_is_safe()
with Workers() as workers:
    pids = workers.map(pid_of, 0.02, list(range(160)), fork_threshold=2, spawn_threshold=400)
    started = len(workers._workers)
    method = workers.start_method
print(json.dumps({"fork_is_safe": safe, "start_method": method, "workers": started,
                  "pids": len(set(pids))}))
"""


def test_by_default_a_short_batch_forks_one_worker_per_idle_cpu() -> None:
    """In a fresh interpreter: this one may hold other threads (an xdist worker that
    ran a Spark test keeps py4j's), which rightly stop any fork, so run here the
    test would have to skip; a new process has its main thread only, every time."""
    proc = subprocess.run(
        [sys.executable, "-c", ONE_IDLE_CPU],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["fork_is_safe"] is True  # nothing but the main thread: fork is sound
    assert seen["start_method"] == "fork"
    assert seen["workers"] == 1  # one idle CPU: one worker, not three
    assert seen["pids"] == 2  # the caller and its one worker both did some of the work
