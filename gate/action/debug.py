"""``RUNNER_DEBUG=1``: what the action did, step by step, for "Re-run with debug logging".

GitHub sets ``RUNNER_DEBUG=1`` when a run is re-run with debug logging (or the
``ACTIONS_STEP_DEBUG`` secret is set); the log then shows ``::debug::`` lines.
The action prints, as ``::debug::`` lines with escaped values:

- the time of each stage of the action (inputs and payload, PR description,
  git preparation, the gate run, the report file, the PR comment) and in total;
- inside the gate run, each step with its time and what it read: the config
  file, the changed contract files (status and both paths), every contract
  file parsed (path, side, bytes), blobs read, each ``git grep`` search (for
  renamed datasets and for consumers), the diff, the consumer analysis and
  the smoke test;
- every git command the process starts (from Python's ``subprocess.Popen``
  audit event, so the gate's commands are seen as well as the action's own);
- each GitHub API request (method, URL, status, bytes, time).

The gate's steps come through the engine's own trace hook (``Settings.trace``,
``gate.tracing``): ``tracer`` is the hook that logs them; nothing is patched.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from gate.tracing import Trace

ENV = "RUNNER_DEBUG"
Log = Callable[[str], None]
_installed: list[Log] = []  # the audit hook cannot be removed: it logs to the newest console


def enabled(env: Mapping[str, str]) -> bool:
    """GitHub's own switch: ``RUNNER_DEBUG=1``."""
    return env.get(ENV, "").strip() == "1"


@contextmanager
def stage(log: Log | None, name: str) -> Iterator[None]:
    """Time one stage of the action (a no-op without a debug log)."""
    start = time.monotonic()
    try:
        yield
    finally:
        if log is not None:
            log(f"stage {name}: {time.monotonic() - start:.3f}s")


def _git_hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen" or not _installed:
        return
    try:
        argv = args[1]
        if isinstance(argv, (str, bytes)) or not argv:
            return
        if os.path.basename(str(argv[0])) != "git":
            return
        _installed[-1]("git command: " + shlex.join(str(a) for a in argv[1:]))
    except Exception:  # an audit hook must never break the call it watches
        return


def watch_git(log: Log) -> None:
    """Log every git command started by this process from now on."""
    if not _installed:
        sys.addaudithook(_git_hook)
    _installed.append(log)


def tracer(log: Log) -> Trace:
    """The engine's trace hook (``Settings.trace``), logging each step and what it read."""

    def trace(step: str, summary: str, seconds: float, details: Sequence[str] = ()) -> None:
        log(f"{step}: {summary} ({seconds:.3f}s)")
        for line in details:
            log(f"  {line}")

    return trace
