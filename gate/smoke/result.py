"""What the smoke test found: plain frozen dataclasses, no Spark.

A ``SmokeReport`` holds one ``DatasetSmoke`` per contract dataset; each holds
the ``SmokeResult`` findings of the three families the smoke test runs:

- ``schema``: the sample's columns against the contract's (extra, missing,
  case clash, duplicate, malformed records);
- ``coercion``: values that a contract type cannot hold (they would turn NULL
  on load: ``'12a'`` into ``INT``) or that are longer than ``VARCHAR(n)``;
- ``check``: the contract's own Soda checks (``missing``, ``invalid``...).

Reports and the CLI read these; ``SmokeReport.to_dict`` is the JSON shape under
the report's ``smoke`` key, with stable keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Result statuses.
PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"
#: A check whose threshold says ``level: warn`` and that did not hold: shown,
#: never blocking (Soda's own semantics for warn-level checks).
WARNED = "warned"

# Dataset statuses.
NO_SAMPLE = "no_sample"
ERROR = "error"

RESULT_STATUSES = (PASSED, FAILED, SKIPPED, WARNED)
DATASET_STATUSES = (PASSED, FAILED, NO_SAMPLE, ERROR)

#: How many offending values a finding carries at most.
MAX_SAMPLES = 5


@dataclass(frozen=True)
class SmokeResult:
    """One schema finding, one coercion count or one check outcome."""

    kind: str  # "schema" | "coercion" | "check"
    name: str  # "extra_column", "cast_to_int", or the check kind ("missing")
    column: str | None
    status: str  # "passed" | "failed" | "skipped" | "warned"
    message: str  # one line a person understands
    failed_rows: int | None = None
    samples: tuple[str, ...] = ()  # up to MAX_SAMPLES offending values
    line: int | None = None  # contract line of the check or column

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "column": self.column,
            "status": self.status,
            "message": self.message,
            "failed_rows": self.failed_rows,
            "samples": list(self.samples),
            "line": self.line,
        }


@dataclass(frozen=True)
class DatasetSmoke:
    """The smoke test of one dataset against its sample data."""

    dataset: str
    path: str  # the contract file, repo-relative
    line: int | None
    status: str  # "passed" | "failed" | "no_sample" | "error"
    sample: str | None  # repo-relative path of the sample used
    rows: int | None
    results: tuple[SmokeResult, ...]
    seconds: float
    error: str | None = None

    @property
    def failed_results(self) -> tuple[SmokeResult, ...]:
        return tuple(result for result in self.results if result.status == FAILED)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "path": self.path,
            "line": self.line,
            "status": self.status,
            "sample": self.sample,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "results": [result.to_dict() for result in self.results],
        }


@dataclass(frozen=True)
class SmokeReport:
    """The whole smoke-test run: every dataset, and how Spark was reached."""

    datasets: tuple[DatasetSmoke, ...]
    spark_version: str  # "" when no dataset had a sample and Spark was not started
    master: str  # "local[*]", a master URL, or "sc://host:port" (never credentials)
    seconds: float  # the whole run, session start included
    session_seconds: float  # starting (or connecting) the Spark session

    @property
    def failed(self) -> bool:
        """True when any dataset failed or could not be checked (exit 1)."""
        return any(dataset.status in (FAILED, ERROR) for dataset in self.datasets)

    def counts(self) -> dict[str, int]:
        """How many datasets ended in each status (every status present, even at 0)."""
        counts = dict.fromkeys(DATASET_STATUSES, 0)
        for dataset in self.datasets:
            counts[dataset.status] = counts.get(dataset.status, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "spark_version": self.spark_version,
            "master": self.master,
            "seconds": round(self.seconds, 3),
            "session_seconds": round(self.session_seconds, 3),
            "counts": self.counts(),
            "datasets": [dataset.to_dict() for dataset in self.datasets],
        }
