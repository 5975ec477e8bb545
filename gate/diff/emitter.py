"""The one way a diff handler reports a finding: ``Emitter.emit(rule, ...)`` with a catalogue ``Rule``.

Severities come from a ``SeverityFn`` supplied by the caller (the rule
catalogue's defaults, adjusted by config and per-dataset policy), so the core
stays free of configuration. ``DatasetPair`` is what every handler of a paired
dataset receives: the old and new dataset, the dialect, and ``emit`` anchored
at the new dataset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gate import lattice as types
from gate import rules
from gate.model import Change, Column, Dataset
from gate.rules import Rule, Severity

#: (rule id, dataset id, side the finding breaks or None for the rule's own) ->
#: effective severity. ``Severity.OFF`` drops the finding.
SeverityFn = Callable[[str, str, "str | None"], Severity]


def default_severity(rule_id: str, dataset_id: str, breaks: str | None = None) -> Severity:
    """The catalogue's severity, ignoring config: what a bare run uses."""
    return rules.get(rule_id).severity


def type_text(text: str | None, dialect: str) -> str | None:
    """A declared type in its canonical spelling (None when undeclared)."""
    return types.canonical(text, dialect) if text else None


class Emitter:
    """Collects changes, resolving severities and dropping those turned off."""

    def __init__(self, severity_of: SeverityFn) -> None:
        self.severity_of = severity_of
        self.changes: list[Change] = []

    def emit(
        self,
        rule: Rule,
        dataset: Dataset,
        message: str,
        *,
        column: str | None = None,
        line: int | None = None,
        before: str | None = None,
        after: str | None = None,
        old_dataset: str | None = None,
        path: str | None = None,
        breaks: str | None = None,
        direction: str | None = None,
    ) -> None:
        severity = self.severity_of(rule.id, dataset.id, breaks)
        if old_dataset is not None and old_dataset != dataset.id:
            # A policy on either name applies to a rename: take the stricter.
            other = self.severity_of(rule.id, old_dataset, breaks)
            severity = min(severity, other, key=lambda s: s.rank)
        if severity is Severity.OFF:
            return
        self.changes.append(
            Change.of(
                rule,
                severity,
                dataset.id,
                path or dataset.path,
                line if line is not None else dataset.line,
                message,
                column=column,
                before=before,
                after=after,
                old_dataset=old_dataset,
                direction=direction,
            )
        )


def _sole_key(dataset: Dataset) -> str | None:
    """The column of a single-column primary key: unique whatever its flag says."""
    keyed = [c.name for c in dataset.columns if c.primary_key_position is not None]
    return keyed[0] if len(keyed) == 1 else None


@dataclass
class DatasetPair:
    """One pair of datasets (same identity, or a rename): what every pair handler receives."""

    out: Emitter
    old: Dataset
    new: Dataset
    dialect: str
    #: The dialect the old side is written in, where it is not ``dialect`` (a
    #: contract moved between dbt projects on different warehouses).
    old_dialect: str | None = None
    # Once per dataset, not per column: per column it was quadratic (10,000
    # changed columns took 46 s).
    old_sole_key: str | None = field(init=False)
    new_sole_key: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.old_sole_key = _sole_key(self.old)
        self.new_sole_key = _sole_key(self.new)

    def emit(self, rule: Rule, message: str, **kwargs: object) -> None:
        """A finding on the new dataset (see ``Emitter.emit`` for the keywords)."""
        self.out.emit(rule, self.new, message, **kwargs)  # type: ignore[arg-type]

    def type_text(self, column: Column) -> str | None:
        return type_text(column.data_type, self.dialect)

    def old_type_text(self, column: Column) -> str | None:
        """An old column's type as its own dialect spells it."""
        return type_text(column.data_type, self.old_dialect or self.dialect)
