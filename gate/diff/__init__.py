"""The diff: a pair of dataset lists in, one ``Change`` per finding out.

``diff_datasets(base, head)`` is the library entry point (README, "Library");
the pair walkers and one module per rule family live beside it.
"""

from __future__ import annotations

from gate.diff.walk import Change, SeverityFn, default_severity, diff_datasets

__all__ = ["Change", "SeverityFn", "default_severity", "diff_datasets"]
