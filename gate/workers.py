"""Worker processes for the two CPU-bound steps: parsing contracts, analysing consumers.

A pull request of 100 changed contracts parses 200 files and analyses ~100 SQL
models; each step is a few hundred milliseconds of pure Python, and CI runners
have 2 cores or more. A *fork* of the parent starts in a few milliseconds (it
inherits the imported modules), so even small batches are worth splitting; a
*spawn* start re-imports the gate in every worker (~0.3 s), so without a safe
fork only large batches use workers, as before.

One ``Workers`` serves a whole run: the workers start at the first batch big
enough to need them and serve every later one, and the calling process takes a
share of every batch instead of waiting. Results come back in input order, and
the first exception in input order is the one raised, whatever the worker count,
so ``--jobs 2`` and ``--jobs 1`` give the same report and the same error.

Why not ``concurrent.futures.ProcessPoolExecutor``: its chunks move through a
manager thread and a queue feeder thread in this process, and both need the
GIL, which the calling process holds while it parses its own share. A worker
that finished a chunk waited up to a switch interval (5 ms) for the next one,
again and again: with two processes, parsing 200 contracts took longer than in
one. Here each batch goes to every worker once, as one message, and every
process claims chunks from a counter in shared memory; nothing in this process
needs a thread.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from gate.model import GateError

if TYPE_CHECKING:  # multiprocessing is imported only when a batch starts workers
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
    from multiprocessing.sharedctypes import Synchronized

__all__ = ["WorkerDied", "Workers", "default_count", "fork_is_safe", "idle_count"]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

#: Items per chunk at least: claiming a chunk takes a lock shared by the processes.
_MIN_CHUNK = 2
#: Chunks per process: small chunks keep the processes finishing together (the
#: last chunk claimed decides when the batch ends).
_CHUNKS_PER_PROCESS = 8
#: Items per chunk at most (~0.1 s of work), however large the batch.
_MAX_CHUNK = 64


def _usable() -> int:
    """The CPUs this process may run on (a container's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_count() -> int:
    """The CPUs this process may run on (a container's share, not the host's), at most 8."""
    return max(1, min(_usable(), 8))


def idle_count(usable: int) -> int | None:
    """How many of ``usable`` CPUs no other runnable task wants right now; ``None``
    where the kernel does not say (no ``/proc/loadavg``: not Linux).

    The fourth field of ``/proc/loadavg`` is the number of tasks runnable at this
    instant, this process included (it is running while it reads). A forked
    worker costs CPU (copy-on-write faults on both sides, the results pickled
    back: 60-140 ms at 100 changed contracts) and only pays it back in wall
    time when it gets a core of its own; on a busy machine it just competes
    with this process. The count is the machine's, not this process's CPU set,
    so on a shared host it errs towards fewer workers, never towards more.
    """
    try:
        with open("/proc/loadavg", "rb") as handle:
            running = int(handle.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0, usable - running)


def fork_is_safe() -> bool:
    """Whether workers can be forked: a platform whose ``fork`` is sound, no other thread.

    A fork copies only the calling thread, so a lock another thread holds stays
    locked forever in the child; macOS's system libraries are not fork-safe
    (Python itself stopped defaulting to fork there). Python 3.14 moved the
    Linux default to forkserver for the same thread reason; asking for fork
    explicitly, only when this is the sole thread, keeps it sound.
    """
    import multiprocessing

    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _die_with_parent(parent: int) -> None:
    """Have the kernel end this worker when the gate's process ends.

    A worker waits on its pipe, and a gate killed by a CI timeout
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


def _died(code: int | None) -> WorkerDied:
    """Name how the worker ended (a signal, an exit code) when it is known."""
    how = "ended"
    if code is not None and code < 0:
        try:
            how = signal.Signals(-code).name
        except ValueError:
            how = f"signal {-code}"
    elif code is not None:
        how = f"exit code {code}"
    hint = ", often the out-of-memory killer" if how == "SIGKILL" else ""
    return WorkerDied(
        f"a worker process died ({how}{hint}) before it answered, so nothing was decided; "
        "re-run with --jobs 1 to work in one process, or give the job more memory"
    )


#: A stop message: an empty one.
_STOP = b""


def _run_chunk(fn: Callable[[S, T], R], shared: S, items: Sequence[T]) -> list[R] | Exception:
    """One chunk's results, or the exception that ended it (raised later, in item order)."""
    try:
        return [fn(shared, item) for item in items]
    except Exception as exc:
        return exc


#: Seconds to wait for the claim lock, held for microseconds at a time: longer
#: means its holder died holding it (the kernel's OOM killer picks no moment).
_LOCK_TIMEOUT = 10.0


def _claim(counter: Synchronized[int], limit: int) -> int | None:
    """The next unclaimed chunk of the current batch, or ``None`` when all are taken."""
    lock = counter.get_lock()
    if not lock.acquire(timeout=_LOCK_TIMEOUT):
        raise _died(None)
    try:
        index = counter.value
        if index >= limit:
            return None
        counter.value = index + 1
    finally:
        lock.release()
    return index


def _dumps_outcomes(outcomes: dict[int, list[R] | Exception]) -> bytes:
    """Pickle a worker's outcomes; an error that cannot travel travels as its text."""
    import pickle  # here and below: a run without workers never needs it

    try:
        return pickle.dumps(outcomes, pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unpicklable exception (or result): keep its message
        safe: dict[int, list[R] | Exception] = {}
        for index, outcome in outcomes.items():
            try:
                pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
                safe[index] = outcome
            except Exception as exc:
                what = outcome if isinstance(outcome, Exception) else exc
                safe[index] = RuntimeError(f"{type(what).__name__}: {what}")
        return pickle.dumps(safe, pickle.HIGHEST_PROTOCOL)


def _serve(
    conn: Connection, counter: Synchronized[int], parent: int, inherited: list[Connection]
) -> None:
    """A worker's life: run each batch's chunks it can claim, until told to stop.

    Messages come in order on ``conn``: a batch (claim chunks from the shared
    counter, answer with the outcomes of the ones run here), a call (warm-up,
    no answer), or the empty stop message.
    """
    import pickle

    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the gate's to handle
    for other in inherited:  # earlier workers' ends, copied by the fork
        other.close()
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if message == _STOP:
            return
        kind, payload = pickle.loads(message)
        if kind == "call":
            fn, shared = payload
            with contextlib.suppress(Exception):
                fn(shared)
            continue
        fn, shared, chunks = payload
        outcomes: dict[int, list[Any] | Exception] = {}
        while (index := _claim(counter, len(chunks))) is not None:
            outcomes[index] = _run_chunk(fn, shared, chunks[index])
        conn.send_bytes(_dumps_outcomes(outcomes))


class _Worker:
    """One worker process and this process's end of its pipe."""

    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn


class Workers:
    """Worker processes, started at the first batch big enough to need them and
    shared by every batch of one run.

    ``jobs`` is the number of processes doing the work *including* this one:
    ``1`` keeps everything in-process, ``None`` means one per usable CPU, and
    for a batch under the spawn threshold only as many as are idle when it
    comes (``idle_count``; none idle: the batch stays here, and the next one
    asks again). The report is the same either way; only the schedule changes.
    Close it (or use it as a context manager) before closing anything the
    forked workers inherited, such as the git blob reader's pipes.
    """

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = default_count() if jobs is None else max(1, jobs)
        #: Whether ``jobs`` is an upper bound to fit to the idle CPUs (the default).
        self._auto = jobs is None
        #: The processes sharing the batches once workers run, this one included.
        self._processes = 1
        self._workers: list[_Worker] = []
        self._counter: Synchronized[int] | None = None
        self._method: str | None = None
        self._in_flight = False

    @property
    def auto(self) -> bool:
        """Whether the worker count was left to the pool (no ``--jobs``): it then
        fits itself to the machine, and callers may share a batch less eagerly."""
        return self._auto

    @property
    def start_method(self) -> str | None:
        """``"fork"`` or ``"spawn"`` once workers run, else ``None``."""
        return self._method if self._workers else None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers; a later batch starts new ones.

        A batch cut short (an interrupt) leaves workers busy with answers
        nobody reads: those are killed rather than waited for.
        """
        workers, self._workers = self._workers, []
        for worker in workers:
            if not self._in_flight:
                with contextlib.suppress(OSError):
                    worker.conn.send_bytes(_STOP)
            worker.conn.close()
        for worker in workers:
            if self._in_flight:
                worker.process.kill()
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        self._in_flight = False

    def prepare(self, fn: Callable[[S], object], shared: S) -> None:
        """Let running workers call ``fn(shared)`` now, ahead of the next batch.

        For imports the next batch needs: the workers are idle while this
        process diffs and greps, and the run's end is its critical path. Without
        workers yet, nothing happens: one forked later inherits what this
        process has loaded by then. What ``fn`` returns or raises is ignored
        (the batch itself would raise the same error).
        """
        if not self._workers:
            return
        import pickle

        message = pickle.dumps(("call", (fn, shared)), pickle.HIGHEST_PROTOCOL)
        for worker in self._workers:
            with contextlib.suppress(OSError):  # a dead worker fails the next batch
                worker.conn.send_bytes(message)

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

        ``fn`` must be a module-level function; the batch (``shared`` and the
        items) is pickled once and sent once to each worker. Batches below the
        threshold for the start method stay in-process. The first exception in
        item order propagates.
        """
        if not self._ready(len(items), fork_threshold, spawn_threshold):
            outcome = _run_chunk(fn, shared, items)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome
        import pickle

        counter = self._counter
        assert counter is not None
        processes = self._processes
        size = -(-len(items) // (processes * _CHUNKS_PER_PROCESS))
        size = max(_MIN_CHUNK, min(size, _MAX_CHUNK))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        outcomes: dict[int, list[R] | Exception] = {}
        # The first chunk is ours before anyone claims: the workers start on
        # the second while the batch is still reaching the last of them.
        counter.value = 1  # no worker claims before this batch reaches it
        message = pickle.dumps(("batch", (fn, shared, chunks)), pickle.HIGHEST_PROTOCOL)
        self._in_flight = True
        try:
            for worker in self._workers:
                try:
                    worker.conn.send_bytes(message)
                except OSError:  # it died while idle
                    worker.process.join(timeout=5)
                    raise _died(worker.process.exitcode) from None
            outcomes[0] = _run_chunk(fn, shared, chunks[0])
            while (index := _claim(counter, len(chunks))) is not None:
                outcomes[index] = _run_chunk(fn, shared, chunks[index])
            for worker in self._workers:
                try:
                    answer = worker.conn.recv_bytes()
                except (EOFError, OSError):
                    worker.process.join(timeout=5)
                    raise _died(worker.process.exitcode) from None
                outcomes.update(pickle.loads(answer))
        except BaseException:
            self.close()
            raise
        self._in_flight = False
        results: list[R] = []
        for index in range(len(chunks)):
            outcome = outcomes[index]
            if isinstance(outcome, Exception):
                raise outcome
            results.extend(outcome)
        return results

    def _ready(self, count: int, fork_threshold: int, spawn_threshold: int) -> bool:
        """Whether this batch goes to workers, starting them if it is the first."""
        if self.jobs <= 1 or count < 2:
            return False
        if self._workers:
            return count >= (fork_threshold if self._method == "fork" else spawn_threshold)
        if count < min(fork_threshold, spawn_threshold):
            return False  # too few either way: no need to ask (nor import multiprocessing)
        forked = fork_is_safe()
        if count < (fork_threshold if forked else spawn_threshold):
            return False
        processes = self.jobs
        # A batch under the spawn threshold is short: a worker pays for itself only on
        # a CPU nobody else wants. From the spawn threshold up the work is long enough
        # that a second process's share of a busy machine pays too (docs/performance.md).
        if self._auto and count < spawn_threshold and (idle := idle_count(_usable())) is not None:
            processes = min(processes, idle + 1)  # this process has its own CPU already
            if processes <= 1:
                return False  # no idle CPU now: in-process, and the next batch asks again
        # Not the platform's default when a fork is unsafe: before Python 3.14 that is
        # fork on Linux too, threads or not.
        method = "fork" if forked else "spawn"
        import multiprocessing

        context = multiprocessing.get_context(method)
        self._counter = context.Value("q", 0)
        self._method = method
        # A forked worker inherits this process's objects; frozen, its collector
        # never walks them, so their pages stay shared instead of being copied.
        # A process that froze nothing gets its collector back as it was; one
        # that freezes its own (the command does) keeps these frozen too.
        thaw = forked and gc.get_freeze_count() == 0
        if forked:
            gc.freeze()
        try:
            self._start(context, forked, processes)
        finally:
            if thaw:
                gc.unfreeze()
        return True

    def _start(self, context: Any, forked: bool, processes: int) -> None:
        assert self._counter is not None
        self._processes = processes
        for _ in range(processes - 1):
            ours, theirs = context.Pipe(duplex=True)
            inherited = [w.conn for w in self._workers] if forked else []
            process = context.Process(
                target=_serve,
                args=(theirs, self._counter, os.getpid(), inherited),
                daemon=True,
            )
            process.start()
            theirs.close()
            self._workers.append(_Worker(process, ours))
