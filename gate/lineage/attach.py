"""External reads attached to the breaking changes, and the optional usage-aware grade.

Pure: changes and reads in, changes out. An external read is listed under
each change it is evidence for (the same changes in-repo readers explain:
``gate.consumers.impact.wants_consumers``) and never becomes
``consumer_broken``: the reader's code is not in this pull request.

**Usage-aware severity** (``lineage.usage_aware_severity``, off by default):
a change nobody is known to read is graded warning instead of error. Only
rules the catalogue says break consumers alone (``breaks="consumers"`` and
``explained_by_consumers``: ``model_removed``, ``column_removed``,
``model_disabled``) qualify; a narrowed type breaks producers, and a rename
or a type change breaks both sides, so no absence of readers clears them.
It fails closed: no downgrade when a configured source could not be read,
when the in-repo search was switched off, or when a candidate consumer file
could not be analysed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from gate.consumers.impact import read_column, wants_consumers
from gate.lineage.external import ExternalRead
from gate.model import Change
from gate.rules import Severity

SWITCH = "lineage.usage_aware_severity"


def _key(read: ExternalRead) -> tuple[str, str, str, str]:
    return (read.source, read.consumer, read.dataset, read.location or "")


def attach(
    changes: Sequence[Change], reads_by_dataset: Mapping[str, Sequence[ExternalRead]]
) -> list[Change]:
    """Each change that wants consumers with the external reads of what it changes."""
    out: list[Change] = []
    for change in changes:
        if not wants_consumers(change):
            out.append(change)
            continue
        reads = list(reads_by_dataset.get(change.dataset, ()))
        if change.old_dataset and change.old_dataset != change.dataset:
            reads += reads_by_dataset.get(change.old_dataset, ())
        column = read_column(change)
        chosen = {_key(r): r for r in reads if column is None or r.reads_column(column)}
        found = tuple(chosen[k] for k in sorted(chosen))
        out.append(replace(change, external=found) if found else change)
    return out


def qualifies(change: Change) -> bool:
    """A breaking change the absence of readers can clear (see the module's docstring)."""
    spec = change.spec
    return (
        change.severity is Severity.ERROR
        and spec.explained_by_consumers
        and spec.breaks == "consumers"
    )


@dataclass(frozen=True)
class Evidence:
    """What the run looked at for readers, and what it could not see."""

    #: Configured external sources (read or not).
    sources: int
    #: Why no downgrade may happen (a source unread, a file not analysed...); empty: none.
    gaps: tuple[str, ...] = ()

    def words(self) -> str:
        if not self.sources:
            return "no reader found in the repository (no external source configured)"
        return (
            f"no reader found in the repository or in {self.sources} external "
            f"source{'s' if self.sources != 1 else ''}"
        )


def usage_aware(
    changes: Sequence[Change], evidence: Evidence, held: Mapping[str, str] | None = None
) -> tuple[list[Change], list[str]]:
    """Unread removals graded warning, with the evidence in their message; and notices.

    ``held``: dataset id -> why its removals stay errors (a contract the pull
    request adds could have claimed their readers: ``gate.lineage.run``).
    """
    held = held or {}
    qualifying = [c for c in changes if qualifies(c)]
    # Named whether or not readers were found: the in-repo search gives an added
    # contract no read a base contract's name agrees with (gate.consumers.names),
    # so a held change may well have readers now; it stays an error either way.
    kept = [c for c in qualifying if {c.dataset, c.old_dataset} & held.keys()]
    candidates = [c for c in qualifying if c not in kept and not c.consumers and not c.external]
    notices = [
        f"{SWITCH}: {c.target} stays an error: {held.get(c.dataset) or held[c.old_dataset or '']}"
        for c in kept
    ]
    if not candidates:
        return list(changes), notices
    if evidence.gaps:
        return list(changes), [
            *notices,
            f"{SWITCH}: {len(candidates)} breaking change(s) with no known reader stay "
            f"errors, because {'; '.join(evidence.gaps)}",
        ]
    lowered = set(map(id, candidates))
    out = [
        replace(
            c,
            severity=Severity.WARNING,
            message=f"{c.message}; graded warning ({SWITCH}): {evidence.words()}",
        )
        if id(c) in lowered
        else c
        for c in changes
    ]
    return out, notices
