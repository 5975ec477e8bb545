"""Where contracts come from: the pull request's base and head, read through git.

The gate must cost in proportion to the contracts a pull request *changes*, not
to the size of the repository, so this module asks git one question per side:
``git diff --raw`` lists what changed with both blob ids (no per-file lookups),
``git ls-files --others`` adds untracked files when the head is the working
tree, and every blob is read through one long-lived ``git cat-file --batch``.

Safety rules, because refs, globs and paths come from users and pull requests:
git runs without a shell from argument lists, never prompts and never pages;
refs are verified before use and may not look like options; globs and paths may
not leave the repository, and a symlink may not lead out of it (nor into
``.git``, where CI keeps credentials).

Every failure leaves as ``GitError`` or ``UsageError`` with one clear line.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import stat
import subprocess
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from gate.model import GitError, UsageError

__all__ = ["SODA_GLOBS", "FileChange", "Repo", "open_repo"]

#: Where Soda keeps contracts; the gate's full default list is ``gate.formats.SODA_GLOBS``.
SODA_GLOBS: tuple[str, ...] = ("soda/contracts/**/*.yaml", "soda/contracts/**/*.yml")

SHALLOW_REMEDY = (
    "fetch the full history: use actions/checkout with `fetch-depth: 0`, "
    "or run `git fetch --unshallow`"
)

_GIT = "git"
_HEX = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_ABSENT_MODES = frozenset({"000000", "160000"})  # nothing there, or a submodule
_SYMLINK_MODE = "120000"
# Read requests in flight at once: small enough (< 5 KiB) that writing them never
# blocks on a full pipe while git waits for us to read its answers.
_BATCH = 64


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


def first_line(stderr: bytes | str) -> str:
    """git's first meaningful stderr line, without its ``fatal:``/``error:`` prefix."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("hint:"):
            return line.removeprefix("fatal: ").removeprefix("error: ")
    return "no message from git"


@dataclass(frozen=True)
class FileChange:
    """One contract file that differs between base and head.

    ``new_blob`` is ``None`` when the content must be read from the working tree
    (``Repo.read_worktree(new_path)``), which is always the case when the head
    is the working tree; otherwise both blobs go to ``read_blobs``.
    """

    status: str  # "A", "M", "D" or "R"
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None


def open_repo(path: str | os.PathLike[str] = ".") -> Repo:
    """Open the repository containing ``path``, asking git itself where its top is.

    Asking git (rather than walking up for ``.git``) honours worktrees,
    ``GIT_DIR`` and ``safe.directory`` exactly as the later commands will.
    """
    where = Path(path)
    if not where.is_dir():
        raise GitError(f"not a git repository: {os.path.abspath(where)} (no such directory)")
    try:
        proc = subprocess.run(
            [_GIT, "rev-parse", "--show-toplevel"],
            cwd=where,
            env=git_env(),
            capture_output=True,
            check=False,
        )
    except OSError as err:
        raise GitError(f"cannot run git: {err}") from err
    if proc.returncode != 0:
        message = first_line(proc.stderr)
        if "dubious ownership" in message:
            owned = re.search(r"'(.+)'", message)
            top = owned.group(1) if owned else where.resolve()
            raise GitError(
                f"{message}; if you trust it, run `git config --global --add safe.directory {top}`"
            )
        if "work tree" in message:
            raise GitError(f"not a git working tree (bare repository?): {where}")
        raise GitError(f"not a git repository: {os.path.abspath(where)}")
    top = os.fsdecode(proc.stdout.rstrip(b"\n"))
    return Repo(Path(top))


class TooLarge(UsageError):
    """A working-tree file over the size its reader accepts (not read)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path}: {size} bytes is over the {limit}-byte limit")
        self.size = size
        self.limit = limit


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
        return sorted(p.removeprefix(self._prefix) for p in _paths(out))

    def cancel(self) -> None:
        """Stop the search if it still runs (a no-op once ``result()`` returned)."""
        if self._proc.returncode is None:
            self._proc.kill()
            self._proc.communicate()


class Repo:
    """A git working tree, read through a few git commands and one blob reader."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real_root = root.resolve()
        self._dirs: dict[str, str] = {}
        self._empty_tree: str | None = None
        self._reader: _BlobReader | None = None
        # Full shas known to name commits: an object id never changes what it names,
        # so a run asks git once per commit instead of at every read (~10 calls).
        self._commits: set[str] = set()

    def __enter__(self) -> Repo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the blob reader; a later read starts a new one."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # refs

    def resolve(self, ref: str) -> str:
        """Verify ``ref`` names a commit and return its full sha.

        Refs come from users and CI variables, so one that git could read as an
        option is refused before git sees it. A branch name is asked about
        every time (it may move); a full sha once.
        """
        _check_ref(ref)
        if ref in self._commits:
            return ref
        proc = self._run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
        )
        sha = proc.stdout.strip()
        if proc.returncode == 0 and _HEX.match(sha):
            commit = sha.decode("ascii")
            self._commits.add(commit)
            return commit
        # Not ``rev-parse --verify``: a bare full sha "verifies" even when absent.
        exists = self._run("cat-file", "-e", ref)  # safe: ``ref`` cannot start with "-"
        if exists.returncode == 0:
            raise GitError(f"ref '{ref}' does not name a commit")
        if self.is_shallow():
            raise GitError(
                f"unknown ref '{ref}': this clone is shallow, so it may not have been "
                f"fetched; {SHALLOW_REMEDY}"
            )
        raise GitError(f"unknown ref '{ref}'")

    def merge_base(self, base: str, head: str = "HEAD") -> str:
        """The commit the head branched from.

        Comparing to it, not to the base tip, keeps work merged into the base
        after branching from showing up as "removed" by the pull request.
        """
        base_sha, head_sha = self.resolve(base), self.resolve(head)
        proc = self._run("merge-base", base_sha, head_sha)
        sha = proc.stdout.strip()
        if proc.returncode == 0 and _HEX.match(sha):
            commit = sha.decode("ascii")
            self._commits.add(commit)  # git just named it: a commit
            return commit
        if proc.returncode == 1 and not proc.stderr.strip():
            if self.is_shallow():
                raise GitError(
                    f"no merge base between '{base}' and '{head}': this clone is shallow "
                    f"and its history stops before they meet; {SHALLOW_REMEDY}"
                )
            raise GitError(
                f"no merge base between '{base}' and '{head}': their histories are "
                f"unrelated; compare against the tip of '{base}' instead (--no-merge-base)"
            )
        raise GitError(f"git merge-base failed: {first_line(proc.stderr)}")

    def base_commit(self, base: str, head: str | None = None, *, tip: bool = False) -> str:
        """The base side's commit: the merge base by default, the base tip on request."""
        if tip:
            return self.resolve(base)
        return self.merge_base(base, "HEAD" if head is None else head)

    def is_shallow(self) -> bool:
        """Whether history was cut by ``--depth``: the usual cause of missing commits in CI."""
        return self._out("rev-parse", "--is-shallow-repository").strip() == b"true"

    def remotes(self) -> list[str]:
        """The configured remotes (``origin``...), to tell an unfetched branch from a typo."""
        proc = self._run("remote")
        return proc.stdout.decode("utf-8", "replace").split() if proc.returncode == 0 else []

    def remote_default(self, remote: str) -> str | None:
        """``origin/master`` when ``origin/HEAD`` points there (set by ``git clone``)."""
        proc = self._run("symbolic-ref", "--quiet", "--short", "--", f"refs/remotes/{remote}/HEAD")
        name = proc.stdout.decode("utf-8", "replace").strip()
        return name if proc.returncode == 0 and name else None

    def branches(self) -> list[str]:
        """Local branch names, to suggest a base when the default one does not exist."""
        proc = self._run("for-each-ref", "--format=%(refname:short)", "refs/heads/")
        return proc.stdout.decode("utf-8", "replace").split() if proc.returncode == 0 else []

    # listing

    def changed(
        self, base: str, head: str | None, globs: Sequence[str], *, lenient_links: bool = False
    ) -> list[FileChange]:
        """Contract files that differ between ``base`` and ``head``.

        ``head=None`` means the working tree: uncommitted edits, deletions and
        untracked (not ignored) files all count, because that is what a
        developer running the gate locally is about to push.

        A symlink that leads outside the repository (or nowhere) is refused,
        unless ``lenient_links``: a search for files that *may* matter (every
        changed ``*.yml`` of a dbt project) treats such a side as absent, so an
        unrelated link never fails a run while a properties file replaced by
        one still counts as deleted.
        """
        specs = _pathspecs(globs)
        revs = [self.resolve(base)]
        if head is not None:
            revs.append(self.resolve(head))
        out = self._out(*_DIFF, "-M", *revs, "--", *specs)
        changes = [c for c in (_to_change(r, worktree=head is None) for r in _parse_raw(out)) if c]
        if head is None:
            changes = _add_untracked(changes, self._untracked(specs))
        if lenient_links:
            changes = self._drop_broken_links(changes, revs[0], None if head is None else revs[1])
        changes = self._follow_symlinks(changes, revs[0], None if head is None else revs[1])
        return sorted(changes, key=lambda c: (c.new_path or c.old_path or "", c.status))

    def list_files(self, head: str | None, globs: Sequence[str]) -> dict[str, str | None]:
        """Every contract file at one side, for checks that look at all of them."""
        specs = _pathspecs(globs)
        if head is None:
            present = _paths(self._out("ls-files", "-z", "--full-name", "--cached", "--", *specs))
            present |= self._untracked(specs)
            present -= _paths(self._out("ls-files", "-z", "--full-name", "--deleted", "--", *specs))
            return dict.fromkeys(sorted(present))
        commit = self.resolve(head)
        out = self._out(*_DIFF, "--no-renames", self._empty_tree_sha(), commit, "--", *specs)
        raws = [r for r in _parse_raw(out) if r.new_mode not in _ABSENT_MODES]
        links = [r.old_path for r in raws if r.new_mode == _SYMLINK_MODE]
        targets = self._symlink_targets(commit, links) if links else {}
        return {r.old_path: targets.get(r.old_path, r.new_sha) for r in raws}

    def files_containing(
        self,
        head: str | None,
        globs: Sequence[str],
        needles: Iterable[str],
        ignore_case: bool = False,
        words: bool = False,
        meanwhile: Callable[[], object] | None = None,
    ) -> list[str]:
        """Files at one side matching ``globs`` whose text contains any of ``needles``.

        One ``git grep -F`` finds the few files worth parsing when the gate must
        look beyond the changed ones (is a new dataset id declared elsewhere
        already? which SQL models mention a changed table?), at the cost of a text
        search instead of a parse of every file. ``meanwhile`` runs here while git
        searches (the search uses another core; the caller's next step need not wait).
        """
        search = self.start_files_containing(head, globs, needles, ignore_case, words)
        if search is None:
            return []
        try:
            if meanwhile is not None:
                meanwhile()
            return search.result()
        finally:
            search.cancel()

    def start_files_containing(
        self,
        head: str | None,
        globs: Sequence[str],
        needles: Iterable[str],
        ignore_case: bool = False,
        words: bool = False,
    ) -> PendingSearch | None:
        """Start ``files_containing``'s search and return at once (``None``: nothing to find).

        For a search whose answer may turn out not to be needed: the caller
        works meanwhile, then takes ``result()`` or ``cancel()``s it.
        """
        # Patterns go through stdin (-f -), never argv: thousands of long ids would
        # exceed the argument limit, and an id is data, not an option. A pattern
        # holds no newline, so an id with one is searched as its lines: that finds
        # a superset of the files, which the caller parses and compares exactly.
        lines = {line for needle in needles for line in needle.splitlines() if line.strip()}
        if not lines:
            return None
        where = ["--untracked"] if head is None else [self.resolve(head)]
        flags = (["-i"] if ignore_case else []) + (["-w"] if words else [])
        args = ["grep", "-F", *flags, "-l", "-z", "--full-name", "-f", "-", *where, "--"]
        try:
            proc = subprocess.Popen(
                [_GIT, *args, *_pathspecs(globs)],
                cwd=self.root,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as err:
            raise GitError(f"cannot run git: {err}") from err
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

    # reading

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many blobs, through one ``git cat-file --batch`` for the whole run."""
        wanted = list(dict.fromkeys(shas))
        for sha in wanted:
            if not isinstance(sha, str) or not _HEX.match(sha.encode("ascii", "replace")):
                raise UsageError(f"not a full blob sha: {sha!r}")
        if not wanted:
            return {}
        if self._reader is None:
            self._reader = _BlobReader(self.root)
        try:
            return self._reader.read(wanted)
        except BaseException:
            self.close()  # answers may be left unread; start afresh next time
            raise

    def read_worktree(self, path: str, max_bytes: int | None = None) -> bytes:
        """A file from the working tree, refused if it (or a symlink) leads outside.

        ``max_bytes``: a bigger file raises ``TooLarge`` before it is read.
        """
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

    def read_files(self, head: str, paths: Sequence[str]) -> dict[str, bytes]:
        """Several regular files at ``head`` (one ``--batch-check``, one batched read).

        Paths that are missing, not blobs, or symlinks leading outside are left out.
        """
        found = self._lookup(self.resolve(head), list(paths))
        shas = {path: sha for path, (kind, sha) in found.items() if kind == "blob" and sha}
        blobs = self.read_blobs(sorted(set(shas.values())))
        return {path: blobs[sha] for path, sha in shas.items() if sha in blobs}

    def read_files_within(
        self, head: str, paths: Sequence[str], max_bytes: int
    ) -> tuple[dict[str, bytes], dict[str, int]]:
        """``read_files``, reading no blob over ``max_bytes``: (contents, sizes of
        the regular files left unread). The size comes from ``--batch-check``, so
        a pull request's 2 GB file is never loaded to find out it is too big."""
        found = self._lookup_sized(self.resolve(head), list(paths))
        shas: dict[str, str] = {}
        over: dict[str, int] = {}
        for path, (kind, sha, size) in found.items():
            if kind != "blob" or not sha:
                continue
            if size > max_bytes:
                over[path] = size
            else:
                shas[path] = sha
        blobs = self.read_blobs(sorted(set(shas.values())))
        return {path: blobs[sha] for path, sha in shas.items() if sha in blobs}, over

    def read_file(self, head: str | None, path: str) -> bytes | None:
        """One file (a config file) at ``head`` or in the working tree; ``None`` if absent."""
        return self.read_optional(head, [path])[path]

    def read_optional(self, head: str | None, paths: Sequence[str]) -> dict[str, bytes | None]:
        """Several optional files (config files) as ``read_file`` reads one, with one lookup.

        Keys are the paths as given; ``None`` where a file is absent.
        """
        rels: dict[str, str] = {}
        for path in paths:
            rel = path
            if os.path.isabs(path):  # e.g. --config given as an absolute path in the repository
                rel = self.safe_path(path).relative_to(self._real_root).as_posix()
            rels[path] = _relpath(rel)
        if head is None:
            return {
                path: self.read_worktree(rel) if self.safe_path(rel).is_file() else None
                for path, rel in rels.items()
            }
        found = self._lookup(self.resolve(head), list(dict.fromkeys(rels.values())))
        for rel, (kind, _sha) in found.items():
            if kind == "symlink":
                raise UsageError(f"{rel}: refusing a symlink that leads outside the repository")
        shas = {rel: sha for rel, (kind, sha) in found.items() if kind == "blob" and sha}
        blobs = self.read_blobs(sorted(set(shas.values())))
        return {path: blobs[shas[rel]] if rel in shas else None for path, rel in rels.items()}

    def existing(self, head: str | None, paths: Sequence[str]) -> dict[str, str | None]:
        """Which of ``paths`` are files at ``head``: path -> blob id (``None`` in the
        working tree, read it with ``read_worktree``). One batch lookup, so asking
        about every folder above the changed files costs one git process."""
        rels = list(dict.fromkeys(_relpath(p) for p in paths))
        if not rels:
            return {}
        if head is None:
            return {p: None for p in rels if _is_file(self.safe_path(p))}
        commit = head if _HEX.match(head.encode("ascii", "replace")) else self.resolve(head)
        found: dict[str, str | None] = {}
        for path, (kind, sha) in self._lookup(commit, rels).items():
            if kind == "symlink":
                raise UsageError(f"{path}: refusing a symlink that leads outside the repository")
            if kind == "blob" and sha is not None:
                found[path] = sha
        return found

    def safe_path(self, path: str | os.PathLike[str]) -> Path:
        """Resolve a user-given path (relative to the repository root, or absolute).

        Refused when it, or a symlink on the way, leads outside the repository or
        into ``.git``: a pull request could otherwise make the gate print files
        from the CI machine (or its credentials) into a public report.
        """
        raw = os.fspath(path)
        if not raw or "\0" in raw:
            raise UsageError(f"invalid path: {raw!r}")
        real = self._realpath(os.path.join(self._real_root, raw))  # an absolute raw wins
        root = str(self._real_root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if real != root and not real.startswith(prefix):
            raise UsageError(f"{raw}: refusing a path outside the repository ({self.root})")
        if any(part.casefold() == ".git" for part in real[len(prefix) :].split(os.sep)):
            raise UsageError(f"{raw}: refusing a path inside .git")
        return Path(real)

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

    # internals

    def _run(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                [_GIT, *args],
                cwd=self.root,
                env=git_env(),
                input=stdin,
                capture_output=True,
                check=False,
            )
        except OSError as err:
            raise GitError(f"cannot run git: {err}") from err

    def _out(self, *args: str, stdin: bytes | None = None) -> bytes:
        proc = self._run(*args, stdin=stdin)
        if proc.returncode != 0:
            raise GitError(f"git {args[0]} failed: {first_line(proc.stderr)}")
        return proc.stdout

    def _untracked(self, specs: Sequence[str]) -> set[str]:
        out = self._out(
            "ls-files", "-z", "--full-name", "--others", "--exclude-standard", "--", *specs
        )
        return _paths(out)

    def _empty_tree_sha(self) -> str:
        """The empty tree's id, which depends on the repository's hash (sha1 or sha256)."""
        if self._empty_tree is None:
            out = self._out("hash-object", "-t", "tree", "--stdin", stdin=b"")
            self._empty_tree = out.strip().decode("ascii")
        return self._empty_tree

    def _lookup(self, commit: str, paths: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """What each path is at ``commit``, following symlinks inside the tree.

        Returns ``(kind, sha)``; kind is the object type, ``missing``, or what
        ``cat-file --follow-symlinks`` found instead (``symlink`` = leads outside
        the repository, ``dangling``, ``loop``, ``notdir``).
        """
        for path in paths:
            if "\n" in path:
                raise UsageError(f"cannot look up a path containing a newline: {path!r}")
        return {
            path: (kind, sha)
            for path, (kind, sha, _size) in self._lookup_sized(commit, paths).items()
        }

    def _lookup_sized(
        self, commit: str, paths: Sequence[str]
    ) -> dict[str, tuple[str, str | None, int]]:
        """``_lookup`` with each object's size in bytes (0 when it is no object)."""
        for path in paths:
            if "\n" in path:
                raise UsageError(f"cannot look up a path containing a newline: {path!r}")
        request = b"".join(os.fsencode(f"{commit}:{path}\n") for path in paths)
        out = self._out("cat-file", "--batch-check", "--follow-symlinks", stdin=request)
        return dict(zip(paths, _parse_follow(out, len(paths)), strict=True))

    def _symlink_targets(self, commit: str, paths: Sequence[str]) -> dict[str, str]:
        """Blob ids of what committed symlinked contracts point at (not the link text)."""
        found: dict[str, str] = {}
        for path, (kind, sha) in self._lookup(commit, paths).items():
            if kind != "blob" or sha is None:
                reason = "leads outside the repository" if kind == "symlink" else f"is {kind}"
                raise UsageError(f"{path}: symlink at {commit[:12]} {reason}")
            found[path] = sha
        return found

    def _drop_broken_links(
        self, changes: list[FileChange], base: str, head: str | None
    ) -> list[FileChange]:
        """``changes`` with each side that is no readable file inside the repository
        (a symlink out of it, a dangling one) made absent; a change left with no
        side is dropped."""
        old_links = [c.old_path for c in changes if c.old_blob == _LINK and c.old_path]
        new_links = [c.new_path for c in changes if c.new_blob == _LINK and c.new_path]
        old_bad: set[str] = set()
        if old_links:
            found = self._lookup(base, old_links)
            old_bad = {p for p, (kind, _s) in found.items() if kind != "blob"}
        new_bad: set[str] = set()
        if head is not None and new_links:
            found = self._lookup(head, new_links)
            new_bad = {p for p, (kind, _s) in found.items() if kind != "blob"}
        else:
            for change in changes:
                if change.new_path and not self._readable_in_worktree(change.new_path):
                    new_bad.add(change.new_path)
        if not old_bad and not new_bad:
            return changes
        out: list[FileChange] = []
        for change in changes:
            old_ok = change.old_path is not None and change.old_path not in old_bad
            new_ok = change.new_path is not None and change.new_path not in new_bad
            if old_ok and new_ok:
                out.append(change)
            elif old_ok:
                out.append(FileChange("D", change.old_path, None, change.old_blob, None))
            elif new_ok:
                out.append(FileChange("A", None, change.new_path, None, change.new_blob))
        return out

    def _readable_in_worktree(self, path: str) -> bool:
        """Whether ``path`` is a regular file inside the repository (links followed)."""
        if not os.path.islink(os.path.join(self._real_root, path)):
            return True  # the common case: no symlink at the path itself
        try:
            return self.safe_path(path).is_file()
        except UsageError:
            return False

    def _follow_symlinks(
        self, changes: list[FileChange], base: str, head: str | None
    ) -> list[FileChange]:
        old_links = [c.old_path for c in changes if c.old_blob == _LINK and c.old_path]
        new_links = [c.new_path for c in changes if c.new_blob == _LINK and c.new_path]
        if not old_links and not new_links:
            return changes
        old = self._symlink_targets(base, old_links) if old_links else {}
        new = self._symlink_targets(head, new_links) if new_links and head else {}
        return [
            replace(
                c,
                old_blob=old.get(c.old_path, c.old_blob) if c.old_path else c.old_blob,
                new_blob=new.get(c.new_path, c.new_blob) if c.new_path else c.new_blob,
            )
            for c in changes
        ]


class _BlobReader:
    """One ``git cat-file --batch`` kept open for the whole run, with requests pipelined.

    GitPython's ``odb.stream`` also keeps one process, but waits for each answer
    before asking the next question; pipelining small batches reads 10,000
    blobs about ten times faster.
    """

    def __init__(self, root: Path) -> None:
        try:
            self._proc = subprocess.Popen(
                [_GIT, "cat-file", "--batch"],
                cwd=root,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as err:
            raise GitError(f"cannot run git: {err}") from err
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


# git output parsing and argument checks

_DIFF = (
    "diff",
    "--raw",
    "-z",
    "--no-abbrev",  # porcelain diff abbreviates shas even in raw output
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--ignore-submodules",
)
_LINK = "<symlink>"  # placeholder blob until the link is followed inside its tree


@dataclass(frozen=True)
class _Raw:
    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str
    status: str
    old_path: str
    new_path: str


def _parse_raw(out: bytes) -> Iterator[_Raw]:
    """Parse ``git diff --raw -z``: a meta field, then one path (two for R and C)."""
    fields = out.split(b"\0")
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode("ascii").lstrip(":").split()
        if len(meta) != 5:
            raise GitError(f"unexpected git diff output: {fields[i][:80]!r}")
        old_mode, new_mode, old_sha, new_sha, status = meta
        old_path = os.fsdecode(fields[i + 1])
        i += 2
        new_path = old_path
        if status[0] in "RC":
            new_path = os.fsdecode(fields[i])
            i += 1
        yield _Raw(old_mode, new_mode, old_sha, new_sha, status[0], old_path, new_path)


def _to_change(raw: _Raw, *, worktree: bool) -> FileChange | None:
    """Map git's statuses onto A/M/D/R; submodules count as absent, copies as adds."""
    has_old = raw.status != "C" and raw.old_mode not in _ABSENT_MODES
    has_new = raw.new_mode not in _ABSENT_MODES
    if not has_old and not has_new:
        return None
    if has_old and has_new:
        status = "R" if raw.old_path != raw.new_path else "M"
    else:
        status = "D" if has_old else "A"
    old_blob = new_blob = None
    if has_old:
        old_blob = _LINK if raw.old_mode == _SYMLINK_MODE else raw.old_sha
    if has_new and not worktree:
        new_blob = _LINK if raw.new_mode == _SYMLINK_MODE else raw.new_sha
    # In worktree mode the new side is always read from disk: git prints zeros for
    # most edited files, but when rename detection has hashed a file it prints that
    # hash, which names no object in the repository.
    return FileChange(
        status=status,
        old_path=raw.old_path if has_old else None,
        new_path=raw.new_path if has_new else None,
        old_blob=old_blob,
        new_blob=new_blob,
    )


def _add_untracked(changes: list[FileChange], untracked: set[str]) -> list[FileChange]:
    """Untracked files are additions, except where git sees the same path as deleted
    (``git rm --cached``): there the file is still on disk, so it was modified."""
    deleted = {c.old_path: c for c in changes if c.status == "D"}
    out = [c for c in changes if not (c.status == "D" and c.old_path in untracked)]
    for path in sorted(untracked):
        if path in deleted:
            out.append(FileChange("M", path, path, deleted[path].old_blob, None))
        else:
            out.append(FileChange("A", None, path, None, None))
    return out


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
        if len(words) == 2 and words[0] in (b"symlink", b"dangling", b"loop", b"notdir"):
            pos += int(words[1]) + 1
            yield words[0].decode("ascii"), None, 0
        elif len(words) == 3 and _HEX.match(words[0]):
            yield words[1].decode("ascii"), words[0].decode("ascii"), int(words[2])
        else:
            yield "missing", None, 0


def _paths(out: bytes) -> set[str]:
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def _check_ref(ref: str) -> None:
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError(f"invalid ref {ref!r}: it is empty")
    if ref.startswith("-"):
        raise UsageError(
            f"refusing ref '{ref}': it starts with '-', so git would read it as an option"
        )
    if any(ord(ch) < 32 or ch == "\x7f" for ch in ref):
        raise UsageError(f"invalid ref {ref!r}: it contains control characters")


def _relpath(path: str) -> str:
    """A repository-relative posix path that cannot climb out of the repository."""
    if not path or "\0" in path:
        raise UsageError(f"invalid path: {path!r}")
    if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", path):
        raise UsageError(f"{path}: expected a path relative to the repository root")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise UsageError(f"invalid path: {path!r}")
    if ".." in parts:
        raise UsageError(f"{path}: refusing a path that leaves the repository")
    return posixpath.join(*parts)


def _pathspecs(globs: Sequence[str] | str) -> list[str]:
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
        if pattern.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", pattern):
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
        specs.append(f":({magic}){'/'.join(parts)}")
    if not any(not s.startswith(":(top,glob,exclude)") for s in specs):
        raise UsageError("no contract globs given (at least one pattern that is not an exclusion)")
    return specs


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; a name the OS cannot even look up (longer
    than NAME_MAX, as a 600-character dbt model name makes) is no file."""
    try:
        return path.is_file()
    except OSError:
        return False
