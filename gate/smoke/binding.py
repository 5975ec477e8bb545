"""Bind each contract column to its column in the sample, and to its value in the contract type.

Split from the runner because it is one job with its own failure mode: the
sample's columns are matched by name (``c<n>`` as read, ``t<n>`` once cast),
and Spark's analyzer decides which casts it refuses before any job runs. A
refused cast becomes a finding here (failed, or skipped for a nested type in a
CSV sample) and the column is then checked as it is in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gate.model import Dataset
from gate.smoke import checks as rules
from gate.smoke import readers, schema, session
from gate.smoke.result import FAILED, SKIPPED, SmokeResult


@dataclass
class Binding:
    """The sample's frame with typed columns added, each bound column, and refused casts."""

    df: Any
    bounds: dict[str, rules.Bound] = field(default_factory=dict)
    cast_results: list[SmokeResult] = field(default_factory=list)


def bind(
    loaded: readers.Loaded,
    df: Any,
    dataset: Dataset,
    dialect: str,
    position: dict[str, int],
) -> Binding:
    """Every contract column found in the sample (``position``: name -> index as read)."""
    source_types = {item.name: item.dataType for item in df.schema.fields}
    binding = Binding(df)
    for column in dataset.columns:
        index = position.get(column.name)
        if index is None:
            continue
        internal = f"c{index}"
        target = schema.target_type(column.data_type, dialect) if column.data_type else None
        binding.bounds[column.name] = rules.Bound(
            name=column.name,
            internal=internal,
            source=source_types[internal],
            target=target,
            typed_name=f"t{index}",
        )
    _project_casts(binding, loaded, dataset)
    return binding


def _project_casts(binding: Binding, loaded: readers.Loaded, dataset: Dataset) -> None:
    """Add each column's value in its contract type to the frame, as ``t<n>``.

    Spark's analyzer says which casts it refuses (no job runs); those
    columns are checked as they are in the file. The casts are made here,
    with ``Column.try_cast``, so the aggregation's SQL text names the
    typed values and never holds a contract type.
    """
    casting = [bound for bound in binding.bounds.values() if bound.casts]
    if not casting:
        return
    try:
        projected = binding.df.select(
            "*", *[bound.cast_column().alias(bound.typed_name) for bound in casting]
        )
        _ = projected.schema
        binding.df = projected
        return
    except Exception:
        pass
    for bound in casting:
        try:
            _ = binding.df.select(bound.cast_column()).schema
        except Exception as err:
            bound.mark_uncastable()
            column = dataset.column(bound.name)
            assert bound.target is not None
            source = bound.source.simpleString().upper()
            if loaded.what == "CSV" and rules.is_complex_ddl(bound.target.spark_ddl):
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
            binding.cast_results.append(
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
        binding.df = binding.df.select(
            "*", *[bound.cast_column().alias(bound.typed_name) for bound in castable]
        )
