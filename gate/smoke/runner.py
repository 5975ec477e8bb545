"""Run the smoke test: every dataset against its sample, in one Spark session.

Per dataset with a sample (``samples``), in this order:

1. read the sample as it is in the file (``readers``);
2. schema: the sample's column names against the contract's (``schema``);
3. one Spark job for every metric (``checks.Metrics``): rows, malformed records,
   values each contract type cannot hold (``try_cast``: non-NULL before,
   NULL after), CHAR/VARCHAR lengths, JSON and UUID validity, every
   ``missing`` / ``invalid`` check with up to five offending values, and the
   keys of every ``duplicate`` check, counted by pyarrow (a Spark group-by
   only when a key repeats; a values job for a large sample that failed);
4. thresholds decide each check (``thresholds``); optional quarantine.

This module orchestrates (samples, session, parallelism, time limits, one line
per error); one dataset's run is ``dataset_run``, which binds columns to their
contract types (``binding``), words its findings (``messages``) and writes the
quarantine (``quarantine_rows``).

A dataset fails when any finding fails; it is ``error`` when its sample cannot
be read or Spark fails on it (one line says why), ``no_sample`` when it has no
sample at all. A check the gate cannot evaluate is ``skipped`` with the reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gate.git import Repo
from gate.limits import Limits
from gate.model import Dataset, GateError
from gate.smoke import files, parquet, quarantine, readers, session, warmup
from gate.smoke.dataset_run import DatasetRun
from gate.smoke.result import (
    ERROR,
    FAILED,
    NO_SAMPLE,
    PASSED,
    DatasetSmoke,
    SmokeReport,
)
from gate.smoke.samples import Sample, SampleError, SampleFinder, resolve_sample_dir
from gate.workers import default_count


def run(
    datasets: Sequence[Dataset],
    repo_root: Path,
    *,
    sample_data: str | None,
    spark_master: str | None,
    spark_remote: str | None,
    quarantine_dir: str | None,
    dialect: str,
    limits: Limits | None = None,
    spark: Any = None,
    workers: int | None = None,
) -> SmokeReport:
    """The smoke test of ``datasets``; see ``gate.smoke.run_smoke``."""
    limits = limits or Limits()
    started = time.perf_counter()
    repo = Repo(Path(repo_root))
    remote = bool(spark_remote)
    if spark is None:  # fail fast on a machine that cannot run Spark at all
        session.require_pyspark(remote)
        if not remote:
            session.require_java()
    sample_dir = resolve_sample_dir(repo, sample_data)
    quarantine_folder = quarantine.resolve_dir(repo, quarantine_dir)
    finder = SampleFinder(repo, sample_dir, datasets)
    found: list[Sample | SampleError | None] = []
    for dataset in datasets:
        try:
            found.append(finder.find(dataset))
        except SampleError as err:
            found.append(err)
    sizes: dict[int, int] = {}
    for index, item in enumerate(found):  # over the byte limit: exit 2 at once, before Spark
        if isinstance(item, Sample):
            sizes[index] = files.sample_size(item.path)
            files.check_size(sizes[index], item.relpath, limits.sample_bytes)
            if item.format == "parquet":  # a small file can decode into GBs: before Spark
                parquet.precheck(item, limits)  # (so readers.read(..., counted=True) below)
    pairs = list(zip(datasets, found, strict=True))
    count = workers if workers is not None else parallelism()
    small = [i for i in range(len(pairs)) if sizes.get(i, 0) < SMALL_SAMPLE_BYTES]
    large = [i for i in range(len(pairs)) if i in sizes and sizes[i] >= SMALL_SAMPLE_BYTES]
    handle: session.SparkHandle | None = None
    outcomes: list[DatasetSmoke] = []

    def one(
        pair: tuple[Dataset, Sample | SampleError | None], ahead: Future[readers.Read] | None = None
    ) -> DatasetSmoke:
        dataset, item = pair
        if item is None:
            return _no_sample(dataset)
        if isinstance(item, SampleError):
            return _error(dataset, None, str(item), 0.0)
        assert handle is not None
        left = limits.smoke_seconds - (time.perf_counter() - started)
        return _run_dataset(handle, dataset, item, dialect, quarantine_folder, limits, ahead, left)

    results: dict[int, DatasetSmoke] = {}
    with session.quiet_py4j(), _ReadAhead(limits) as reader:
        if large:  # read while the session starts and the small samples run
            reader.submit(large[0], pairs[large[0]][1])
        try:
            if any(isinstance(item, Sample) for item in found):
                if spark is not None:
                    handle = session.attach(spark)
                else:
                    local = not remote and session.is_local(spark_master)
                    warm = warmup.start_if_useful() if local else None
                    try:
                        handle = session.start(spark_master, spark_remote)
                    finally:
                        if warm is not None:
                            warm.cancel()
            if count <= 1 or len([i for i in small if i in sizes]) <= 1:
                results.update((i, one(pairs[i])) for i in small)
            else:
                with ThreadPoolExecutor(max_workers=count, thread_name_prefix="gate-smoke") as pool:
                    done = pool.map(one, [pairs[i] for i in small])
                    results.update(zip(small, done, strict=True))
            for position, i in enumerate(large):  # each has the cores to itself
                if position + 1 < len(large):  # the next one is read while Spark works
                    reader.submit(large[position + 1], pairs[large[position + 1]][1])
                results[i] = one(pairs[i], reader.take(i))
            outcomes = [results[i] for i in range(len(pairs))]
        finally:
            if handle is not None:
                handle.stop()
    return SmokeReport(
        datasets=tuple(outcomes),
        spark_version=handle.version if handle else "",
        master=handle.master if handle else session.display_master(spark_master, spark_remote),
        seconds=time.perf_counter() - started,
        session_seconds=handle.seconds if handle else 0.0,
    )


class _ReadAhead:
    """Reads large samples (pyarrow, no Spark) one step ahead of Spark, in one thread.

    While Spark evaluates one large sample, the next is read and parsed (0.5
    to 0.9 s per million CSV rows, measured), and the first one while the
    session starts. One at a time, so at most one sample waits in memory
    beside the one Spark holds. Its errors surface when its dataset runs
    (``_run_dataset``), in report order, as if it had been read then.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.pool: ThreadPoolExecutor | None = None
        self.pending: dict[int, Future[readers.Read]] = {}

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        for future in self.pending.values():
            future.cancel()
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def submit(self, index: int, item: Sample | SampleError | None) -> None:
        if not isinstance(item, Sample):
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gate-read")
        self.pending[index] = self.pool.submit(readers.read, item, self.limits, True)

    def take(self, index: int) -> Future[readers.Read] | None:
        return self.pending.pop(index, None)


#: Datasets evaluated at the same time (one Spark session, one thread each).
PARALLEL_ENV = "GATE_SPARK_PARALLEL"
#: At most this many at once by default: the figure measured (on 2 cores).
DEFAULT_PARALLEL = 2
#: Samples from this size up run one at a time, whatever the parallelism.
SMALL_SAMPLE_BYTES = 4 * 1024 * 1024


def parallelism() -> int:
    """How many small samples run at once: ``GATE_SPARK_PARALLEL``, else 2 (1 on one core).

    A sample under ``SMALL_SAMPLE_BYTES`` (~50,000 CSV rows) is one partition,
    so its job keeps one core busy and a second dataset can use the other:
    on 2 cores, 20 and 100 datasets of 10,000 rows took 0.21 and 0.14 s of own
    cost each instead of 0.28 and 0.20 s. Larger samples already spread over
    every core, and two at once made the 5 x 1M row slower (9.1 s per dataset
    against 7.5 s) and hold two samples in the driver's heap, so they run one
    at a time, after the small ones. See docs/smoke-test.md.
    """
    value = os.environ.get(PARALLEL_ENV, "").strip()
    if value.isdigit() and int(value) > 0:
        return min(int(value), 16)
    return min(DEFAULT_PARALLEL, default_count())


def _no_sample(dataset: Dataset) -> DatasetSmoke:
    return DatasetSmoke(
        dataset=dataset.id,
        path=dataset.path,
        line=dataset.line,
        status=NO_SAMPLE,
        sample=None,
        rows=None,
        results=(),
        seconds=0.0,
    )


def _error(dataset: Dataset, sample: str | None, message: str, seconds: float) -> DatasetSmoke:
    return DatasetSmoke(
        dataset=dataset.id,
        path=dataset.path,
        line=dataset.line,
        status=ERROR,
        sample=sample,
        rows=None,
        results=(),
        seconds=seconds,
        error=message,
    )


def _run_dataset(
    handle: session.SparkHandle,
    dataset: Dataset,
    sample: Sample,
    dialect: str,
    quarantine_folder: Path | None,
    limits: Limits,
    ahead: Future[readers.Read] | None = None,
    left: float | None = None,
) -> DatasetSmoke:
    """One dataset; ``ahead`` is its sample already being read (``_ReadAhead``).

    ``left``: seconds left of ``limits.smoke_seconds``, the whole smoke test's
    time (session start included); the dataset gets the smaller of that and
    ``limits.smoke_seconds_per_dataset``, and none at all once it is spent.
    """
    started = time.perf_counter()
    left = limits.smoke_seconds if left is None else left
    whole = (
        f"not evaluated: the smoke test took longer than {limits.smoke_seconds:g} s in all "
        "and was stopped (limits.smoke_seconds)"
    )
    if left <= 0:
        if ahead is not None:
            ahead.cancel()
        return _error(dataset, sample.relpath, f"{sample.relpath}: {whole}", 0.0)
    cut_by_whole = left < limits.smoke_seconds_per_dataset
    watch = session.Deadline(handle, min(left, limits.smoke_seconds_per_dataset))
    try:
        read = ahead.result() if ahead is not None else None  # its errors are this dataset's
        with watch:
            run = DatasetRun(
                handle, dataset, sample, dataset.dialect or dialect, limits, watch, read
            )
            results, rows = run.evaluate(quarantine_folder)
    except GateError:
        raise
    except SampleError as err:
        return _error(dataset, sample.relpath, str(err), time.perf_counter() - started)
    except Exception as err:  # Spark's own errors: one line, this dataset only
        code = session.jvm_exit(handle, err)
        if code is not None:  # no dataset can run any more: the run stops, exit 2
            raise session.stopped(sample.relpath, code) from None
        if watch.expired and cut_by_whole:
            message = f"{sample.relpath}: {whole}"
        elif watch.expired:
            message = (
                f"{sample.relpath}: not evaluated: Spark took longer than "
                f"{limits.smoke_seconds_per_dataset:g} s on this dataset and was stopped "
                "(limits.smoke_seconds_per_dataset; a slow regex?)"
            )
        else:
            message = f"{sample.relpath}: {session.first_line(err)}"
        return _error(dataset, sample.relpath, message, time.perf_counter() - started)
    status = FAILED if any(result.status == FAILED for result in results) else PASSED
    return DatasetSmoke(
        dataset=dataset.id,
        path=dataset.path,
        line=dataset.line,
        status=status,
        sample=sample.relpath,
        rows=rows,
        results=tuple(results),
        seconds=time.perf_counter() - started,
    )
