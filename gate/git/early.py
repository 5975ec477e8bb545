"""Walks the run will need, started before the gate's imports (issue #26).

A run on the working tree asks git two questions that need nothing from the
gate's Python: does any tracked file differ from HEAD (``git diff-index
--quiet``: an ``lstat`` of every tracked file), and which files are untracked
(``git ls-files --others``: a walk of the whole tree). Every run without
``--dialect`` also walks the tree at the tip of ``--base`` (``git ls-tree -r``,
where the dialect's sources are looked for, gate/repo_dialect.py). Asked where
the run needs them, they cost 10-40 ms of wall time each at 10,000 files, in
sequence with everything else. Started by the command right after its
arguments are read, they run on another core while Python imports sqlglot and
the engine, and the run collects their answers (``Changes``) instead of
starting them again.

Only the standard library is imported here: importing this module must not
pull in what the walks are meant to overlap. Nothing changes in what git is
asked: the same commands in the same directory with the same environment; an
answer is taken only about the commit the run itself resolved (HEAD, the base
tip), and a walk that failed is asked again by the run, which then reports
git's error as before. What a run does not collect is stopped (``discard``).
"""

from __future__ import annotations

import os
import subprocess
from typing import BinaryIO

__all__ = [
    "discard",
    "git_env",
    "start",
    "take_clean",
    "take_top",
    "take_tree",
    "take_untracked",
]


def git_env() -> dict[str, str]:
    """The caller's environment, minus everything that could make git interactive."""
    env = dict(os.environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GCM_INTERACTIVE="never",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",  # never rewrite the index behind the user's back
        LC_ALL="C",  # stable English messages to match on
        LANGUAGE="C",
        # Pathspecs mean what the gate wrote (gate/git/paths.py), whatever the
        # caller exported: GIT_LITERAL_PATHSPECS=1 made every glob match nothing.
        GIT_GLOB_PATHSPECS="0",
        GIT_NOGLOB_PATHSPECS="0",
        GIT_LITERAL_PATHSPECS="0",
    )
    return env


class _Started:
    """One repository's early answers: its top, the commits asked about, the walks."""

    def __init__(self, where: str, top: str, head: str | None, base: str | None) -> None:
        self.where = where
        self.top = top
        self.head = head
        self.base = base
        env = git_env()
        self.clean: _Walk | None = None
        self.untracked: _Walk | None = None
        self.tree: _Walk | None = None
        if head is not None:
            self.clean = _Walk(["diff-index", "--quiet", "--no-ext-diff", head, "--"], top, env)
            self.untracked = _Walk(["ls-files", "-z", "--others", "--exclude-standard"], top, env)
        if base is not None:
            self.tree = _Walk(["ls-tree", "-r", "-z", "--full-tree", base], top, env)


class _Walk:
    """One git started early, its output in an unnamed file: a pipe would stop git
    at 64 KiB until the run reads it, which is after the imports."""

    def __init__(self, args: list[str], cwd: str, env: dict[str, str]) -> None:
        self.out = _scratch()
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                ["git", *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self.out,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self.proc = None  # the run starts it itself and reports why it cannot

    def result(self) -> tuple[int, bytes] | None:
        """git's exit code and output (``None``: it could not start)."""
        try:
            if self.proc is None:
                return None
            code = self.proc.wait()
            self.out.seek(0)
            return code, self.out.read()
        finally:
            self.out.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self.out.close()


def _scratch() -> BinaryIO:
    """An unnamed file for git's output: in memory on Linux (no import: tempfile
    costs milliseconds before git could start), else a temporary file."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("gate-early"), "w+b")
    import tempfile

    return tempfile.TemporaryFile()  # closed by result() or stop()


_started: _Started | None = None


def start(where: str, *, worktree: bool, base: str | None) -> None:
    """Start the walks for the repository holding ``where``: the working tree's two
    when the run compares it (``worktree``), and the tree walk of ``base`` (the
    dialect's sources are looked for at the tip of ``--base``) unless ``None``.

    One short git first (the top and the commits, which ``open_repo`` and the
    refs then check); anything unexpected (not a repository, no commit yet, a
    ref git does not know, no git) leaves it all to the run, which words the
    error as before.
    """
    discard()
    global _started
    if base is not None and (not base or base.startswith("-") or "\n" in base):
        base = None  # the run refuses it, in its own words
    revs = (["HEAD^{commit}"] if worktree else []) + ([f"{base}^{{commit}}"] if base else [])
    if not revs or not os.path.isdir(where):
        return
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", *revs, "--"],  # revisions, not paths
            cwd=where,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError:
        return
    lines = proc.stdout.split(b"\n")
    if proc.returncode != 0 or len(lines) != len(revs) + 3 or lines[-2:] != [b"--", b""]:
        return
    shas = [line.decode("ascii", "replace") for line in lines[1:-2]]
    if not all(len(sha) in (40, 64) and _HEX.issuperset(sha) for sha in shas):
        return
    head = shas[0] if worktree else None
    _started = _Started(
        os.path.abspath(where), os.fsdecode(lines[0]), head, shas[-1] if base else None
    )


_HEX = frozenset("0123456789abcdef")


def take_top(where: str) -> str | None:
    """The top of the repository holding ``where``, if the command asked already."""
    started = _started
    if started is None or started.where != os.path.abspath(where):
        return None
    return started.top


def _mine(top: str | os.PathLike[str]) -> _Started | None:
    started = _started
    if started is None or os.fspath(top) != started.top:
        return None
    return started


def take_clean(top: str | os.PathLike[str], head: str) -> bool | None:
    """Whether ``diff-index --quiet`` found no tracked file differing from ``head``,
    when it was asked early about that very commit (else ``None``: ask now)."""
    started = _mine(top)
    if started is None or started.clean is None or started.head != head:
        return None
    walk, started.clean = started.clean, None
    result = walk.result()
    return result[0] == 0 if result is not None and result[0] in (0, 1) else None


def take_untracked(top: str | os.PathLike[str]) -> bytes | None:
    """``ls-files -z --others --exclude-standard``'s output, when it was started
    early and succeeded (else ``None``: ask now)."""
    started = _mine(top)
    if started is None or started.untracked is None:
        return None
    walk, started.untracked = started.untracked, None
    result = walk.result()
    return result[1] if result is not None and result[0] == 0 else None


def take_tree(top: str | os.PathLike[str], commit: str) -> bytes | None:
    """``ls-tree -r -z --full-tree``'s output for ``commit``, when it was started
    early about that very commit and succeeded (else ``None``: ask now)."""
    started = _mine(top)
    if started is None or started.tree is None or started.base != commit:
        return None
    walk, started.tree = started.tree, None
    result = walk.result()
    return result[1] if result is not None and result[0] == 0 else None


def discard() -> None:
    """Stop and reap whatever the run did not collect (a run that failed early,
    or one that never needed the walk)."""
    global _started
    started, _started = _started, None
    if started is None:
        return
    for walk in (started.clean, started.untracked, started.tree):
        if walk is not None:
            walk.stop()
