"""Git chores the Action does before the gate runs: trust the workspace, fetch what is missing.

- ``trust_workspace``: the container runs as root while the checkout belongs to
  the runner user, so git refuses the repository ("dubious ownership"). The
  workspace is added as a ``safe.directory`` through ``GIT_CONFIG_COUNT``/
  ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` in this process's environment:
  git treats those like ``-c`` options (a protected scope), every git child
  inherits them, and no config file is written.
- ``ensure_history``: ``actions/checkout`` clones one commit by default. The
  base commit and enough history for a merge-base are fetched from ``origin``:
  the base commit first, then deeper in steps, then everything.
- ``restore_ownership``: files git creates while fetching belong to root; they
  are handed back to the workspace's owner so later steps (running as the
  runner user) can still write to ``.git``.

Refs and shas come from the event payload and from inputs: they are validated
here, passed after ``--`` in argument lists, and never reach a shell.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gate.action.bounded_json import describe
from gate.git.process import SHALLOW_REMEDY, first_line, run_text
from gate.git.refs import ref_problem
from gate.model import GitError, UsageError

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_ZERO = re.compile(r"0{40}(?:0{24})?\Z")
# What a branch name may look like when the Action has to fetch it: a strict
# subset of git's rules (no "..", no "@{", no leading "-" or "/", no ".lock").
_BRANCH = re.compile(r"(?!-)(?!/)(?!.*\.\.)(?!.*@\{)(?!.*//)[A-Za-z0-9._/+-]{1,200}\Z")
#: Default deepening steps (commits beyond the current shallow boundary).
DEEPEN_STEPS = (50, 200, 1000, 5000)
DEEPEN_ENV = "SCHEMA_GATE_DEEPEN"
FETCH_TIMEOUT_ENV = "SCHEMA_GATE_FETCH_TIMEOUT"

Log = Callable[[str], None]


def is_sha(text: str) -> bool:
    return bool(_SHA.match(text))


def is_zero_sha(text: str) -> bool:
    return bool(_ZERO.match(text))


def validate_sha(value: object, what: str) -> str:
    """A full commit id from the event payload, or ``UsageError``."""
    if not isinstance(value, str) or not _SHA.match(value):
        raise UsageError(f"{what} is not a full commit sha: {describe(value)}")
    return value


def validate_ref(value: str, what: str) -> str:
    """A ref from an input: no option look-alikes, no control characters (``ref_problem``)."""
    problem = ref_problem(value)
    if problem == "empty":
        raise UsageError(f"{what} is empty")
    if problem == "option":
        raise UsageError(f"refusing {what} '{value}': it starts with '-'")
    if problem == "control":
        raise UsageError(f"{what} contains control characters: {value!r}")
    return value


def trust_workspace(paths: Sequence[str], environ: dict[str, str] | None = None) -> None:
    """Add ``safe.directory`` entries for this process and its git children only.

    Entries already in ``GIT_CONFIG_COUNT`` (set by the workflow) are kept.
    """
    env = os.environ if environ is None else environ
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    count = max(count, 0)
    for path in dict.fromkeys(paths):
        env[f"GIT_CONFIG_KEY_{count}"] = "safe.directory"
        env[f"GIT_CONFIG_VALUE_{count}"] = path
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)


def _fetch_timeout() -> float:
    try:
        return max(float(os.environ.get(FETCH_TIMEOUT_ENV, "") or 600), 1.0)
    except ValueError:
        return 600.0


def deepen_steps() -> tuple[int, ...]:
    raw = os.environ.get(DEEPEN_ENV, "")
    if not raw.strip():
        return DEEPEN_STEPS
    try:
        steps = tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"{DEEPEN_ENV} must be comma-separated numbers, not {raw!r}") from None
    if not steps or any(step < 1 for step in steps):
        raise UsageError(f"{DEEPEN_ENV} must list positive numbers, not {raw!r}")
    return steps


@dataclass
class Workspace:
    """The checked-out repository, seen through plain git commands."""

    root: str
    log: Log
    fetched: bool = False

    def git(self, *args: str, timeout: float | None = 120) -> subprocess.CompletedProcess[str]:
        return run_text(self.root, args, timeout=timeout)

    def has_commit(self, rev: str) -> bool:
        proc = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        if proc.returncode != 0:
            return False
        # A bare full sha "verifies" without the object; make sure it is there.
        sha = proc.stdout.strip()
        return self.git("cat-file", "-e", f"{sha}^{{commit}}").returncode == 0

    def head(self) -> str:
        proc = self.git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        sha = proc.stdout.strip()
        if proc.returncode != 0 or not is_sha(sha):
            raise GitError("the workspace has no commit checked out (HEAD does not resolve)")
        return sha

    def is_shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"

    def merge_base_exists(self, base: str, head: str) -> bool:
        return self.git("merge-base", "--end-of-options", base, head).returncode == 0

    def is_ancestor(self, ancestor: str, head: str) -> bool:
        proc = self.git("merge-base", "--is-ancestor", "--end-of-options", ancestor, head)
        return proc.returncode == 0

    def fetch(
        self, *args: str, refspecs: Sequence[str], why: str, failure: str | None = None
    ) -> None:
        """``git fetch ARGS -- origin REFSPECS``: refspecs come last, after ``--``.

        A failure raises ``GitError`` with git's reason and ``failure`` (default:
        the shallow-clone remedy).
        """
        self.log(f"{why}: git fetch {' '.join(args)} origin {' '.join(refspecs)}")
        proc = self.git(
            "fetch",
            "--no-tags",
            "--no-recurse-submodules",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--quiet",
            *args,
            "--",
            "origin",
            *refspecs,
            timeout=_fetch_timeout(),
        )
        self.fetched = True
        if proc.returncode != 0:
            raise GitError(
                f"could not fetch from origin ({first_line(proc.stderr)}); "
                f"{failure or SHALLOW_REMEDY}"
            )

    def git_dir(self) -> str | None:
        proc = self.git("rev-parse", "--absolute-git-dir")
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None


def ensure_base(ws: Workspace, base: str) -> str:
    """Make ``base`` resolvable, fetching it from origin if the clone lacks it.

    Returns the ref to hand to the gate: ``base`` itself, or for a branch name
    that only exists on origin, the remote-tracking ref it was fetched into.
    """
    if ws.has_commit(base):
        return base
    shallow = ws.is_shallow()
    depth = ("--depth=1",) if shallow else ()
    if is_sha(base):
        ws.fetch(*depth, refspecs=[base], why=f"base commit {base[:12]} is not in this clone")
        if not ws.has_commit(base):
            raise GitError(f"origin did not send the base commit {base}; {SHALLOW_REMEDY}")
        return base
    name = base
    for prefix in ("refs/heads/", "refs/remotes/origin/", "origin/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    if not _BRANCH.match(name) or name.endswith((".lock", "/", ".")):
        raise GitError(f"unknown ref '{base}' (and it does not look like a branch to fetch)")
    tracking = f"refs/remotes/origin/{name}"
    ws.fetch(
        *depth,
        refspecs=[f"+refs/heads/{name}:{tracking}"],
        why=f"base '{base}' is not in this clone",
        failure=f"is '{base}' a branch of this repository? (unknown ref '{base}')",
    )
    if not ws.has_commit(tracking):
        raise GitError(f"unknown ref '{base}' (not in this clone and not a branch on origin)")
    return tracking


def ensure_merge_base(ws: Workspace, base: str, head: str) -> None:
    """Deepen a shallow clone until ``base`` and ``head`` meet (or it is complete)."""
    if ws.merge_base_exists(base, head) or not ws.is_shallow():
        return  # a complete clone without a merge base has unrelated histories: the gate says so
    base_sha = ws.git("rev-parse", "--verify", "--end-of-options", f"{base}^{{commit}}").stdout
    wants = list(dict.fromkeys([base_sha.strip(), head]))
    for step in deepen_steps():
        ws.fetch(f"--deepen={step}", refspecs=wants, why="no merge base yet in this shallow clone")
        if ws.merge_base_exists(base, head):
            return
        if not ws.is_shallow():
            return
    ws.fetch("--unshallow", refspecs=wants, why="still no merge base")


def restore_ownership(ws: Workspace) -> int:
    """Give files created under ``.git`` by this (root) process back to its owner.

    Returns how many entries were changed. A no-op unless running as root in a
    repository owned by someone else, which is exactly the Docker action case.
    """
    git_dir = ws.git_dir()
    return give_to_owner(git_dir, like=git_dir) if git_dir else 0


def give_to_owner(path: str, like: str) -> int:
    """``chown -R`` ``path`` to the owner of ``like`` when root created files for a user.

    Later steps of the job run as the runner user; a root-owned directory in the
    workspace would make them (or the next job's checkout clean-up) fail.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return 0
    try:
        owner = os.stat(like)
    except OSError:
        return 0
    if owner.st_uid == 0:
        return 0
    changed = 0
    entries = [path]
    for top, dirs, files in os.walk(path):
        entries.extend(os.path.join(top, name) for name in (*dirs, *files))
    for entry in entries:
        try:
            info = os.lstat(entry)
            if info.st_uid != owner.st_uid or info.st_gid != owner.st_gid:
                os.lchown(entry, owner.st_uid, owner.st_gid)
                changed += 1
        except OSError:
            continue
    return changed
