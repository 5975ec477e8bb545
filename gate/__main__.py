"""``python -m gate``: the command line."""

from gate.cli import main

raise SystemExit(main())
