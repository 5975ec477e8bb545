"""Real throwaway git repositories for tests.

Tests that touch git build a real repository in ``tmp_path`` instead of mocking
git: the gate's correctness depends on what git actually prints. Commands run
from argument lists (no shell) with the developer's global and system config
switched off, so a local ``diff.renames`` or signing setup cannot change results.

    repo = GitRepo(tmp_path / "r")
    repo.write("soda/contracts/orders.yaml", "dataset: orders\\n")
    base = repo.commit("add orders")
    repo.branch("feature")          # create and switch
    repo.move("soda/contracts/orders.yaml", "soda/contracts/sales.yaml")
    head = repo.commit("rename")

``write``/``remove``/``move`` change the working tree only; ``commit`` stages
everything (``git add -A``) first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["GitRepo"]


def git_env() -> dict[str, str]:
    """An environment in which git ignores the machine's config and never prompts."""
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="Gate Test",
        GIT_AUTHOR_EMAIL="gate@example.com",
        GIT_COMMITTER_NAME="Gate Test",
        GIT_COMMITTER_EMAIL="gate@example.com",
    )
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    return env


#: Appended to a new repository's .git/config: what ``git config user.name ...`` would write.
REPO_CONFIG = """\
[user]
\tname = Gate Test
\temail = gate@example.com
[commit]
\tgpgsign = false
[core]
\tautocrlf = false
"""


class GitRepo:
    """A git working tree at ``path``; ``init=False`` wraps one that already exists."""

    def __init__(self, path: str | os.PathLike[str], *, init: bool = True) -> None:
        self.path = Path(path)
        if init:
            self.path.mkdir(parents=True, exist_ok=True)
            # No template: 18 fewer files per repository (sample hooks, description,
            # info/exclude) to write and to delete, thousands of times a run.
            self.git("init", "-q", "-b", "main", "--template=")
            # One write instead of four `git config` processes (thousands of repos per run).
            with (self.path / ".git" / "config").open("a", encoding="utf-8") as config:
                config.write(REPO_CONFIG)

    @classmethod
    def with_pr_branch(
        cls, path: str | os.PathLike[str], files: dict[str, str], branch: str = "feature"
    ) -> GitRepo:
        """``files`` committed on main, then ``branch`` checked out for the PR's commits."""
        repo = cls(path)
        for relpath, text in files.items():
            repo.write(relpath, text)
        repo.commit("base")
        repo.branch(branch)
        return repo

    @classmethod
    def clone(cls, source: str, path: str | os.PathLike[str], *args: str) -> GitRepo:
        """``git clone [args] source path``; e.g. ``"--depth", "1"`` for a shallow clone."""
        dest = Path(path)
        subprocess.run(
            ["git", "clone", "-q", *args, "--", source, str(dest)],
            env=git_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        return cls(dest, init=False)

    def git(self, *args: str, check: bool = True) -> str:
        """Run git here and return its stdout; a failure raises with git's stderr."""
        proc = subprocess.run(
            ["git", *args], cwd=self.path, env=git_env(), capture_output=True, text=True
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc.stdout

    def write(self, relpath: str, text: str | bytes) -> Path:
        """Write a file (creating directories); text is written byte-exact, no newline mangling."""
        target = self.path / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return target

    def remove(self, relpath: str) -> None:
        target = self.path / relpath
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()

    def move(self, src: str, dst: str) -> None:
        target = self.path / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.path / src).rename(target)

    def symlink(self, relpath: str, target: str) -> Path:
        """Create ``relpath`` as a symlink whose text is ``target`` (relative or absolute)."""
        link = self.path / relpath
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        return link

    def commit(self, message: str = "change") -> str:
        """Stage everything and commit (empty commits allowed); return the new sha."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def rev(self, ref: str) -> str:
        """The full sha of any revision expression (``main~1``, ``HEAD:path``)."""
        return self.git("rev-parse", "--verify", ref).strip()

    def branch(self, name: str, start: str | None = None) -> None:
        """Create branch ``name`` (at ``start`` or HEAD) and switch to it."""
        self.git("checkout", "-q", "-b", name, *([start] if start else []))

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)

    def land(self, relpath: str, text: str, base: str = "main") -> None:
        """Commit ``relpath`` on ``base`` and bring it into the current branch.

        A config relaxation applies only once it is on the base branch
        (gate/policy.py); tests of what a setting does land it there first.
        Uncommitted work on the current branch is kept.
        """
        branch = self.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        before = self.git("stash", "list")
        self.git("stash", "push", "-q", "--include-untracked")
        stashed = self.git("stash", "list") != before
        self.checkout(base)
        self.write(relpath, text)
        self.commit(f"land {relpath}")
        self.checkout(branch)
        self.git("merge", "-q", "--no-edit", base)
        if stashed:
            self.git("stash", "pop", "-q")
