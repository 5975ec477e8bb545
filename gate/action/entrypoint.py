"""The image's entrypoint: the GitHub Action inside Actions, the CLI everywhere else.

The same image serves ``uses: <owner>/schema-contract-gate@v1`` and
``docker run --rm -v "$PWD:/repo" -w /repo IMAGE --base origin/main``. Outside
Actions there is no event, no inputs and no ``GITHUB_WORKSPACE``: running the
Action there reported "skipped" and exited 0, a silent pass. So the choice is
explicit, on ``GITHUB_ACTIONS=true`` (which the runner sets for every step and
``docker run`` does not pass on), and one line on stderr says which mode runs.

In the CLI mode the arguments go to ``schema-gate`` as they are (``--help``,
exit codes 0/1/2). A mounted repository usually belongs to the host's user
while the container runs as root, so git would refuse it ("dubious
ownership"): the working directory and ``--repo`` are trusted the way the
Action trusts its workspace, through ``GIT_CONFIG_*`` in this process's
environment, without writing any config file; and what git writes under
``.git`` as root (a refreshed index) is handed back to the repository's owner
afterwards, as the Action does after its fetches.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping, Sequence
from typing import IO

from gate.action.fetch import Workspace, restore_ownership, trust_workspace

ACTION_NOTE = "schema-contract-gate: GITHUB_ACTIONS=true: running as the GitHub Action"
CLI_NOTE = (
    "schema-contract-gate: not in GitHub Actions (GITHUB_ACTIONS is not 'true'): "
    "running the command line, schema-gate {args}"
)


def in_actions(env: MutableMapping[str, str]) -> bool:
    """What the runner sets for every step (``docker run`` alone does not)."""
    return env.get("GITHUB_ACTIONS", "").strip().lower() == "true"


def repo_dirs(argv: Sequence[str], cwd: str) -> list[str]:
    """The directories git will be asked about: the working directory and ``--repo``."""
    dirs = [cwd]
    for i, arg in enumerate(argv):
        if arg == "--repo" and i + 1 < len(argv):
            dirs.append(os.path.join(cwd, argv[i + 1]))
        elif arg.startswith("--repo="):
            dirs.append(os.path.join(cwd, arg[len("--repo=") :]))
    out: list[str] = []
    for path in dirs:
        out += [os.path.abspath(path), os.path.realpath(path)]
    return out


def main(
    argv: Sequence[str] | None = None,
    env: MutableMapping[str, str] | None = None,
    err: IO[str] | None = None,
) -> int:
    """Run the Action or the CLI; the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if env is None else env
    err = sys.stderr if err is None else err
    if in_actions(env):
        err.write(ACTION_NOTE + (" (arguments ignored)" if argv else "") + "\n")
        err.flush()
        from gate.action.run import main as action_main

        return action_main(env)
    shown = "".join(c if c.isprintable() else "?" for c in " ".join(argv)[:200])
    err.write(CLI_NOTE.format(args=shown).rstrip() + "\n")
    err.flush()
    dirs = repo_dirs(argv, os.getcwd())
    trust_workspace(dirs, env if isinstance(env, dict) else None)
    from gate.cli import main as cli_main

    try:
        return cli_main(argv)
    finally:
        for path in dict.fromkeys(dirs[::2]):  # the absolute paths, one per directory
            if os.path.isdir(path):
                restore_ownership(Workspace(path, lambda _: None))
