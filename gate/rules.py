"""The rule catalogue: one stable id per kind of change, with a default severity.

Users, docs, config files and acknowledgements refer to these ids, so an id is
never renamed: deprecate it and add a new one (as buf and oasdiff do).
Severity decides the verdict: ``error`` is breaking, ``warning`` blocks only
with ``--fail-on warning``, ``info`` is additive and never blocks, ``off``
drops the finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    """How much a finding matters; ordered from most to least severe."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    OFF = "off"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self, threshold: Severity) -> bool:
        """True when this severity is as severe as ``threshold`` or more."""
        return self is not Severity.OFF and self.rank <= threshold.rank


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.OFF: 3}


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    purpose: str
    level: str  # "model", "column" or "check": where the finding anchors


_CATALOGUE: tuple[Rule, ...] = (
    # Breaking by default.
    Rule("model_removed", Severity.ERROR, "A dataset present at base is gone at HEAD.", "model"),
    Rule(
        "model_renamed",
        Severity.ERROR,
        "A dataset's identity changed; consumers still read the old name.",
        "model",
    ),
    Rule(
        "column_removed",
        Severity.ERROR,
        "A column (or nested struct field) present at base is gone.",
        "column",
    ),
    Rule(
        "column_renamed",
        Severity.ERROR,
        "A column was renamed (by stable id, or same type at the same position).",
        "column",
    ),
    Rule(
        "column_case_changed",
        Severity.ERROR,
        "A column was renamed by case only; most engines see a different column or a clash.",
        "column",
    ),
    Rule(
        "type_narrowed",
        Severity.ERROR,
        "The new type cannot hold every value of the old one (bigint -> int).",
        "column",
    ),
    Rule(
        "type_changed",
        Severity.ERROR,
        "The type moved to another family or an unknown type changed (int -> string).",
        "column",
    ),
    Rule(
        "required_added",
        Severity.ERROR,
        "A nullable column became required; existing producers may write nulls.",
        "column",
    ),
    Rule(
        "required_column_added",
        Severity.ERROR,
        "A new required column on an existing dataset; existing producers do not emit it.",
        "column",
    ),
    Rule(
        "enum_value_removed",
        Severity.ERROR,
        "An allowed value was removed; rows that carry it become invalid.",
        "column",
    ),
    Rule(
        "primary_key_changed",
        Severity.ERROR,
        "The primary key's columns or their order changed; joins and merges break.",
        "model",
    ),
    Rule(
        "version_not_bumped",
        Severity.ERROR,
        "A breaking change without a major version bump (minor below 1.0.0).",
        "model",
    ),
    Rule("version_decreased", Severity.ERROR, "The contract version went down.", "model"),
    Rule(
        "contract_enforcement_removed",
        Severity.ERROR,
        "A dbt model stopped enforcing its contract; its schema is no longer guaranteed.",
        "model",
    ),
    # Warnings: worth a reviewer's eye; block only with --fail-on warning.
    Rule(
        "type_removed",
        Severity.WARNING,
        "A declared data_type was removed; the column's type is no longer guaranteed.",
        "column",
    ),
    Rule(
        "required_removed",
        Severity.WARNING,
        "A required column became nullable; consumers may now see nulls.",
        "column",
    ),
    Rule(
        "enum_value_added",
        Severity.WARNING,
        "A new allowed value; consumers that switch on the values may not handle it.",
        "column",
    ),
    Rule(
        "unique_removed",
        Severity.WARNING,
        "A uniqueness guarantee was dropped; consumers may now see duplicates.",
        "column",
    ),
    Rule(
        "check_removed",
        Severity.WARNING,
        "A check was removed; a guarantee consumers relied on is gone.",
        "check",
    ),
    # Additive: always reported, never blocking by default.
    Rule("model_added", Severity.INFO, "A new dataset.", "model"),
    Rule("column_added", Severity.INFO, "A new optional column.", "column"),
    Rule(
        "type_widened",
        Severity.INFO,
        "The new type holds every value of the old one (int -> bigint).",
        "column",
    ),
    Rule(
        "type_declared",
        Severity.INFO,
        "A data_type was declared where there was none.",
        "column",
    ),
    Rule("check_added", Severity.INFO, "A new check.", "check"),
    Rule("unique_added", Severity.INFO, "A uniqueness guarantee was added.", "column"),
    Rule("version_bumped", Severity.INFO, "The contract version went up.", "model"),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOGUE}


def get(rule_id: str) -> Rule:
    """Look up a rule; an unknown id is a programming error, not user input."""
    return RULES[rule_id]


def all_rules() -> tuple[Rule, ...]:
    """Every rule in catalogue order (breaking, then warnings, then additive)."""
    return _CATALOGUE
