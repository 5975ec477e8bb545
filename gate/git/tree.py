"""The former single git module, kept so ``gate.git.tree`` imports keep working.

Its work now lives in ``gate.git``'s modules (process, refs, changes, blobs,
search, paths, repo); import from ``gate.git`` in new code.
"""

import gate.git as _git
from gate.git import *  # noqa: F403  every public name of gate.git, the same objects

__all__ = _git.__all__
