"""Pair base and HEAD datasets by identity and emit one ``Change`` per finding.

The pairing walkers are written once (datasets, then columns, then nested
fields) and each rule is a small comparison over a *pair* of old/new elements,
as buf's breaking checker does. Pairing is by identity, never by path: a file
that moves without changing its dataset is not a change, and a dataset that
moves between files is not a removal plus an addition.

Severities come from a ``SeverityFn`` supplied by the caller (the rule
catalogue's defaults, adjusted by config and per-dataset policy), so the core
stays free of configuration. The diff never does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from gate import lattice as types
from gate import rules
from gate.diff import checks as diff_checks
from gate.diff import constraints as diff_constraints
from gate.diff import regex_lang
from gate.diff import relationships as diff_relationships
from gate.model import Check, Column, Consumer, Dataset
from gate.rules import Severity
from gate.versioning import compare_versions, is_major_bump

#: (rule id, dataset id, side the finding breaks or None for the rule's own) ->
#: effective severity. ``Severity.OFF`` drops the finding.
SeverityFn = Callable[[str, str, "str | None"], Severity]


def default_severity(rule_id: str, dataset_id: str, breaks: str | None = None) -> Severity:
    """The catalogue's severity, ignoring config: what a bare run uses."""
    return rules.get(rule_id).severity


@dataclass(frozen=True)
class Change:
    """One finding: a rule that fired on one dataset (and maybe one column).

    ``path`` and ``line`` point at the HEAD file where the element still exists
    (or its nearest surviving parent), else at the base file, so annotations land
    where a reviewer can act. ``old_dataset`` is set for renames so either name
    acknowledges the change.
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

    @property
    def breaking(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def target(self) -> str:
        """``dataset`` or ``dataset.column``: how reports name the element."""
        return f"{self.dataset}.{self.column}" if self.column else self.dataset


#: The direction a rule's findings always have, from the side it breaks.
_DIRECTIONS = {
    rule.id: {"producers": "tightened", "consumers": "loosened"}.get(
        rule.breaks, "undetermined" if rule.id == "constraint_changed" else "both"
    )
    for rule in rules.all_rules()
    if rule.severity is not Severity.INFO
}


class _Emitter:
    """Collects changes, resolving severities and dropping those turned off."""

    def __init__(self, severity_of: SeverityFn) -> None:
        self.severity_of = severity_of
        self.changes: list[Change] = []

    def emit(
        self,
        rule_id: str,
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
        severity = self.severity_of(rule_id, dataset.id, breaks)
        if old_dataset is not None and old_dataset != dataset.id:
            # A policy on either name applies to a rename: take the stricter.
            other = self.severity_of(rule_id, old_dataset, breaks)
            severity = min(severity, other, key=lambda s: s.rank)
        if severity is Severity.OFF:
            return
        self.changes.append(
            Change(
                rule=rule_id,
                severity=severity,
                dataset=dataset.id,
                column=column,
                path=path or dataset.path,
                line=line if line is not None else dataset.line,
                message=message,
                before=before,
                after=after,
                old_dataset=old_dataset,
                direction=direction or _DIRECTIONS.get(rule_id),
            )
        )


def _type_text(text: str | None, dialect: str) -> str | None:
    return types.canonical(text, dialect) if text else None


def _unknown_type(out: _Emitter, dataset: Dataset, column: Column, name: str, dialect: str) -> None:
    """Warn about a type the dialect does not know: a typo reads like an enum or a vendor type.

    Called only where the column or its type text is new in this PR, so an
    unknown type that was already there is not repeated on every run.
    """
    text = column.data_type
    if not text or types.is_known(text, dialect):
        return
    hint = types.suggest(text, dialect)
    did_you_mean = f" (did you mean '{hint}'?)" if hint else ""
    out.emit(
        "type_unknown",
        dataset,
        f"column '{name}' has type '{' '.join(text.split())}', which {dialect} SQL does not know"
        f"{did_you_mean}; it is compared by spelling only. A real type (an enum, a domain)? "
        "Set 'dialect:' to your engine's, or 'rules: {type_unknown: off}'",
        column=name,
        line=column.line,
        after=_type_text(text, dialect),
    )


def _unknown_types(
    out: _Emitter, dataset: Dataset, columns: Sequence[Column], prefix: str, dialect: str
) -> None:
    """``_unknown_type`` over new columns and their nested fields."""
    for column in columns:
        name = prefix + column.name
        _unknown_type(out, dataset, column, name, dialect)
        if column.fields:
            _unknown_types(out, dataset, column.fields, f"{name}.", dialect)


def _column_signature(dataset: Dataset, dialect: str) -> frozenset[tuple[str, str | None]]:
    """Names and canonical types: evidence that two datasets are the same table.

    A set, not a sequence: column order says nothing about the table (dbt's
    ``include: all`` lists a version's columns in another order than written,
    and a moved file is often rewritten), as ``columns_overlap`` already treats it.
    """
    return frozenset((c.name, _type_text(c.data_type, dialect)) for c in dataset.columns)


T = TypeVar("T", Dataset, Column)


def _pair_unique(
    removed: list[T],
    added: list[T],
    pairs: list[tuple[T, T]],
    old_key: Callable[[T], Hashable | None],
    new_key: Callable[[T], Hashable | None] | None = None,
) -> tuple[list[T], list[T]]:
    """Pair leftovers whose key is unique on both sides; return the new leftovers.

    Uniqueness on both sides is the "clear evidence" rule: two candidates for a
    rename mean no rename. Keys are indexed, so pairing stays linear even for a
    PR that moves thousands of datasets.
    """

    def unique(items: list[T], key: Callable[[T], Hashable | None]) -> dict[Hashable, T]:
        groups: dict[Hashable, list[T]] = {}
        for item in items:
            value = key(item)
            if value is not None:
                groups.setdefault(value, []).append(item)
        return {value: group[0] for value, group in groups.items() if len(group) == 1}

    if not removed or not added:
        return removed, added
    olds = unique(removed, old_key)
    news = unique(added, new_key or old_key)
    matched = [(old, news[value]) for value, old in olds.items() if value in news]
    if not matched:
        return removed, added
    pairs.extend(matched)
    gone = {id(item) for pair in matched for item in pair}
    return [d for d in removed if id(d) not in gone], [d for d in added if id(d) not in gone]


def _pair_datasets(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    renamed_paths: dict[str, str],
    dialect: str,
) -> tuple[list[tuple[Dataset, Dataset]], list[Dataset], list[Dataset]]:
    """Pair datasets by id, then detect renames on the leftovers.

    Returns (pairs, removed, added). A pair whose ids differ is a rename. Rename
    evidence, strongest first: the same stable id (ODCS v3.1); the same contract
    file (following git's rename detection) holding exactly one unpaired dataset
    on each side *and* sharing at least half of their column names
    (``columns_overlap``); the same columns with the same types, matching exactly
    one candidate.
    """
    head_by_id = {d.id: d for d in head}
    pairs: list[tuple[Dataset, Dataset]] = []
    removed: list[Dataset] = []
    for old in base:
        new = head_by_id.pop(old.id, None)
        if new is None:
            removed.append(old)
        else:
            pairs.append((old, new))
    added = list(head_by_id.values())
    # Only guarded datasets can be renamed: an unenforced dbt model was never a
    # contract, so an enforced model beside it is new, not the old one renamed.
    unguarded = [d for d in removed if not d.enforced], [d for d in added if not d.enforced]
    removed = [d for d in removed if d.enforced]
    added = [d for d in added if d.enforced]
    removed, added = _pair_unique(removed, added, pairs, lambda d: d.stable_id)
    path_pairs: list[tuple[Dataset, Dataset]] = []
    removed, added = _pair_unique(
        removed, added, path_pairs, lambda d: renamed_paths.get(d.path, d.path), lambda d: d.path
    )
    for old, new in path_pairs:
        if columns_overlap(old, new):
            pairs.append((old, new))
        else:  # the file survived, the table did not: a removal plus an addition
            removed.append(old)
            added.append(new)
    removed, added = _pair_unique(
        removed,
        added,
        pairs,
        lambda d: _column_signature(d, dialect) if d.columns else None,
    )
    return pairs, removed + unguarded[0], added + unguarded[1]


#: Share of column names two datasets must have in common (of all names on either
#: side) before a file rename counts as a dataset rename. git calls a file renamed
#: at 50% *text* similarity, which two unrelated tables written in one house style
#: easily reach; shared columns are evidence about the table itself.
COLUMN_OVERLAP = 0.5


def columns_overlap(old: Dataset, new: Dataset) -> bool:
    """True when at least ``COLUMN_OVERLAP`` of all column names (case-folded) are shared.

    Two datasets that declare no columns at all leave the file evidence standing
    (nothing contradicts it); one side without columns is no overlap.
    """
    before = {c.name.casefold() for c in old.columns}
    after = {c.name.casefold() for c in new.columns}
    if not before and not after:
        return True
    if not before or not after:
        return False
    return len(before & after) / len(before | after) >= COLUMN_OVERLAP


def _pair_columns(
    old_columns: Sequence[Column], new_columns: Sequence[Column], dialect: str
) -> tuple[list[tuple[Column, Column]], list[Column], list[Column]]:
    """Pair columns: stable id, exact name, then a case-only rename, then position.

    A removed and an added column count as a rename only with clear evidence,
    as docs/rules.md promises: the *only* removed and the *only* added column,
    at the same position with the same declared type. Anything less is a
    removal plus an addition, never a guess.
    """
    pairs: list[tuple[Column, Column]] = []
    removed, added = list(old_columns), list(new_columns)
    removed, added = _pair_unique(removed, added, pairs, lambda c: c.stable_id)
    removed, added = _pair_unique(removed, added, pairs, lambda c: c.name)
    removed, added = _pair_unique(removed, added, pairs, lambda c: c.name.casefold())
    if len(removed) == 1 and len(added) == 1:
        old, new = removed[0], added[0]
        old_type = _type_text(old.data_type, dialect)
        if (
            old_type
            and old.position == new.position
            and old_type == _type_text(new.data_type, dialect)
        ):
            return [*pairs, (old, new)], [], []
    return pairs, removed, added


def _removed_anchors(
    old_columns: Sequence[Column], survivors: dict[int, Column], fallback: int | None
) -> dict[int, int | None]:
    """Where each removed column stood, in the HEAD file (by ``id`` of the column).

    At its old next neighbour that survived, else its previous one, else the
    parent (as buf anchors). Two passes over the columns, so removing thousands
    of columns stays linear.
    """
    lines = [
        new.line if (new := survivors.get(id(column))) is not None else None
        for column in old_columns
    ]
    following: list[int | None] = [None] * len(old_columns)
    nearest: int | None = None
    for index in range(len(old_columns) - 1, -1, -1):
        following[index] = nearest
        if lines[index] is not None:
            nearest = lines[index]
    anchors: dict[int, int | None] = {}
    nearest = None
    for index, column in enumerate(old_columns):
        if id(column) not in survivors:
            anchors[id(column)] = following[index] or nearest or fallback
        if lines[index] is not None:
            nearest = lines[index]
    return anchors


def _sole_key(dataset: Dataset) -> str | None:
    """The column of a single-column primary key: unique whatever its flag says."""
    keyed = [c.name for c in dataset.columns if c.primary_key_position is not None]
    return keyed[0] if len(keyed) == 1 else None


def _required_rank(value: bool | None) -> int:
    """Explicitly nullable < unspecified < required: a rise is ``required_added``."""
    return {False: 0, None: 1, True: 2}[value]


def _fmt_values(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


class _DatasetDiff:
    """The rules over one pair of datasets (same identity, or a rename)."""

    def __init__(self, out: _Emitter, old: Dataset, new: Dataset, dialect: str) -> None:
        self.out = out
        self.old = old
        self.new = new
        self.dialect = dialect
        # Once per dataset, not per column: per column it was quadratic (10,000
        # changed columns took 46 s).
        self.old_sole_key = _sole_key(old)
        self.new_sole_key = _sole_key(new)

    def emit(self, rule_id: str, message: str, **kwargs: object) -> None:
        self.out.emit(rule_id, self.new, message, **kwargs)  # type: ignore[arg-type]

    def run(self) -> None:
        old, new = self.old, self.new
        if old.id != new.id:
            self.emit(
                "model_renamed",
                f"dataset renamed from '{old.id}' to '{new.id}'; consumers still read '{old.id}'",
                before=old.id,
                after=new.id,
                old_dataset=old.id,
            )
        self.columns(old.columns, new.columns, prefix="", parent_line=new.line)
        self.checks(old.checks, new.checks, column=None)
        self.primary_key()
        diff_relationships.emit_all(self.emit, old.relationships, new.relationships)

    def columns(
        self,
        old_columns: Sequence[Column],
        new_columns: Sequence[Column],
        prefix: str,
        parent_line: int | None,
    ) -> None:
        pairs, removed, added = _pair_columns(old_columns, new_columns, self.dialect)
        survivors = {id(old): new for old, new in pairs}
        anchors = _removed_anchors(old_columns, survivors, parent_line)
        for old in removed:
            name = prefix + old.name
            self.emit(
                "column_removed",
                f"column '{name}' was removed",
                column=name,
                line=anchors.get(id(old), parent_line),
                before=_type_text(old.data_type, self.dialect) or name,
            )
        for new in added:
            name = prefix + new.name
            if new.required:
                self.emit(
                    "required_column_added",
                    f"new column '{name}' is required; existing producers do not write it",
                    column=name,
                    line=new.line,
                    after=_type_text(new.data_type, self.dialect),
                )
            else:
                self.emit(
                    "column_added",
                    f"column '{name}' was added",
                    column=name,
                    line=new.line,
                    after=_type_text(new.data_type, self.dialect),
                )
            _unknown_types(self.out, self.new, [new], prefix, self.dialect)
        for old, new in pairs:
            self.column_pair(old, new, prefix)

    def column_pair(self, old: Column, new: Column, prefix: str) -> None:
        if old == new:  # lines are not part of equality: an unchanged column says nothing
            return
        name = prefix + new.name
        if old.name != new.name:
            old_name = prefix + old.name
            if old.name.casefold() == new.name.casefold():
                self.emit(
                    "column_case_changed",
                    f"column '{old_name}' renamed to '{name}' (case only); most engines "
                    "treat this as another column or a clash",
                    column=name,
                    line=new.line,
                    before=old_name,
                    after=name,
                )
            else:
                self.emit(
                    "column_renamed",
                    f"column '{old_name}' renamed to '{name}'",
                    column=name,
                    line=new.line,
                    before=old_name,
                    after=name,
                )
        self.column_type(old, new, name)
        self.physical_types(old, new, name)
        self.required(old, new, name)
        self.enum(old, new, name)
        old_unique = old.unique or name == self.old_sole_key
        new_unique = new.unique or name == self.new_sole_key
        if old_unique and not new_unique:
            self.emit(
                "unique_removed",
                f"column '{name}' is no longer unique; consumers may see duplicates",
                column=name,
                line=new.line,
            )
        elif new_unique and not old_unique:
            self.emit("unique_added", f"column '{name}' is now unique", column=name, line=new.line)
        diff_constraints.emit_all(
            self.emit,
            old,
            new,
            name,
            _type_text(new.data_type, self.dialect) or "",
            # Soda's regex runs in the warehouse: a search or a whole-value match.
            full_match_too="soda" in (self.old.format, self.new.format),
        )
        self.checks(
            old.checks,
            new.checks,
            name,
            anchor=new.line,
            values_changed=(old.enum, old.constraints) != (new.enum, new.constraints),
        )
        if old.fields or new.fields:
            self.columns(old.fields, new.fields, prefix=f"{name}.", parent_line=new.line)

    def column_type(self, old: Column, new: Column, name: str) -> None:
        before = _type_text(old.data_type, self.dialect)
        after = _type_text(new.data_type, self.dialect)
        if old.data_type is None and new.data_type is None:
            return
        if old.data_type is None:
            self.emit(
                "type_declared",
                f"column '{name}' now declares type {after}",
                column=name,
                line=new.line,
                after=after,
            )
            _unknown_type(self.out, self.new, new, name, self.dialect)
            return
        if new.data_type is None:
            self.emit(
                "type_removed",
                f"column '{name}' no longer declares a type (was {before})",
                column=name,
                line=new.line,
                before=before,
            )
            return
        result = types.compare(old.data_type, new.data_type, self.dialect)
        for field in result.removed_fields:
            self.emit(
                "column_removed",
                f"nested field '{types.join_path(name, field)}' was removed",
                column=types.join_path(name, field),
                line=new.line,
                before=before,
                after=after,
            )
        rule_id = {
            types.TypeChange.WIDENED: "type_widened",
            types.TypeChange.NARROWED: "type_narrowed",
            types.TypeChange.CHANGED: "type_changed",
        }.get(result.change)
        if rule_id is None:
            return
        _unknown_type(self.out, self.new, new, name, self.dialect)
        verb = {"type_widened": "widened", "type_narrowed": "narrowed", "type_changed": "changed"}
        # The lattice's reason usually starts with both types; say them once.
        detail = f"{before} -> {after}"
        extra = result.reason
        if extra.startswith(detail):
            extra = extra[len(detail) :].strip()
        if extra and extra not in ("widens", "changes type"):
            detail = f"{detail} ({extra})"
        self.emit(
            rule_id,
            f"column '{name}' type {verb[rule_id]}: {detail}",
            column=name,
            line=new.line,
            before=before,
            after=after,
        )

    def physical_types(self, old: Column, new: Column, name: str) -> None:
        """A column's type on a named engine (DCS ``config.snowflakeType``), in that
        engine's dialect: the same rules as ``data_type``, the engine named."""
        if old.physical_types == new.physical_types:
            return
        before_of, after_of = dict(old.physical_types), dict(new.physical_types)
        for dialect in sorted(before_of.keys() | after_of.keys()):
            was, now = before_of.get(dialect), after_of.get(dialect)
            before, after = _type_text(was, dialect), _type_text(now, dialect)
            what = f"column '{name}' {dialect} type"
            if was is None:
                self.emit(
                    "type_declared", f"{what} now declared: {after}", column=name,
                    line=new.line, after=after,
                )  # fmt: skip
                continue
            if now is None:
                self.emit(
                    "type_removed", f"{what} no longer declared (was {before})", column=name,
                    line=new.line, before=before,
                )  # fmt: skip
                continue
            result = types.compare(was, now, dialect)
            rule_id = {
                types.TypeChange.WIDENED: "type_widened",
                types.TypeChange.NARROWED: "type_narrowed",
                types.TypeChange.CHANGED: "type_changed",
            }.get(result.change)
            if rule_id is None and result.removed_fields:
                rule_id = "type_changed"
            if rule_id is None:
                continue
            verb = rule_id.removeprefix("type_")
            self.emit(
                rule_id, f"{what} {verb}: {before} -> {after}", column=name, line=new.line,
                before=before, after=after,
            )  # fmt: skip

    def required(self, old: Column, new: Column, name: str) -> None:
        before, after = _required_rank(old.required), _required_rank(new.required)
        if after > before:
            self.emit(
                "required_added",
                f"column '{name}' became required; producers that write nulls will fail",
                column=name,
                line=new.line,
                before="nullable" if old.required is False else "unspecified",
                after="required" if new.required else "unspecified",
            )
        elif after < before:
            self.emit(
                "required_removed",
                f"column '{name}' is no longer required; consumers may now see nulls",
                column=name,
                line=new.line,
                before="required" if old.required else "unspecified",
                after="nullable" if new.required is False else "unspecified",
            )

    def enum(self, old: Column, new: Column, name: str) -> None:
        if old.enum is None or new.enum is None:
            return
        gone = [v for v in old.enum if v not in new.enum]
        came = [v for v in new.enum if v not in old.enum]
        if gone:
            self.emit(
                "enum_value_removed",
                f"column '{name}' no longer allows {_fmt_values(gone)}",
                column=name,
                line=new.line,
                before=_fmt_values(old.enum),
                after=_fmt_values(new.enum),
            )
        if came:
            self.emit(
                "enum_value_added",
                f"column '{name}' now also allows {_fmt_values(came)}",
                column=name,
                line=new.line,
                before=_fmt_values(old.enum),
                after=_fmt_values(new.enum),
            )

    def checks(
        self,
        old_checks: Sequence[Check],
        new_checks: Sequence[Check],
        column: str | None,
        anchor: int | None = None,
        values_changed: bool = False,
    ) -> None:
        paired = diff_checks.pair(old_checks, new_checks)
        removed, added = paired.removed, paired.added
        if values_changed:
            # A check that only carries the enum or the constraints came or went
            # with them: the enum/constraint finding already says what changed, once.
            removed = [c for c in removed if not diff_checks.carries_values(c)]
            added = [c for c in added if not diff_checks.carries_values(c)]
        where = f"column '{column}'" if column else f"dataset '{self.new.id}'"
        for check in removed:
            self.emit(
                "check_removed",
                f"check '{check.kind}' on {where} was removed",
                column=column,
                line=anchor,
                before=diff_checks.describe(check, diff_checks.semantics(check)),
            )
        for old, new, direction in paired.changed:
            before = diff_checks.describe(old, diff_checks.semantics(old))
            after = diff_checks.describe(new, diff_checks.semantics(new))
            if before == after:  # the difference is in what it measures: show the kind only
                before, after = f"{old.kind} (before)", f"{new.kind} (now)"
            self.emit(
                "check_changed",
                f"check '{new.kind}' on {where} changed ({direction})",
                column=column,
                line=new.line if new.line is not None else anchor,
                before=before,
                after=after,
                breaks=diff_checks.BREAKS[direction],
                direction=direction,
            )
        for check in added:
            self.emit(
                "check_added",
                f"check '{check.kind}' on {where} was added",
                column=column,
                line=check.line,
                after=diff_checks.describe(check, diff_checks.semantics(check)),
            )

    def primary_key(self) -> None:
        def key(dataset: Dataset) -> tuple[str, ...]:
            keyed = [c for c in dataset.columns if c.primary_key_position is not None]
            return tuple(c.name for c in sorted(keyed, key=lambda c: c.primary_key_position or 0))

        before, after = key(self.old), key(self.new)
        if before != after:
            self.emit(
                "primary_key_changed",
                f"primary key changed from ({', '.join(before) or 'none'}) "
                f"to ({', '.join(after) or 'none'})",
                before=", ".join(before) or None,
                after=", ".join(after) or None,
            )


def _version_changes(out: _Emitter, old: Dataset, new: Dataset, start: int) -> None:
    """Semantic-version rules over the findings already emitted for this pair."""
    if old.version is None or new.version is None:
        return
    order = compare_versions(old.version, new.version)
    if order is None:
        return
    if order > 0:
        out.emit(
            "version_decreased",
            new,
            f"contract version went down from {old.version} to {new.version}",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )
        return
    breaking = any(c.severity is Severity.ERROR for c in out.changes[start:])
    if breaking and not is_major_bump(old.version, new.version):
        out.emit(
            "version_not_bumped",
            new,
            f"breaking change without a major version bump ({old.version} -> {new.version})",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )
    elif order < 0:
        out.emit(
            "version_bumped",
            new,
            f"contract version {old.version} -> {new.version}",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )


def _removed(
    out: _Emitter,
    old: Dataset,
    disabled: Dataset | None,
    orphan: Dataset | None,
    now: datetime | None,
) -> None:
    """A guarded dataset that is gone (or disabled), following dbt's ``same_contract_removed``:
    past its ``deprecation_date`` the removal was announced, so it is no break.

    ``orphan`` is the HEAD properties entry of a dbt model whose model file was
    deleted: dbt builds nothing for it, so the model is gone all the same.
    """
    where = disabled or orphan or old
    verb = "disabled" if disabled is not None else "removed"
    deadline = old.deprecation_date
    if now is not None and deadline is not None and deadline < now:
        out.emit(
            "model_removed_after_deprecation",
            where,
            f"dataset '{old.id}' was {verb} after its deprecation date ({deadline.isoformat()})",
            before=deadline.isoformat(),
        )
    elif disabled is not None:
        out.emit(
            "model_disabled",
            disabled,
            f"dataset '{old.id}' was disabled (enabled: false); dbt no longer builds it and "
            "its consumers will break",
            before="enabled",
            after="disabled",
        )
    elif orphan is not None:
        out.emit(
            "model_removed",
            orphan,
            f"dataset '{old.id}' was removed: its model file {old.model_file} was deleted while "
            f"its properties entry remains, so dbt no longer builds it (dbt only warns) and "
            "its consumers will break; delete the properties entry too, or restore the file",
        )
    else:
        out.emit("model_removed", old, f"dataset '{old.id}' was removed; its consumers will break")


def _latest_moves(out: _Emitter, base: Sequence[Dataset], head: Sequence[Dataset]) -> None:
    """An unpinned name (dbt ``ref('orders')``) that now resolves to another version.

    dbt marks both versions modified but raises no contract error: each version
    keeps its own relation, yet every unpinned consumer now reads other columns.
    """
    before = {d.unpinned_name: d for d in base if d.unpinned_name}
    for new in head:
        old = before.get(new.unpinned_name) if new.unpinned_name else None
        if old is None or old.id == new.id or not (old.enforced or new.enforced):
            continue
        out.emit(
            "latest_version_changed",
            new,
            f"unpinned references to '{new.unpinned_name}' now read '{new.id}' (was '{old.id}')",
            before=old.id,
            after=new.id,
        )


def _unevaluable(out: _Emitter, old: Dataset, new: Dataset) -> None:
    """A dbt ``enabled``/``contract.enforced`` that became an expression the gate
    cannot evaluate (or another one): read as true, so say so rather than pass."""
    before = {(setting, expression) for setting, expression, _p, _l in old.unevaluable}
    for setting, expression, path, line in new.unevaluable:
        if (setting, expression) in before:
            continue
        out.emit(
            "dbt_config_unevaluable",
            new,
            f"dataset '{new.id}': {setting} is now '{expression}': enforcement now depends "
            "on an expression the gate cannot evaluate (read as true: the model stays guarded)",
            path=path,
            line=line,
            after=expression,
        )


def diff_datasets(
    base: Sequence[Dataset],
    head: Sequence[Dataset],
    *,
    dialect: str = "spark",
    severity_of: SeverityFn = default_severity,
    renamed_paths: dict[str, str] | None = None,
    now: datetime | None = None,
) -> list[Change]:
    """Every change between the base and HEAD datasets, in a stable order.

    ``renamed_paths`` maps base paths to HEAD paths for files git saw move, so a
    moved file whose dataset id changed is still a ``model_renamed``. ``now``
    (timezone-aware) decides whether a removed dataset's ``deprecation_date``
    has passed; without it every removal of a guarded dataset is breaking.
    """
    out = _Emitter(severity_of)
    regex_lang.start_run()  # one time budget for all the pattern automata of this diff
    # A disabled dbt model does not exist for its consumers: compare it as absent
    # and say "disabled" where it was removed.
    disabled = {d.id: d for d in head if not d.enabled}
    # A dbt properties entry whose model file was there at the base and is gone
    # now: dbt builds nothing for it, so it is absent too. "There" is anything
    # but known missing: a name two files held at the base (one disabled, as
    # dbt allows) has no single file, yet dbt built it.
    had_file = {d.id for d in base if not d.model_file_missing}
    orphans = {d.id: d for d in head if d.model_file_missing and d.id in had_file}
    base = [d for d in base if d.enabled]
    head = [d for d in head if d.enabled and d.id not in orphans]
    pairs, removed, added = _pair_datasets(base, head, renamed_paths or {}, dialect)
    for old in removed:
        if old.enforced:
            _removed(out, old, disabled.get(old.id), orphans.get(old.id), now)
    for new in added:
        if new.enforced:
            out.emit("model_added", new, f"dataset '{new.id}' was added")
            _unknown_types(out, new, new.columns, "", dialect)
    for new in head:
        if new.enforced and new.model_file_missing:
            names = " or ".join(f"{n}.sql/.py" for n in new.model_names) or "its model file"
            out.emit(
                "model_file_missing",
                new,
                f"dataset '{new.id}' has no model file ({names}) in its project's model "
                "paths: dbt builds nothing for this properties entry and only warns",
            )
    _latest_moves(out, base, head)
    for old, new in pairs:
        _unevaluable(out, old, new)
        if old.enforced and not new.enforced:
            out.emit(
                "contract_enforcement_removed",
                new,
                f"dataset '{new.id}' no longer enforces its contract",
                before="enforced",
                after="not enforced",
            )
            continue
        if not new.enforced:
            continue
        if not old.enforced:
            # The base model guaranteed nothing: its documented columns are no
            # promise a reader relied on, so they are not compared (issue #21).
            out.emit(
                "contract_enforcement_added",
                new,
                f"dataset '{new.id}' now enforces its contract",
                before="not enforced",
                after="enforced",
            )
            _unknown_types(out, new, new.columns, "", dialect)
            continue
        start = len(out.changes)
        _DatasetDiff(out, old, new, dialect).run()
        _version_changes(out, old, new, start)
    return out.changes
