"""What changed between two sides: one ``git diff --raw -M`` per question.

``git diff --raw`` lists the changed paths with both blob ids, so no file needs
a lookup of its own; with the working tree as head, ``git ls-files --others``
adds untracked files and the new side is read from disk. Renames are detected
(``-M``), copies count as additions, submodules as absent. A symlinked contract
is followed inside its committed tree to the blob it points at; one that leads
outside the repository is refused (or, for a lenient search, made absent).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace

from gate.git import early
from gate.git.blobs import Blobs
from gate.git.paths import Worktree, pathspecs
from gate.git.process import Git, first_line, nul_paths
from gate.git.refs import Refs
from gate.model import GitError, UsageError

__all__ = ["Changes", "FileChange"]

_ABSENT_MODES = frozenset({"000000", "160000"})  # nothing there, or a submodule
_SYMLINK_MODE = "120000"
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
_LINK_ENTRY = b"120000 blob "  # how ``ls-tree`` starts a symlink's entry
_LINK = "<symlink>"  # placeholder blob until the link is followed inside its tree


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


class Changes:
    """Listings of one repository's files: what changed, and what is there at one side.

    Why one class of ~240 lines: every listing shares the refs, the blob reader,
    the working tree and the run's caches (the untracked files, the tree walks
    that find symlinked contracts); split apart, each piece would take all of
    them as arguments.
    """

    def __init__(self, git: Git, refs: Refs, blobs: Blobs, worktree: Worktree) -> None:
        self._git = git
        self._refs = refs
        self._blobs = blobs
        self._worktree = worktree
        self._clean_head: str | None = None
        self._clean_checked = False
        self._all_untracked: list[str] | None = None  # casefolded, for ``_untracked``
        self._trees: dict[str, bytes] = {}  # commit -> its ``ls-tree -r`` output
        self._named: dict[tuple[str, bytes], dict[bytes, str]] = {}  # (commit, name) -> found
        self._deltas: dict[tuple[str, str], list[tuple[bytes, str]]] = {}  # see ``_delta``
        self._links: dict[str, bool] = {}  # commit -> whether it holds a symlink
        self._held: dict[tuple[str | None, tuple[str, ...]], bool] = {}  # see ``may_hold``

    def changed(
        self, base: str, head: str | None, globs: Sequence[str], *, lenient_links: bool = False
    ) -> list[FileChange]:
        """Files matching ``globs`` that differ between ``base`` and ``head``
        (``None``: the working tree, untracked files included); see ``Repo.changed``."""
        specs = pathspecs(globs)
        revs = [self._refs.resolve(base)]
        if head is not None:
            revs.append(self._refs.resolve(head))
        clean = self._clean_worktree_head() if head is None else None
        # A clean working tree is HEAD: the listing comes from the two commits (no
        # lstat of every tracked file per diff); the new side is still read from disk.
        out = self._git.out(*_DIFF, "-M", *revs, *([clean] if clean else []), "--", *specs)
        changes = [c for c in (_to_change(r, worktree=head is None) for r in _parse_raw(out)) if c]
        if head is None:
            changes = _add_untracked(changes, self._untracked(specs))
        new_rev = None if head is None else revs[1]
        if lenient_links:
            changes = self._drop_broken_links(changes, revs[0], new_rev)
        changes = self._follow_symlinks(changes, revs[0], new_rev)
        changes += self._retargeted(changes, revs[0], new_rev, specs, lenient_links)
        return sorted(changes, key=lambda c: (c.new_path or c.old_path or "", c.status))

    def list_files(self, head: str | None, globs: Sequence[str]) -> dict[str, str | None]:
        """Every file matching ``globs`` at one side: path -> blob id (``None`` on disk)."""
        specs = pathspecs(globs)
        out_of = self._git.out
        if head is None:
            present = self._listed("--cached", specs)
            present |= self._untracked(specs)
            present -= self._listed("--deleted", specs)
            return dict.fromkeys(sorted(present))
        commit = self._refs.resolve(head)
        out = out_of(*_DIFF, "--no-renames", _empty_tree(commit), commit, "--", *specs)
        raws = [r for r in _parse_raw(out) if r.new_mode not in _ABSENT_MODES]
        links = [r.old_path for r in raws if r.new_mode == _SYMLINK_MODE]
        targets = self._symlink_targets(commit, links) if links else {}
        return {r.old_path: targets.get(r.old_path, r.new_sha) for r in raws}

    def has_files(self, head: str | None, globs: Sequence[str]) -> bool:
        """``bool(list_files(head, globs))``, from git's first match: ``git diff
        --quiet`` against the empty tree stops at the first file it finds (a pull
        request that changes no contract asked for all 50,000 of them, ~0.1 s of
        git's CPU and more of Python's, to learn that there is one).

        A commit holding a symlink is listed whole (``list_files`` refuses a link
        that leads outside the repository). In the working tree, a file of HEAD's
        is on disk when ``diff-index`` found the tree clean; anything else (edits,
        untracked files only, a submodule named like a contract) is listed whole.
        """
        specs = pathspecs(globs)
        if head is None:
            commit = self._clean_worktree_head()
            return (commit is not None and self._any(commit, specs)) or bool(
                self.list_files(None, globs)
            )
        commit = self._refs.resolve(head)
        if self._has_symlinks(commit):
            return bool(self.list_files(commit, globs))
        return self._any(commit, specs)

    def _any(self, commit: str, specs: Sequence[str]) -> bool:
        """Whether a file at ``commit`` (a submodule is none, as in ``list_files``)
        matches ``specs``, git stopping at the first."""
        proc = self._git.run(
            "diff", "--quiet", "--no-ext-diff", "--no-textconv", "--no-relative",
            "--no-renames", "--ignore-submodules", _empty_tree(commit), commit, "--", *specs,
        )  # fmt: skip
        if proc.returncode not in (0, 1):
            raise GitError(f"git diff failed: {first_line(proc.stderr)}")
        return proc.returncode == 1

    def named(self, commit: str, names: Collection[str]) -> dict[str, str]:
        """Every file at ``commit`` whose last path segment is one of ``names``:
        path -> mode (``100644``, ``120000`` for a symlink, ``160000`` a submodule).

        One walk of the tree (``git ls-tree -r``) answers for all the names at once,
        where a listing per ``**/<name>`` glob walks it again and matches every path
        against every glob: a caller that asks where a few file names occur (the
        dialect's sources) learns from this which listings and searches can find
        nothing, and skips them. Once the run has walked one commit's tree, another
        commit is answered from it and ``git diff-tree`` between the two (which
        skips every subtree the commits share) instead of a second walk.
        """
        commit = self._refs.resolve(commit)
        wanted = {os.fsencode(name) for name in names}
        walked = next(reversed(self._trees), None) if commit not in self._trees else None
        if walked is None:
            found = self._scan(commit, wanted)
        else:
            found = self._scan(walked, wanted)
            specs = pathspecs([f"**/{os.fsdecode(name)}" for name in sorted(wanted)])
            out = self._git.out(
                "diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none",
                walked, commit, "--", *specs,
            )  # fmt: skip
            for raw in _parse_raw(out):
                path = os.fsencode(raw.old_path)
                if path.rpartition(b"/")[2] not in wanted:
                    continue  # a glob matching a folder lists the files in it
                if raw.new_mode == "000000":
                    found.pop(path, None)
                else:
                    found[path] = raw.new_mode
        return {os.fsdecode(path): found[path] for path in sorted(found)}  # the tree's order

    def _scan(self, commit: str, wanted: set[bytes]) -> dict[bytes, str]:
        """``named`` from ``commit``'s own walk: path -> mode, each name scanned once a run."""
        missing = {name for name in wanted if (commit, name) not in self._named}
        if missing:
            tree = self._tree(commit)
            for name in missing:
                self._named[commit, name] = _entries_named(tree, name)
        found: dict[bytes, str] = {}
        for name in wanted:
            found.update(self._named[commit, name])
        return found

    def folders_holding(self, head: str | None, name: str) -> list[str]:
        """The folders (``""``: the root) that hold a file named ``name`` at one side,
        sorted; ``name`` is a plain file name (no glob characters).

        A superset, for scoping a search to those folders' subtrees: at a commit,
        one ``ls-tree`` walk (any mode: a symlink counts); in the working tree, the
        tracked files (HEAD's tree when ``diff-index`` found the tree clean, else
        the index: a file deleted from disk still counts) and the untracked ones.
        """
        commit = head if head is not None else self._clean_worktree_head()
        if commit is not None:
            paths: Collection[str] = self._named_paths(self._refs.resolve(commit), name)
            if head is None:
                paths = {*paths, *self._untracked(pathspecs([f"**/{name}"]))}
        else:
            specs = pathspecs([f"**/{name}"])
            out = self._git.out("ls-files", "-z", "--full-name", "--cached", "--", *specs)
            paths = nul_paths(out) | self._untracked(specs)
        return sorted({posixpath.dirname(path) for path in paths})

    def _named_paths(self, commit: str, name: str) -> set[str]:
        """The paths at ``commit`` whose last segment is ``name``, any mode (``named``'s
        keys). Another commit than the one walked comes from that walk and
        ``_delta`` (a plain tree diff, no pathspec, no index read): at 50,000
        files ``named``'s ``diff-tree`` with a ``**/`` pathspec took 10 ms of CPU,
        most of it reading the index, which a diff of two trees never needs."""
        walked = next(reversed(self._trees), None) if commit not in self._trees else None
        if walked is None:
            return set(self.named(commit, [name]))
        wanted = os.fsencode(name)
        found = set(self._scan(walked, {wanted}))
        for path, mode in self._delta(walked, commit):
            if path.rpartition(b"/")[2] == wanted:
                if mode == "000000":
                    found.discard(path)
                else:
                    found.add(path)
        return {os.fsdecode(path) for path in found}

    def _delta(self, walked: str, commit: str) -> list[tuple[bytes, str]]:
        """Every path that differs between two commits, with its mode at ``commit``
        (``000000``: not there), from one ``git diff --raw`` without a pathspec:
        git skips every subtree the two share, so this costs what changed, where a
        ``**/`` pathspec is matched against every path of the differing trees.
        Asked once per pair a run."""
        key = (walked, commit)
        delta = self._deltas.get(key)
        if delta is None:
            out = self._git.out(
                "diff", "--raw", "-z", "--no-abbrev", "--no-color", "--no-ext-diff",
                "--no-textconv", "--no-relative", "--no-renames", "--ignore-submodules=none",
                walked, commit,
            )  # fmt: skip
            fields = out.split(b"\0")
            # --no-renames: each entry is a meta field and one path
            delta = [
                (fields[i + 1], fields[i].split(b" ", 2)[1].decode("ascii"))
                for i in range(0, len(fields) - 1, 2)
            ]
            self._deltas[key] = delta
        return delta

    def may_hold(self, head: str | None, globs: Sequence[str]) -> bool:
        """Whether any file at one side (``None``: the working tree, untracked files
        included) may match ``globs``; ``False`` only when the run's tree walk says
        none can, so a search over them (``git grep``, 18-40 ms of CPU at 50,000
        files, for a repository without one SQL file) need not start.

        Answered from what the run holds, never a walk of its own: the tree it
        walked (the base tip's, or the merge base's) and ``_delta`` to ``head``; a
        clean working tree is HEAD's commit plus its untracked files (a working
        tree with edits answers ``True``). A superset: every path with a segment
        ending as a glob must (``_literal_tails``); a glob without such an end, or
        git told to ignore case in pathspecs, answers ``True``.
        """
        key = (head, tuple(globs))
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = self._may_hold(head, globs)
        return held

    def _may_hold(self, head: str | None, globs: Sequence[str]) -> bool:
        walked = next(reversed(self._trees), None)
        specs = pathspecs(globs)
        folded, tails = _literal_tails(specs), _literal_tails(specs, fold=False)
        if walked is None or folded is None or tails is None or _icase_pathspecs():
            return True
        if head is None:
            commit = self._clean_worktree_head()
            if commit is None or any(_may_match(p, folded) for p in self._every_untracked()):
                return True
        else:
            commit = self._refs.resolve(head)
        tree = self._tree(walked)
        # One pass per tail (a literal prefix: re's fast scan, ~3 ms over 50,000 entries):
        # in ``ls-tree -z`` output a path ends at NUL, a folder's name at ``/``.
        if any(re.search(re.escape(os.fsencode(tail)) + b"[\0/]", tree) for tail in tails):
            return True
        return commit != walked and any(
            mode != "000000" and _may_match(os.fsdecode(path), tails)
            for path, mode in self._delta(walked, commit)
        )

    def _clean_worktree_head(self) -> str | None:
        """HEAD's sha when no tracked file differs from it (index or working tree), else None.

        ``git diff-index --quiet`` trusts the index's stat data: a file whose stat
        changed reads as dirty (then the working tree is compared, as before),
        never the reverse. Untracked files are listed separately either way.
        Asked once per run.
        """
        if not self._clean_checked:
            self._clean_checked = True
            try:
                head = self._refs.resolve("HEAD")
            except GitError:
                return None
            clean = early.take_clean(self._git.root, head)  # started by the command
            if clean is None:
                proc = self._git.run("diff-index", "--quiet", "--no-ext-diff", head, "--")
                clean = proc.returncode == 0
            self._clean_head = head if clean else None
        return self._clean_head

    def _untracked(self, specs: Sequence[str]) -> set[str]:
        """Untracked, not ignored files matching ``specs``.

        A run lists untracked files for several sets of globs (contracts, dbt
        project files, dbt YAML/SQL), and each listing walks the whole tree. So
        one walk without globs comes first, once per run: a listing runs only
        when some untracked path has a segment ending as one of its globs must
        (``*.yml`` -> ``.yml``, ignoring case); otherwise git could list nothing
        for it. A CI checkout or a clean tree pays one walk instead of three.
        """
        untracked = self._every_untracked()
        if not untracked:
            return set()
        tails = _literal_tails(specs)
        if tails is not None and not any(_may_match(p, tails) for p in untracked):
            return set()
        return self._listed("--others", specs)

    def _listed(self, which: str, specs: Sequence[str]) -> set[str]:
        """``git ls-files <which>`` (``--cached``, ``--deleted``, ``--others``) of the
        files ``specs`` match, the exclusions among them applied apart.

        git's index listing drops every match of a wildcard pathspec when an
        exclusion of some lengths is beside it (git 2.39: ``ls-files --
        'platform/*.yml' ':!.github'`` lists nothing, ``':!.githubxx'`` lists
        both files; reported on git's list in January 2021, "git-ls-files
        sometimes does not list files with pathspec magic :(exclude)"). A working
        tree run with an exclusion in its globs (``!legacy/**``, the default
        ``!.github/**``) then saw no contract at all: a silent pass. So the
        listing takes the inclusions, and the files the exclusions match, listed
        as inclusions of their own, are taken out: git's own matching either way.
        """
        include = [s for s in specs if not s.startswith(_EXCLUDE)]
        exclude = [":(top,glob)" + s[len(_EXCLUDE) :] for s in specs if s.startswith(_EXCLUDE)]
        flags = ("--others", "--exclude-standard") if which == "--others" else (which,)
        found = nul_paths(self._git.out("ls-files", "-z", "--full-name", *flags, "--", *include))
        if exclude and found:
            found -= nul_paths(
                self._git.out("ls-files", "-z", "--full-name", *flags, "--", *exclude)
            )
        return found

    def _every_untracked(self) -> list[str]:
        """Every untracked, not ignored path, casefolded: one walk without globs a run."""
        if self._all_untracked is None:
            out = early.take_untracked(self._git.root)  # started by the command
            if out is None:
                out = self._git.out("ls-files", "-z", "--others", "--exclude-standard")
            self._all_untracked = [p.casefold() for p in nul_paths(out)]
        return self._all_untracked

    def _tree(self, commit: str) -> bytes:
        """``git ls-tree -r`` of ``commit``: walked once a run, whoever asks."""
        out = self._trees.get(commit)
        if out is None:
            out = early.take_tree(self._git.root, commit)  # started by the command
            if out is None:
                out = self._git.out("ls-tree", "-r", "-z", "--full-tree", commit)
            self._trees[commit] = out
        return out

    def folder_links(self, head: str | None, exclusions: Sequence[str] = ()) -> list[str]:
        """Symlinks at one side that lead to a folder, sorted; ``exclusions`` (globs
        such as ``!legacy/**``) take theirs out.

        git lists such a link as one entry and never what is below it, where dbt
        walks its resource paths following links: whatever the folder holds is
        invisible to every listing here. At a commit only a tree with a link is
        asked (``_has_symlinks``), its links found in the run's tree walk, never a
        listing of every file; a link counts when ``cat-file --follow-symlinks``
        finds a tree at its end. In the working tree, the tracked and untracked
        links are looked at on disk.
        """
        if head is not None:
            commit = self._refs.resolve(head)
            if not self._has_symlinks(commit):
                return []
            found = [p for p in self._link_paths(commit) if "\n" not in p]
            kinds = self._blobs.lookup(commit, found) if found else {}
            folders = [p for p, (kind, _sha) in kinds.items() if kind == "tree"]
            return self._not_excluded(commit, folders, exclusions)
        specs = pathspecs(["**", *exclusions])
        clean = self._clean_worktree_head()
        if clean is not None:  # the tracked files are HEAD's: its links, from the walk
            links = set(self._link_paths(clean)) if self._has_symlinks(clean) else set()
        else:
            out = self._git.out("ls-files", "-z", "-s", "--full-name", "--cached")
            links = {
                os.fsdecode(entry.partition(b"\t")[2])
                for entry in out.split(b"\0")
                if entry.startswith(_SYMLINK_MODE.encode("ascii") + b" ")
            }
        root = self._worktree.root
        links = {p for p in links if os.path.isdir(root / p)}
        exclude = [":(top,glob)" + s[len(_EXCLUDE) :] for s in specs if s.startswith(_EXCLUDE)]
        if links and exclude:  # git's own matching, the exclusions listed apart (``_listed``)
            links -= nul_paths(
                self._git.out("ls-files", "-z", "--full-name", "--cached", "--", *exclude)
            )
        links |= {p for p in self._untracked(specs) if os.path.islink(root / p)}
        return sorted(p for p in links if os.path.isdir(root / p))

    def symlinks(self, commit: str) -> list[str]:
        """Every symlink at ``commit``, sorted; none asked of a tree without one."""
        resolved = self._refs.resolve(commit)
        if not self._has_symlinks(resolved):
            return []
        return self._link_paths(resolved)

    def _link_paths(self, commit: str) -> list[str]:
        """Every symlink at ``commit``: from that commit's walk, or from the walk the
        run holds and ``_delta`` to ``commit`` (as ``_find_symlinks``)."""
        walked = commit if commit in self._trees else next(reversed(self._trees), commit)
        tree = self._tree(walked)
        found: set[bytes] = set()
        at = tree.find(_LINK_ENTRY)
        while at != -1:
            if at == 0 or tree[at - 1] == 0:  # an entry's start, not a path's middle
                end = tree.find(b"\0", at)
                found.add(tree[tree.index(b"\t", at) + 1 : end])
            at = tree.find(_LINK_ENTRY, at + 1)
        if walked != commit:
            for path, mode in self._delta(walked, commit):
                if mode == _SYMLINK_MODE:
                    found.add(path)
                else:
                    found.discard(path)
        return sorted(os.fsdecode(path) for path in found)

    def _not_excluded(
        self, commit: str, paths: Sequence[str], exclusions: Sequence[str]
    ) -> list[str]:
        """``paths`` at ``commit`` that ``exclusions`` leave: git matches them."""
        if not paths or not exclusions:
            return sorted(paths)
        specs = [s for s in pathspecs(["**", *exclusions]) if s.startswith(_EXCLUDE)]
        literal = [f":(top,literal){p}" for p in paths]
        out = self._git.out(
            *_DIFF, "--no-renames", _empty_tree(commit), commit, "--", *literal, *specs
        )
        return sorted(r.old_path for r in _parse_raw(out))

    def _symlinks(self, commit: str, specs: Sequence[str]) -> list[str]:
        """The symlinks matching ``specs`` at ``commit``: the tree walk (shared with
        ``named``, ~10 ms at 5,000 files) says whether it has any; only then are
        the globs listed."""
        if not self._has_symlinks(commit):
            return []
        out = self._git.out(*_DIFF, "--no-renames", _empty_tree(commit), commit, "--", *specs)
        return [r.old_path for r in _parse_raw(out) if r.new_mode == _SYMLINK_MODE]

    def _has_symlinks(self, commit: str) -> bool:
        """Whether ``commit``'s tree holds a symlink. From that commit's own walk, or,
        when the run walked another (the base tip's, started before the imports,
        where the merge base is asked about here), from that walk and ``_delta``:
        a link there that the two commits share, or one ``_delta`` brings. A pull
        request whose base moved on paid a second ``ls-tree -r`` for this (26 ms
        of git's CPU at 50,000 files, and its 4.7 MB of output). Asked once per
        commit a run (every listing asks: 3 ms a time at 50,000 files)."""
        has = self._links.get(commit)
        if has is None:
            has = self._links[commit] = self._find_symlinks(commit)
        return has

    def _find_symlinks(self, commit: str) -> bool:
        walked = next(reversed(self._trees), None) if commit not in self._trees else None
        if walked is None:
            return _LINK_ENTRY in self._tree(commit)
        delta = self._delta(walked, commit)
        if any(mode == _SYMLINK_MODE for _path, mode in delta):
            return True
        tree = self._tree(walked)
        if _LINK_ENTRY not in tree:
            return False
        changed = {path for path, _mode in delta}
        at = tree.find(_LINK_ENTRY)
        while at != -1:
            if at == 0 or tree[at - 1] == 0:  # an entry's start, not a path's middle
                end = tree.find(b"\0", at)
                if tree[tree.index(b"\t", at) + 1 : end] not in changed:
                    return True  # a link the two commits share
            at = tree.find(_LINK_ENTRY, at + 1)
        return False

    def _retargeted(
        self,
        changes: Sequence[FileChange],
        base: str,
        head: str | None,
        specs: Sequence[str],
        lenient: bool,
    ) -> list[FileChange]:
        """Symlinked contracts whose link is unchanged but whose target is not.

        git lists a link only when its own text changes: a pull request that
        edits the file a contract links to (outside the globs) would change the
        contract unseen. Each such link is compared through its target on both
        sides; with the working tree as head it is always read again (its
        target's bytes on disk are what counts), unchanged or not.
        """
        # A link git does not list is on both sides, so the base's tree finds it
        # (the dialect's sources walked it already).
        listed = {p for c in changes for p in (c.old_path, c.new_path) if p}
        links = [p for p in self._symlinks(base, specs) if p not in listed and "\n" not in p]
        if not links:
            return []
        old = self._blobs.lookup(base, links)
        new = self._blobs.lookup(head, links) if head is not None else {}
        out: list[FileChange] = []
        for path in links:
            kind, sha = old.get(path, ("missing", None))
            old_sha = sha if kind == "blob" else None
            if head is None:
                readable = self._worktree.readable(path)
                if old_sha is None and not readable:
                    continue
                if lenient and not readable:
                    out.append(FileChange("D", path, None, old_sha, None))
                else:  # read from disk; a link leading nowhere is refused there
                    status = "M" if old_sha else "A"
                    out.append(FileChange(status, old_sha and path, path, old_sha, None))
                continue
            kind, sha = new.get(path, ("missing", None))
            if kind != "blob" or sha is None:
                if old_sha is None:
                    continue  # broken on both sides: nothing was compared before either
                if not lenient:  # as a changed link that leads nowhere
                    self._symlink_targets(head, [path])
                out.append(FileChange("D", path, None, old_sha, None))
            elif sha != old_sha:
                out.append(
                    FileChange("M" if old_sha else "A", old_sha and path, path, old_sha, sha)
                )
        return out

    def _symlink_targets(self, commit: str, paths: Sequence[str]) -> dict[str, str]:
        """Blob ids of what committed symlinked contracts point at (not the link text)."""
        found: dict[str, str] = {}
        for path, (kind, sha) in self._blobs.lookup(commit, paths).items():
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
            found = self._blobs.lookup(base, old_links)
            old_bad = {p for p, (kind, _s) in found.items() if kind != "blob"}
        new_bad: set[str] = set()
        if head is not None and new_links:
            found = self._blobs.lookup(head, new_links)
            new_bad = {p for p, (kind, _s) in found.items() if kind != "blob"}
        else:
            for change in changes:
                if change.new_path and not self._worktree.readable(change.new_path):
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


def _entries_named(tree: bytes, name: bytes) -> dict[bytes, str]:
    """The entries of ``ls-tree -r -z`` output whose last path segment is ``name``:
    path -> mode. ``bytes.find`` of ``name`` and its NUL, then a look at the hit's
    entry only: at 50,000 entries, splitting them all to test each took twice as
    long as one search per name (issue #26)."""
    found: dict[bytes, str] = {}
    pattern = name + b"\0"
    at = tree.find(pattern)
    while at != -1:
        end = at + len(name)
        if at and tree[at - 1] in b"/\t":  # a segment starts there (or a tab in a name)
            start = tree.rfind(b"\0", 0, at) + 1
            meta, _, path = tree[start:end].partition(b"\t")
            if path.rpartition(b"/")[2] == name:
                found[path] = meta.split(b" ", 1)[0].decode("ascii")
        at = tree.find(pattern, end + 1)
    return found


_SPEC = re.compile(r":\(([a-z,]*)\)(.*)\Z", re.DOTALL)


#: How ``pathspecs`` writes an exclusion (``!legacy/**``).
_EXCLUDE = ":(top,glob,exclude)"


def _literal_tails(specs: Sequence[str], *, fold: bool = True) -> tuple[str, ...] | None:
    """What every path a positive pathspec matches ends with (casefolded unless not
    ``fold``): its last segment after the last ``*`` (``**/*.yml`` -> ``.yml``,
    ``**/dbt_project.yml`` -> ``dbt_project.yml``). ``None`` when a pattern has no
    such plain end (``?``, ``[``, ``\\`` or ``*`` last), so the caller asks git."""
    tails: list[str] = []
    for spec in specs:
        match = _SPEC.match(spec)
        if match is None:
            return None
        if "exclude" in match.group(1).split(","):
            continue  # an exclusion only removes paths
        last = match.group(2).rsplit("/", 1)[-1]
        tail = last[last.rfind("*") + 1 :]
        if not tail or any(ch in "*?[\\" for ch in tail):
            return None
        tails.append(tail.casefold() if fold else tail)
    return tuple(tails) if tails else None


def _icase_pathspecs() -> bool:
    """Whether git matches pathspecs ignoring case (``GIT_ICASE_PATHSPECS``, read as
    git reads a boolean; ``core.ignoreCase`` does not reach pathspecs)."""
    value = os.environ.get("GIT_ICASE_PATHSPECS", "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


def _may_match(path: str, tails: tuple[str, ...]) -> bool:
    """Whether a segment of ``path`` ends with a tail: the file itself, or a folder
    (git also matches a pattern, taken literally, against a leading folder)."""
    return path.endswith(tails) or any(f"{tail}/" in path for tail in tails)


# git output parsing


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


def _empty_tree(commit: str) -> str:
    """The empty tree's id in the hash of the repository ``commit`` is from.

    An object id is the hash of ``"<type> <size>\\0<content>"``: for the empty
    tree, of ``tree 0\\0``, in SHA-1 (40 hex digits) or SHA-256 (64), which the
    commit's own id tells apart. Computed, not asked of ``git hash-object``: one
    process less per run.
    """
    import hashlib  # here: most runs list nothing at a commit, and it loads OpenSSL

    algorithm = hashlib.sha256 if len(commit) == 64 else hashlib.sha1
    return algorithm(b"tree 0\0").hexdigest()
