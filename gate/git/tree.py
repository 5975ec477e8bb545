"""The former single git module, kept so ``gate.git.tree`` imports keep working.

Its work now lives in ``gate.git``'s modules (process, refs, changes, blobs,
search, paths, repo); import from ``gate.git`` in new code.
"""

from gate.git import (
    SHALLOW_REMEDY,
    SODA_GLOBS,
    FileChange,
    PendingSearch,
    Repo,
    TooLarge,
    first_line,
    git_env,
    open_repo,
)

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
