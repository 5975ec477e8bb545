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


#: Which side a finding can break, for ``perspective:`` (see docs/rules.md).
#: ``producers``: the contract now demands more (tightened), existing writers may fail;
#: ``consumers``: it promises less (loosened), existing readers may fail;
#: ``both``: either side (and every rule whose side is not decided).
SIDES = ("producers", "consumers", "both")

#: ``perspective:`` -> the sides whose findings keep their severity; the others drop to info.
PERSPECTIVES: dict[str, tuple[str, ...]] = {
    "both": SIDES,
    "consumer": ("consumers", "both"),
    "producer": ("producers", "both"),
}


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    purpose: str
    level: str  # "model", "column", "check" or "consumer": where the finding anchors
    breaks: str = "both"  # one of SIDES: who the finding can break

    def severity_for(self, perspective: str, breaks: str | None = None) -> Severity:
        """The default severity seen from one side (``breaks`` overrides a directional rule's)."""
        side = breaks or self.breaks
        if side in PERSPECTIVES[perspective] or self.severity is Severity.INFO:
            return self.severity
        return Severity.INFO


_CATALOGUE: tuple[Rule, ...] = (
    # Breaking by default.
    Rule(
        "model_removed",
        Severity.ERROR,
        "A dataset present at base is gone at HEAD.",
        "model",
        breaks="consumers",
    ),
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
        breaks="consumers",
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
        breaks="producers",
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
        breaks="producers",
    ),
    Rule(
        "required_column_added",
        Severity.ERROR,
        "A new required column on an existing dataset; existing producers do not emit it.",
        "column",
        breaks="producers",
    ),
    Rule(
        "enum_value_removed",
        Severity.ERROR,
        "An allowed value was removed; rows that carry it become invalid.",
        "column",
        breaks="producers",
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
        "consumer_broken",
        Severity.ERROR,
        "An in-repo consumer (dbt/SQLMesh model, .sql, PySpark job) reads a column or dataset "
        "the HEAD contract no longer has; anchored at the consumer's line.",
        "consumer",
        breaks="consumers",
    ),
    Rule(
        "contract_enforcement_removed",
        Severity.ERROR,
        "A dbt model stopped enforcing its contract; its schema is no longer guaranteed.",
        "model",
        breaks="consumers",
    ),
    Rule(
        "dbt_config_unevaluable",
        Severity.ERROR,
        "A dbt model's enabled or contract.enforced became an expression the gate cannot "
        "evaluate; whether it is guarded is unknown.",
        "model",
    ),
    Rule(
        "required_removed",
        Severity.ERROR,
        "A required column became nullable; consumers that rely on non-null values break.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "enum_declared",
        Severity.ERROR,
        "A column that took any value now has a list of allowed values; writers of others fail.",
        "column",
        breaks="producers",
    ),
    Rule(
        "constraint_tightened",
        Severity.ERROR,
        "A field constraint allows fewer values (maximum lowered, minLength added...).",
        "column",
        breaks="producers",
    ),
    Rule(
        "model_disabled",
        Severity.ERROR,
        "A guarded dbt model was switched off (enabled: false); dbt builds nothing for it.",
        "model",
        breaks="consumers",
    ),
    # Warnings: worth a reviewer's eye; block only with --fail-on warning.
    Rule(
        "type_removed",
        Severity.WARNING,
        "A declared data_type was removed; the column's type is no longer guaranteed.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "enum_value_added",
        Severity.WARNING,
        "A new allowed value; consumers that switch on the values may not handle it.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "latest_version_changed",
        Severity.WARNING,
        "An unpinned reference now resolves to another version (dbt latest_version).",
        "model",
        breaks="consumers",
    ),
    Rule(
        "model_file_missing",
        Severity.WARNING,
        "A guarded dbt model's properties entry has no model file; dbt builds nothing and warns.",
        "model",
    ),
    Rule(
        "unique_removed",
        Severity.WARNING,
        "A uniqueness guarantee was dropped; consumers may now see duplicates.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "check_removed",
        Severity.WARNING,
        "A check was removed; a guarantee consumers relied on is gone.",
        "check",
        breaks="consumers",
    ),
    Rule(
        "enum_removed",
        Severity.WARNING,
        "A column's list of allowed values was dropped; consumers may see any value.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "constraint_relaxed",
        Severity.WARNING,
        "A field constraint allows more values (maximum raised, pattern dropped...).",
        "column",
        breaks="consumers",
    ),
    Rule(
        "constraint_changed",
        Severity.WARNING,
        "A pattern or format changed and the gate cannot tell whether it allows more or less.",
        "column",
    ),
    Rule(
        "check_changed",
        Severity.WARNING,
        "The same check asserts something else (a threshold, a query); the side it hurts "
        "is decided per finding.",
        "check",
    ),
    Rule(
        "relationship_removed",
        Severity.WARNING,
        "A relationship (foreign key, reference) was removed; consumers join on it.",
        "column",
        breaks="consumers",
    ),
    Rule(
        "relationship_changed",
        Severity.WARNING,
        "A relationship now points at another table or column; consumers' joins change meaning.",
        "column",
    ),
    Rule(
        "type_unknown",
        Severity.WARNING,
        "A new or changed column's data_type is not a type the dialect knows (a typo such as "
        "txet, or an enum, domain or vendor type); it can only be compared by spelling.",
        "column",
    ),
    # Additive: always reported, never blocking by default.
    Rule("model_added", Severity.INFO, "A new dataset.", "model"),
    Rule(
        "contract_enforcement_added",
        Severity.INFO,
        "A dbt model started enforcing its contract: its columns become a guarantee. Its "
        "unenforced properties were documentation, so nothing is compared with them.",
        "model",
    ),
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
    Rule(
        "relationship_added",
        Severity.INFO,
        "A new relationship (foreign key, reference).",
        "column",
    ),
    Rule("version_bumped", Severity.INFO, "The contract version went up.", "model"),
    Rule(
        "model_removed_after_deprecation",
        Severity.INFO,
        "A dataset was removed or disabled after its deprecation date: the announced end.",
        "model",
    ),
)

#: Rules a dataset's acknowledgement token does not clear: the fix belongs in the
#: same PR. A misread consumer is vouched for by its file (``accept-consumer-break``).
UNACKNOWLEDGEABLE = frozenset({"consumer_broken"})

RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOGUE}


def get(rule_id: str) -> Rule:
    """Look up a rule; an unknown id is a programming error, not user input."""
    return RULES[rule_id]


def all_rules() -> tuple[Rule, ...]:
    """Every rule in catalogue order (breaking, then warnings, then additive)."""
    return _CATALOGUE
