"""``python -m gate.action``: the container's entrypoint (see action.yml and the Dockerfile).

Inside GitHub Actions it runs the Action; anywhere else the CLI (gate/action/entrypoint.py).
"""

from gate.action.entrypoint import main
from gate.cli import tune_gc

tune_gc()  # a one-shot process, as the command is: collect rarely (see tune_gc)
raise SystemExit(main())
