"""``python -m gate.action``: the container's entrypoint (see action.yml and the Dockerfile)."""

from gate.action.run import main

raise SystemExit(main())
