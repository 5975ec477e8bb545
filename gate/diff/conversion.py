"""A contract converted between formats in one pull request, compared as one contract.

A Soda contract replaced by an ODCS or DCS contract of the same table (or DCS by
ODCS) keeps its readers: it is one dataset, paired across formats
(``gate.declarations.by_format``, ``gate.diff.pairing.converted``), and its columns,
types and checks are compared as for any pair. The formats say some things
differently, and a faithful conversion must not read as a change:

- *Nulls.* DCS and ODCS read an absent ``required`` as nullable (``False``);
  Soda says nothing (``None``). Neither promises a value, so the two are equal.
- *A not-null check and ``required: true``.* Soda writes "no nulls" as a
  ``missing`` check (v3 ``no_missing_values``), ODCS/DCS as ``required: true``;
  likewise a column's ``duplicate`` check and ``unique: true``. A check with no
  threshold, filter or option of its own is the flag's counterpart when the other
  side sets the flag and has no such check: it is compared as the flag.
- *Check names.* The same metric is ``missing``/``nullValues``,
  ``duplicate``/``duplicateValues``: a base check takes HEAD's name for it, so a
  threshold written in either format pairs with the other's (a check with no
  counterpart keeps the name it was written with).
- *Allowed values and ranges* a check only carries (Soda ``invalid`` with
  ``valid_values``/``valid_min``, ODCS ``validValues``) are already the column's
  enum and constraints in both formats, compared there; the bare carrier is not a
  check of its own here.

Nothing else is folded: a check with no counterpart at HEAD is still
``check_removed``, a flag dropped is ``required_removed``/``unique_removed``, as
the format's own rules say. Pure: datasets in, datasets out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

from gate.declarations import CONVERTIBLE
from gate.diff.checks import carries_values, semantics
from gate.model import Check, Column, Dataset

#: Check kinds -> one name per metric, for a pair across formats.
_KINDS = {
    "missing": "missing_values",
    "missing_count": "missing_values",
    "no_missing_values": "missing_values",
    "null_values": "missing_values",
    "duplicate": "duplicate_values",
    "duplicate_count": "duplicate_values",
    "no_duplicate_values": "duplicate_values",
    "invalid": "invalid_values",
    "invalid_count": "invalid_values",
    "no_invalid_values": "invalid_values",
}
_NOT_NULL, _UNIQUE = "missing_values", "duplicate_values"
_ZERO = ((Decimal(0), False, Decimal(0), False),)


def table_name(dataset: Dataset) -> str | None:
    """The table a contract of a convertible format declares, as written: Soda's
    ``dataset`` (its last ``/`` segment: v4 qualifies it with the data source,
    database and schema), the DCS model's name, the ODCS ``physicalName`` or ``name``."""
    if dataset.format not in CONVERTIBLE:
        return None
    name = dataset.id.rsplit("/", 1)[-1] if dataset.format == "soda" else dataset.id
    return name.strip() or None


def table_key(dataset: Dataset) -> str | None:
    """``table_name``, case-folded: what pairs a conversion (its case is the
    rename check's question, ``gate.diff.datasets.renamed``)."""
    name = table_name(dataset)
    return name.casefold() if name is not None else None


#: The location parts that name the innermost container of a table, and the one
#: around it (Soda v4's segment before the schema names it too).
_CONTAINERS = ("schema", "dataset")
_DATABASES = ("database", "project", "catalog")


def containers(dataset: Dataset, parts: tuple[str, ...] = _CONTAINERS) -> frozenset[str] | None:
    """The schemas (``parts``: or databases) a contract places its table in,
    case-folded, or ``None`` where it does not say: Soda v4's qualified ``dataset``
    (``source/database/schema/table``: the segment before the table, given three
    segments or more; the one before that, given four), each DCS/ODCS server's
    ``schema`` (BigQuery: ``dataset``; ``database``, ``project``, ``catalog``)
    written without a placeholder."""
    if dataset.format == "soda":
        segments = dataset.id.split("/")
        at = 2 if parts == _CONTAINERS else 3
        return frozenset({segments[-at].strip().casefold()}) if len(segments) > at else None
    found = {
        value.strip().casefold()
        for server in dataset.servers
        for part, value in server.location
        if part in parts and not any(c in value for c in "${}<>")
    }
    return frozenset(found) or None


def same_place(old: Dataset, new: Dataset) -> bool:
    """False when both contracts say which schema (or database) holds the table and
    none is named on both sides: then the conversion also moved the table
    (``staging.orders`` is not ``prod.orders``; every Postgres database has a
    ``public``), and pairing would hide that move; left unpaired, it is the removal
    it is for the old table's readers."""
    for parts in (_CONTAINERS, _DATABASES):
        before, after = containers(old, parts), containers(new, parts)
        if before is not None and after is not None and not before & after:
            return False
    return True


def converted(old: Dataset, new: Dataset) -> bool:
    """Whether a pair is one table's contract converted from one format to another."""
    key = table_key(old)
    return (
        old.format != new.format
        and key is not None
        and key == table_key(new)
        and same_place(old, new)
    )


def _canonical(kind: str) -> str:
    return _KINDS.get(kind, kind)


def _named_as(old: Sequence[Check], new: Sequence[Check]) -> tuple[Check, ...]:
    """``old`` with each check of a metric that ``new`` names otherwise renamed to
    ``new``'s name (one name there per metric), so the two pair; the others as written.
    DCS's ``specification`` of a custom check is ODCS's ``implementation``."""
    names: dict[str, set[str]] = {}
    for check in new:
        names.setdefault(_canonical(check.kind), set()).add(check.kind)
    out = []
    for check in old:
        found = names.get(_canonical(check.kind), set())
        if len(found) == 1 and check.kind not in found:
            check = Check.make(set(found).pop(), check.spec, line=check.line, columns=check.columns)
        out.append(_implementation(check))
    return tuple(out)


def _implementation(check: Check) -> Check:
    """A DCS quality entry's ``specification`` under ODCS's name, ``implementation``."""
    if "specification" not in check.spec or "implementation" in check.spec:
        return check
    spec = {("implementation" if k == "specification" else k): v for k, v in check.spec.items()}
    return Check.make(check.kind, spec, line=check.line, columns=check.columns)


def _plain(check: Check, name: str) -> bool:
    """A check that asserts only its metric: no threshold but "none", no option,
    on this column alone (what ``required``/``unique`` or an enum say as a flag)."""
    meaning = semantics(check)
    sets = dict(meaning.sets)
    return (
        meaning.identity.split("|", 2)[2] == "{}"
        and meaning.passing in (None, _ZERO)
        and meaning.unit == "count"
        and meaning.severity == "error"
        and not meaning.patterns
        and all(not values for values in sets.values())
        and check.columns in ((), (name,))
    )


def _without(checks: tuple[Check, ...], kind: str, name: str) -> tuple[Check, ...] | None:
    """``checks`` without the plain checks of ``kind``; ``None`` when there are none."""
    kept = tuple(c for c in checks if not (_canonical(c.kind) == kind and _plain(c, name)))
    return kept if len(kept) < len(checks) else None


def _flags(mine: Column, other: Column) -> Column:
    """``mine`` with the plain checks whose counterpart is a flag of ``other`` read as
    that flag, carriers of values dropped, and an absent ``required`` equal to
    ``other``'s nullable."""
    checks = tuple(c for c in mine.checks if not (carries_values(c) and _plain(c, mine.name)))
    required, unique = mine.required, mine.unique
    if other.required and not required:
        kept = _without(checks, _NOT_NULL, mine.name)
        if kept is not None and _without(other.checks, _NOT_NULL, other.name) is None:
            checks, required = kept, True
    if other.unique and not unique:
        kept = _without(checks, _UNIQUE, mine.name)
        if kept is not None and _without(other.checks, _UNIQUE, other.name) is None:
            checks, unique = kept, True
    if required is False and other.required is None:
        required = None  # nullable by the format's default, as the other says nothing
    return replace(mine, checks=checks, required=required, unique=unique)


def _columns(
    old: Sequence[Column], new: Sequence[Column]
) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """Both sides' columns with their check kinds in one vocabulary and the columns
    of one name (case-folded) made comparable, nested fields too."""
    before = {c.name.casefold(): c for c in old}
    after = {c.name.casefold(): c for c in new}
    # Each pair's nested fields are walked once for both sides (walking them again
    # for the new side, at every level, cost 2^depth).
    nested: dict[tuple[int, int], tuple[tuple[Column, ...], tuple[Column, ...]]] = {}

    def walked(a: Column, b: Column) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
        if (id(a), id(b)) not in nested:
            nested[id(a), id(b)] = _columns(a.fields, b.fields)
        return nested[id(a), id(b)]

    out_old, out_new = [], []
    for column in old:
        other = after.get(column.name.casefold())
        if other is not None:
            fields = walked(column, other)[0]
            column = replace(column, checks=_named_as(column.checks, other.checks))
            column = replace(_flags(column, other), fields=fields)
        out_old.append(column)
    for column in new:
        other = before.get(column.name.casefold())
        if other is not None:
            fields = walked(other, column)[1]
            column = replace(column, checks=tuple(map(_implementation, column.checks)))
            column = replace(_flags(column, other), fields=fields)
        out_new.append(column)
    return tuple(out_old), tuple(out_new)


def comparable(old: Dataset, new: Dataset) -> tuple[Dataset, Dataset]:
    """A converted pair as two datasets in one vocabulary; any other pair as it is."""
    if not converted(old, new):
        return old, new
    old_columns, new_columns = _columns(old.columns, new.columns)
    return (
        replace(old, columns=old_columns, checks=_named_as(old.checks, new.checks)),
        replace(new, columns=new_columns, checks=tuple(map(_implementation, new.checks))),
    )
