"""The one Report every output format renders, and the verdict it carries.

The verdict lives here, not in the renderers, so text, JSON, Markdown and
GitHub annotations can never disagree about the exit code.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gate.acks import CONSUMER_KEY, Token, names_for
from gate.approvals.fingerprint import fingerprint
from gate.diff import Change
from gate.escapes import visible as visible  # re-exported: the renderers import it from here
from gate.model import ContractWarning, NotAnalysed
from gate.policy import Relaxation
from gate.rules import Severity

if TYPE_CHECKING:  # the smoke package imports pyspark lazily; its results are plain data
    from gate.approvals.decide import Approval  # loaded only when a policy is active
    from gate.smoke.result import SmokeReport

EXIT_OK = 0
EXIT_BREAKING = 1
EXIT_ERROR = 2


def _order(change: Change, fail_on: Severity) -> tuple[int, str, str, str]:
    """Blocking first, then acknowledged, then the rest by severity."""
    if change.acknowledged:
        group = 1
    elif change.severity.at_least(fail_on):
        group = 0
    else:
        group = 2 + change.severity.rank
    return (group, change.dataset, change.column or "", change.rule)


@dataclass(frozen=True)
class Report:
    """Everything one gate run found, in the order a reviewer should read it."""

    changes: tuple[Change, ...]
    fail_on: Severity = Severity.ERROR
    acknowledgements: tuple[str, ...] = ()
    #: Consumer files whose ``consumer_broken`` findings an ``accept-consumer-break`` cleared.
    consumer_acknowledgements: tuple[str, ...] = ()
    unmatched_acknowledgements: tuple[Token, ...] = ()
    #: Short tokens that name several datasets: (token, the full ids it could mean).
    ambiguous_acknowledgements: tuple[tuple[Token, tuple[str, ...]], ...] = ()
    base_ref: str = ""
    base_sha: str = ""
    merge_base: bool = True
    head_ref: str | None = None  # None: the working tree
    head_sha: str = ""
    files_compared: int = 0
    #: The SQL dialect the contracts' data types were read in ("" when unknown):
    #: ``number`` is DECIMAL(10,0) in Spark and NUMBER(38,0) in Snowflake.
    dialect: str = ""
    #: Where the dialect came from: ``--dialect``, the config, a dbt profile, SQLMesh's config.
    dialect_source: str = ""
    smoke: SmokeReport | None = None
    notices: tuple[str, ...] = field(default=())
    #: Candidate consumer files the gate could not read (docs/impact.md).
    not_analysed: tuple[NotAnalysed, ...] = field(default=())
    #: Schema problems that did not stop the comparison (docs/formats/validation.md).
    warnings: tuple[ContractWarning, ...] = field(default=())
    #: Config settings this PR weakens, held back until it is merged (gate.policy).
    relaxations: tuple[Relaxation, ...] = field(default=())
    #: Each change's approval status when the base's policy asks for one (gate.approvals).
    approvals: Mapping[Change, Approval] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.changes, key=lambda c: _order(c, self.fail_on)))
        object.__setattr__(self, "changes", ordered)

    def blocks(self, change: Change) -> bool:
        """An unacknowledged change at or above the ``--fail-on`` threshold."""
        return not change.acknowledged and change.severity.at_least(self.fail_on)

    @property
    def blocking(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if self.blocks(c))

    @property
    def acknowledged(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.acknowledged)

    def by_severity(self, severity: Severity) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.severity is severity)

    @property
    def smoke_failed(self) -> bool:
        return self.smoke is not None and self.smoke.failed

    @property
    def unmatched_block(self) -> bool:
        """Unmatched tokens are warnings: they block only under ``--fail-on warning``."""
        return bool(self.unmatched_acknowledgements) and Severity.WARNING.at_least(self.fail_on)

    @property
    def exit_code(self) -> int:
        if self.blocking or self.smoke_failed or self.unmatched_block:
            return EXIT_BREAKING
        return EXIT_OK

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def datasets_to_acknowledge(self) -> tuple[str, ...]:
        """Dataset ids whose blocking changes an acknowledgement would clear."""
        return tuple(sorted({c.dataset for c in self.blocking if c.spec.acknowledgeable}))

    def closest_dataset(self, token: str) -> str | None:
        """The changed dataset an unmatched token most likely meant (a typo), if any.

        Only ids of datasets with a blocking-capable change are offered: those are
        the ones an acknowledgement can act on.
        """
        ids = sorted({c.dataset for c in self.changes if c.severity is not Severity.INFO})
        # Every name a token may use (``shop.orders`` for ``lake/shop/orders``) -> the id.
        names = {name.lower(): i for i in ids for name in sorted(names_for(i))}
        match = difflib.get_close_matches(token.lower(), list(names), n=1, cutoff=0.75)
        return names[match[0]] if match else None

    def closest(self, token: Token) -> str | None:
        """What an unmatched token most likely meant: a dataset id, or for an
        ``accept-consumer-break`` token the path of a file with a ``consumer_broken``."""
        if token.key != CONSUMER_KEY:
            return self.closest_dataset(token.value)
        paths = sorted({c.path for c in self.changes if not c.spec.acknowledgeable})
        match = difflib.get_close_matches(token.value, paths, n=1, cutoff=0.75)
        return match[0] if match else None

    @property
    def consumer_acknowledgement_lines(self) -> tuple[str, ...]:
        """One ``accept-consumer-break:`` line per file with a blocking ``consumer_broken``."""
        paths = sorted({c.path for c in self.consumers_to_fix})
        return tuple(f"{CONSUMER_KEY}: {p}" for p in paths)

    @property
    def consumers_to_fix(self) -> tuple[Change, ...]:
        """Blocking ``consumer_broken`` findings: fixed in the PR, not acknowledged."""
        return tuple(c for c in self.blocking if not c.spec.acknowledgeable)

    @property
    def head_label(self) -> str:
        return self.head_ref or "working tree"

    def summary(self) -> dict[str, int]:
        return {
            "total": len(self.changes),
            "breaking": len(self.by_severity(Severity.ERROR)),
            "unacknowledged": len(self.blocking),
            "acknowledged": len(self.acknowledged),
            "warnings": len(self.by_severity(Severity.WARNING)),
            "additive": len(self.by_severity(Severity.INFO)),
            "files_compared": self.files_compared,
        }

    @property
    def acknowledgement_lines(self) -> tuple[str, ...]:
        """One ``accept-breaking-change:`` line per dataset, pasteable into a PR body."""
        return tuple(f"accept-breaking-change: {d}" for d in self.datasets_to_acknowledge)

    def verdict(self, name: Callable[[str], str] = str, advice: bool = True) -> str:
        """One sentence: what happened and what to do next.

        ``name`` renders each PR-controlled dataset id for the renderer's medium
        (a Markdown code span, say); the sentence itself is the gate's own text.
        ``advice=False`` leaves out the acknowledgement hint, for renderers that
        print ``acknowledgement_lines`` themselves, one per line.
        """
        if self.exit_code == EXIT_OK:
            acked = len(self.acknowledged)
            if acked:
                return f"PASS: {acked} breaking change(s), all acknowledged."
            if not self.changes:
                return "PASS: no contract changes."
            return "PASS: no breaking changes."
        reasons = []
        if self.blocking:
            what = "breaking change(s)" if self.fail_on is Severity.ERROR else "blocking change(s)"
            reasons.append(f"{len(self.blocking)} unacknowledged {what}")
        if self.smoke_failed:
            reasons.append("the smoke test failed")
        if self.unmatched_block:
            reasons.append(f"{len(self.unmatched_acknowledgements)} unmatched acknowledgement(s)")
        fix = ""
        if self.consumers_to_fix:
            fix = " Fix the in-repo consumer(s) that still read what is gone: " + ", ".join(
                name(f"{c.path}:{c.line} ({c.target})") for c in self.consumers_to_fix
            )
            fix += (
                ". If the gate misread one (it still runs at HEAD), say so in the PR body: "
                + name(f"{CONSUMER_KEY}: <path>")
                + "."
            )
        hint = ""
        if self.datasets_to_acknowledge and advice:
            lines = [name(line) for line in self.acknowledgement_lines]
            if len(lines) == 1:
                hint = f" If the break is intended, add to the PR body: {lines[0]}"
            else:
                hint = (
                    " If the breaks are intended, add one line per dataset to the PR body: "
                    + " | ".join(lines)
                )
        elif self.datasets_to_acknowledge:
            hint = " If the break is intended, add the line(s) below to the PR body:"
        return f"FAIL: {' and '.join(reasons)}.{fix}{hint}"


def change_dict(change: Change) -> dict[str, Any]:
    """The JSON shape of one change (stable keys; see docs/json-report.md)."""
    return {
        "rule": change.rule,
        "severity": change.severity.value,
        "breaking": change.breaking,
        "acknowledged": change.acknowledged,
        "dataset": change.dataset,
        "old_dataset": change.old_dataset,
        "column": change.column,
        "path": change.path,
        "line": change.line,
        "message": change.message,
        "before": change.before,
        "after": change.after,
        "direction": change.direction,
        "fingerprint": fingerprint(change),
        "consumers": [
            {"path": c.path, "line": c.line, "object": c.object, "usage": c.usage}
            for c in change.consumers
        ],
        "external_consumers": [
            {
                "source": r.source,
                "consumer": r.consumer,
                "dataset": r.dataset,
                "columns": sorted(r.columns) if r.columns is not None else None,
                "location": r.location,
            }
            for r in change.external
        ],
        "downstream": [
            {
                "path": path.arrow(),
                "hops": [
                    {
                        "model": h.model,
                        "column": h.column,
                        "path": h.path,
                        "line": h.line,
                        "how": h.how,
                    }
                    for h in path.hops
                ],
                "end": path.end,
                "end_path": path.end_path,
                "end_line": path.end_line,
                "end_object": path.end_object,
                "note": path.note,
            }
            for path in change.downstream
        ],
    }


def missing_after(change: Change) -> str | None:
    """What a change without an ``after`` value shows instead (None: nothing to say).

    One table for every report, so a reader sees the same word in the text,
    the PR comment and the annotations.
    """
    if change.after is not None:
        return None
    # The rule's ``missing_after`` (gate/rules.py): ``column_removed`` -> removed,
    # ``consumer_broken`` (a name HEAD no longer has) -> gone.
    return change.spec.missing_after


def arrow(change: Change) -> str:
    """``before -> after`` with readable placeholders for the missing side."""
    before = change.before if change.before is not None else "(none)"
    after = change.after if change.after is not None else f"({missing_after(change) or 'none'})"
    return f"{before} -> {after}"
