"""``python -m gate.action``: the container's entrypoint (see action.yml and the Dockerfile).

Inside GitHub Actions it runs the Action; anywhere else the CLI (gate/action/entrypoint.py).
"""

from gate import _dataclass_code

_dataclass_code.install()  # before the first dataclass, as the command does (gate/cli.py)

from gate.action.entrypoint import main  # noqa: E402
from gate.cli import tune_gc  # noqa: E402

tune_gc()  # a one-shot process, as the command is: collect rarely (see tune_gc)
raise SystemExit(main())
