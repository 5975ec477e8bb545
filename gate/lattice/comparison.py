"""Compare two types, walking containers and classifying leaves; the canonical spelling.

Split from the lattice as the part that puts the others together: parse both
types in the dialect, pair their parts (``structure``), classify each pair of
leaves (``leaves``) and keep the worst change with its reason. ``canonical``
lives here because a spelling is used only when it compares SAME to the type.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from sqlglot import exp

from gate.lattice.change import _SEVERITY, TypeChange, TypeComparison
from gate.lattice.dialects import T, validate_dialect
from gate.lattice.leaves import _classify, _Leaf, _leaf, _Moment
from gate.lattice.parsing import _parse
from gate.lattice.spelling import _render
from gate.lattice.structure import _element, _Field, _fields, _key_value, _quote, join_path


@functools.lru_cache(maxsize=16384)
def canonical(text: str, dialect: str = "spark") -> str:
    """The spelling reports use: the dialect's own names, defaults filled in.

    Containers use one style in every dialect (``ARRAY<STRUCT<a INT>>``,
    ``MAP<STRING, INT>``), type parameters have no spaces (``DECIMAL(10,2)``).
    Unknown types keep their text, whitespace collapsed and upper-cased. The
    spelling always reads back as the same type in the dialect.
    """
    dialect = validate_dialect(dialect)
    dt = _parse(text, dialect)
    if dt is None:
        return " ".join(text.split()).upper()
    spelled = _render(dt, dialect)
    back = _parse(spelled, dialect)
    if back is not None and _same(dt, back, dialect):
        return spelled
    return text.strip()  # sqlglot cannot spell this type back (T-SQL INT8 is no TINYINT)


def _same(a: exp.DataType, b: exp.DataType, dialect: str) -> bool:
    result = _compare(a, b, dialect, "")
    return result.change is TypeChange.SAME and not (result.removed or result.added)


@dataclass
class _Result:
    change: TypeChange = TypeChange.SAME
    reason: str = ""
    others: int = 0  # further non-SAME parts, summarised in the reason
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    def absorb(self, change: TypeChange, reason: str) -> None:
        if change is TypeChange.SAME:
            return
        if _SEVERITY[change] > _SEVERITY[self.change]:
            if self.change is not TypeChange.SAME:
                self.others += 1
            self.change, self.reason = change, reason
        else:
            self.others += 1

    def merge(self, other: _Result) -> None:
        self.absorb(other.change, other.reason)
        self.others += other.others
        self.removed += other.removed
        self.added += other.added


@functools.lru_cache(maxsize=65536)
def compare(
    old: str, new: str, dialect: str = "spark", old_dialect: str | None = None
) -> TypeComparison:
    """Classify the move from ``old`` to ``new``; see the module docstring.

    ``old_dialect``: the dialect ``old`` is written in, where it is not ``new``'s (a
    contract moved between dbt projects on different warehouses): each side is
    parsed, and its scalars read, in its own; Postgres' ``int8`` stays a BIGINT
    beside Spark's ``smallint``."""
    dialect = validate_dialect(dialect)
    was = validate_dialect(old_dialect) if old_dialect else dialect
    a, b = _parse(old, was), _parse(new, dialect)
    if a is None or b is None:
        before, after = canonical(old, was), canonical(new, dialect)
        if a is None and b is None and before == after:
            return TypeComparison(TypeChange.SAME, "")
        what = "an unknown type" if a is None and b is None else "to or from an unknown type"
        return TypeComparison(TypeChange.CHANGED, f"{before} -> {after} changes {what}")
    result = _compare(a, b, dialect, "", was)
    reason = result.reason
    if result.others and reason:
        reason += f" (+{result.others} more)"
    return TypeComparison(
        result.change,
        reason if result.change is not TypeChange.SAME else "",
        tuple(result.removed),
        tuple(result.added),
    )


def _compare(
    a: exp.DataType, b: exp.DataType, dialect: str, path: str, was: str | None = None
) -> _Result:
    """``was``: ``a``'s dialect where it is not ``dialect`` (``b``'s)."""
    was = was or dialect
    result = _Result()
    if a.this is b.this and (ea := _element(a)) is not None and (eb := _element(b)) is not None:
        result.merge(_compare(ea, eb, dialect, path + "[]", was))
    elif (ka := _key_value(a)) is not None and (kb := _key_value(b)) is not None:
        result.merge(_compare(ka[0], kb[0], dialect, path + "{key}", was))
        result.merge(_compare(ka[1], kb[1], dialect, path + "{}", was))
    elif a.this is b.this and (fa := _fields(a)) is not None and (fb := _fields(b)) is not None:
        _compare_fields(fa, fb, dialect, path, result, was)
    else:
        change, phrase = _classify(*_across(_leaf(a, was), _leaf(b, dialect), was != dialect))
        where = f"{path}: " if path else ""
        before, after = _render(a, was), _render(b, dialect)
        result.absorb(change, f"{where}{before} -> {after} {phrase}")
    _compare_modifiers(a, b, path, result)
    return result


def _across(a: _Leaf, b: _Leaf, moved: bool) -> tuple[_Leaf, _Leaf]:
    """Two leaves of different dialects: a timestamp without a zone is ``TIMESTAMP``
    in some (Postgres, Trino) and ``TIMESTAMP_NTZ`` in others (DuckDB, Snowflake,
    Spark's ``timestamp_ntz``) once parsed; across dialects the two are one kind."""
    zoneless = {T.TIMESTAMP, T.TIMESTAMPNTZ}
    if moved and isinstance(a, _Moment) and isinstance(b, _Moment) and {a.kind, b.kind} == zoneless:
        return replace(a, kind=b.kind), b
    return a, b


def _compare_fields(
    fa: dict[str, _Field],
    fb: dict[str, _Field],
    dialect: str,
    path: str,
    result: _Result,
    was: str | None = None,
) -> None:
    """Removed paths follow the old declaration order, added paths the new one."""
    common: dict[str, _Result] = {}
    for name, old in fa.items():
        where = join_path(path, _quote(name))
        new = fb.get(name)
        if new is None:
            result.removed.append(where)
            continue
        child = common[name] = _compare(old.type, new.type, dialect, where, was)
        result.absorb(child.change, child.reason)
        result.others += child.others
        result.removed += child.removed
        if old.not_null != new.not_null:
            narrows = new.not_null
            result.absorb(
                TypeChange.NARROWED if narrows else TypeChange.WIDENED,
                f"field {where} becomes {'NOT NULL' if narrows else 'nullable'}",
            )
    added, required = [], []
    for name, new in fb.items():
        if name in common:
            result.added += common[name].added
        elif name not in fa:
            where = join_path(path, _quote(name))
            result.added.append(where)
            added.append(where)
            if new.not_null:
                required.append(where)
    if required:
        result.absorb(TypeChange.NARROWED, f"required field {', '.join(required)} added")
    if added:
        noun = "field" if len(added) == 1 else "fields"
        result.absorb(TypeChange.WIDENED, f"{noun} {', '.join(added)} added")


def _compare_modifiers(a: exp.DataType, b: exp.DataType, path: str, result: _Result) -> None:
    """ClickHouse's Nullable(...) and collations live beside the type name."""
    where = f"{path}: " if path else ""
    nullable_a, nullable_b = bool(a.args.get("nullable")), bool(b.args.get("nullable"))
    if nullable_a != nullable_b:
        result.absorb(
            TypeChange.WIDENED if nullable_b else TypeChange.NARROWED,
            f"{where}becomes {'nullable' if nullable_b else 'NOT NULL'}",
        )
    if a.args.get("collate") != b.args.get("collate"):
        result.absorb(TypeChange.CHANGED, f"{where}changes collation")
