"""The type family (``type_*``) over one column pair: declared, removed, widened, narrowed,
changed or unknown, in the column's dialect and on each named engine.

A type rule's message word is the rule's ``verb`` in the catalogue (``type_widened``:
widened), not its id's spelling. A struct that lost a field is a ``column_removed``
of the nested field (``a.b``), found here because only the type text declares it.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate import lattice as types
from gate import rules
from gate.diff.emitter import DatasetPair, Emitter, type_text
from gate.model import Column, Dataset
from gate.rules import Rule

#: The lattice's verdict -> the rule it is.
_RULE_OF = {
    types.TypeChange.WIDENED: rules.TYPE_WIDENED,
    types.TypeChange.NARROWED: rules.TYPE_NARROWED,
    types.TypeChange.CHANGED: rules.TYPE_CHANGED,
}


def unknown_type(out: Emitter, dataset: Dataset, column: Column, name: str, dialect: str) -> None:
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
        rules.TYPE_UNKNOWN,
        dataset,
        f"column '{name}' has type '{' '.join(text.split())}', which {dialect} SQL does not know"
        f"{did_you_mean}; it is compared by spelling only. A real type (an enum, a domain)? "
        "Set 'dialect:' to your engine's, or 'rules: {type_unknown: off}'",
        column=name,
        line=column.line,
        after=type_text(text, dialect),
    )


def unknown_types(
    out: Emitter, dataset: Dataset, columns: Sequence[Column], prefix: str, dialect: str
) -> None:
    """``unknown_type`` over new columns and their nested fields."""
    for column in columns:
        name = prefix + column.name
        unknown_type(out, dataset, column, name, dialect)
        if column.fields:
            unknown_types(out, dataset, column.fields, f"{name}.", dialect)


def column_type(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    """The declared ``data_type`` of one column pair."""
    before = pair.old_type_text(old)
    after = pair.type_text(new)
    if old.data_type is None and new.data_type is None:
        return
    if old.data_type is None:
        pair.emit(
            rules.TYPE_DECLARED,
            f"column '{name}' now declares type {after}",
            column=name,
            line=new.line,
            after=after,
        )
        unknown_type(pair.out, pair.new, new, name, pair.dialect)
        return
    if new.data_type is None:
        pair.emit(
            rules.TYPE_REMOVED,
            f"column '{name}' no longer declares a type (was {before})",
            column=name,
            line=new.line,
            before=before,
        )
        return
    result = types.compare(old.data_type, new.data_type, pair.dialect, pair.old_dialect)
    for field in result.removed_fields:
        pair.emit(
            rules.COLUMN_REMOVED,
            f"nested field '{types.join_path(name, field)}' was removed",
            column=types.join_path(name, field),
            line=new.line,
            before=before,
            after=after,
        )
    rule = _RULE_OF.get(result.change)
    if rule is None:
        return
    unknown_type(pair.out, pair.new, new, name, pair.dialect)
    # The lattice's reason usually starts with both types; say them once.
    detail = f"{before} -> {after}"
    extra = result.reason
    if extra.startswith(detail):
        extra = extra[len(detail) :].strip()
    if extra and extra not in ("widens", "changes type"):
        detail = f"{detail} ({extra})"
    pair.emit(
        rule,
        f"column '{name}' type {rule.verb}: {detail}",
        column=name,
        line=new.line,
        before=before,
        after=after,
    )


def physical_types(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    """A column's type on a named engine (DCS ``config.snowflakeType``), in that
    engine's dialect: the same rules as ``data_type``, the engine named."""
    if old.physical_types == new.physical_types:
        return
    before_of, after_of = dict(old.physical_types), dict(new.physical_types)
    for dialect in sorted(before_of.keys() | after_of.keys()):
        was, now = before_of.get(dialect), after_of.get(dialect)
        before, after = type_text(was, dialect), type_text(now, dialect)
        what = f"column '{name}' {dialect} type"
        if was is None:
            pair.emit(
                rules.TYPE_DECLARED, f"{what} now declared: {after}", column=name,
                line=new.line, after=after,
            )  # fmt: skip
            continue
        if now is None:
            pair.emit(
                rules.TYPE_REMOVED, f"{what} no longer declared (was {before})", column=name,
                line=new.line, before=before,
            )  # fmt: skip
            continue
        result = types.compare(was, now, dialect)
        rule: Rule | None = _RULE_OF.get(result.change)
        if rule is None and result.removed_fields:
            rule = rules.TYPE_CHANGED
        if rule is None:
            continue
        pair.emit(
            rule, f"{what} {rule.verb}: {before} -> {after}", column=name, line=new.line,
            before=before, after=after,
        )  # fmt: skip
