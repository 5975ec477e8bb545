"""A read of a dataset by a consumer outside the repository, as its source names it.

Why one value for every source: the report, the blast-radius line and the
usage-aware severity do not care whether a read came from another dbt project's
``manifest.json`` or from an OpenLineage run event; they need who reads which
dataset (and which columns, when the source knows), and where the evidence came
from so a reviewer can check it. Sources turn their own shapes into this value;
matching ``dataset`` to a contract's dataset is the config's job, not theirs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExternalRead:
    """One external consumer reading one dataset.

    ``columns`` is ``None`` when the source does not say which columns are read
    (a whole-table dependency): such a read counts for every column of the
    dataset. An empty set means the source says no column is read.
    """

    #: Where the evidence came from: ``dbt-mesh:<project>`` or ``openlineage:<file or url>``.
    source: str
    #: Who reads: ``<project>.<model>`` for dbt, ``<namespace>/<job>`` for OpenLineage.
    consumer: str
    #: The dataset as the source names it (dbt unique id or relation, OpenLineage namespace/name).
    dataset: str
    #: The columns read, lower-cased; ``None`` when the source does not know.
    columns: frozenset[str] | None = None
    #: A file in the other project, or a job's run facet, for the reviewer; ``None`` if unknown.
    location: str | None = None

    def reads_column(self, column: str) -> bool:
        """Whether this read depends on ``column`` (or on a nested field of it)."""
        if self.columns is None:
            return True
        name = column.lower()
        return name in self.columns or name.split(".", 1)[0] in self.columns
