"""Blob reads: what a path is at a commit, and many blobs' contents at once.

The gate must cost in proportion to the contracts a pull request changes, so
every blob of a run is read through one long-lived ``git cat-file --batch``
with requests pipelined, and "what is at these paths" goes to one long-lived
``cat-file --batch-check --follow-symlinks``, never a process per file or per
question. Symlinks are followed inside the committed tree only; one that leads
outside the repository is reported as such, never read.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from gate.git.process import Git, first_line
from gate.git.refs import HEX
from gate.model import GitError, UsageError

__all__ = ["BlobReader", "Blobs", "PathChecker"]

# Read requests in flight at once: small enough (< 5 KiB) that writing them never
# blocks on a full pipe while git waits for us to read its answers.
_BATCH = 64


class Blobs:
    """The object store of one repository, read through one batch reader per run."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._reader: BlobReader | None = None
        self._checker: PathChecker | None = None

    def close(self) -> None:
        """Stop the blob reader and the path checker; a later read starts new ones."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._checker is not None:
            self._checker.close()
            self._checker = None

    def read(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many blobs, each a full sha (anything else is refused)."""
        wanted = list(dict.fromkeys(shas))
        for sha in wanted:
            if not isinstance(sha, str) or not HEX.match(sha.encode("ascii", "replace")):
                raise UsageError(f"not a full blob sha: {sha!r}")
        if not wanted:
            return {}
        if self._reader is None:
            self._reader = BlobReader(self._git)
        try:
            return self._reader.read(wanted)
        except BaseException:
            self.close()  # answers may be left unread; start afresh next time
            raise

    def lookup(self, commit: str, paths: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """What each path is at ``commit``, following symlinks inside the tree.

        Returns ``(kind, sha)``; kind is the object type, ``missing``, or what
        ``cat-file --follow-symlinks`` found instead (``symlink`` = leads outside
        the repository, ``dangling``, ``loop``, ``notdir``).
        """
        return {
            path: (kind, sha)
            for path, (kind, sha, _size) in self.lookup_sized(commit, paths).items()
        }

    def lookup_sized(
        self, commit: str, paths: Sequence[str]
    ) -> dict[str, tuple[str, str | None, int]]:
        """``lookup`` with each object's size in bytes (0 when it is no object)."""
        for path in paths:
            if "\n" in path:
                raise UsageError(f"cannot look up a path containing a newline: {path!r}")
        if not paths:
            return {}
        if self._checker is None:
            self._checker = PathChecker(self._git)
        try:
            return dict(zip(paths, self._checker.check(commit, paths), strict=True))
        except BaseException:
            if self._checker is not None:
                self._checker.close()  # answers may be left unread; start afresh next time
                self._checker = None
            raise


class PathChecker:
    """One ``git cat-file --batch-check --follow-symlinks`` kept open for the run.

    A run asks "what is at these paths" four to six times (config files on each
    side, the folders above the changed files on each side, symlinked
    contracts); one process answers them all, with requests pipelined as
    ``BlobReader`` does.
    """

    def __init__(self, git: Git) -> None:
        self._proc = git.start("cat-file", "--batch-check", "--follow-symlinks")
        self._finalizer = weakref.finalize(self, _stop, self._proc)

    def check(self, commit: str, paths: Sequence[str]) -> list[tuple[str, str | None, int]]:
        proc = self._proc
        if proc.stdin is None or proc.stdout is None or proc.poll() is not None:
            raise self._died()
        answers: list[tuple[str, str | None, int]] = []
        for start in range(0, len(paths), _BATCH):
            batch = paths[start : start + _BATCH]
            try:
                proc.stdin.write(b"".join(os.fsencode(f"{commit}:{p}\n") for p in batch))
                proc.stdin.flush()
            except OSError as err:
                raise self._died() from err
            for _ in batch:
                answers.append(self._answer(proc.stdout))
        return answers

    def _answer(self, stdout: IO[bytes]) -> tuple[str, str | None, int]:
        """One answer, as ``_parse_follow`` reads it from a whole output."""
        line = stdout.readline()
        if not line.endswith(b"\n"):
            raise self._died()
        words = line.split()
        if len(words) == 2 and words[0] in _SIZED and words[1].isdigit():
            rest = stdout.read(int(words[1]) + 1)  # the name or link text, then "\n"
            if len(rest) != int(words[1]) + 1:
                raise self._died()
            line += rest
        return next(_parse_follow(line, 1))

    def _died(self) -> GitError:
        stderr = _stop(self._proc)
        return GitError(f"git cat-file stopped unexpectedly: {first_line(stderr)}")

    def close(self) -> None:
        self._finalizer()


class BlobReader:
    """One ``git cat-file --batch`` kept open for the whole run, with requests pipelined.

    GitPython's ``odb.stream`` also keeps one process, but waits for each answer
    before asking the next question; pipelining small batches reads 10,000
    blobs three to ten times faster (docs/architecture.md, "Why no GitPython").
    """

    def __init__(self, git: Git) -> None:
        self._proc = git.start("cat-file", "--batch")
        self._finalizer = weakref.finalize(self, _stop, self._proc)

    def read(self, shas: Sequence[str]) -> dict[str, bytes]:
        stdin, stdout = self._pipes()
        blobs: dict[str, bytes] = {}
        for start in range(0, len(shas), _BATCH):
            batch = shas[start : start + _BATCH]
            try:
                stdin.write("".join(f"{sha}\n" for sha in batch).encode("ascii"))
                stdin.flush()
            except OSError as err:
                raise self._died() from err
            for sha in batch:
                blobs[sha] = self._answer(stdout, sha)
        return blobs

    def _answer(self, stdout: IO[bytes], sha: str) -> bytes:
        header = stdout.readline().split()
        if len(header) == 2 and header[1] == b"missing":
            raise GitError(f"blob {sha} is missing from the repository")
        if len(header) != 3 or not header[2].isdigit():
            raise self._died()
        size = int(header[2])
        data = stdout.read(size)
        if len(data) != size or stdout.read(1) != b"\n":
            raise self._died()
        if header[1] != b"blob":
            raise GitError(f"{sha} is a {header[1].decode('ascii', 'replace')}, not a file's blob")
        return data

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        if self._proc.stdin is None or self._proc.stdout is None or self._proc.poll() is not None:
            raise self._died()
        return self._proc.stdin, self._proc.stdout

    def _died(self) -> GitError:
        stderr = _stop(self._proc)
        return GitError(f"git cat-file stopped unexpectedly: {first_line(stderr)}")

    def close(self) -> None:
        self._finalizer()


def _stop(proc: subprocess.Popen[bytes]) -> bytes:
    """End a cat-file process and return what it said on stderr.

    Closing stdout as well as stdin matters after an error mid-batch: git may be
    blocked writing answers nobody will read, and would never see the EOF.
    """
    for pipe in (proc.stdin, proc.stdout):
        if pipe and not pipe.closed:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    stderr = b""
    if proc.stderr and not proc.stderr.closed:
        with contextlib.suppress(OSError):
            stderr = proc.stderr.read()
        proc.stderr.close()
    return stderr


#: ``--follow-symlinks`` answers whose second word sizes a field on the next line.
_SIZED = (b"symlink", b"dangling", b"loop", b"notdir")


def _parse_follow(out: bytes, count: int) -> Iterator[tuple[str, str | None, int]]:
    """Parse ``cat-file --batch-check --follow-symlinks`` answers, one per request:
    (kind, sha, size).

    Most answers are one line; ``symlink``/``dangling``/``loop``/``notdir`` carry
    a sized second field that may itself contain newlines.
    """
    pos = 0
    for _ in range(count):
        end = out.index(b"\n", pos)
        words = out[pos:end].split()
        pos = end + 1
        if len(words) == 2 and words[0] in _SIZED:
            pos += int(words[1]) + 1
            yield words[0].decode("ascii"), None, 0
        elif len(words) == 3 and HEX.match(words[0]):
            yield words[1].decode("ascii"), words[0].decode("ascii"), int(words[2])
        else:
            yield "missing", None, 0
