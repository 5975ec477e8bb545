"""Pick out the rows that break a row-level rule, with the rules each breaks, for the quarantine.

Split from the runner because it is the one Spark job that runs only with
``--quarantine``: every rule the planning registered (a condition as SQL text,
or a builder of a window Column for duplicates) becomes one label per row, and
the rows with at least one label are written by ``quarantine`` (pyarrow).
Nothing here runs, and no Column is built, unless a quarantine is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from gate.smoke import quarantine, readers, sqlexpr

#: A quarantine rule's condition: an Expr, or a builder of a Column (window functions).
Condition = sqlexpr.Expr | Callable[[], Any]


def write(
    df: Any,
    names: Sequence[str],
    dataset_id: str,
    folder: Path,
    labelled: Sequence[tuple[str, Condition]],
    malformed: int,
) -> None:
    """Write ``dataset_id``'s violating rows to ``folder`` (or remove its old file)."""
    if not labelled:
        quarantine.clear(folder, dataset_id)
        return
    labels = F.array(
        *[F.when(rule_column(condition), F.lit(label)) for label, condition in labelled]
    )
    violated = F.filter(labels, lambda item: item.isNotNull())
    columns = [F.col(f"c{index}") for index in range(len(names))]
    extra = [F.col(readers.CORRUPT).alias(quarantine.MALFORMED)] if malformed else []
    flagged = df.select(*columns, *extra, violated.alias(quarantine.VIOLATIONS))
    table = flagged.where(F.size(F.col(quarantine.VIOLATIONS)) > 0).toArrow()
    if table.num_rows == 0:
        quarantine.clear(folder, dataset_id)
        return
    header = list(names)
    violations = quarantine.VIOLATIONS
    while violations in header:
        violations = "_" + violations
    tail = [quarantine.MALFORMED] if malformed else []
    table = table.rename_columns([*header, *tail, violations])
    quarantine.write(table, folder, dataset_id)


def rule_column(rule: Condition) -> Any:
    """A quarantine rule's row-level condition as a Column, built only when quarantining."""
    return sqlexpr.to_column(rule) if isinstance(rule, sqlexpr.Expr) else rule()


def duplicated(typed: list[sqlexpr.Expr], keep: sqlexpr.Expr | None) -> Any:
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
