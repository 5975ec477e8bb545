"""Git as the gate reads it, one job a module.

``process`` (safe git calls), ``refs`` (validate, resolve, merge base),
``changes`` (what changed, ``git diff --raw``), ``blobs`` (batched reads),
``search`` (``git grep``), ``paths`` (file access stays inside the repository),
and ``repo``: the ``Repo`` facade that callers hold. Import from here.
"""

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
