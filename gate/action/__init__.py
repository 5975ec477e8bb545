"""The GitHub Action: ``python -m gate.action`` maps the Actions runtime onto one gate run.

One job per module:

- ``inputs``: the ``INPUT_*`` variables (the token leaves the environment here);
- ``event``: the event payload and the pull request in it;
- ``git``: trust the workspace, fetch what a shallow clone lacks, give files back;
- ``github_api``: the GitHub REST calls (PR body, comments), each with a total deadline;
- ``bounded_json``: JSON from outside (payload, API answers) refused when nested too deep;
- ``comment``: the sticky PR comment (find by marker, create, update, fall back);
- ``console``: the log, workflow commands, outputs file and summary limits;
- ``debug``: ``RUNNER_DEBUG=1`` output (stage timings, files read, git commands);
- ``outcome``: verdict, outputs, summary and budgeted annotations of a run;
- ``report_file``: the JSON report in the workspace;
- ``run``: one run from start to finish (``main``).

The names below are re-exported for callers and tests; the entry point is
``__main__``.
"""

from __future__ import annotations

from gate.action.console import limit_summary
from gate.action.inputs import INPUTS
from gate.action.outcome import OUTPUTS
from gate.action.run import main

__all__ = ["INPUTS", "OUTPUTS", "limit_summary", "main"]
