"""The rule catalogue: one stable id per kind of change, with a default severity.

Users, docs, config files and acknowledgements refer to these ids, so an id is
never renamed: deprecate it and add a new one (as buf and oasdiff do).
Severity decides the verdict: ``error`` is breaking, ``warning`` blocks only
with ``--fail-on warning``, ``info`` is additive and never blocks, ``off``
drops the finding.

This is the registry, as buf binds a rule id to its handler: each ``Rule`` is
a module constant (``rules.COLUMN_REMOVED``) naming its family, the module
whose handlers emit it, and carrying as fields every category code acts on
(direction, consumer impact, acknowledgeability). Handlers emit ``Rule``
objects, never ids (``gate.model.Change.of``), so an unknown id cannot be
emitted; tests/test_rule_registry.py binds each id to its family and a fixture.
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


#: The family modules: which handler module emits a rule's findings (one family per module,
#: as oasdiff groups its checks). tests/test_rule_registry.py checks each one does.
DATASETS = "gate.diff.datasets"
COLUMNS = "gate.diff.columns"
COLUMN_TYPES = "gate.diff.column_types"
CONSTRAINTS = "gate.diff.constraints"
CHECKS = "gate.diff.checks"
RELATIONSHIPS = "gate.diff.relationships"
VERSIONS = "gate.diff.versions"
CONSUMERS = "gate.consumers.impact"
ACCESS = "gate.diff.access"
FAMILIES = (
    DATASETS,
    COLUMNS,
    COLUMN_TYPES,
    CONSTRAINTS,
    CHECKS,
    RELATIONSHIPS,
    VERSIONS,
    CONSUMERS,
    ACCESS,
)

#: A finding's direction from the side it breaks (additive rules have none).
_DIRECTION_OF_SIDE = {"producers": "tightened", "consumers": "loosened", "both": "both"}


@dataclass(frozen=True)
class Rule:
    """One catalogue entry. Every category the code acts on is a field here, never
    read from the id's spelling, so a rule's behaviour is decided in one place."""

    id: str
    severity: Severity
    purpose: str
    level: str  # "model", "column", "check" or "consumer": where the finding anchors
    family: str  # the module that emits it (one of FAMILIES)
    breaks: str = "both"  # one of SIDES: who the finding can break
    #: The direction every finding has unless the handler decides one per finding:
    #: derived from ``breaks`` for non-additive rules when not given, None for additive ones.
    direction: str | None = None
    #: What a report shows for a finding without an ``after`` value ("removed", "gone").
    missing_after: str | None = None
    #: The past participle messages use ("widened"): the type rules share one message.
    verb: str | None = None
    #: A breaking finding worth naming its in-repo readers (gate/consumers/impact.py).
    explained_by_consumers: bool = False
    #: Consumers read the old name (``before``) of the element, not the new one.
    reads_old_name: bool = False
    #: What readers lose at HEAD: "dataset" or "column" (a ``consumer_broken`` may follow).
    gone_for_readers: str | None = None
    #: False: a dataset's acknowledgement token does not clear it (the fix is in this PR).
    acknowledgeable: bool = True
    #: Set when the id is deprecated: ids are never renamed, only replaced.
    deprecated: bool = False
    replaced_by: str | None = None

    def __post_init__(self) -> None:
        if self.direction is None and self.severity is not Severity.INFO:
            object.__setattr__(self, "direction", _DIRECTION_OF_SIDE[self.breaks])

    def severity_for(self, perspective: str, breaks: str | None = None) -> Severity:
        """The default severity seen from one side (``breaks`` overrides a directional rule's)."""
        side = breaks or self.breaks
        if side in PERSPECTIVES[perspective] or self.severity is Severity.INFO:
            return self.severity
        return Severity.INFO


# Breaking by default, then warnings (block only with --fail-on warning), then additive
# (always reported, never blocking by default): ``_CATALOGUE`` keeps that order.
MODEL_REMOVED = Rule(
    "model_removed",
    Severity.ERROR,
    "A dataset present at base is gone at HEAD.",
    "model",
    DATASETS,
    breaks="consumers",
    missing_after="removed",
    explained_by_consumers=True,
    gone_for_readers="dataset",
)
MODEL_RENAMED = Rule(
    "model_renamed",
    Severity.ERROR,
    "A dataset's identity changed; consumers still read the old name.",
    "model",
    DATASETS,
    explained_by_consumers=True,
    gone_for_readers="dataset",
)
COLUMN_REMOVED = Rule(
    "column_removed",
    Severity.ERROR,
    "A column (or nested struct field) present at base is gone.",
    "column",
    COLUMNS,
    breaks="consumers",
    missing_after="removed",
    explained_by_consumers=True,
    gone_for_readers="column",
)
COLUMN_RENAMED = Rule(
    "column_renamed",
    Severity.ERROR,
    "A column was renamed (by stable id, or same type at the same position).",
    "column",
    COLUMNS,
    explained_by_consumers=True,
    reads_old_name=True,
    gone_for_readers="column",
)
COLUMN_CASE_CHANGED = Rule(
    "column_case_changed",
    Severity.ERROR,
    "A column was renamed by case only; most engines see a different column or a clash.",
    "column",
    COLUMNS,
    explained_by_consumers=True,
    reads_old_name=True,
)
TYPE_NARROWED = Rule(
    "type_narrowed",
    Severity.ERROR,
    "The new type cannot hold every value of the old one (bigint -> int).",
    "column",
    COLUMN_TYPES,
    breaks="producers",
    explained_by_consumers=True,
    verb="narrowed",
)
TYPE_CHANGED = Rule(
    "type_changed",
    Severity.ERROR,
    "The type moved to another family or an unknown type changed (int -> string).",
    "column",
    COLUMN_TYPES,
    explained_by_consumers=True,
    verb="changed",
)
REQUIRED_ADDED = Rule(
    "required_added",
    Severity.ERROR,
    "A nullable column became required; existing producers may write nulls.",
    "column",
    COLUMNS,
    breaks="producers",
    missing_after="added",
)
REQUIRED_COLUMN_ADDED = Rule(
    "required_column_added",
    Severity.ERROR,
    "A new required column on an existing dataset; existing producers do not emit it.",
    "column",
    COLUMNS,
    breaks="producers",
    missing_after="added",
)
ENUM_VALUE_REMOVED = Rule(
    "enum_value_removed",
    Severity.ERROR,
    "An allowed value was removed; rows that carry it become invalid.",
    "column",
    CONSTRAINTS,
    breaks="producers",
    missing_after="removed",
)
PRIMARY_KEY_CHANGED = Rule(
    "primary_key_changed",
    Severity.ERROR,
    "The primary key's columns or their order changed; joins and merges break.",
    "model",
    COLUMNS,
)
VERSION_NOT_BUMPED = Rule(
    "version_not_bumped",
    Severity.ERROR,
    "A breaking change without a major version bump (minor below 1.0.0).",
    "model",
    VERSIONS,
)
VERSION_DECREASED = Rule(
    "version_decreased",
    Severity.ERROR,
    "The contract version went down.",
    "model",
    VERSIONS,
)
CONSUMER_BROKEN = Rule(
    "consumer_broken",
    Severity.ERROR,
    "An in-repo consumer (dbt/SQLMesh model, .sql, PySpark job) reads a column or dataset"
    " the HEAD contract no longer has; anchored at the consumer's line.",
    "consumer",
    CONSUMERS,
    breaks="consumers",
    missing_after="gone",
    acknowledgeable=False,
)
CONTRACT_ENFORCEMENT_REMOVED = Rule(
    "contract_enforcement_removed",
    Severity.ERROR,
    "A dbt model stopped enforcing its contract; its schema is no longer guaranteed.",
    "model",
    DATASETS,
    breaks="consumers",
    missing_after="removed",
)
DBT_CONFIG_UNEVALUABLE = Rule(
    "dbt_config_unevaluable",
    Severity.ERROR,
    "A dbt model's enabled or contract.enforced became an expression the gate cannot "
    "evaluate; whether it is guarded is unknown.",
    "model",
    DATASETS,
)
REQUIRED_REMOVED = Rule(
    "required_removed",
    Severity.ERROR,
    "A required column became nullable; consumers that rely on non-null values break.",
    "column",
    COLUMNS,
    breaks="consumers",
    missing_after="removed",
)
ENUM_DECLARED = Rule(
    "enum_declared",
    Severity.ERROR,
    "A column that took any value now has a list of allowed values; writers of others fail.",
    "column",
    CONSTRAINTS,
    breaks="producers",
)
CONSTRAINT_TIGHTENED = Rule(
    "constraint_tightened",
    Severity.ERROR,
    "A field constraint allows fewer values (maximum lowered, minLength added...).",
    "column",
    CONSTRAINTS,
    breaks="producers",
)
MODEL_DISABLED = Rule(
    "model_disabled",
    Severity.ERROR,
    "A guarded dbt model was switched off (enabled: false); dbt builds nothing for it.",
    "model",
    DATASETS,
    breaks="consumers",
    explained_by_consumers=True,
)
MODEL_RELATION_CHANGED = Rule(
    "model_relation_changed",
    Severity.ERROR,
    "A guarded dbt model's configured database, schema or alias changed (dbt builds it"
    " elsewhere; ref() follows), or a DCS/ODCS server's catalog, database or schema did:"
    " readers that name the table break.",
    "model",
    DATASETS,
    breaks="consumers",
    explained_by_consumers=True,
)
MODEL_ACCESS_NARROWED = Rule(
    "model_access_narrowed",
    Severity.ERROR,
    "A guarded dbt model that was access: public no longer is: other projects'"
    " ref('<project>', '<model>') no longer compile (dbt Mesh).",
    "model",
    ACCESS,
    breaks="consumers",
    explained_by_consumers=True,
)
TYPE_REMOVED = Rule(
    "type_removed",
    Severity.WARNING,
    "A declared data_type was removed; the column's type is no longer guaranteed.",
    "column",
    COLUMN_TYPES,
    breaks="consumers",
    missing_after="removed",
    explained_by_consumers=True,
)
ENUM_VALUE_ADDED = Rule(
    "enum_value_added",
    Severity.WARNING,
    "A new allowed value; consumers that switch on the values may not handle it.",
    "column",
    CONSTRAINTS,
    breaks="consumers",
    missing_after="added",
)
LATEST_VERSION_CHANGED = Rule(
    "latest_version_changed",
    Severity.WARNING,
    "An unpinned reference now resolves to another version (dbt latest_version).",
    "model",
    DATASETS,
    breaks="consumers",
)
MODEL_FILE_MISSING = Rule(
    "model_file_missing",
    Severity.WARNING,
    "A guarded dbt model's properties entry has no model file; dbt builds nothing and warns.",
    "model",
    DATASETS,
    explained_by_consumers=True,
)
UNIQUE_REMOVED = Rule(
    "unique_removed",
    Severity.WARNING,
    "A uniqueness guarantee was dropped; consumers may now see duplicates.",
    "column",
    COLUMNS,
    breaks="consumers",
    missing_after="removed",
)
CHECK_REMOVED = Rule(
    "check_removed",
    Severity.WARNING,
    "A check was removed; a guarantee consumers relied on is gone.",
    "check",
    CHECKS,
    breaks="consumers",
    missing_after="removed",
)
ENUM_REMOVED = Rule(
    "enum_removed",
    Severity.WARNING,
    "A column's list of allowed values was dropped; consumers may see any value.",
    "column",
    CONSTRAINTS,
    breaks="consumers",
    missing_after="removed",
)
CONSTRAINT_RELAXED = Rule(
    "constraint_relaxed",
    Severity.WARNING,
    "A field constraint allows more values (maximum raised, pattern dropped...).",
    "column",
    CONSTRAINTS,
    breaks="consumers",
)
CONSTRAINT_CHANGED = Rule(
    "constraint_changed",
    Severity.WARNING,
    "A pattern or format changed and the gate cannot tell whether it allows more or less.",
    "column",
    CONSTRAINTS,
    direction="undetermined",
)
CHECK_CHANGED = Rule(
    "check_changed",
    Severity.WARNING,
    "The same check asserts something else (a threshold, a query); the side it hurts is "
    "decided per finding.",
    "check",
    CHECKS,
)
RELATIONSHIP_REMOVED = Rule(
    "relationship_removed",
    Severity.WARNING,
    "A relationship (foreign key, reference) was removed; consumers join on it.",
    "column",
    RELATIONSHIPS,
    breaks="consumers",
    missing_after="removed",
)
RELATIONSHIP_CHANGED = Rule(
    "relationship_changed",
    Severity.WARNING,
    "A relationship now points at another table or column; consumers' joins change meaning.",
    "column",
    RELATIONSHIPS,
)
TYPE_UNKNOWN = Rule(
    "type_unknown",
    Severity.WARNING,
    "A new or changed column's data_type is not a type the dialect knows (a typo such as "
    "txet, or an enum, domain or vendor type); it can only be compared by spelling.",
    "column",
    COLUMN_TYPES,
    explained_by_consumers=True,
)
MODEL_ADDED = Rule(
    "model_added",
    Severity.INFO,
    "A new dataset.",
    "model",
    DATASETS,
    missing_after="added",
    explained_by_consumers=True,
)
CONTRACT_ENFORCEMENT_ADDED = Rule(
    "contract_enforcement_added",
    Severity.INFO,
    "A dbt model started enforcing its contract: its columns become a guarantee. Its "
    "unenforced properties were documentation, so nothing is compared with them.",
    "model",
    DATASETS,
    missing_after="added",
)
COLUMN_ADDED = Rule(
    "column_added",
    Severity.INFO,
    "A new optional column.",
    "column",
    COLUMNS,
    missing_after="added",
    explained_by_consumers=True,
)
TYPE_WIDENED = Rule(
    "type_widened",
    Severity.INFO,
    "The new type holds every value of the old one (int -> bigint).",
    "column",
    COLUMN_TYPES,
    explained_by_consumers=True,
    verb="widened",
)
TYPE_DECLARED = Rule(
    "type_declared",
    Severity.INFO,
    "A data_type was declared where there was none.",
    "column",
    COLUMN_TYPES,
    explained_by_consumers=True,
)
CHECK_ADDED = Rule(
    "check_added",
    Severity.INFO,
    "A new check.",
    "check",
    CHECKS,
    missing_after="added",
)
UNIQUE_ADDED = Rule(
    "unique_added",
    Severity.INFO,
    "A uniqueness guarantee was added.",
    "column",
    COLUMNS,
    missing_after="added",
)
RELATIONSHIP_ADDED = Rule(
    "relationship_added",
    Severity.INFO,
    "A new relationship (foreign key, reference).",
    "column",
    RELATIONSHIPS,
    missing_after="added",
)
VERSION_BUMPED = Rule(
    "version_bumped",
    Severity.INFO,
    "The contract version went up.",
    "model",
    VERSIONS,
)
MODEL_REMOVED_AFTER_DEPRECATION = Rule(
    "model_removed_after_deprecation",
    Severity.INFO,
    "A dataset was removed or disabled after its deprecation date: the announced end.",
    "model",
    DATASETS,
    explained_by_consumers=True,
)

_CATALOGUE: tuple[Rule, ...] = (
    MODEL_REMOVED,
    MODEL_RENAMED,
    COLUMN_REMOVED,
    COLUMN_RENAMED,
    COLUMN_CASE_CHANGED,
    TYPE_NARROWED,
    TYPE_CHANGED,
    REQUIRED_ADDED,
    REQUIRED_COLUMN_ADDED,
    ENUM_VALUE_REMOVED,
    PRIMARY_KEY_CHANGED,
    VERSION_NOT_BUMPED,
    VERSION_DECREASED,
    CONSUMER_BROKEN,
    CONTRACT_ENFORCEMENT_REMOVED,
    DBT_CONFIG_UNEVALUABLE,
    REQUIRED_REMOVED,
    ENUM_DECLARED,
    CONSTRAINT_TIGHTENED,
    MODEL_DISABLED,
    MODEL_RELATION_CHANGED,
    MODEL_ACCESS_NARROWED,
    TYPE_REMOVED,
    ENUM_VALUE_ADDED,
    LATEST_VERSION_CHANGED,
    MODEL_FILE_MISSING,
    UNIQUE_REMOVED,
    CHECK_REMOVED,
    ENUM_REMOVED,
    CONSTRAINT_RELAXED,
    CONSTRAINT_CHANGED,
    CHECK_CHANGED,
    RELATIONSHIP_REMOVED,
    RELATIONSHIP_CHANGED,
    TYPE_UNKNOWN,
    MODEL_ADDED,
    CONTRACT_ENFORCEMENT_ADDED,
    COLUMN_ADDED,
    TYPE_WIDENED,
    TYPE_DECLARED,
    CHECK_ADDED,
    UNIQUE_ADDED,
    RELATIONSHIP_ADDED,
    VERSION_BUMPED,
    MODEL_REMOVED_AFTER_DEPRECATION,
)

#: Rules a dataset's acknowledgement token does not clear: the fix belongs in the
#: same PR. A misread consumer is vouched for by its file (``accept-consumer-break``).
UNACKNOWLEDGEABLE = frozenset(rule.id for rule in _CATALOGUE if not rule.acknowledgeable)

RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOGUE}


def get(rule_id: str) -> Rule:
    """Look up a rule; an unknown id is a programming error, not user input."""
    return RULES[rule_id]


def all_rules() -> tuple[Rule, ...]:
    """Every rule in catalogue order (breaking, then warnings, then additive)."""
    return _CATALOGUE
