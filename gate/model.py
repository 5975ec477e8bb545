"""The one internal model every contract format parses into.

Every rule works for every format because every format lands here first. The
classes are frozen and free of I/O so the core can be tested with plain values
and compared with ``==``.

Vocabulary:
- a *contract file* (``Contract``) is one YAML file; it may hold several datasets
  (a DCS file with several models, a dbt schema file with several models);
- a *dataset* (``Dataset``) is the unit consumers depend on: a table or view with
  a stable identity (``Dataset.id``) that acknowledgement tokens name;
- a *column* (``Column``) may carry nested fields (struct members declared as
  separate fields by DCS/ODCS), declared constraints and checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gate.rules import RULES, Rule, Severity


@dataclass(frozen=True)
class Check:
    """A data-quality check declared on a dataset or a column.

    ``kind`` is the check's type as the format names it, normalised to lower case
    (Soda v4 ``missing``/``invalid``/``duplicate``/``row_count``, Soda v3
    ``no_missing_values``..., dbt ``not_null``...). ``key`` identifies the check
    across base and HEAD so that an unchanged check is not reported; it is the
    kind plus the canonical JSON of its configuration. ``spec`` keeps the raw
    configuration for the smoke test, which evaluates it.
    """

    kind: str
    key: str
    spec: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    line: int | None = field(default=None, compare=False)
    columns: tuple[str, ...] = ()

    @staticmethod
    def make(
        kind: str,
        spec: Mapping[str, Any] | None = None,
        *,
        line: int | None = None,
        columns: tuple[str, ...] = (),
    ) -> Check:
        """Build a check whose identity ignores key order and YAML layout."""
        spec = dict(spec or {})
        canonical = json.dumps(spec, sort_keys=True, default=str, separators=(",", ":"))
        key = f"{kind.lower()}:{','.join(columns)}:{canonical}"
        return Check(kind=kind.lower(), key=key, spec=spec, line=line, columns=columns)


@dataclass(frozen=True)
class Relationship:
    """A foreign key: ``columns`` of this dataset point at ``to`` (``table.column``).

    ODCS ``relationships``, DCS ``references`` and dbt ``foreign_key`` constraints
    all land here, so one rule family compares them. ``to`` is normalised to
    ``table.column`` (``table.(a,b)`` for several columns) and lower-cased where the
    format does not say otherwise.
    """

    columns: tuple[str, ...]
    to: str
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Column:
    """A column (or nested field) of a dataset.

    ``data_type`` is the type exactly as written; the type lattice parses it with
    sqlglot, so spelling never matters. ``required`` is ``True`` when the column
    must not be null (Soda: not ``optional``; DCS/ODCS ``required``; dbt
    ``not_null``), ``False`` when nulls are allowed and ``None`` when the format
    says nothing. ``position`` is the 0-based declaration order, used as evidence
    when pairing a removed and an added column as a rename. ``stable_id`` is a
    format-given identity that survives renames (ODCS v3.1 ``id``).
    ``constraints`` are the value constraints that are not part of the type
    (``minimum``, ``pattern``, ``minLength``...), as ``(key, value)`` pairs sorted
    by key, keys in the DCS/ODCS spelling whatever the format.
    ``physical_types`` are the column's types on named engines beside
    ``data_type``, as ``(dialect, type)`` pairs sorted by dialect (DCS
    ``config.snowflakeType`` and the like), each compared in its own dialect.
    """

    name: str
    data_type: str | None = None
    line: int | None = field(default=None, compare=False)
    position: int = 0
    required: bool | None = None
    unique: bool = False
    primary_key_position: int | None = None
    enum: tuple[str, ...] | None = None
    checks: tuple[Check, ...] = ()
    fields: tuple[Column, ...] = ()
    stable_id: str | None = None
    description: str | None = field(default=None, compare=False)
    constraints: tuple[tuple[str, Any], ...] = ()
    physical_types: tuple[tuple[str, str], ...] = ()

    @property
    def primary_key(self) -> bool:
        return self.primary_key_position is not None


@dataclass(frozen=True)
class Relation:
    """dbt: where a model's table lives, as its configs say (``None``: not configured).

    ``database``, ``schema`` (the *custom* schema dbt's ``generate_schema_name``
    appends to the target's) and ``alias`` are the values after dbt's precedence
    (the model file's ``config()``, then its properties entry, then
    ``dbt_project.yml`` by folder), trimmed; an expression the gate cannot
    evaluate is kept as its text. ``default_alias`` is the name dbt's default
    ``generate_alias_name`` uses without an alias (``orders``, ``orders_v2``).
    ``quoted``: the parts the project's ``quoting:`` sets (their case counts).
    ``macros``: the ``generate_*_name`` macros the project overrides (HEAD side).
    ``target_database``: the database the base side's ``profiles.yml`` target
    names (``None``: unknown), and ``target_source`` where, or why it is unknown
    (gate/dbt/profiles.py; HEAD side, for a relation that moved).
    """

    database: str | None = None
    schema: str | None = None
    alias: str | None = None
    default_alias: str = ""
    quoted: frozenset[str] = frozenset()
    macros: tuple[str, ...] = ()
    target_database: str | None = None
    target_source: str = ""


@dataclass(frozen=True)
class Server:
    """DCS/ODCS: one server of a contract, where its tables live (``servers:``).

    ``name`` is the DCS map key or the ODCS ``server``; ``type`` the engine as
    written (``postgres``, ``snowflake``...); ``location`` the parts that name
    the relation's container (``catalog``, ``project``, ``database``, ``schema``,
    ``dataset``), as (part, value) pairs, in that order.
    """

    name: str
    type: str | None = None
    location: tuple[tuple[str, str], ...] = ()
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Dataset:
    """A dataset consumers depend on, identified by ``id``.

    ``id`` is what acknowledgement tokens name: the Soda ``dataset`` field, the
    dbt model name (``<model>.v<N>`` per version), the DCS model name, the ODCS
    schema object's ``physicalName`` or ``name`` (see docs/formats).
    ``path`` and ``line`` locate it in its contract file so reports and
    annotations can point at it. ``version`` is the semantic version of the
    contract when the format has one. ``enforced`` is ``False`` for a dbt model
    whose contract is not enforced; the gate ignores such models for breaking
    rules but notices when enforcement is switched off. ``allow_extra_columns``
    relaxes the smoke test's schema enforcement. ``enabled`` is ``False`` for a
    dbt model switched off with ``enabled: false`` (dbt builds nothing, so its
    consumers break); ``deprecation_date`` is when a dbt model may go away
    without breaking its contract (timezone-aware). ``unpinned_name`` is the
    name consumers use without a version when it resolves to this dataset (dbt:
    ``ref('orders')`` reads the ``latest_version``).
    """

    id: str
    path: str
    format: str
    columns: tuple[Column, ...] = ()
    checks: tuple[Check, ...] = ()
    line: int | None = field(default=None, compare=False)
    version: str | None = None
    #: Line of the contract's version key (ODCS ``version``, DCS ``info.version``):
    #: where the version rules point a reviewer, rather than the dataset's line.
    version_line: int | None = field(default=None, compare=False)
    enforced: bool = True
    stable_id: str | None = None
    allow_extra_columns: bool = False
    dialect: str | None = None
    relationships: tuple[Relationship, ...] = ()
    enabled: bool = True
    deprecation_date: datetime | None = field(default=None, compare=False)
    unpinned_name: str | None = field(default=None, compare=False)
    #: Other names consumers use for the table (dbt ``alias``, ODCS logical ``name``).
    aliases: tuple[str, ...] = field(default=(), compare=False)
    #: dbt: the names (no extension) a model file of this dataset may have, in the
    #: order dbt looks for them (a version's ``defined_in`` or ``<model>_v<v>``,
    #: then ``<model>`` for the latest version).
    model_names: tuple[str, ...] = field(default=(), compare=False)
    #: dbt: the model file (``.sql``/``.py``) found for the dataset at this side.
    model_file: str | None = field(default=None, compare=False)
    #: dbt: no file of the model's names is in its project's model paths, so dbt
    #: builds nothing for this properties entry (it only warns: NoNodeForYamlKey).
    model_file_missing: bool = field(default=False, compare=False)
    #: dbt, with ``model_file_missing``: its project's model paths hold other model files
    #: at this side, so the project commits its models and this entry describes one dbt
    #: never built; ``False``: none in sight, the files may be generated at build time.
    model_files_committed: bool = field(default=False, compare=False)
    #: dbt: the ``name:`` of the project the model belongs to (``None`` when the
    #: properties file is in no dbt project). dbt keys a node by project and
    #: model (``model.<project>.<model>``), so two projects may share a model name.
    project: str | None = field(default=None, compare=False)
    #: dbt: ``enabled`` / ``contract.enforced`` settings that are expressions the
    #: gate cannot evaluate, as (setting, expression, path, line); each is read as
    #: true (the model stays guarded) and a changed one is a finding.
    unevaluable: tuple[tuple[str, str, str, int | None], ...] = field(default=(), compare=False)
    #: dbt: why an unenforced model's entry could not be read, as (detail, line).
    #: An unenforced model is no contract, so this refuses only if the model file's
    #: own ``config()`` turns out to enforce it (the engine checks).
    unreadable: tuple[str, int | None] | None = field(default=None, compare=False)
    #: dbt: the relation the model's configs give it (``None``: not a dbt model).
    relation: Relation | None = field(default=None, compare=False)
    #: dbt: model-level constraints naming an undeclared column, not compared because the
    #: properties or project make the model a view (dbt renders no constraint DDL for one),
    #: as (detail, line): a refusal if its model file's ``config()`` makes it a table.
    view_only: tuple[tuple[str, int | None], ...] = field(default=(), compare=False)
    #: dbt: model-level constraints naming an undeclared column of a model the properties
    #: and project do not make a view, as (detail, line): a refusal (the warehouse fails the
    #: table's DDL) unless its model file's ``config()`` makes it a view; not compared.
    table_only: tuple[tuple[str, int | None], ...] = field(default=(), compare=False)
    #: dbt: the literal ``materialized`` of the model file's ``config()`` (lower-cased),
    #: ``None`` when not said, ``gate.formats.dbt.model_config.NOT_LITERAL`` when not a
    #: literal (Jinja, a call under a condition: the other levels' reading stands).
    materialized: str | None = field(default=None, compare=False)
    #: dbt: whether the properties' ``config:`` or ``dbt_project.yml`` set ``materialized``
    #: (in any way, Jinja included). Not said there, nor in the model file: dbt's default,
    #: a view. ``True`` unless the parser saw neither set it (fail closed).
    materialized_said: bool = field(default=True, compare=False)
    #: DCS/ODCS: the contract's servers, where its tables live (``gate.formats.servers``).
    servers: tuple[Server, ...] = field(default=(), compare=False)
    #: dbt: the model's resolved ``access`` (``public``/``protected``/``private``;
    #: ``None``: not a dbt model, or a value the gate cannot evaluate).
    access: str | None = field(default=None, compare=False)

    def column(self, name: str) -> Column | None:
        """Find a top-level column by exact name."""
        for col in self.columns:
            if col.name == name:
                return col
        return None


@dataclass(frozen=True)
class Consumer:
    """An in-repo reader of a changed element: where, which object, and how it reads it.

    ``usage`` is one of selected, filtered, joined, aggregated, grouped, ordered,
    star (``SELECT *``) or read (the table itself); see docs/impact.md.
    """

    path: str
    line: int | None
    object: str
    usage: str


@dataclass(frozen=True)
class LineageHop:
    """A model that passes a changed column on: its output ``model.column``, where.

    ``how``: ``same`` (same name), ``renamed`` (an alias), ``cast``, ``star``
    (``SELECT *``). ``path:line`` is where the output column is written.
    """

    model: str
    column: str
    path: str
    line: int | None
    how: str


#: How a downstream path ends, in the words reports use (``LineagePath.end``).
LINEAGE_ENDS = {
    "output": "final output",
    "aggregated": "ends in an aggregate",
    "filtered": "ends in a filter",
    "joined": "ends in a join",
    "grouped": "ends in a GROUP BY",
    "ordered": "ends in an ORDER BY",
    "derived": "ends in an expression",
    "cut": "lineage cut",
}


@dataclass(frozen=True)
class LineagePath:
    """Where a changed column goes past its first reader (gate.lineage.downstream).

    ``source`` is the changed ``dataset.column``; ``hops`` the models that pass
    it on, in order (at least one). ``end`` is a key of ``LINEAGE_ENDS``:
    ``output`` when nothing in the repository reads the last hop's column, a
    usage word when a clause consumes it (at ``end_path:end_line``, in
    ``end_object``), ``cut`` when a bound stopped the walk (``note`` says which).
    """

    source: str
    hops: tuple[LineageHop, ...]
    end: str
    end_path: str | None = None
    end_line: int | None = None
    end_object: str | None = None
    note: str | None = None

    def arrow(self) -> str:
        """``stg_orders.discount_code -> fct_orders.discount -> rpt.discount``."""
        return " -> ".join([self.source, *(f"{h.model}.{h.column}" for h in self.hops)])

    def ending(self) -> str:
        """``ends in an aggregate at models/x.sql:12 (x)``, ``final output``, the cut note."""
        if self.end == "cut":
            return self.note or "lineage cut"
        words = LINEAGE_ENDS.get(self.end, f"ends ({self.end})")
        if self.end_path is None:
            return words
        where = f"{self.end_path}:{self.end_line}" if self.end_line else self.end_path
        return f"{words} at {where}" + (f" ({self.end_object})" if self.end_object else "")


@dataclass(frozen=True)
class Change:
    """One finding: a rule that fired on one dataset (and maybe one column).

    ``path`` and ``line`` point at the HEAD file where the element still exists
    (or its nearest surviving parent), else at the base file, so annotations land
    where a reviewer can act. ``old_dataset`` is set for renames so either name
    acknowledges the change. Findings are built by ``Change.of`` from a catalogue
    ``Rule``, so every finding's id is in the catalogue and carries its direction.
    """

    rule: str
    severity: Severity
    dataset: str
    column: str | None
    path: str
    line: int | None
    message: str
    before: str | None = None
    after: str | None = None
    old_dataset: str | None = None
    acknowledged: bool = False
    #: tightened (breaks producers), loosened (breaks consumers), both or undetermined.
    direction: str | None = None
    #: In-repo readers of the changed element at HEAD (filled by gate.consumers).
    consumers: tuple[Consumer, ...] = ()
    #: Readers outside the repository (``gate.lineage.external.ExternalRead``,
    #: not imported: a source-layer value), filled by gate.lineage.attach.
    external: tuple[Any, ...] = ()
    #: Where the changed column goes past its first readers (gate.lineage.downstream).
    downstream: tuple[LineagePath, ...] = ()

    def __post_init__(self) -> None:
        # Findings are made from catalogue rules; an id outside it is a programming
        # error, caught where the finding is made rather than in a report.
        if self.rule not in RULES:
            raise ValueError(f"unknown rule id {self.rule!r}: add it to gate/rules.py")

    @classmethod
    def of(
        cls,
        rule: Rule,
        severity: Severity,
        dataset: str,
        path: str,
        line: int | None,
        message: str,
        *,
        column: str | None = None,
        before: str | None = None,
        after: str | None = None,
        old_dataset: str | None = None,
        direction: str | None = None,
    ) -> Change:
        """The one way the gate builds a finding: from a catalogue rule, never an id.

        ``direction`` is the handler's own when it decides one per finding
        (``check_changed``), else the rule's (one for every non-additive rule).
        """
        return cls(
            rule=rule.id,
            severity=severity,
            dataset=dataset,
            column=column,
            path=path,
            line=line,
            message=message,
            before=before,
            after=after,
            old_dataset=old_dataset,
            direction=direction or rule.direction,
        )

    @property
    def spec(self) -> Rule:
        """The catalogue entry of this finding's rule."""
        return RULES[self.rule]

    @property
    def breaking(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def target(self) -> str:
        """``dataset`` or ``dataset.column``: how reports name the element."""
        return f"{self.dataset}.{self.column}" if self.column else self.dataset


@dataclass(frozen=True)
class NotAnalysed:
    """A candidate consumer file the gate could not read, and why (never dropped silently)."""

    path: str
    reason: str
    line: int | None = None


@dataclass(frozen=True)
class Contract:
    """One parsed contract file: its path, its detected format, its datasets.

    ``warnings``: what the published schema objects to in parts the gate does not
    compare (servers, team, quality-rule shape...), each with its line.
    """

    path: str
    format: str
    datasets: tuple[Dataset, ...] = ()
    warnings: tuple[ContractWarning, ...] = ()


@dataclass(frozen=True)
class ContractWarning:
    """A problem in a contract that does not stop the comparison: file, line, message."""

    path: str
    detail: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.detail}"


class GateError(Exception):
    """Base of the errors the faces turn into exit code 2 with one clear line."""


class ContractError(GateError):
    """A contract file that cannot be trusted: bad YAML, bad shape, bad values.

    The message is one line that starts with ``path:line:`` when the line is
    known, so editors and CI logs can jump to it.
    """

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str, int | None]]:
        # Parsing runs in worker processes; the error must survive pickling intact.
        return (type(self), (self.path, self.detail, self.line))


class ContractErrors(ContractError):
    """Every contract file a run refused, in input order, at least one.

    A platform checking hundreds of contracts wants every refusal of a run at
    once, not one per run. It *is* a ``ContractError`` (the first one: same
    ``path``, ``line``, ``detail`` and message), so code written for the single
    error keeps working; ``errors`` holds them all.
    """

    def __init__(self, errors: tuple[ContractError, ...]) -> None:
        if not errors:
            raise ValueError("ContractErrors needs at least one error")
        first = errors[0]
        super().__init__(first.path, first.detail, first.line)
        self.errors = errors

    def __reduce__(self) -> tuple[type, tuple[tuple[ContractError, ...]]]:  # type: ignore[override]
        return (type(self), (self.errors,))


class GitError(GateError):
    """git could not answer: not a repository, unknown ref, shallow clone..."""


class UsageError(GateError):
    """The invocation itself is wrong: a bad flag value, an unreadable file."""
