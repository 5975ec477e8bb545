"""The Spark smoke test: does the sample data fit the HEAD contracts?

A contract change can be additive and still wrong: the new column's type does
not fit the data, a ``missing`` check the data fails, a type that silently
turns ``"12a"`` into NULL. The smoke test loads each dataset's sample data
(beside the contract, or in ``--sample-data``) into Spark and reports, per
dataset, the schema findings, the values each contract type cannot hold and
the outcome of the contract's own checks (see docs/smoke-test.md).

This module is what the CLI imports; it must stay free of PySpark, which is an
optional extra imported only when ``run_smoke`` runs::

    from gate.smoke import SmokeSettings, run_smoke
    report = run_smoke(datasets, repo_root, SmokeSettings(sample_data="tests/samples"))
    if report.failed: ...

Modules, one job each:

- ``samples``: find and validate sample paths (inside the repository only);
- ``session``: start the one SparkSession (local, cluster, Spark Connect);
- ``readers``: sample file -> DataFrame, columns as they are in the file;
- ``schema``: contract types -> Spark types (sqlglot); schema enforcement;
- ``checkspec``: Soda v3/v4 checks, pure Python; their thresholds are
  gate/check_thresholds.py, shared with the diff (``thresholds`` re-exports it);
- ``sqlexpr``: rule expressions as SQL text with parameters, or as Columns;
- ``checks``: the rules, and the one Spark job per dataset that counts them;
- ``runner``: one dataset after another; ``dataset_run``: one dataset's plan and
  job, with ``binding`` (columns to contract types) and ``messages`` (findings);
- ``quarantine`` / ``quarantine_rows``: violating rows aside;
- ``result``: the report dataclasses (no Spark).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.limits import Limits
from gate.model import Dataset
from gate.smoke.result import DatasetSmoke, SmokeReport, SmokeResult

__all__ = [
    "DatasetSmoke",
    "SmokeReport",
    "SmokeResult",
    "SmokeSettings",
    "run_smoke",
]


@dataclass(frozen=True)
class SmokeSettings:
    """How the smoke test runs; every field maps to one CLI option.

    - ``sample_data``: ``--sample-data DIR``, repo-relative or absolute; must be
      inside the repository (a symlink leading out is refused);
    - ``spark_master``: ``--spark-master URL`` for a classic cluster
      (default: ``local[*]`` in this process);
    - ``spark_remote``: ``--spark-remote sc://host:port`` for Spark Connect;
    - ``quarantine``: ``--quarantine DIR``: write violating rows as Parquet
      (relative paths stay inside the repository; absolute ones may point
      anywhere the caller chose);
    - ``dialect``: the SQL dialect of contract types when a dataset has none;
    - ``limits``: sample size and time limits (``sample_bytes``,
      ``sample_rows``, ``smoke_seconds_per_dataset`` of the base side's
      ``limits:``; the CLI passes them).
    """

    sample_data: str | None = None
    spark_master: str | None = None
    spark_remote: str | None = None
    quarantine: str | None = None
    dialect: str = "spark"
    limits: Limits = field(default_factory=Limits)


def run_smoke(
    datasets: Sequence[Dataset],
    repo_root: Path,
    settings: SmokeSettings,
    *,
    spark: Any = None,
) -> SmokeReport:
    """Smoke-test ``datasets`` (the HEAD contracts) against their sample data.

    One Spark session serves the whole run; it is started only when at least
    one dataset has a sample, and stopped at the end. ``spark`` lets a caller
    (tests, a notebook) pass a session it owns: it is used as is and not
    stopped.

    Raises ``gate.model.UsageError`` (exit 2) when PySpark or Java is missing,
    when Spark cannot start or be reached, and when ``--sample-data``,
    ``--quarantine`` or a sample leads outside the repository. Everything
    about one dataset (an unreadable sample, a Spark error) stays in that
    dataset's ``error``.
    """
    if settings.spark_master and settings.spark_remote:
        from gate.model import UsageError

        raise UsageError("choose --spark-master or --spark-remote, not both")
    if spark is None:
        from gate.smoke import session

        remote = bool(settings.spark_remote)
        session.require_pyspark(remote)
        if not remote:
            session.require_java()
    from gate.lattice import validate_dialect

    dialect = validate_dialect(settings.dialect)
    from gate.smoke.runner import run

    return run(
        datasets,
        Path(repo_root),
        sample_data=settings.sample_data,
        spark_master=settings.spark_master,
        spark_remote=settings.spark_remote,
        quarantine_dir=settings.quarantine,
        dialect=dialect,
        limits=settings.limits,
        spark=spark,
    )
