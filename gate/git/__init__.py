"""Git as the gate reads it, one job a module.

``process`` (safe git calls), ``refs`` (validate, resolve, merge base),
``changes`` (what changed, ``git diff --raw``), ``blobs`` (batched reads),
``search`` (``git grep``), ``paths`` (file access stays inside the repository),
``early`` (the working tree's walks, started by the command before its imports)
and ``repo``: the ``Repo`` facade that callers hold. Import from here.

The names below load their module on first use (issue #26): the command imports
``gate.git.early`` before anything heavy, which must not import the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gate.git.changes import FileChange
    from gate.git.paths import TooLarge
    from gate.git.process import SHALLOW_REMEDY, first_line, git_env
    from gate.git.repo import Repo, open_repo
    from gate.git.search import PendingSearch

__all__ = [
    "SHALLOW_REMEDY",
    "SODA_GLOBS",
    "FileChange",
    "PendingSearch",
    "Repo",
    "TooLarge",
    "first_line",
    "git_env",
    "open_repo",
]

#: Where Soda keeps contracts; the gate's full default list is ``gate.formats.SODA_GLOBS``.
SODA_GLOBS: tuple[str, ...] = ("soda/contracts/**/*.yaml", "soda/contracts/**/*.yml")

#: Each public name's module.
_HOMES = {
    "FileChange": "gate.git.changes",
    "TooLarge": "gate.git.paths",
    "SHALLOW_REMEDY": "gate.git.process",
    "first_line": "gate.git.process",
    "git_env": "gate.git.process",
    "Repo": "gate.git.repo",
    "open_repo": "gate.git.repo",
    "PendingSearch": "gate.git.search",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gate.git' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
