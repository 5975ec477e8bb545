"""The smoke test of one dataset: plan every finding, run one Spark job, render the results.

Split from the runner, which keeps the orchestration (samples, session,
parallelism, time limits, one line per error). Here one dataset's findings are
planned as keys of one aggregation (``checks.Metrics``) and rendered from its
values; binding columns to their contract types is ``binding``, the wording
of each finding ``messages``, the quarantine job ``quarantine_rows``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql.types import StringType

from gate.limits import Limits
from gate.model import Check, Dataset
from gate.smoke import (
    binding,
    checkspec,
    messages,
    quarantine_rows,
    readers,
    schema,
    session,
    sqlexpr,
)
from gate.smoke import checks as rules
from gate.smoke.checkspec import CheckPlan
from gate.smoke.result import SKIPPED, SmokeResult
from gate.smoke.samples import Sample

#: A finding waiting for the aggregation: (metric values, rows) -> result.
Render = Callable[[dict[str, Any], int], SmokeResult]


def _ready(result: SmokeResult) -> Render:
    return lambda values, rows: result


class DatasetRun:
    """The smoke test of one dataset: built once, evaluated with as few jobs as possible.

    Why one class of ~250 lines: every plan (malformed records, coercion,
    declared checks, duplicates) adds keys to the same aggregation and rules
    to the same quarantine list, and its render reads the frame as bound; the
    state is shared by design, so the plans stay methods of one run. What is
    not planning (binding, wording, the quarantine job) lives in its own module.
    """

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
        self.position: dict[str, int] = {}
        for index, name in enumerate(self.loaded.names):
            self.position.setdefault(name, index)
        self.bounds: dict[str, rules.Bound] = {}
        self.cast_results: list[SmokeResult] = []
        self.malformed_count = 0
        self.quarantine_rules: list[tuple[str, quarantine_rows.Condition]] = []

    def deadline_expired(self) -> bool:
        """The dataset's time is up: a failing job was cancelled, not refused."""
        return bool(self.deadline and self.deadline.expired)

    def _bind(self) -> None:
        bound = binding.bind(self.loaded, self.df, self.dataset, self.dialect, self.position)
        self.df, self.bounds = bound.df, bound.bounds
        self.cast_results.extend(bound.cast_results)

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
            quarantine_rows.write(
                self.df,
                self.loaded.names,
                self.dataset.id,
                quarantine_folder,
                self.quarantine_rules,
                self.malformed_count,
            )
        return out, rows

    def _plan_malformed(self, metrics: rules.Metrics) -> list[Render]:
        what = self.loaded.what
        if what not in ("CSV", "JSON"):
            return []
        if not self.loaded.corrupt:  # Spark found nothing to set aside
            return [lambda values, rows: messages.malformed(what, 0, [], rows)]
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
            return messages.malformed(what, self.malformed_count, values[samples_key], rows)

        return [render]

    def _plan_coercion(self, metrics: rules.Metrics) -> list[Render]:
        """NOT NULL of required columns, then what each contract type can hold."""
        out: list[Render] = []
        for column in self.dataset.columns:
            bound = self.bounds.get(column.name)
            if bound is None:
                continue
            if column.required is True:
                condition = bound.raw.isNull()
                key = metrics.count_if(condition)
                self.quarantine_rules.append((f"not_null({column.name})", condition))
                out.append(
                    lambda values, rows, column=column, key=key: messages.not_null(  # type: ignore[misc]
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
                        messages.coercion(
                            column,
                            target,
                            rule.message,
                            int(values[keys[0]] or 0),
                            values[keys[1]],
                            int(values[keys[2]] or 0),
                        )
                    )
                )
        return out

    def _plan_checks(self, metrics: rules.Metrics) -> list[Render]:
        """The declared checks, in contract order; counts join the one aggregation."""
        out: list[Render] = []
        for check, column_name in declared_checks(self.dataset):
            if check.kind in checkspec.SCHEMA_KINDS:
                continue
            try:
                plan = checkspec.plan(check, column_name)
            except checkspec.Unsupported as reason:
                out.append(_ready(messages.skipped(check, f"skipped: unsupported: {reason}")))
                continue
            absent = [name for name in plan.columns if name not in self.bounds]
            if absent:
                why = (
                    "is not in the sample"
                    if absent[0] not in self.position
                    else "is not a contract column"
                )
                out.append(_ready(messages.skipped(check, f"skipped: column '{absent[0]}' {why}")))
                continue
            bounds = [self.bounds[name] for name in plan.columns]
            if plan.family == checkspec.ROW_COUNT:
                out.append(lambda values, rows, plan=plan: messages.row_count(plan, rows))  # type: ignore[misc]
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
                    lambda values, rows, plan=plan, keys=(count_key, samples_key): messages.counted(  # type: ignore[misc]
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
    ) -> Render:
        """A duplicate check: its keys come back with the dataset's one job.

        pyarrow counts them there; only when a key repeats (or pyarrow cannot
        compare the type as Spark does) does a Spark group-by run, when the
        result is rendered, for the count and the keys exactly as Spark shows them.
        """
        keep = ~rules.missing_condition(bounds[0], plan.missing) if len(bounds) == 1 else None
        considered_key = metrics.count_if(keep) if keep is not None else None
        typed = [bound.typed for bound in bounds]
        repeated_key = metrics.duplicates(typed, considered_key)
        self.quarantine_rules.append((plan.label, lambda: quarantine_rows.duplicated(typed, keep)))

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
                    return messages.skipped(plan.check, reason)
            return messages.duplicate(plan, rows, considered, duplicates, samples)

        return render


def declared_checks(dataset: Dataset) -> list[tuple[Check, str | None]]:
    """Dataset-level and column-level checks, in contract order (by line)."""
    declared: list[tuple[Check, str | None]] = [(c, None) for c in dataset.checks]
    for column in dataset.columns:
        declared.extend((check, column.name) for check in column.checks)
    indexed = list(enumerate(declared))
    indexed.sort(key=lambda item: (item[1][0].line is None, item[1][0].line or 0, item[0]))
    return [item for _index, item in indexed]
