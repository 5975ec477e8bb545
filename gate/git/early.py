"""Walks the run will need, started before the gate's imports (issue #26).

A run on the working tree asks git two questions that need nothing from the
gate's Python: does any tracked file differ from HEAD (``git diff-index
--quiet``: an ``lstat`` of every tracked file), and which files are untracked
(``git ls-files --others``: a walk of the whole tree). Every run without
``--dialect`` also walks the tree at the tip of ``--base`` (``git ls-tree -r``,
where the dialect's sources are looked for, gate/repo_dialect.py). Asked where
the run needs them, they cost 10-40 ms of wall time each at 10,000 files, in
sequence with everything else. Started by the command right after its
arguments are read, one after another from one thread (``_Started``), they run
on another core while Python imports sqlglot and the engine, and the run
collects their answers (``Changes``) instead of starting them again.

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
import threading
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
    """One repository's early answers: its top, the commits asked about, the walks.

    The walks run one after another, from one thread, each git on one thread
    of its own: on two cores, Python importing on one, a single git keeps the
    other busy. Started side by side (three processes, and ``diff-index``'s
    up to 20 threads preloading the index), they took both cores: Python
    waited for a core as soon as it forked the second of them, and at 50,000
    files got it back only when they had all ended (70 ms of a 0.38 s run,
    beside the imports in name only). In order of need: the base tip's tree
    first (both modes take it first), then ``diff-index``, then the untracked
    files; each takes ~10-80 ms at 50,000 files, all done before the imports.
    """

    def __init__(self, where: str, top: str, head: str | None, base: str | None) -> None:
        self.where = where
        self.top = top
        self.head = head
        self.base = base
        env = git_env()
        self.clean: _Walk | None = None
        self.untracked: _Walk | None = None
        self.tree: _Walk | None = None
        if base is not None:
            self.tree = _Walk(["ls-tree", "-r", "-z", "--full-tree", base], top, env)
        if head is not None:
            # One thread: its lstats are the same work, and preloading the index
            # in 20 threads on two cores only takes the core Python is importing on.
            self.clean = _Walk(
                [
                    "-c",
                    "core.preloadIndex=false",
                    "diff-index",
                    "--quiet",
                    "--no-ext-diff",
                    head,
                    "--",
                ],
                top,
                env,
            )
            self.untracked = _Walk(["ls-files", "-z", "--others", "--exclude-standard"], top, env)
        walks = [w for w in (self.tree, self.clean, self.untracked) if w is not None]
        self._walks = walks
        self._thread: threading.Thread | None = None
        if len(walks) == 1:
            walks[0].launch()  # one git: no thread needed to wait for it
        elif walks:
            self._thread = threading.Thread(target=_chain, args=(walks,), name="gate-early")
            self._thread.daemon = True  # never keeps a process alive (discard joins it)
            self._thread.start()

    def settle(self) -> None:
        """Wait for the walks to end and their thread with them: the run forks its
        workers only while it has no other thread (gate/workers.py), and takes
        the three answers within milliseconds of each other anyway."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def stop(self) -> None:
        """Stop every walk (the running one killed, the rest never started) and wait."""
        for walk in self._walks:
            walk.halt()  # first, so that the chain starts none while one is killed
        for walk in self._walks:
            walk.stop()
        if self._thread is not None:
            self._thread.join()


def _chain(walks: list[_Walk]) -> None:
    """Run ``walks`` in order, each to its end (the thread of ``_Started``)."""
    try:
        for walk in walks:
            proc = walk.launch()
            if proc is not None:
                proc.wait()
    finally:  # whatever went wrong, no walk waits for a start that will not come
        for walk in walks:
            walk.halt()  # one not started answers None: the run asks git itself


class _Walk:
    """One git started early, its output in an unnamed file: a pipe would stop git
    at 64 KiB until the run reads it, which is after the imports."""

    def __init__(self, args: list[str], cwd: str, env: dict[str, str]) -> None:
        self.args = args
        self.cwd = cwd
        self.env = env
        self.out = _scratch()
        self._lock = threading.Lock()  # between the chain's launch and the run's stop
        self._launched = threading.Event()  # started, or never will be
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = False

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The walk's git, once its turn came (``None``: it could not start, or the
        run stopped the walks before its turn)."""
        self._launched.wait()
        return self._proc

    def launch(self) -> subprocess.Popen[bytes] | None:
        """Start git, unless the run stopped the walks already."""
        with self._lock:
            try:
                if not self._stopped:
                    self._proc = subprocess.Popen(
                        ["git", *self.args],
                        cwd=self.cwd,
                        env=self.env,
                        stdin=subprocess.DEVNULL,
                        stdout=self.out,
                        stderr=subprocess.DEVNULL,
                    )
            except OSError:
                pass  # the run starts it itself and reports why it cannot
            finally:
                self._launched.set()
            return self._proc

    def result(self) -> tuple[int, bytes] | None:
        """git's exit code and output (``None``: it could not start), once it ended."""
        try:
            proc = self.proc
            if proc is None:
                return None
            code = proc.wait()  # the chain's thread may have reaped it: the same code
            self.out.seek(0)
            return code, self.out.read()
        finally:
            self.out.close()

    def halt(self) -> None:
        """No start from now on (``stop`` ends what did start)."""
        with self._lock:
            self._stopped = True
            self._launched.set()

    def stop(self) -> None:
        self.halt()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.wait()
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
    started.settle()
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
    started.stop()
