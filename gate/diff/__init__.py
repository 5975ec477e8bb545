"""The diff: a pair of dataset lists in, one ``Change`` per finding out.

``diff_datasets(base, head)`` is the library entry point (README, "Library"):
walk.py walks the pairs (pairing.py) and hands them to one handler module per
rule family (datasets, columns, column_types, constraints, checks,
relationships, versions), each emitting catalogue rules through emitter.py.
``Change`` lives in gate.model and stays importable from here.
"""

from __future__ import annotations

from gate.diff.walk import Change, SeverityFn, default_severity, diff_datasets

__all__ = ["Change", "SeverityFn", "default_severity", "diff_datasets"]
