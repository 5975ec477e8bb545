"""``python -m gate.action``: the container's entrypoint (see action.yml and the Dockerfile)."""

from gate.action.run import main
from gate.cli import tune_gc

tune_gc()  # a one-shot process, as the command is: collect rarely (see tune_gc)
raise SystemExit(main())
