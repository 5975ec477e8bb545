"""``Repo``: the one object the rest of the gate holds to read a repository.

Every other module asks a ``Repo`` (never git) what changed, what a file says at
a side, and where a name appears; it is opened once per run by ``open_repo``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from gate.git import early, search
from gate.git.blobs import Blobs
from gate.git.changes import Changes, FileChange
from gate.git.paths import Worktree, is_file, relpath
from gate.git.process import Git, first_line, run
from gate.git.refs import HEX, Refs
from gate.git.search import PendingSearch
from gate.model import GitError, UsageError

__all__ = ["Repo", "open_repo"]


def open_repo(path: str | os.PathLike[str] = ".") -> Repo:
    """Open the repository containing ``path``, asking git itself where its top is.

    Asking git (rather than walking up for ``.git``) honours worktrees,
    ``GIT_DIR`` and ``safe.directory`` exactly as the later commands will.
    """
    where = Path(path)
    if not where.is_dir():
        raise GitError(f"not a git repository: {os.path.abspath(where)} (no such directory)")
    known = early.take_top(os.fspath(where))  # asked by the command already
    if known is not None:
        return Repo(Path(known))
    proc = run(where, ["rev-parse", "--show-toplevel"])
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


class Repo:
    """A git working tree, read through a few git commands and one blob reader.

    Why a facade: callers (engine, dbt, consumers, smoke, the Action's debug
    trace, which wraps these methods by name) hold one object per run, while the
    work lives in modules with one job each: ``refs`` (validate, resolve,
    merge base), ``changes`` (``git diff --raw`` listings), ``blobs`` (batched
    reads), ``search`` (``git grep``) and ``paths`` (file access stays inside
    the repository). Reads that combine them (a path at a side) live here,
    and go through ``read_blobs``/``read_worktree`` so a trace sees every read.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._git = Git(root)
        self._refs = Refs(self._git)
        self._blobs = Blobs(self._git)
        self._worktree = Worktree(root)
        self._changes = Changes(self._git, self._refs, self._blobs, self._worktree)

    def __enter__(self) -> Repo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the blob reader; a later read starts a new one."""
        self._blobs.close()

    # refs

    def resolve(self, ref: str) -> str:
        """Verify ``ref`` names a commit (refusing one that looks like an option) and
        return its full sha."""
        return self._refs.resolve(ref)

    def pin(self, *refs: str) -> None:
        """Fix what a run's refs name for the rest of the run, asking git once for all
        of them; never raises (a bad ref fails later, in ``resolve``, as before)."""
        self._refs.pin(*refs)

    def merge_base(self, base: str, head: str = "HEAD") -> str:
        """The commit the head branched from (what the pull request changed is measured
        from there, not from the base tip)."""
        return self._refs.merge_base(base, head)

    def base_commit(self, base: str, head: str | None = None, *, tip: bool = False) -> str:
        """The base side's commit: the merge base by default, the base tip on request."""
        return self._refs.base_commit(base, head, tip=tip)

    def is_shallow(self) -> bool:
        """Whether history was cut by ``--depth``: the usual cause of missing commits in CI."""
        return self._refs.is_shallow()

    def remotes(self) -> list[str]:
        """The configured remotes (``origin``...), to tell an unfetched branch from a typo."""
        return self._refs.remotes()

    def remote_default(self, remote: str) -> str | None:
        """``origin/master`` when ``origin/HEAD`` points there (set by ``git clone``)."""
        return self._refs.remote_default(remote)

    def branches(self) -> list[str]:
        """Local branch names, to suggest a base when the default one does not exist."""
        return self._refs.branches()

    # listing and search

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
        return self._changes.changed(base, head, globs, lenient_links=lenient_links)

    def list_files(self, head: str | None, globs: Sequence[str]) -> dict[str, str | None]:
        """Every contract file at one side, for checks that look at all of them."""
        return self._changes.list_files(head, globs)

    def has_files(self, head: str | None, globs: Sequence[str]) -> bool:
        """Whether ``list_files`` would list anything, without listing every file."""
        return self._changes.has_files(head, globs)

    def folder_links(self, head: str | None, exclusions: Sequence[str] = ()) -> list[str]:
        """Symlinks at ``head`` (``None``: the working tree) that lead to a folder, but
        for those ``exclusions`` (``!legacy/**``) match: git lists nothing below them."""
        return self._changes.folder_links(head, exclusions)

    def named(self, commit: str, names: Collection[str]) -> dict[str, str]:
        """Files at ``commit`` whose name (last path segment) is one of ``names``:
        path -> git mode; one tree walk for all of them."""
        return self._changes.named(commit, names)

    def resolved(self, commit: str, paths: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """What each of ``paths`` is at ``commit``, following symlinks inside the
        repository: (kind, object id), kind ``tree``/``blob``, or ``missing``,
        ``dangling``, ``symlink`` (leads outside), as ``cat-file --follow-symlinks``
        says. Equal answers at two commits are the same files. One batch lookup."""
        rels = [p for p in dict.fromkeys(paths) if p and "\n" not in p]
        found = self._blobs.lookup(self.resolve(commit), rels) if rels else {}
        return {p: found.get(p, ("missing", None)) for p in paths}

    def symlinks(self, commit: str) -> list[str]:
        """Every symlink at ``commit`` (files and folders), from the run's tree walk."""
        return self._changes.symlinks(commit)

    def folders_holding(self, head: str | None, name: str) -> list[str]:
        """Folders holding a file named ``name`` at ``head`` (``None``: the working
        tree), a superset: what a search for files inside such folders is scoped to."""
        return self._changes.folders_holding(head, name)

    def files_containing(
        self,
        head: str | None,
        globs: Sequence[str],
        needles: Iterable[str],
        ignore_case: bool = False,
        words: bool = False,
        meanwhile: Callable[[], object] | None = None,
    ) -> list[str]:
        """Files at one side matching ``globs`` whose text contains any of ``needles``
        (one ``git grep -F``); ``meanwhile`` runs here while git searches."""
        pending = self.start_files_containing(head, globs, needles, ignore_case, words)
        return search.collect(pending, meanwhile)

    def start_files_containing(
        self,
        head: str | None,
        globs: Sequence[str],
        needles: Iterable[str],
        ignore_case: bool = False,
        words: bool = False,
    ) -> PendingSearch | None:
        """Start ``files_containing``'s search and return at once (``None``: nothing to
        find); the caller works meanwhile, then takes ``result()`` or ``cancel()``s it.
        No search starts when the run's tree walk shows no file the globs can match."""
        return search.start(
            self._git,
            self.resolve,
            head,
            globs,
            needles,
            ignore_case,
            words,
            holds=lambda: self._changes.may_hold(head, globs),
        )

    # reading

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many blobs, through one ``git cat-file --batch`` for the whole run."""
        return self._blobs.read(shas)

    def read_worktree(self, path: str, max_bytes: int | None = None) -> bytes:
        """A file from the working tree, refused if it (or a symlink) leads outside.

        ``max_bytes``: a bigger file raises ``TooLarge`` before it is read.
        """
        return self._worktree.read(path, max_bytes)

    def safe_path(self, path: str | os.PathLike[str]) -> Path:
        """Resolve a user-given path (relative to the repository root, or absolute).

        Refused when it, or a symlink on the way, leads outside the repository or
        into ``.git``: a pull request could otherwise make the gate print files
        from the CI machine (or its credentials) into a public report.
        """
        return self._worktree.safe_path(path)

    def read_files(self, head: str, paths: Sequence[str]) -> dict[str, bytes]:
        """Several regular files at ``head`` (one ``--batch-check``, one batched read).

        Paths that are missing, not blobs, or symlinks leading outside are left out.
        """
        found = self._blobs.lookup(self.resolve(head), list(paths))
        shas = {path: sha for path, (kind, sha) in found.items() if kind == "blob" and sha}
        blobs = self.read_blobs(sorted(set(shas.values())))
        return {path: blobs[sha] for path, sha in shas.items() if sha in blobs}

    def read_files_within(
        self, head: str, paths: Sequence[str], max_bytes: int
    ) -> tuple[dict[str, bytes], dict[str, int]]:
        """``read_files``, reading no blob over ``max_bytes``: (contents, sizes of
        the regular files left unread). The size comes from ``--batch-check``, so
        a pull request's 2 GB file is never loaded to find out it is too big."""
        found = self._blobs.lookup_sized(self.resolve(head), list(paths))
        shas: dict[str, str] = {}
        over: dict[str, int] = {}
        for path, (kind, sha, size) in found.items():
            if kind == "blob" and sha:
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
        rels = {path: self._worktree.relative(path) for path in paths}
        if head is None:
            return {
                path: self.read_worktree(rel) if self.safe_path(rel).is_file() else None
                for path, rel in rels.items()
            }
        found = self._lookup_inside(self.resolve(head), list(dict.fromkeys(rels.values())))
        shas = {rel: sha for rel, (kind, sha) in found.items() if kind == "blob" and sha}
        blobs = self.read_blobs(sorted(set(shas.values())))
        return {path: blobs[shas[rel]] if rel in shas else None for path, rel in rels.items()}

    def existing(self, head: str | None, paths: Sequence[str]) -> dict[str, str | None]:
        """Which of ``paths`` are files at ``head``: path -> blob id (``None`` in the
        working tree, read it with ``read_worktree``). One batch lookup, so asking
        about every folder above the changed files costs one git process."""
        rels = list(dict.fromkeys(relpath(p) for p in paths))
        if not rels:
            return {}
        if head is None:
            return {p: None for p in rels if is_file(self.safe_path(p))}
        commit = head if HEX.match(head.encode("ascii", "replace")) else self.resolve(head)
        found = self._lookup_inside(commit, rels)
        return {path: sha for path, (kind, sha) in found.items() if kind == "blob" and sha}

    def _lookup_inside(self, commit: str, paths: list[str]) -> dict[str, tuple[str, str | None]]:
        """``Blobs.lookup``, refusing a path whose symlink leads outside the repository."""
        found = self._blobs.lookup(commit, paths)
        for path, (kind, _sha) in found.items():
            if kind == "symlink":
                raise UsageError(f"{path}: refusing a symlink that leads outside the repository")
        return found
