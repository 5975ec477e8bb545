"""``python -m gate``: the command line (``schema-gate`` is the recommended form).

``python -m`` puts the current directory first on the import path (unless
``-P`` or ``PYTHONSAFEPATH`` on Python 3.11+), and the gate runs inside the
repository it judges: a ``yaml.py`` or ``sqlglot/`` committed at the root would
be imported instead of the real one, running the PR's code. So the directory
comes off the path before anything else is imported; ``gate`` itself was
already found (a ``gate/`` folder at the root is beyond this: use
``schema-gate``, whose path starts at its own installed folder).
"""

import os
import sys


def _drop_working_directory() -> None:
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    first = os.path.abspath(sys.path[0] or os.curdir)
    if first == os.path.abspath(os.getcwd()) and first != here:
        del sys.path[0]  # not a source checkout run from its own root


_drop_working_directory()

from gate.cli import entry  # noqa: E402

entry()
