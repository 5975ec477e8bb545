"""The working tree's two walks, started before the gate's imports (issue #26).

A run on the working tree asks git two questions that need nothing from the
gate's Python: does any tracked file differ from HEAD (``git diff-index
--quiet``: an ``lstat`` of every tracked file), and which files are untracked
(``git ls-files --others``: a walk of the whole tree). Asked where the run
needs them, they cost 25-40 ms of wall time at 10,000 files, in sequence with
everything else. Started by the command right after its arguments are read,
they run on another core while Python imports sqlglot and the engine, and the
run collects their answers (``Changes``) instead of starting them again.

Only the standard library is imported here: importing this module must not
pull in what the walks are meant to overlap. Nothing changes in what git is
asked: the same commands in the same directory with the same environment;
``diff-index``'s answer is taken only when the run resolves HEAD to the commit
it was asked about, and a walk that failed is asked again by the run, which
then reports git's error as before. What a run does not collect is stopped
(``discard``).
"""

from __future__ import annotations

import os
import subprocess

__all__ = ["discard", "git_env", "start", "take_clean", "take_top", "take_untracked"]


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
    )
    return env


class _Started:
    """One repository's early answers: its top, HEAD's commit, the two walks."""

    def __init__(self, where: str, top: str, head: str, env: dict[str, str]) -> None:
        self.where = where
        self.top = top
        self.head = head
        self.clean: subprocess.Popen[bytes] | None = _popen(
            ["diff-index", "--quiet", "--no-ext-diff", head, "--"], top, env, subprocess.DEVNULL
        )
        self.untracked: subprocess.Popen[bytes] | None = _popen(
            ["ls-files", "-z", "--others", "--exclude-standard"], top, env, subprocess.PIPE
        )


_started: _Started | None = None


def _popen(
    args: list[str], cwd: str, env: dict[str, str], stdout: int
) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None  # the run starts it itself and reports why it cannot


def start(where: str) -> None:
    """Start the walks for the repository holding ``where`` (a run on the working tree).

    One short git first (the top and HEAD's commit, which ``open_repo`` then
    need not ask again); anything unexpected (not a repository, no commit yet,
    no git) leaves it all to the run, which words the error as before.
    """
    discard()
    global _started
    if not os.path.isdir(where):
        return
    env = git_env()
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=where,
            env=env,
            capture_output=True,
            check=False,
        )
    except OSError:
        return
    lines = proc.stdout.split(b"\n")
    if proc.returncode != 0 or len(lines) != 3 or lines[2] or len(lines[1]) not in (40, 64):
        return
    _started = _Started(os.path.abspath(where), os.fsdecode(lines[0]), lines[1].decode(), env)


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
    proc, started.clean = started.clean, None
    code = proc.wait()
    return code == 0 if code in (0, 1) else None


def take_untracked(top: str | os.PathLike[str]) -> bytes | None:
    """``ls-files -z --others --exclude-standard``'s output, when it was started
    early and succeeded (else ``None``: ask now)."""
    started = _mine(top)
    if started is None or started.untracked is None:
        return None
    proc, started.untracked = started.untracked, None
    out, _ = proc.communicate()
    return out if proc.returncode == 0 else None


def discard() -> None:
    """Stop and reap whatever the run did not collect (a run that failed early,
    or one that never needed the walk)."""
    global _started
    started, _started = _started, None
    if started is None:
        return
    for proc in (started.clean, started.untracked):
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
