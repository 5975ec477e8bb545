"""Text search with ``git grep -F``: the few files worth parsing, found without parsing.

When the gate must look beyond the changed files (is a new dataset id declared
elsewhere already? which SQL models mention a changed table?), one fixed-string
search over one side costs a text scan instead of a parse of every file. The
search runs in its own process on another core, so the caller may work while it
runs and take or cancel the answer later.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
from collections.abc import Callable, Iterable, Sequence

from gate.git.paths import pathspecs
from gate.git.process import Git, first_line, nul_paths
from gate.model import GitError

__all__ = ["PendingSearch", "collect", "start"]


class PendingSearch:
    """A ``git grep -l`` under way, whose file list is taken or thrown away later.

    ``then`` holds the arguments and patterns of further searches over the same
    files, run one after another once this one is over (a big needle list is
    split so that no one git compiles more than ``_TRIE_CHARS`` of pattern).
    """

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        prefix: str,
        then: Sequence[Callable[[], subprocess.Popen[bytes]]] = (),
    ) -> None:
        self._proc = proc
        self._prefix = prefix
        self._then = list(then)

    def result(self) -> list[str]:
        """The matching files (sorted), once git has finished."""
        found: set[str] = set()
        while True:
            found.update(self._one())
            if not self._then:
                return sorted(found)
            self._proc = self._then.pop(0)()

    def _one(self) -> list[str]:
        proc = self._proc
        try:
            out, errors = proc.communicate()
        except BaseException:
            self.cancel()
            raise
        if proc.returncode == 1:  # no match
            return []
        if proc.returncode != 0:
            self._then.clear()
            raise GitError(f"git grep failed: {first_line(errors)}")
        return [p.removeprefix(self._prefix) for p in nul_paths(out)]

    def done(self) -> bool:
        """Whether git has finished (``result()`` then does not wait)."""
        return not self._then and self._proc.poll() is not None

    def cancel(self) -> None:
        """Stop the search if it still runs (a no-op once ``result()`` returned)."""
        self._then.clear()
        if self._proc.returncode is None:
            self._proc.kill()
            self._proc.communicate()


#: From this many needles on, they are searched as regular expressions shaped
#: like a trie (``-E``): ``git grep -F`` tries each pattern on each line in turn,
#: so 5,000 new dataset ids took 16 s over 5,000 small contracts (33 s of the
#: run, both searches), quadratic in the size of a pull request; as a trie, 0.24 s.
_TRIE_FROM = 64
#: Characters of one git's trie patterns: glibc's ``regcomp`` takes about 450
#: bytes per character, so a longer needle list is searched by several gits, in turn.
_TRIE_CHARS = 32 * 1024
#: Past this many gits in turn (needles long and unlike one another, where a trie
#: shares little), ``-F`` is cheaper again: each git scans every file once more,
#: and glibc's matcher over a large alternation is slow per position (4,000 ids of
#: 600 characters: ``-F`` 9 s, 75 trie gits 55 s).
_TRIE_GITS = 4
#: Needles' characters past which the trie is not even built (~2 us a character
#: in Python: 2.4 MB of ids took 5 s before ``_TRIE_GITS`` could say no).
_TRIE_INPUT = 256 * 1024
#: A trie's groups nest as deep as its needles are prefixes of one another.
_TRIE_NEEDLES = 256
_ERE_SPECIAL = frozenset(".[]()*+?{}|^$\\")
#: What ``git grep -w`` calls a word character (ASCII; git runs with ``LC_ALL=C``).
_WORD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"


def _trie_pattern(needles: Sequence[str]) -> str:
    """One POSIX extended regular expression matching exactly the ``needles``,
    branching once per shared prefix: matching costs the length of the longest
    needle per position, not the number of needles."""
    root: dict[str, dict] = {}
    for needle in needles:
        node = root
        for char in needle:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        # Iterative over the chain of single children: a long needle is no recursion.
        out = ""
        while True:
            end = "" in node
            kids = sorted(k for k in node if k)
            if len(kids) == 1 and not end:
                out += ("\\" + kids[0]) if kids[0] in _ERE_SPECIAL else kids[0]
                node = node[kids[0]]
                continue
            if not kids:
                return out
            branches = [(("\\" + k) if k in _ERE_SPECIAL else k) + build(node[k]) for k in kids]
            return out + "(" + "|".join(branches) + ")" + ("?" if end else "")

    return build(root)


def _trie_patterns(lines: Sequence[str], words: bool) -> list[list[str]]:
    """The trie patterns for ``lines``, grouped by the git that compiles them."""
    groups: list[list[str]] = [[]]
    size = 0
    for start in range(0, len(lines), _TRIE_NEEDLES):
        pattern = _trie_pattern(lines[start : start + _TRIE_NEEDLES])
        if words:  # -w as git checks it: no word character on either side
            pattern = f"(^|[^{_WORD}])({pattern})([^{_WORD}]|$)"
        if groups[-1] and size + len(pattern) > _TRIE_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(pattern)
        size += len(pattern)
    return groups


def start(
    git: Git,
    resolve: Callable[[str], str],
    head: str | None,
    globs: Sequence[str],
    needles: Iterable[str],
    ignore_case: bool = False,
    words: bool = False,
    holds: Callable[[], bool] | None = None,
) -> PendingSearch | None:
    """Start searching ``globs`` at ``head`` (``None``: the working tree, untracked
    files included) for any of ``needles``; ``None`` when there is nothing to find.
    ``resolve`` turns ``head`` into a commit; ``holds``, asked once there are
    needles, says whether any file there may match ``globs`` at all."""
    # Patterns go through stdin (-f -), never argv: thousands of long ids would
    # exceed the argument limit, and an id is data, not an option. A pattern
    # holds no newline, so an id with one is searched as its lines: that finds
    # a superset of the files, which the caller parses and compares exactly.
    lines = {line for needle in needles for line in needle.splitlines() if line.strip()}
    if not lines or (holds is not None and not holds()):
        return None
    where = ["--untracked"] if head is None else [resolve(head)]
    case = ["-i"] if ignore_case else []
    prefix = "" if head is None else f"{where[0]}:"
    groups = (
        _trie_patterns(sorted(lines), words)
        if len(lines) >= _TRIE_FROM
        and sum(map(len, lines)) <= _TRIE_INPUT
        and not any("\0" in line for line in lines)
        else []
    )
    if not groups or len(groups) > _TRIE_GITS:
        flags = ["-F", *case, *(["-w"] if words else [])]
        return PendingSearch(_grep(git, flags, where, globs, sorted(lines)), prefix)
    flags = ["-E", *case]
    first, *rest = [functools.partial(_grep, git, flags, where, globs, group) for group in groups]
    return PendingSearch(first(), prefix, rest)


def _grep(
    git: Git,
    flags: Sequence[str],
    where: Sequence[str],
    globs: Sequence[str],
    patterns: Sequence[str],
) -> subprocess.Popen[bytes]:
    """One ``git grep -l`` started, its ``patterns`` written to its stdin."""
    args = ["grep", *flags, "-l", "-z", "--full-name", "-f", "-", *where, "--"]
    proc = git.start(*args, *pathspecs(globs))
    try:
        # git reads all of its input before it answers, so this write ends.
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # git failed early: see stderr
            proc.stdin.write("\n".join(patterns).encode("utf-8") + b"\n")
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        proc.stdin = None  # communicate() must not touch it again
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


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
