"""The column family (``column_*``, ``required_*``, ``unique_*``, ``primary_key_changed``):
a column removed, added, renamed, made required or unique, and the key they form.

Handlers only; which columns pair is ``gate.diff.pairing.pair_columns`` and the
walk over nested fields is ``gate.diff.walk``.
"""

from __future__ import annotations

from gate import rules
from gate.diff.emitter import DatasetPair
from gate.model import Column, Dataset


def removed(pair: DatasetPair, old: Column, name: str, line: int | None) -> None:
    pair.emit(
        rules.COLUMN_REMOVED,
        f"column '{name}' was removed",
        column=name,
        line=line,
        before=pair.type_text(old) or name,
    )


def added(pair: DatasetPair, new: Column, name: str) -> None:
    if new.required:
        pair.emit(
            rules.REQUIRED_COLUMN_ADDED,
            f"new column '{name}' is required; existing producers do not write it",
            column=name,
            line=new.line,
            after=pair.type_text(new),
        )
    else:
        pair.emit(
            rules.COLUMN_ADDED,
            f"column '{name}' was added",
            column=name,
            line=new.line,
            after=pair.type_text(new),
        )


def renamed(pair: DatasetPair, old: Column, new: Column, name: str, prefix: str) -> None:
    """A paired column under another name: by case only, or a rename."""
    if old.name == new.name:
        return
    old_name = prefix + old.name
    if old.name.casefold() == new.name.casefold():
        pair.emit(
            rules.COLUMN_CASE_CHANGED,
            f"column '{old_name}' renamed to '{name}' (case only); most engines "
            "treat this as another column or a clash",
            column=name,
            line=new.line,
            before=old_name,
            after=name,
        )
    else:
        pair.emit(
            rules.COLUMN_RENAMED,
            f"column '{old_name}' renamed to '{name}'",
            column=name,
            line=new.line,
            before=old_name,
            after=name,
        )


def _required_rank(value: bool | None) -> int:
    """Explicitly nullable < unspecified < required: a rise is ``required_added``."""
    return {False: 0, None: 1, True: 2}[value]


def required(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    before, after = _required_rank(old.required), _required_rank(new.required)
    if after > before:
        pair.emit(
            rules.REQUIRED_ADDED,
            f"column '{name}' became required; producers that write nulls will fail",
            column=name,
            line=new.line,
            before="nullable" if old.required is False else "unspecified",
            after="required" if new.required else "unspecified",
        )
    elif after < before:
        pair.emit(
            rules.REQUIRED_REMOVED,
            f"column '{name}' is no longer required; consumers may now see nulls",
            column=name,
            line=new.line,
            before="required" if old.required else "unspecified",
            after="nullable" if new.required is False else "unspecified",
        )


def unique(pair: DatasetPair, old: Column, new: Column, name: str) -> None:
    """Uniqueness, counting the column of a single-column primary key as unique."""
    old_unique = old.unique or name == pair.old_sole_key
    new_unique = new.unique or name == pair.new_sole_key
    if old_unique and not new_unique:
        pair.emit(
            rules.UNIQUE_REMOVED,
            f"column '{name}' is no longer unique; consumers may see duplicates",
            column=name,
            line=new.line,
        )
    elif new_unique and not old_unique:
        pair.emit(rules.UNIQUE_ADDED, f"column '{name}' is now unique", column=name, line=new.line)


def primary_key(pair: DatasetPair) -> None:
    def key(dataset: Dataset) -> tuple[str, ...]:
        keyed = [c for c in dataset.columns if c.primary_key_position is not None]
        return tuple(c.name for c in sorted(keyed, key=lambda c: c.primary_key_position or 0))

    before, after = key(pair.old), key(pair.new)
    if before != after:
        pair.emit(
            rules.PRIMARY_KEY_CHANGED,
            f"primary key changed from ({', '.join(before) or 'none'}) "
            f"to ({', '.join(after) or 'none'})",
            before=", ".join(before) or None,
            after=", ".join(after) or None,
        )
