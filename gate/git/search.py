"""Text search with ``git grep -F``: the few files worth parsing, found without parsing.

When the gate must look beyond the changed files (is a new dataset id declared
elsewhere already? which SQL models mention a changed table?), one fixed-string
search over one side costs a text scan instead of a parse of every file. The
search runs in its own process on another core, so the caller may work while it
runs and take or cancel the answer later.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterable, Sequence

from gate.git.paths import pathspecs
from gate.git.process import Git, first_line, nul_paths
from gate.model import GitError

__all__ = ["PendingSearch", "collect", "start"]


class PendingSearch:
    """A ``git grep -l`` under way, whose file list is taken or thrown away later."""

    def __init__(self, proc: subprocess.Popen[bytes], prefix: str) -> None:
        self._proc = proc
        self._prefix = prefix

    def result(self) -> list[str]:
        """The matching files (sorted), once git has finished."""
        proc = self._proc
        try:
            out, errors = proc.communicate()
        except BaseException:
            self.cancel()
            raise
        if proc.returncode == 1:  # no match
            return []
        if proc.returncode != 0:
            raise GitError(f"git grep failed: {first_line(errors)}")
        return sorted(p.removeprefix(self._prefix) for p in nul_paths(out))

    def done(self) -> bool:
        """Whether git has finished (``result()`` then does not wait)."""
        return self._proc.poll() is not None

    def cancel(self) -> None:
        """Stop the search if it still runs (a no-op once ``result()`` returned)."""
        if self._proc.returncode is None:
            self._proc.kill()
            self._proc.communicate()


def start(
    git: Git,
    resolve: Callable[[str], str],
    head: str | None,
    globs: Sequence[str],
    needles: Iterable[str],
    ignore_case: bool = False,
    words: bool = False,
) -> PendingSearch | None:
    """Start searching ``globs`` at ``head`` (``None``: the working tree, untracked
    files included) for any of ``needles``; ``None`` when there is nothing to find.
    ``resolve`` turns ``head`` into a commit."""
    # Patterns go through stdin (-f -), never argv: thousands of long ids would
    # exceed the argument limit, and an id is data, not an option. A pattern
    # holds no newline, so an id with one is searched as its lines: that finds
    # a superset of the files, which the caller parses and compares exactly.
    lines = {line for needle in needles for line in needle.splitlines() if line.strip()}
    if not lines:
        return None
    where = ["--untracked"] if head is None else [resolve(head)]
    flags = (["-i"] if ignore_case else []) + (["-w"] if words else [])
    args = ["grep", "-F", *flags, "-l", "-z", "--full-name", "-f", "-", *where, "--"]
    proc = git.start(*args, *pathspecs(globs))
    try:
        # git reads all of its input before it answers, so this write ends.
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # git failed early: see stderr
            proc.stdin.write("\n".join(sorted(lines)).encode("utf-8") + b"\n")
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        proc.stdin = None  # communicate() must not touch it again
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return PendingSearch(proc, "" if head is None else f"{where[0]}:")


def collect(search: PendingSearch | None, meanwhile: Callable[[], object] | None) -> list[str]:
    """A started search's files, running ``meanwhile`` while git searches."""
    if search is None:
        return []
    try:
        if meanwhile is not None:
            meanwhile()
        return search.result()
    finally:
        search.cancel()
