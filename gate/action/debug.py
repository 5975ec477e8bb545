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

The gate's engine has no trace hook of its own, so ``trace_gate`` wraps a few
of its functions and ``Repo`` methods *in this process only and only in debug
mode*: each wrapper calls through unchanged and logs what went in and out.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

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


def _wrap(owner: Any, name: str, describe: Callable[..., list[str]], log: Log) -> bool:
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__wrapped_for_debug__", False):
        return original is not None
    label = f"{getattr(owner, '__name__', owner)}.{name}"

    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        result = original(*args, **kwargs)
        try:
            lines = describe(result, *args, **kwargs)
        except Exception as exc:  # a changed signature must not break the run
            lines = [f"(not described: {type(exc).__name__})"]
        log(f"{label}: {lines[0] if lines else ''} ({time.monotonic() - start:.3f}s)")
        for line in lines[1:]:
            log(f"  {line}")
        return result

    traced.__wrapped_for_debug__ = True  # type: ignore[attr-defined]
    setattr(owner, name, traced)
    return True


def _changed(
    result: Sequence[Any], _repo: Any, base: str, head: str | None, globs: Any
) -> list[str]:
    lines = [
        f"{len(result)} changed contract file(s) between {base[:12]} and {head or 'the worktree'}"
        f" for {', '.join(globs)}"
    ]
    lines += [f"{c.status} {c.old_path or '-'} -> {c.new_path or '-'}" for c in result]
    return lines


def _parsed(result: Sequence[Any], items: Sequence[Any], *_: Any, **__: Any) -> list[str]:
    from gate.model import ContractError

    errors = sum(isinstance(r, ContractError) for r in result)
    lines = [f"parsed {len(items)} contract file(s): {len(result) - errors} read, {errors} not"]
    lines += [f"read {path} ({side}, {len(data)} bytes)" for data, path, side, *_ in items]
    return lines


def trace_gate(log: Log) -> list[str]:
    """Wrap the gate's steps to log them; returns the ones it could not find."""
    from gate import engine
    from gate.git import tree as git_tree

    wanted: list[tuple[Any, str, Callable[..., list[str]]]] = [
        (engine, "load_config", lambda r, *a, **k: [f"config: {r.source or 'none (defaults)'}"]),
        (git_tree.Repo, "changed", _changed),
        (
            git_tree.Repo,
            "read_blobs",
            lambda r, *a, **k: [f"{len(r)} blob(s), {sum(map(len, r.values()))} bytes"],
        ),
        (
            git_tree.Repo,
            "read_file",
            lambda r, _s, head, path, *a, **k: [
                f"{path} at {head or 'the worktree'}: "
                + (f"{len(r)} bytes" if r is not None else "missing")
            ],
        ),
        (
            git_tree.Repo,
            "read_worktree",
            lambda r, _s, path, *a, **k: [f"{path} from the worktree: {len(r)} bytes"],
        ),
        (
            git_tree.Repo,
            "list_files",
            lambda r, *a, **k: [f"{len(r)} contract file(s) at head"],
        ),
        (
            git_tree.PendingSearch,
            "result",
            lambda r, *a, **k: [f"git grep: {len(r)} file(s) mention a searched name"],
        ),
        (engine, "parse_many", _parsed),
        (
            engine,
            "diff_datasets",
            lambda r, base, head, *a, **k: [
                f"{len(r)} change(s) from {len(base)} base and {len(head)} head dataset(s)"
            ],
        ),
        (
            engine,
            "scan_consumers",
            lambda r, *a, **k: [
                f"consumers: {len(r.found)} read(s) in {r.files_read} file(s) analysed,"
                f" {len(r.not_analysed)} not analysed"
            ],
        ),
        (engine, "_smoke", lambda r, *a, **k: ["smoke test"]),
    ]
    return [f"{getattr(o, '__name__', o)}.{n}" for o, n, d in wanted if not _wrap(o, n, d, log)]
