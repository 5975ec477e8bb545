"""Blast radius: the in-repo readers of each breaking change (docs/impact.md).

- ``scan``: find and read the candidate files (git grep, one batched read);
- ``reader``: one file -> the contracted tables and columns it reads
  (dbt Jinja pre-pass, SQLMesh header, plain SQL, PySpark via ``ast``);
- ``exposures``: a dbt properties file -> the models its exposures depend on;
- ``sql``: sqlglot scopes -> (table, column, line, usage);
- ``names``: contract -> the table names SQL uses;
- ``impact``: attach readers to changes; emit ``consumer_broken``.
"""

from __future__ import annotations

from gate.consumers.impact import explain, wants_consumers

__all__ = ["explain", "wants_consumers"]
