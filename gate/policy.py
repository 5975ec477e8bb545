"""The effective policy of a pull request: the stricter of the base and HEAD configs.

The config describes the contracts it ships with, so it is read from HEAD; but a
pull request must not weaken the gate that judges it. Until it is merged, every
setting takes the stricter of the two sides (docs/github-action.md, "Security
model"): a tightening applies at once, a relaxation waits for the merge and is
named in the report. Per setting, "stricter" means:

- ``rules:``, ``perspective:``, ``policies:``: each finding's severity is the
  higher of the two configs' severities (``Config.floor``);
- ``fail_on``: the lower threshold (``warning`` over ``error``);
- ``contracts`` and the consumer globs: the union of the include globs and the
  intersection of the ``!`` excludes, so every file either side checks is checked;
- ``allow-empty``: ``false`` wins; ``consumers.enabled``: ``true`` wins;
  ``consumers.tables``: the names of both sides;
- ``dialect`` and ``consumers.max_file_bytes``: no value is stricter than
  another, so the base side's applies (like ``limits:``, which are bounds).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gate import rules
from gate.config import Config, ConsumerConfig
from gate.formats import DEFAULT_GLOBS
from gate.rules import Severity


@dataclass(frozen=True)
class Relaxation:
    """A setting this pull request weakens (or changes, where no side is stricter).

    ``file`` is the HEAD config, or the base one when HEAD has none (deleted).
    """

    file: str
    setting: str
    base: str
    head: str

    def notice(self) -> str:
        verb = "changes" if self.setting in _NO_ORDER else "relaxes"
        return (
            f"this PR {verb} {self.setting} in {self.file} ({self.base} -> {self.head}); "
            "the base branch's setting applies until it is merged"
        )

    def behind_notice(self) -> str:
        """The same difference when the base branch made it, after the PR branched."""
        return (
            f"the base branch changed {self.setting} since this PR branched "
            f"({self.head} -> {self.base}; {self.file} still has {self.head}); "
            "the base branch's setting applies"
        )


#: Settings with no "stricter" value: the base side's applies.
_NO_ORDER = ("dialect", "consumers.max_file_bytes")


def merge_globs(base: Iterable[str], head: Iterable[str]) -> tuple[str, ...]:
    """Every include of either side; only the ``!`` excludes both sides share.

    A file is checked when an include matches it and no exclude does, so a file
    either side checks is checked by the result.
    """
    base, head = tuple(base), tuple(head)
    includes = [g for g in head if not g.startswith("!")]
    includes += [g for g in base if not g.startswith("!") and g not in includes]
    excludes = [g for g in head if g.startswith("!") and g in base]
    return (*includes, *excludes)


def _globs_weaker(base: tuple[str, ...], head: tuple[str, ...]) -> bool:
    """HEAD drops an include of the base side or adds an exclude."""
    dropped = any(g not in head for g in base if not g.startswith("!"))
    return dropped or any(g not in base for g in head if g.startswith("!"))


def _show(globs: tuple[str, ...] | None, default: str = "(default)") -> str:
    return ", ".join(globs) if globs else default


def _frozen(config: Config) -> set[tuple[str, str]]:
    """(dataset glob, entity) pairs a config freezes."""
    return {
        (pattern, entity)
        for policy in config.policies
        for entity, mode in policy.modes.items()
        if mode == "freeze"
        for pattern in policy.datasets
    }


def _consumers(base: ConsumerConfig, head: ConsumerConfig) -> ConsumerConfig:
    tables = {k: tuple(v) for k, v in head.tables.items()}
    for dataset, names in base.tables.items():
        tables[dataset] = (
            *tables.get(dataset, ()),
            *(n for n in names if n not in tables.get(dataset, ())),
        )
    return ConsumerConfig(
        enabled=base.enabled or head.enabled,
        sql=merge_globs(base.sql, head.sql),
        python=merge_globs(base.python, head.python),
        tables=tables,
        max_file_bytes=base.max_file_bytes,
    )


def _relaxations(base: Config, head: Config) -> list[tuple[str, str, str]]:
    """(setting, base value, head value) for each setting HEAD weakens."""
    found: list[tuple[str, str, str]] = []
    for rule_id in sorted({*base.rules, *head.rules}):
        default = rules.get(rule_id).severity
        before = base.rules.get(rule_id, default)
        after = head.rules.get(rule_id, default)
        if after.rank > before.rank:
            found.append((f"rules.{rule_id}", before.value, after.value))
    if base.perspective != head.perspective and head.perspective != "both":
        found.append(("perspective", base.perspective, head.perspective))
    lost = sorted(_frozen(base) - _frozen(head))
    if lost:
        shown = "; ".join(f"{entity} of {pattern}" for pattern, entity in lost)
        found.append(("policies", f"freeze {shown}", "not frozen"))
    before_fail = base.fail_on or Severity.ERROR
    after_fail = head.fail_on or Severity.ERROR
    if after_fail.rank < before_fail.rank:
        found.append(("fail_on", before_fail.value, after_fail.value))
    base_globs, head_globs = base.contracts or DEFAULT_GLOBS, head.contracts or DEFAULT_GLOBS
    if _globs_weaker(base_globs, head_globs):
        found.append(("contracts", _show(base.contracts), _show(head.contracts)))
    if head.allow_empty and not base.allow_empty:
        found.append(("allow-empty", "false", "true"))
    if base.dialect != head.dialect:
        found.append(("dialect", base.dialect or "(none)", head.dialect or "(none)"))
    b, h = base.consumers, head.consumers
    if b.enabled and not h.enabled:
        found.append(("consumers.enabled", "true", "false"))
    for key in ("sql", "python"):
        if _globs_weaker(getattr(b, key), getattr(h, key)):
            found.append((f"consumers.{key}", _show(getattr(b, key)), _show(getattr(h, key))))
    for dataset in sorted(b.tables):
        if any(n not in h.tables.get(dataset, ()) for n in b.tables[dataset]):
            before_t = _show(b.tables[dataset])
            found.append((f"consumers.tables.{dataset}", before_t, _show(h.tables.get(dataset))))
    # A consumer size bound: raised, it lets a PR make the run slow; lowered, it
    # hides readers (and their consumer_broken). The base's applies either way.
    if h.max_file_bytes != b.max_file_bytes:
        found.append(("consumers.max_file_bytes", str(b.max_file_bytes), str(h.max_file_bytes)))
    return found


def stricter(base: Config, head: Config) -> tuple[Config, tuple[Relaxation, ...]]:
    """The config this run applies, and the relaxations it holds back.

    ``head`` keeps what describes the contracts (its rules and policies still
    apply, as its ``source`` says); ``base`` sets the floor below which no
    setting may fall. ``limits`` come from ``base`` (they are bounds).
    """
    fail_on = None
    if base.fail_on or head.fail_on:  # the lower threshold fails on more
        sides = (base.fail_on or Severity.ERROR, head.fail_on or Severity.ERROR)
        fail_on = max(sides, key=lambda s: s.rank)
    contracts = None
    if base.contracts is not None or head.contracts is not None:
        contracts = merge_globs(base.contracts or DEFAULT_GLOBS, head.contracts or DEFAULT_GLOBS)
    effective = replace(
        head,
        contracts=contracts,
        dialect=base.dialect,
        fail_on=fail_on,
        limits=base.limits,
        allow_empty=base.allow_empty and head.allow_empty,
        consumers=_consumers(base.consumers, head.consumers),
        lineage=base.lineage,  # base side only: gate.lineage.settings
        floor=base,
    )
    file = head.source or base.source or ""
    held = tuple(Relaxation(file, *found) for found in _relaxations(base, head))
    return effective, held
