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

A dataset fails when any finding fails; it is ``error`` when its sample cannot
be read or Spark fails on it (one line says why), ``no_sample`` when it has no
sample at all. A check the gate cannot evaluate is ``skipped`` with the reason.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from gate.git import Repo
from gate.limits import Limits
from gate.model import Check, Dataset, GateError
from gate.smoke import checks as rules
from gate.smoke import (
    checkspec,
    files,
    parquet,
    quarantine,
    readers,
    schema,
    session,
    sqlexpr,
    warmup,
)
from gate.smoke.checkspec import CheckPlan
from gate.smoke.result import (
    ERROR,
    FAILED,
    NO_SAMPLE,
    PASSED,
    SKIPPED,
    WARNED,
    DatasetSmoke,
    SmokeReport,
    SmokeResult,
)
from gate.smoke.samples import Sample, SampleError, SampleFinder, resolve_sample_dir
from gate.smoke.thresholds import Threshold
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
            run = _DatasetRun(
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


#: A finding waiting for the aggregation: (metric values, rows) -> result.
_Render = Callable[[dict[str, Any], int], SmokeResult]


def _ready(result: SmokeResult) -> _Render:
    return lambda values, rows: result


def _count(number: int) -> str:
    return f"{number:,}"


def _percent(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") + "%"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _shown(values: Sequence[Any]) -> tuple[str, ...]:
    """Offending values for one-line messages: control characters escaped, long ones cut."""
    out: list[str] = []
    for value in values:
        text = "NULL" if value is None else str(value)
        text = _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)
        out.append(text if len(text) <= 60 else text[:57] + "...")
    return tuple(out)


def _quoted(samples: Sequence[str]) -> str:
    return ", ".join("'" + sample.replace("'", "\\'") + "'" for sample in samples)


def _plural(number: int, one: str, many: str) -> str:
    return one if number == 1 else many


class _DatasetRun:
    """The smoke test of one dataset: built once, evaluated with as few jobs as possible."""

    def __init__(
        self,
        handle: session.SparkHandle,
        dataset: Dataset,
        sample: Sample,
        dialect: str,
        limits: Limits,
        deadline: session.Deadline | None = None,
        read: readers.Read | None = None,
    ) -> None:
        self.handle = handle
        self.deadline = deadline
        self.dataset = dataset
        self.sample = sample
        self.dialect = dialect
        self.loaded = readers.to_spark(
            handle.spark,
            read if read is not None else readers.read(sample, limits, True),
            sample,
        )
        self.df = self.loaded.df
        self.source_types = {field.name: field.dataType for field in self.df.schema.fields}
        self.position: dict[str, int] = {}
        for index, name in enumerate(self.loaded.names):
            self.position.setdefault(name, index)
        self.bounds: dict[str, rules.Bound] = {}
        self.cast_results: list[SmokeResult] = []
        self.malformed_count = 0
        #: (label, condition): an Expr, or a builder of a Column (window functions)
        self.quarantine_rules: list[tuple[str, sqlexpr.Expr | Callable[[], Any]]] = []

    def deadline_expired(self) -> bool:
        """The dataset's time is up: a failing job was cancelled, not refused."""
        return bool(self.deadline and self.deadline.expired)

    # building ---------------------------------------------------------------

    def _bind(self) -> None:
        for column in self.dataset.columns:
            index = self.position.get(column.name)
            if index is None:
                continue
            internal = f"c{index}"
            target = (
                schema.target_type(column.data_type, self.dialect) if column.data_type else None
            )
            self.bounds[column.name] = rules.Bound(
                name=column.name,
                internal=internal,
                source=self.source_types[internal],
                target=target,
                typed_name=f"t{index}",
            )
        self._project_casts()

    def _project_casts(self) -> None:
        """Add each column's value in its contract type to the frame, as ``t<n>``.

        Spark's analyzer says which casts it refuses (no job runs); those
        columns are checked as they are in the file. The casts are made here,
        with ``Column.try_cast``, so the aggregation's SQL text names the
        typed values and never holds a contract type.
        """
        casting = [bound for bound in self.bounds.values() if bound.casts]
        if not casting:
            return
        try:
            projected = self.df.select(
                "*", *[bound.cast_column().alias(bound.typed_name) for bound in casting]
            )
            _ = projected.schema
            self.df = projected
            return
        except Exception:
            pass
        for bound in casting:
            try:
                _ = self.df.select(bound.cast_column()).schema
            except Exception as err:
                bound.mark_uncastable()
                column = self.dataset.column(bound.name)
                assert bound.target is not None
                source = bound.source.simpleString().upper()
                if self.loaded.what == "CSV" and rules.is_complex_ddl(bound.target.spark_ddl):
                    status = SKIPPED
                    message = (
                        f"a CSV sample cannot hold {bound.target.label}; "
                        "use a JSON or Parquet sample to check this column"
                    )
                else:
                    status = FAILED
                    message = (
                        f"the sample's {source} values cannot become {bound.target.label} "
                        f"(Spark: {session.first_line(err)})"
                    )
                self.cast_results.append(
                    SmokeResult(
                        "coercion",
                        bound.target.name,
                        bound.name,
                        status,
                        message,
                        line=column.line if column else None,
                    )
                )
        castable = [bound for bound in casting if bound.casts]
        if castable:
            self.df = self.df.select(
                "*", *[bound.cast_column().alias(bound.typed_name) for bound in castable]
            )

    # evaluating -------------------------------------------------------------

    def evaluate(self, quarantine_folder: Path | None) -> tuple[list[SmokeResult], int]:
        """All findings of the dataset, in report order: schema, coercion, checks."""
        schema_results = schema.schema_findings(
            self.dataset.columns, self.loaded.names, self.dataset.allow_extra_columns
        )
        self._bind()
        rows_known = self.loaded.rows
        metrics = rules.Metrics(
            texts=rows_known is not None and rows_known < readers.MIN_PARTITION_ROWS
        )
        rows_key = metrics.count_rows()
        malformed = self._plan_malformed(metrics)
        coercion = self._plan_coercion(metrics)
        checks = self._plan_checks(metrics)
        values = metrics.collect(self.df)  # the one job
        rows = int(values[rows_key])
        out = [*schema_results, *(render(values, rows) for render in malformed)]
        position = {column.name: index for index, column in enumerate(self.dataset.columns)}
        coerced = [*self.cast_results, *(render(values, rows) for render in coercion)]
        coerced.sort(key=lambda result: position.get(result.column or "", 0))
        out.extend(coerced)
        out.extend(render(values, rows) for render in checks)  # + one job per duplicate check
        if quarantine_folder is not None:
            self._quarantine(quarantine_folder, self.malformed_count)
        return out, rows

    def _plan_malformed(self, metrics: rules.Metrics) -> list[_Render]:
        if self.loaded.what not in ("CSV", "JSON"):
            return []
        if not self.loaded.corrupt:  # Spark found nothing to set aside
            return [lambda values, rows: self._malformed(0, [], rows)]
        corrupt = sqlexpr.col(readers.CORRUPT)
        condition = corrupt.isNotNull()
        count_key = metrics.count_if(condition)
        worst = rules.worst_text_bytes(
            self.loaded.column_bytes.get(readers.CORRUPT), self.loaded.rows, as_is=True
        )
        samples_key = metrics.samples(count_key, condition, corrupt, worst)
        self.quarantine_rules.append(("malformed_record", condition))

        def render(values: dict[str, Any], rows: int) -> SmokeResult:
            self.malformed_count = int(values[count_key] or 0)
            return self._malformed(self.malformed_count, values[samples_key], rows)

        return [render]

    def _plan_coercion(self, metrics: rules.Metrics) -> list[_Render]:
        """NOT NULL of required columns, then what each contract type can hold."""
        out: list[_Render] = []
        for column in self.dataset.columns:
            bound = self.bounds.get(column.name)
            if bound is None:
                continue
            if column.required is True:
                condition = bound.raw.isNull()
                key = metrics.count_if(condition)
                self.quarantine_rules.append((f"not_null({column.name})", condition))
                out.append(
                    lambda values, rows, column=column, key=key: self._not_null(  # type: ignore[misc]
                        column, int(values[key] or 0), rows
                    )
                )
            target = bound.target
            if target is None:
                continue
            if target.skip_reason:
                self.cast_results.append(
                    SmokeResult(
                        "coercion",
                        target.name,
                        column.name,
                        SKIPPED,
                        f"{target.label} is not checked: {target.skip_reason}",
                        line=column.line,
                    )
                )
                continue
            nonnull_key = metrics.count_if(bound.raw.isNotNull())
            for rule in rules.coercion_rules(bound):
                count_key = metrics.count_if(rule.condition)
                keys = (
                    count_key,
                    metrics.samples(
                        count_key, rule.condition, rule.text, self._worst_text(bound, typed=False)
                    ),
                    nonnull_key,
                )
                self.quarantine_rules.append((f"{target.name}({column.name})", rule.condition))
                out.append(
                    lambda values, rows, column=column, target=target, rule=rule, keys=keys: (  # type: ignore[misc]
                        self._coercion(
                            column,
                            target,
                            rule,
                            int(values[keys[0]] or 0),
                            values[keys[1]],
                            int(values[keys[2]] or 0),
                        )
                    )
                )
        return out

    def _plan_checks(self, metrics: rules.Metrics) -> list[_Render]:
        """The declared checks, in contract order; counts join the one aggregation."""
        out: list[_Render] = []
        for check, column_name in self._declared_checks():
            if check.kind in checkspec.SCHEMA_KINDS:
                continue
            try:
                plan = checkspec.plan(check, column_name)
            except checkspec.Unsupported as reason:
                out.append(_ready(self._skipped(check, f"skipped: unsupported: {reason}")))
                continue
            absent = [name for name in plan.columns if name not in self.bounds]
            if absent:
                why = (
                    "is not in the sample"
                    if absent[0] not in self.position
                    else "is not a contract column"
                )
                out.append(_ready(self._skipped(check, f"skipped: column '{absent[0]}' {why}")))
                continue
            bounds = [self.bounds[name] for name in plan.columns]
            if plan.family == checkspec.ROW_COUNT:
                out.append(lambda values, rows, plan=plan: self._row_count(plan, rows))  # type: ignore[misc]
            elif plan.family == checkspec.DUPLICATE:
                out.append(self._plan_duplicate(plan, bounds, metrics))
            else:
                bound = bounds[0]
                missing = rules.missing_condition(bound, plan.missing)
                if plan.family == checkspec.MISSING:
                    condition, text = missing, bound.raw_text
                else:
                    condition = ~missing & rules.invalid_condition(bound, plan.validity)
                    text = bound.typed_text
                count_key = metrics.count_if(condition)
                samples_key = (  # a missing value is shown as its count only
                    metrics.samples(count_key, condition, text, self._worst_text(bound, typed=True))
                    if plan.family == checkspec.INVALID
                    else None
                )
                self.quarantine_rules.append((plan.label, condition))
                out.append(
                    lambda values, rows, plan=plan, keys=(count_key, samples_key): self._counted(  # type: ignore[misc]
                        plan, rows, int(values[keys[0]] or 0), values.get(keys[1] or "")
                    )
                )
        return out

    def _worst_text(self, bound: rules.Bound, *, typed: bool) -> int | None:
        """What ``bound``'s offending values weigh if every row fails (``raw_text``/``typed_text``)."""
        shown_as_read = not (typed and bound.casts)
        return rules.worst_text_bytes(
            self.loaded.column_bytes.get(bound.internal),
            self.loaded.rows,
            as_is=shown_as_read and isinstance(bound.source, StringType),
            nested=shown_as_read and rules.is_complex(bound.source),
        )

    def _plan_duplicate(
        self, plan: CheckPlan, bounds: list[rules.Bound], metrics: rules.Metrics
    ) -> _Render:
        """A duplicate check: its keys come back with the dataset's one job.

        pyarrow counts them there; only when a key repeats (or pyarrow cannot
        compare the type as Spark does) does a Spark group-by run, when the
        result is rendered, for the count and the keys exactly as Spark shows them.
        """
        keep = ~rules.missing_condition(bounds[0], plan.missing) if len(bounds) == 1 else None
        considered_key = metrics.count_if(keep) if keep is not None else None
        typed = [bound.typed for bound in bounds]
        repeated_key = metrics.duplicates(typed, considered_key)
        self.quarantine_rules.append((plan.label, lambda: _duplicated(typed, keep)))

        def render(values: dict[str, Any], rows: int) -> SmokeResult:
            considered = int(values[considered_key] or 0) if considered_key else rows
            duplicates: int | None = values[repeated_key]
            samples: list[str] = []
            if duplicates != 0:  # a key repeats (or pyarrow cannot tell): Spark groups them
                try:
                    duplicates, samples = rules.repeated_keys(
                        self.df,
                        [sqlexpr.to_column(key) for key in typed],
                        [bound.shown for bound in bounds],
                        sqlexpr.to_column(keep) if keep is not None else None,
                    )
                except Exception as err:  # e.g. a MAP column cannot be grouped
                    if self.deadline_expired():
                        raise
                    reason = f"skipped: Spark cannot group: {session.first_line(err)}"
                    return self._skipped(plan.check, reason)
            return self._duplicate(plan, rows, considered, duplicates, samples)

        return render

    def _declared_checks(self) -> list[tuple[Check, str | None]]:
        """Dataset-level and column-level checks, in contract order (by line)."""
        declared: list[tuple[Check, str | None]] = [(c, None) for c in self.dataset.checks]
        for column in self.dataset.columns:
            declared.extend((check, column.name) for check in column.checks)
        indexed = list(enumerate(declared))
        indexed.sort(key=lambda item: (item[1][0].line is None, item[1][0].line or 0, item[0]))
        return [item for _index, item in indexed]

    # results ----------------------------------------------------------------

    def _skipped(self, check: Check, message: str) -> SmokeResult:
        return SmokeResult(
            "check",
            check.kind,
            ",".join(check.columns) or None,
            SKIPPED,
            message,
            line=check.line,
        )

    def _malformed(self, count: int, samples: list[str], rows: int) -> SmokeResult:
        what = self.loaded.what
        if count == 0:
            return SmokeResult(
                "schema",
                "malformed_record",
                None,
                PASSED,
                f"all {_count(rows)} {what} records parse",
            )
        shown = _shown(samples or [])
        reason = " (wrong number of fields, or a quote not closed)" if what == "CSV" else ""
        return SmokeResult(
            "schema",
            "malformed_record",
            None,
            FAILED,
            f"{_count(count)} of {_count(rows)} records are not valid {what}{reason}: "
            f"{_quoted(shown)}",
            failed_rows=count,
            samples=shown,
        )

    def _coercion(
        self,
        column: Any,
        target: schema.TargetType,
        rule: rules.CoercionRule,
        count: int,
        samples: list[str],
        nonnull: int,
    ) -> SmokeResult:
        declared = (
            f" (declared '{target.declared}')"
            if target.declared.replace(" ", "").lower() != target.label.replace(" ", "").lower()
            else ""
        )
        if count == 0:
            return SmokeResult(
                "coercion",
                target.name,
                column.name,
                PASSED,
                f"all {_count(nonnull)} non-null values fit {target.label}{declared}",
                failed_rows=0,
                line=column.line,
            )
        shown = _shown(samples or [])
        noun = _plural(count, "value is", "values are")
        return SmokeResult(
            "coercion",
            target.name,
            column.name,
            FAILED,
            f"{_count(count)} {noun} {rule.message}{declared}: {_quoted(shown)}",
            failed_rows=count,
            samples=shown,
            line=column.line,
        )

    def _not_null(self, column: Any, count: int, rows: int) -> SmokeResult:
        """A required (NOT NULL) column: the sample must have a value in every row."""
        if count == 0:
            message = f"no NULL in {_count(rows)} rows of required column '{column.name}'"
        else:
            message = (
                f"{_count(count)} of {_count(rows)} rows have no value in required "
                f"(NOT NULL) column '{column.name}'"
            )
        return SmokeResult(
            "coercion",
            "not_null",
            column.name,
            FAILED if count else PASSED,
            message,
            failed_rows=count,
            line=column.line,
        )

    def _verdict(self, threshold: Threshold, value: float) -> str:
        if threshold.passes(value):
            return PASSED
        return WARNED if threshold.level == "warn" else FAILED

    def _row_count(self, plan: CheckPlan, rows: int) -> SmokeResult:
        status = self._verdict(plan.threshold, rows)
        return SmokeResult(
            "check",
            plan.name,
            None,
            status,
            f"{_count(rows)} {_plural(rows, 'row', 'rows')} ({plan.threshold.describe()})",
            line=plan.check.line,
        )

    def _counted(
        self, plan: CheckPlan, rows: int, count: int, samples: list[str] | None
    ) -> SmokeResult:
        percent = count * 100.0 / rows if rows else 0.0
        value = percent if plan.threshold.metric == "percent" else count
        status = self._verdict(plan.threshold, value)
        shown = _shown(samples or []) if plan.family == checkspec.INVALID else ()
        percent_metric = plan.threshold.metric == "percent"
        details = [f"{_count(count)} {_plural(count, 'row', 'rows')}"] if percent_metric else []
        if plan.family == checkspec.MISSING:
            what = f"{_plural(rows, 'row is', 'rows are')} missing"
        else:
            what = f"{_plural(rows, 'row has', 'rows have')} an invalid value"
            details.append(plan.validity.describe())
        details.append(plan.threshold.describe())
        amount = _percent(percent) if percent_metric else _count(count)
        message = f"{amount} of {_count(rows)} {what} ({'; '.join(details)})"
        if shown:
            message += f": {_quoted(shown)}"
        return SmokeResult(
            "check",
            plan.name,
            ",".join(plan.columns),
            status,
            message,
            failed_rows=count,
            samples=shown,
            line=plan.check.line,
        )

    def _duplicate(
        self, plan: CheckPlan, rows: int, considered: int, duplicates: int, samples: list[str]
    ) -> SmokeResult:
        base = considered if len(plan.columns) == 1 else rows
        percent = duplicates * 100.0 / base if base else 0.0
        value = percent if plan.threshold.metric == "percent" else duplicates
        status = self._verdict(plan.threshold, value)
        shown = _shown(samples)
        among = (
            f"{_count(considered)} non-missing values"
            if len(plan.columns) == 1
            else f"{_count(rows)} rows"
        )
        key = "values" if len(plan.columns) == 1 else f"({', '.join(plan.columns)})"
        lead = (
            f"{_percent(percent)} duplicates ({_count(duplicates)} rows)"
            if plan.threshold.metric == "percent"
            else f"{_count(duplicates)} duplicate {_plural(duplicates, 'row', 'rows')}"
        )
        message = f"{lead} among {among} ({plan.threshold.describe()})"
        if shown:
            message += f"; repeated {key}: {_quoted(shown)}"
        return SmokeResult(
            "check",
            plan.name,
            ",".join(plan.columns),
            status,
            message,
            failed_rows=duplicates,
            samples=shown,
            line=plan.check.line,
        )

    # quarantine ---------------------------------------------------------------

    def _quarantine(self, folder: Path, malformed: int) -> None:
        if not self.quarantine_rules:
            quarantine.clear(folder, self.dataset.id)
            return
        labels = F.array(
            *[
                F.when(_rule_column(condition), F.lit(label))
                for label, condition in self.quarantine_rules
            ]
        )
        violated = F.filter(labels, lambda item: item.isNotNull())
        columns = [F.col(f"c{index}") for index in range(len(self.loaded.names))]
        extra = [F.col(readers.CORRUPT).alias(quarantine.MALFORMED)] if malformed else []
        flagged = self.df.select(*columns, *extra, violated.alias(quarantine.VIOLATIONS))
        table = flagged.where(F.size(F.col(quarantine.VIOLATIONS)) > 0).toArrow()
        if table.num_rows == 0:
            quarantine.clear(folder, self.dataset.id)
            return
        names = list(self.loaded.names)
        violations = quarantine.VIOLATIONS
        while violations in names:
            violations = "_" + violations
        tail = [quarantine.MALFORMED] if malformed else []
        table = table.rename_columns([*names, *tail, violations])
        quarantine.write(table, folder, self.dataset.id)


def _rule_column(rule: sqlexpr.Expr | Callable[[], Any]) -> Any:
    """A quarantine rule's row-level condition as a Column, built only when quarantining."""
    return sqlexpr.to_column(rule) if isinstance(rule, sqlexpr.Expr) else rule()


def _duplicated(typed: list[sqlexpr.Expr], keep: sqlexpr.Expr | None) -> Any:
    """Row-level: this row's key occurs more than once (for the quarantine)."""
    from pyspark.sql import Window

    keys = [sqlexpr.to_column(key) for key in typed]
    window = Window.partitionBy(*keys)
    repeated = F.count(F.lit(1)).over(window) > 1
    if keep is None:
        return repeated
    # Missing values are never duplicates; count only the kept rows per key.
    kept_column = sqlexpr.to_column(keep)
    kept = F.sum(F.when(kept_column, F.lit(1)).otherwise(F.lit(0))).over(window) > 1
    return kept_column & kept
