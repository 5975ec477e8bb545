"""Each side's config file, and the settings a run takes from the two.

The head side's config is validated (a broken one is the PR's to fix); the
base side's is the floor a pull request cannot go below (``gate.policy``): its
limits apply as they are, every other setting is the stricter of the two. The
dialect comes from ``--dialect``, else the config, else what the base side's
dbt or SQLMesh files declare (``gate.repo_dialect``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gate import lattice as types
from gate.config import CONFIG_FILE, PYPROJECT, Config, config_from_files, with_base_limits
from gate.formats import DEFAULT_GLOBS
from gate.git import Repo
from gate.limits import Limits
from gate.model import ContractError, UsageError
from gate.policy import Relaxation, stricter
from gate.repo_dialect import Found, changed_at_head
from gate.repo_dialect import detect as detect_dialect
from gate.rules import Severity
from gate.side import Side


def load_config(repo: Repo, head: str | None, explicit: str | None) -> Config:
    """The config from the HEAD side: an explicit file must exist; defaults may not."""
    if explicit:
        data = repo.read_file(head, explicit)
        if data is None:
            raise UsageError(
                f"config file {explicit} not found in {'HEAD' if head else 'the working tree'} "
                "(a relative --config path starts at the repository root)"
            )
        return config_from_files(data, None, explicit)
    files = repo.read_optional(head, [CONFIG_FILE, PYPROJECT])
    return config_from_files(files[CONFIG_FILE], files[PYPROJECT])


def base_config(repo: Repo, base_sha: str, explicit: str | None) -> Config:
    """The base side's config: the floor a pull request cannot go below (``gate.policy``).

    Its limits apply as they are (they protect the runner from the pull
    request); every other setting is the stricter of it and HEAD's. No config
    at the base, or one that does not parse: the defaults.
    """
    try:
        if explicit:
            data = repo.read_file(base_sha, explicit)
            return config_from_files(data, None, explicit) if data is not None else Config()
        return load_config(repo, base_sha, None)
    except ContractError:  # the HEAD config is validated; the defaults are the safe side
        return Config()


def base_limits(repo: Repo, base_sha: str, explicit: str | None) -> Limits:
    """The limits of the base side's config: a pull request cannot raise its own."""
    return base_config(repo, base_sha, explicit).limits


@dataclass(frozen=True)
class RunConfig:
    """What a run takes from the command line and the two sides' configs."""

    config: Config
    limits: Limits
    globs: tuple[str, ...]
    fail_on: Severity
    dialect: str
    dialect_source: str
    #: Settings of the base side that the PR relaxes (each is a notice).
    relaxed: tuple[Relaxation, ...]
    #: What the dialect detection had to say (a notice each).
    dialect_notices: tuple[str, ...]
    #: The globs of the base side alone: which unchanged files were contracts
    #: there (``globs`` also holds the ones the PR adds, checked at once).
    base_globs: tuple[str, ...] = ()
    #: Settings the base branch tightened after the PR branched, which the PR's
    #: own config still has as they were: the tip's apply, but the PR relaxed nothing.
    behind: tuple[Relaxation, ...] = ()
    #: The PR's limits are the ones it branched with (any difference is the base's).
    limits_unchanged: bool = False
    #: Where the base side's dbt projects name different warehouses: what the
    #: detection found, each project's own dialect in it (``repo_dialect.project_dialect``).
    detected: Found | None = None


def resolve(
    base: Side,
    head: Side,
    dialect: str | None,
    contracts: Sequence[str] | None,
    fail_on: Severity | None,
) -> RunConfig:
    """The run's settings from both sides' configs and the explicit ones (``None``: unset)."""
    config, relaxed = stricter(base.config, head.config)
    behind: tuple[Relaxation, ...] = ()
    branched = base.branched_config
    if branched is not None:
        own = {r.setting for r in stricter(branched, head.config)[1]}
        behind = tuple(r for r in relaxed if r.setting not in own)
        relaxed = tuple(r for r in relaxed if r.setting in own)
    # The base's limits apply, consumer file size included: a HEAD bound lowered
    # so far that no consumer is read would hide every consumer_broken.
    config = with_base_limits(config, config.limits)
    notices: list[str] = []
    name, source, switched, detected = _dialect(dialect, config, base, head, notices)
    return RunConfig(
        config=config,
        limits=config.limits,
        globs=tuple(contracts or config.contracts or DEFAULT_GLOBS),
        fail_on=fail_on or config.fail_on or Severity.ERROR,
        dialect=name,
        dialect_source=source,
        relaxed=relaxed + switched,
        base_globs=tuple(contracts or base.config.contracts or DEFAULT_GLOBS),
        dialect_notices=tuple(notices),
        behind=behind,
        limits_unchanged=branched is not None and branched.limits == head.config.limits,
        detected=detected,
    )


def _dialect(
    explicit: str | None, config: Config, base: Side, head: Side, notices: list[str]
) -> tuple[str, str, tuple[Relaxation, ...], Found | None]:
    """The dialect the types are read in, where it came from, a change the PR holds,
    and what the detection found (``None`` where the dialect was set).

    ``--dialect``, else the config's ``dialect:`` (the base side's, gate/policy.py),
    else what the base side's dbt profiles or SQLMesh config declare
    (gate/repo_dialect.py), else Spark. A PR that changes what those files
    declare is named; its dialect applies once merged.
    """
    if explicit:
        return types.validate_dialect(explicit), "--dialect", (), None
    if config.dialect:
        where = (config.floor.source if config.floor else None) or config.source
        return types.validate_dialect(config.dialect), f"dialect: in {where}", (), None
    # Read at the base tip, like the config: a PR branched before the base
    # branch switched its warehouse must not be graded in the old dialect.
    found = detect_dialect(base.repo, base.floor_commit, notices)
    dialect, source = (found.dialect, found.source) if found else ("spark", "the default")
    at_head = changed_at_head(base.repo, base.sha, head.commit, found)
    if at_head is None:
        return dialect, source, (), found
    if at_head.by_project or (found is not None and found.by_project):
        was, now = _switched(found, at_head)
        return (
            dialect,
            source,
            (Relaxation("the dbt projects' profiles", "dialect", was, now),),
            found,
        )
    file = at_head.source.partition(": ")[0]
    return dialect, source, (Relaxation(file, "dialect", dialect, at_head.dialect),), found


def _switched(base: Found | None, head: Found) -> tuple[str, str]:
    """What differs between the two sides' per-project dialects, each side as a notice
    names it (``-``: no project there, or none read; ``elsewhere``: outside them)."""

    def table(found: Found | None) -> dict[str, str]:
        if found is None:
            return {"elsewhere": "spark"}
        return {**{root or ".": d for root, d in found.by_project}, "elsewhere": found.dialect}

    was, now = table(base), table(head)
    roots = sorted(r for r in was.keys() | now.keys() if was.get(r) != now.get(r))
    return (
        ", ".join(f"{r}: {was.get(r, '-')}" for r in roots),
        ", ".join(f"{r}: {now.get(r, '-')}" for r in roots),
    )


def notices(head_config: Config, run: RunConfig) -> list[str]:
    """What the run says about the configs: limits the PR raises, where the config is."""
    out: list[str] = []
    if any(
        getattr(head_config.limits, name) > getattr(run.limits, name) for name in Limits.names()
    ):
        out.append(
            "the base branch changed 'limits' in the config since this PR branched; its "
            "limits apply"
            if run.limits_unchanged
            else "this PR changes 'limits' in the config; the base branch's limits apply "
            "until it is merged"
        )
    out += [r.notice() for r in run.relaxed]
    out += [r.behind_notice() for r in run.behind]
    return out


def source_notice(config: Config) -> list[str]:
    """Where the config came from, if from a file."""
    if not config.source:
        return []
    return [f"config read from {config.source} (HEAD side; changes to it are part of this PR)"]
