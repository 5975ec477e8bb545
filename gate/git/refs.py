"""Refs as the gate takes them: validated, resolved to commits, and their merge base.

Refs come from users and CI variables, so one that git could read as an option
(a leading ``-``) or that holds control characters is refused before git sees
it. The usual reason a ref is missing in CI is a shallow clone, so every
"unknown" error says whether the clone is shallow and how to fix it.
"""

from __future__ import annotations

import re

from gate.git.process import SHALLOW_REMEDY, Git, first_line
from gate.model import GitError, UsageError

__all__ = ["HEX", "Refs", "check_ref"]

#: A full object id (sha1 or sha256), as bytes.
HEX = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


def ref_problem(ref: str) -> str | None:
    """What makes a ref unsafe to pass to git: ``"empty"``, ``"option"`` (starts
    with ``-``), ``"control"`` (control characters), or ``None``. One test for
    every caller; each words its refusal for what the ref is (a ``--base``, an
    Action input)."""
    if not isinstance(ref, str) or not ref.strip():
        return "empty"
    if ref.startswith("-"):
        return "option"
    if any(ord(ch) < 32 or ch == "\x7f" for ch in ref):
        return "control"
    return None


def check_ref(ref: str) -> None:
    """Refuse a ref that is empty, looks like an option, or holds control characters."""
    problem = ref_problem(ref)
    if problem == "empty":
        raise UsageError(f"invalid ref {ref!r}: it is empty")
    if problem == "option":
        raise UsageError(
            f"refusing ref '{ref}': it starts with '-', so git would read it as an option"
        )
    if problem == "control":
        raise UsageError(f"invalid ref {ref!r}: it contains control characters")


class Refs:
    """Ref questions about one repository, remembering which full shas are commits."""

    def __init__(self, git: Git) -> None:
        self._git = git
        # Full shas known to name commits: an object id never changes what it names,
        # so a run asks git once per commit instead of at every read (~10 calls).
        self._commits: set[str] = set()
        # The names a run pinned (``pin``: its ``--base`` and ``--head``/``HEAD``) and
        # the commits they resolved to: a run compares one commit with one other, so
        # it asks git once per name. Any other name is asked about every time.
        self._pinned: set[str] = set()
        self._names: dict[str, str] = {}
        self._merge_bases: dict[tuple[str, str], str] = {}

    def resolve(self, ref: str) -> str:
        """Verify ``ref`` names a commit and return its full sha.

        A branch name is asked about every time (it may move), unless ``pin``
        pinned it; a full sha once.
        """
        check_ref(ref)
        if ref in self._commits:
            return ref
        known = self._names.get(ref)
        if known is not None:
            return known
        run = self._git.run
        proc = run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        sha = proc.stdout.strip()
        if proc.returncode == 0 and HEX.match(sha):
            commit = sha.decode("ascii")
            self._commits.add(commit)
            if ref in self._pinned:
                self._names[ref] = commit
            return commit
        # Not ``rev-parse --verify``: a bare full sha "verifies" even when absent.
        exists = run("cat-file", "-e", ref)  # safe: ``ref`` cannot start with "-"
        if exists.returncode == 0:
            raise GitError(f"ref '{ref}' does not name a commit")
        if self.is_shallow():
            raise GitError(
                f"unknown ref '{ref}': this clone is shallow, so it may not have been "
                f"fetched; {SHALLOW_REMEDY}"
            )
        raise GitError(f"unknown ref '{ref}'")

    def pin(self, *refs: str) -> None:
        """Pin a run's refs: each resolves to one commit for the rest of the run, and
        all of them are asked about in one git process here.

        Never raises: a ref that is unsafe, unknown or no commit is left for
        ``resolve``, which words the error (and asks whether the clone is
        shallow) exactly as it would have. ``cat-file --batch-check`` answers
        one line per request line (``<sha> commit <size>``, or ``... missing``),
        so each answer pairs with its ref; refs cannot hold a newline
        (``check_ref`` refuses control characters).
        """
        self._pinned.update(refs)
        todo = [
            ref
            for ref in dict.fromkeys(refs)
            if ref_problem(ref) is None and ref not in self._commits and ref not in self._names
        ]
        if len(todo) < 2:
            return  # one ref: ``resolve`` costs the same single process
        request = "".join(f"{ref}^{{commit}}\n" for ref in todo).encode("utf-8", "surrogateescape")
        proc = self._git.run("cat-file", "--batch-check", stdin=request)
        answers = proc.stdout.split(b"\n")
        if proc.returncode != 0 or len(answers) != len(todo) + 1 or answers[-1]:
            return
        for ref, answer in zip(todo, answers, strict=False):
            fields = answer.split(b" ")
            if len(fields) == 3 and fields[1] == b"commit" and HEX.match(fields[0]):
                commit = fields[0].decode("ascii")
                self._commits.add(commit)
                self._names[ref] = commit

    def merge_base(self, base: str, head: str = "HEAD") -> str:
        """The commit the head branched from.

        Comparing to it, not to the base tip, keeps work merged into the base
        after branching from showing up as "removed" by the pull request.
        """
        base_sha, head_sha = self.resolve(base), self.resolve(head)
        known = self._merge_bases.get((base_sha, head_sha))
        if known is not None:
            return known
        proc = self._git.run("merge-base", base_sha, head_sha)
        sha = proc.stdout.strip()
        if proc.returncode == 0 and HEX.match(sha):
            commit = sha.decode("ascii")
            self._commits.add(commit)  # git just named it: a commit
            self._merge_bases[(base_sha, head_sha)] = commit
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
        return self._git.out("rev-parse", "--is-shallow-repository").strip() == b"true"

    def remotes(self) -> list[str]:
        """The configured remotes (``origin``...), to tell an unfetched branch from a typo."""
        proc = self._git.run("remote")
        return proc.stdout.decode("utf-8", "replace").split() if proc.returncode == 0 else []

    def remote_default(self, remote: str) -> str | None:
        """``origin/master`` when ``origin/HEAD`` points there (set by ``git clone``)."""
        ref = f"refs/remotes/{remote}/HEAD"
        proc = self._git.run("symbolic-ref", "--quiet", "--short", "--", ref)
        name = proc.stdout.decode("utf-8", "replace").strip()
        return name if proc.returncode == 0 and name else None

    def branches(self) -> list[str]:
        """Local branch names, to suggest a base when the default one does not exist."""
        proc = self._git.run("for-each-ref", "--format=%(refname:short)", "refs/heads/")
        return proc.stdout.decode("utf-8", "replace").split() if proc.returncode == 0 else []
