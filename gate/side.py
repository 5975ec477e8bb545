"""One side of a comparison (the base, or the head): built once, handed down.

A run compares two sides. Each is read at one commit (the head side may be the
working tree), through one tree reader, with one index of its dbt projects and
its own config file. The engine builds both once, at the start, and every step
takes the ``Side`` it reads instead of a ref string, a commit and a label.
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.config import Config
from gate.dbt.projects import ProjectIndex
from gate.git import Repo
from gate.model import GitError


@dataclass(frozen=True)
class Side:
    """What one side of the comparison is read from."""

    #: ``"base"`` or ``"head"``: for messages, and the base side reads leniently.
    name: str
    #: The ref as the user named it; ``None`` for a head side that is the working tree.
    ref: str | None
    #: The commit every read names (never the ref: one comparison, one commit);
    #: ``None``: the working tree.
    commit: str | None
    #: The commit the report names (HEAD's when the working tree is the head side).
    sha: str
    #: The tree reader (a traced one when the run has a trace hook).
    repo: Repo
    #: This side's dbt projects, found lazily and kept for the whole run.
    projects: ProjectIndex
    #: This side's own config file as read (the run's is the policy of both).
    config: Config
    #: The base only, when its branch moved on since the PR branched: the config
    #: where it branched, so that a setting the base branch tightened since is not
    #: called the PR's relaxation (``config`` is the tip's, the floor).
    branched_config: Config | None = None
    #: The base only: the tip of the base branch, where the floor is read (the
    #: config, and the dialect its dbt profiles or SQLMesh config declare);
    #: ``sha`` is where the PR branched (the merge-base), which it is compared with.
    tip: str | None = None

    @property
    def floor_commit(self) -> str:
        """The commit the floor's settings are read at: the tip, else ``sha``."""
        return self.tip or self.sha


def head_side(repo: Repo, ref: str | None, sha: str, config: Config) -> Side:
    """The head side: ``ref`` at ``sha``, or the working tree when ``ref`` is ``None``."""
    commit = sha if ref is not None else None
    return Side("head", ref, commit, sha, repo, ProjectIndex(repo, commit, "head"), config)


def base_side(
    repo: Repo,
    ref: str,
    sha: str,
    config: Config,
    head: Side,
    branched_config: Config | None = None,
    tip: str | None = None,
) -> Side:
    """The base side at ``sha``; a ``dbt_project.yml`` unreadable there falls back on HEAD's."""
    projects = ProjectIndex(repo, sha, "base", fallback=head.projects)
    return Side("base", ref, sha, sha, repo, projects, config, branched_config, tip)


def resolve_head(repo: Repo, head: str | None) -> str:
    """The commit of ``--head`` (HEAD's when the working tree is compared)."""
    try:
        return repo.resolve(head or "HEAD")
    except GitError as exc:
        if head is None and str(exc) == "unknown ref 'HEAD'":
            raise GitError(
                "HEAD names no commit yet (a new repository or an orphan branch): the working "
                "tree is compared with the merge-base of --base and HEAD, so commit first"
            ) from None
        raise


def resolve_base(repo: Repo, base: str, head: str | None, merge_base: bool) -> str:
    """The base commit: ``--base``, or its merge-base with the head when ``merge_base``."""
    sha = _resolve_base(repo, base)
    if merge_base:
        # The refs as typed, so an error names them (both were just resolved).
        sha = repo.merge_base(base, head or "HEAD")
    return sha


def _resolve_base(repo: Repo, base: str) -> str:
    """Resolve --base, saying how to get a remote branch that is not fetched."""
    try:
        return repo.resolve(base)
    except GitError as exc:
        if str(exc) != f"unknown ref '{base}'":
            raise
        remote, _, branch = base.partition("/")
        remotes = repo.remotes()
        if branch and remote in remotes:
            default = repo.remote_default(remote)
            other = f" (the remote's default branch is {default})" if default else ""
            raise GitError(
                f"{exc}: fetch it first (git fetch {remote} {branch}) or name another "
                f"base with --base{other}"
            ) from None
        if branch and remote.isidentifier():  # looks like remote/branch, no such remote
            has = f"remotes: {', '.join(remotes)}" if remotes else "the repository has none"
            local = [b for b in ("main", "master", "develop") if b in repo.branches()]
            hint = f", e.g. --base {local[0]}" if local else ""
            raise GitError(
                f"{exc}: there is no remote '{remote}' ({has}); name the branch your change "
                f"will merge into with --base{hint}"
            ) from None
        raise
