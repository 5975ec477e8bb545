"""Path safety: file access stays inside the repository.

Paths, globs and symlinks come from pull requests. A path or glob that is
absolute or climbs with ``..`` is refused before git sees it, and a working-tree
read follows symlinks only while they stay inside the repository and out of
``.git`` (where CI keeps credentials): a pull request could otherwise make the
gate print files from the CI machine into a public report.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from gate.model import UsageError

__all__ = ["TooLarge", "Worktree", "is_file", "pathspecs", "relpath"]

_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


class TooLarge(UsageError):
    """A working-tree file over the size its reader accepts (not read)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path}: {size} bytes is over the {limit}-byte limit")
        self.size = size
        self.limit = limit


def relpath(path: str) -> str:
    """A repository-relative posix path that cannot climb out of the repository."""
    if not path or "\0" in path:
        raise UsageError(f"invalid path: {path!r}")
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        raise UsageError(f"{path}: expected a path relative to the repository root")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise UsageError(f"invalid path: {path!r}")
    if ".." in parts:
        raise UsageError(f"{path}: refusing a path that leaves the repository")
    return posixpath.join(*parts)


#: Characters that make a glob segment more than a literal (``\\`` escapes one).
_WILD = frozenset("*?[\\")


def _one_star(parts: list[str]) -> str:
    """``P/**/*S`` (P and S literal, S without a slash) as git's one-star pathspec
    ``:(top)P/*S``, else the glob as ``:(top,glob)``.

    The two match the same paths: without the ``glob`` magic git matches ``*``
    across slashes (fnmatch without ``FNM_PATHNAME``), so ``*S`` after ``P/`` is
    "anything under P/ ending in S", which is what ``**/*S`` says. git matches a
    pattern with one ``*`` and a literal tail by comparing the tail, where
    ``**`` goes through ``wildmatch`` for every path: a search of ``**/*.sql``
    over 50,000 files took 32 ms of CPU, ``*.sql`` 18 (issue #26). The run's
    git never sees the caller's ``GIT_*_PATHSPECS``, which would give a pattern
    without magic another meaning (``git_env``).
    """
    glob = "/".join(parts)
    if len(parts) >= 2 and parts[-2] == "**" and parts[-1].startswith("*"):
        prefix, tail = parts[:-2], parts[-1][1:]
        if not _WILD.intersection(tail) and not any(_WILD.intersection(p) for p in prefix):
            return ":(top)" + "".join(f"{p}/" for p in prefix) + "*" + tail
    return f":(top,glob){glob}"


def pathspecs(globs: Sequence[str] | str) -> list[str]:
    """Turn contract globs into git pathspecs that git itself matches.

    ``:(top,glob)`` makes patterns root-relative wherever the gate runs and makes
    ``**/`` match zero or more directories; a leading ``!`` excludes. Patterns that
    are absolute or climb with ``..`` are refused rather than handed to git.
    """
    if isinstance(globs, str):
        globs = [globs]
    specs: list[str] = []
    for glob in globs:
        negate = glob.startswith("!")
        pattern = glob[1:] if negate else glob
        if not pattern.strip() or "\0" in pattern:
            raise UsageError(f"invalid contract glob: {glob!r}")
        if pattern.startswith(("/", "\\")) or _DRIVE.match(pattern):
            raise UsageError(f"contract glob '{glob}' must be relative to the repository root")
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise UsageError(
                f"contract glob '{glob}' leaves the repository (globs start at the repository "
                "root wherever the gate runs)"
            )
        if not parts:
            raise UsageError(f"invalid contract glob: {glob!r}")
        magic = "top,glob,exclude" if negate else "top,glob"
        specs.append(_one_star(parts) if not negate else f":({magic}){'/'.join(parts)}")
    if not any(not s.startswith(":(top,glob,exclude)") for s in specs):
        raise UsageError("no contract globs given (at least one pattern that is not an exclusion)")
    return specs


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; a name the OS cannot even look up (longer
    than NAME_MAX, as a 600-character dbt model name makes) is no file."""
    try:
        return path.is_file()
    except OSError:
        return False


class Worktree:
    """The repository's working tree, opened only through paths that stay inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self._dirs: dict[str, str] = {}

    def safe_path(self, path: str | os.PathLike[str]) -> Path:
        """Resolve a user-given path (relative to the repository root, or absolute),
        refused when it, or a symlink on the way, leads outside the repository or
        into ``.git``."""
        raw = os.fspath(path)
        if not raw or "\0" in raw:
            raise UsageError(f"invalid path: {raw!r}")
        real = self._realpath(os.path.join(self.real_root, raw))  # an absolute raw wins
        root = str(self.real_root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if real != root and not real.startswith(prefix):
            raise UsageError(f"{raw}: refusing a path outside the repository ({self.root})")
        if any(part.casefold() == ".git" for part in real[len(prefix) :].split(os.sep)):
            raise UsageError(f"{raw}: refusing a path inside .git")
        return Path(real)

    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """A regular file's bytes; ``max_bytes``: a bigger file raises ``TooLarge`` unread."""
        target = self.safe_path(path)
        try:
            info = os.stat(target)
            if not stat.S_ISREG(info.st_mode):  # a FIFO would block forever
                raise UsageError(f"cannot read {path}: not a regular file")
            if max_bytes is not None and info.st_size > max_bytes:
                raise TooLarge(path, info.st_size, max_bytes)
            return target.read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read {path}: {err.strerror or err}") from err

    def readable(self, path: str) -> bool:
        """Whether ``path`` is a regular file inside the repository (links followed)."""
        if not os.path.islink(os.path.join(self.real_root, path)):
            return True  # the common case: no symlink at the path itself
        try:
            return self.safe_path(path).is_file()
        except UsageError:
            return False

    def relative(self, path: str) -> str:
        """A path as given (an absolute one must lie in the repository), made relative."""
        rel = path
        if os.path.isabs(path):  # e.g. --config given as an absolute path in the repository
            rel = self.safe_path(path).relative_to(self.real_root).as_posix()
        return relpath(rel)

    def _realpath(self, full: str) -> str:
        """``os.path.realpath`` with resolved directories remembered.

        Reading 10,000 changed contracts from the working tree would otherwise
        spend most of its time re-resolving the same few directories.
        """
        head, name = os.path.split(full)
        if name in ("", ".", ".."):
            return os.path.realpath(full)
        real_dir = self._dirs.get(head)
        if real_dir is None:
            real_dir = os.path.realpath(head)
            if os.path.isdir(real_dir):  # do not remember what may be created later
                self._dirs[head] = real_dir
        candidate = os.path.join(real_dir, name)
        return os.path.realpath(candidate) if os.path.islink(candidate) else candidate
