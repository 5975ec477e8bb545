"""Where a run reads the path sources of ``lineage:``: the repository and its two commits.

Its own module so that the engine can name it without importing the sources
(sqlglot and the SQL analysis): a run without a breaking change imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.git import Repo


@dataclass(frozen=True)
class Where:
    """Where the run reads path sources: the repository, its base and HEAD commits."""

    repo: Repo
    base_commit: str
    head_commit: str | None
