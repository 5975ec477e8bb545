"""Worker processes for the two CPU-bound steps: parsing contracts, analysing consumers.

A pull request of 100 changed contracts parses 200 files and analyses ~100 SQL
models; each step is a few hundred milliseconds of pure Python, and CI runners
have 2 cores or more. A *fork* of the parent starts in a few milliseconds (it
inherits the imported modules), so even small batches are worth splitting; a
*spawn* start re-imports the gate in every worker (~0.3 s), so without a safe
fork only large batches use workers, as before.

One ``Workers`` serves a whole run: the pool is created at the first batch big
enough to need it and reused after that, and the calling process takes a share
of every batch instead of waiting. Results come back in input order, and the
first exception in input order is the one raised, whatever the worker count,
so ``--jobs 2`` and ``--jobs 1`` give the same report and the same error.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, TypeVar, cast

from gate.model import GateError

__all__ = ["WorkerDied", "Workers", "default_count", "fork_is_safe"]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

#: Items per chunk at least: shipping a chunk costs ~0.3 ms.
_MIN_CHUNK = 2
#: Chunks per process: the pool queues one chunk ahead, which the calling process
#: cannot take back, so small chunks keep the processes finishing together.
_CHUNKS_PER_PROCESS = 8
#: Items per chunk at most (~0.1 s of work), however large the batch.
_MAX_CHUNK = 64


def default_count() -> int:
    """The CPUs this process may run on (a container's share, not the host's), at most 8."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(usable, 8))


def fork_is_safe() -> bool:
    """Whether workers can be forked: a platform whose ``fork`` is sound, no other thread.

    A fork copies only the calling thread, so a lock another thread holds stays
    locked forever in the child; macOS's system libraries are not fork-safe
    (Python itself stopped defaulting to fork there). Python 3.14 moved the
    Linux default to forkserver for the same thread reason; asking for fork
    explicitly, only when this is the sole thread, keeps it sound.
    """
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _die_with_parent(parent: int) -> None:
    """Have the kernel end this worker when the gate's process ends.

    A worker waits on the pool's queue, and a gate killed by a CI timeout
    (SIGTERM, SIGKILL) never tells it to stop: it would sleep forever, an
    orphan holding the runner's memory. Linux only (``PR_SET_PDEATHSIG``).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no usable libc: the old behaviour
        return
    if os.getppid() != parent:  # the gate ended before the line above
        os._exit(1)


class WorkerDied(GateError):
    """A worker process ended without an answer (the kernel's out-of-memory killer,
    a resource limit, a signal): its share of the batch is lost, so the run
    decides nothing. Not a bug of the gate, so not an internal error."""


def _died(pool: ProcessPoolExecutor) -> WorkerDied:
    """Name how the worker ended when the pool still knows (a signal, an exit code)."""
    codes = [p.exitcode for p in getattr(pool, "_processes", {}).values()]
    # The pool terminates (SIGTERM) the others once one died: name another cause first.
    code = next((c for c in codes if c not in (None, 0, -signal.SIGTERM)), None)
    if code is None:
        code = next((c for c in codes if c not in (None, 0)), None)
    how = "ended"
    if code is not None and code < 0:
        try:
            how = f"{signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    elif code is not None:
        how = f"exit code {code}"
    hint = ", often the out-of-memory killer" if how == "SIGKILL" else ""
    return WorkerDied(
        f"a worker process died ({how}{hint}) before it answered, so nothing was decided; "
        "re-run with --jobs 1 to work in one process, or give the job more memory"
    )


class _Task(Generic[S, T, R]):
    """One chunk of a batch, run here."""

    def __init__(self, fn: Callable[[S, T], R], shared: S) -> None:
        self.fn = fn
        self.shared = shared

    def __call__(self, items: Sequence[T]) -> list[R]:
        return [self.fn(self.shared, item) for item in items]


#: In a worker: the batch whose ``shared`` value was last unpickled, and that value.
_UNPICKLED: dict[int, object] = {}
_BATCHES = itertools.count()


class _RemoteTask(Generic[S, T, R]):
    """One chunk of a batch, sent to a worker.

    ``shared`` (a consumer scan's name index covers every changed dataset) is
    pickled once per batch here and unpickled once per batch in each worker;
    only its bytes travel with every chunk.
    """

    def __init__(self, fn: Callable[[S, T], R], shared: S) -> None:
        self.fn = fn
        self.batch = next(_BATCHES)
        self.shared = pickle.dumps(shared, pickle.HIGHEST_PROTOCOL)

    def __call__(self, items: Sequence[T]) -> list[R]:
        if self.batch not in _UNPICKLED:
            _UNPICKLED.clear()
            _UNPICKLED[self.batch] = pickle.loads(self.shared)
        shared = cast(S, _UNPICKLED[self.batch])
        return [self.fn(shared, item) for item in items]


class Workers:
    """A lazily created process pool, shared by every batch of one run.

    ``jobs`` is the number of processes doing the work *including* this one:
    ``1`` keeps everything in-process, ``None`` means one per usable CPU.
    Close it (or use it as a context manager) before closing anything the
    forked workers inherited, such as the git blob reader's pipes.
    """

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = default_count() if jobs is None else max(1, jobs)
        self._pool: ProcessPoolExecutor | None = None
        self._forked = False

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers; a later batch starts new ones."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def prepare(self, fn: Callable[[S], object], shared: S) -> None:
        """Let running workers call ``fn(shared)`` now, ahead of the next batch.

        For imports the next batch needs: the workers are idle while this
        process diffs and greps, and the run's end is its critical path. Without
        a pool yet, nothing happens: one forked later inherits what this
        process has loaded by then. What ``fn`` returns or raises is ignored
        (the batch itself would raise the same error).
        """
        if self._pool is not None:
            try:
                for _ in range(self.jobs - 1):
                    self._pool.submit(fn, shared)
            except BrokenProcessPool:
                raise _died(self._pool) from None

    def map(
        self,
        fn: Callable[[S, T], R],
        shared: S,
        items: Sequence[T],
        *,
        fork_threshold: int,
        spawn_threshold: int,
    ) -> list[R]:
        """``[fn(shared, item) for item in items]``, spread over the workers.

        ``fn`` must be a module-level function; ``shared`` is pickled once per
        batch, the items once per chunk. Batches below the threshold for the pool's start
        method stay in-process. The first exception in item order propagates.
        """
        task: _Task[S, T, R] = _Task(fn, shared)
        pool = self._pool_for(len(items), fork_threshold, spawn_threshold)
        if pool is None:
            return task(items)
        processes = self.jobs
        size = -(-len(items) // (processes * _CHUNKS_PER_PROCESS))
        size = max(_MIN_CHUNK, min(size, _MAX_CHUNK))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        try:
            return self._spread(task, fn, shared, chunks, pool)
        except BrokenProcessPool:
            raise _died(pool) from None

    def _spread(
        self,
        task: _Task[S, T, R],
        fn: Callable[[S, T], R],
        shared: S,
        chunks: list[Sequence[T]],
        pool: ProcessPoolExecutor,
    ) -> list[R]:
        # The first chunk is ours; the pool takes the rest in order, and we take
        # back from the end whatever it has not started by the time we are free.
        remote: _RemoteTask[S, T, R] = _RemoteTask(fn, shared)
        futures: list[Future[list[R]] | None] = [None] + [
            pool.submit(remote, c) for c in chunks[1:]
        ]
        results: list[list[R] | BaseException | None] = [None] * len(chunks)
        try:
            results[0] = task(chunks[0])
            for i in range(len(chunks) - 1, 0, -1):
                future = futures[i]
                if future is None or not future.cancel():
                    break
                try:
                    results[i] = task(chunks[i])
                except Exception as exc:  # raised below, in item order
                    results[i] = exc
            for i in range(1, len(chunks)):
                outcome = results[i]
                if isinstance(outcome, BaseException):
                    raise outcome
                if outcome is None:
                    future = futures[i]
                    assert future is not None
                    results[i] = future.result()
        except BaseException:
            for future in futures:
                if future is not None:
                    future.cancel()
            raise
        return [r for chunk in results if isinstance(chunk, list) for r in chunk]

    def _pool_for(
        self, count: int, fork_threshold: int, spawn_threshold: int
    ) -> ProcessPoolExecutor | None:
        if self.jobs <= 1 or count < 2:
            return None
        if self._pool is not None:
            return (
                self._pool
                if count >= (fork_threshold if self._forked else spawn_threshold)
                else None
            )
        forked = fork_is_safe()
        if count < (fork_threshold if forked else spawn_threshold):
            return None
        # Not the platform's default when a fork is unsafe: before Python 3.14 that is
        # fork on Linux too, threads or not.
        context = multiprocessing.get_context("fork" if forked else "spawn")
        self._pool = ProcessPoolExecutor(
            max_workers=self.jobs - 1,
            mp_context=context,
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )
        self._forked = forked
        return self._pool
