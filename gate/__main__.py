"""``python -m gate``: the command line."""

from gate.cli import entry

entry()
