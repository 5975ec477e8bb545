"""Safe git calls: every git the gate runs starts here.

Refs, globs and paths come from users and pull requests, so git runs from
argument lists (never a shell), never prompts, never pages and never rewrites
the index; a failure leaves as ``GitError`` with git's first meaningful line.
Callers put ``--end-of-options`` or ``--`` before anything a user wrote.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gate.git.early import git_env
from gate.model import GitError

__all__ = [
    "SHALLOW_REMEDY",
    "Git",
    "first_line",
    "git_env",
    "nul_paths",
    "run",
    "run_text",
    "start",
]

GIT = "git"

SHALLOW_REMEDY = (
    "fetch the full history: use actions/checkout with `fetch-depth: 0`, "
    "or run `git fetch --unshallow`"
)

Cwd = str | os.PathLike[str]


def first_line(stderr: bytes | str) -> str:
    """git's first meaningful stderr line, without its ``fatal:``/``error:`` prefix."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("hint:"):
            return line.removeprefix("fatal: ").removeprefix("error: ")
    return "no message from git"


def _call(cwd: Cwd, args: Sequence[str], timeout: float | None, **kwargs: Any) -> Any:
    try:
        return subprocess.run(
            [GIT, *args],
            cwd=cwd,
            env=git_env(),
            capture_output=True,
            timeout=timeout,
            check=False,
            **kwargs,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout:g}s") from None
    except OSError as err:
        raise GitError(f"cannot run git: {err}") from err


def run(
    cwd: Cwd, args: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run git to completion; the caller reads the exit code (``GitError`` if git won't start)."""
    result: subprocess.CompletedProcess[bytes] = _call(cwd, args, timeout, input=stdin)
    return result


def run_text(
    cwd: Cwd, args: Sequence[str], *, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``run`` with text output (undecodable bytes replaced), for short answers."""
    result: subprocess.CompletedProcess[str] = _call(
        cwd, args, timeout, text=True, errors="replace"
    )
    return result


def start(cwd: Cwd, args: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start a long-lived git with all three pipes (a batch reader, a search)."""
    try:
        return subprocess.Popen(
            [GIT, *args],
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as err:
        raise GitError(f"cannot run git: {err}") from err


def nul_paths(out: bytes) -> set[str]:
    """The paths of a ``-z`` listing (``ls-files -z``, ``grep -l -z``)."""
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


class Git:
    """git bound to one repository's top directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return run(self.root, args, stdin=stdin)

    def out(self, *args: str, stdin: bytes | None = None) -> bytes:
        """git's stdout, or ``GitError`` naming the subcommand when it fails."""
        proc = self.run(*args, stdin=stdin)
        if proc.returncode != 0:
            raise GitError(f"git {args[0]} failed: {first_line(proc.stderr)}")
        return proc.stdout

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return start(self.root, args)
