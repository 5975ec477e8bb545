"""dbt ``constraints:`` of a column or a model: their types, the columns they name, foreign keys.

Split from the properties parser because constraints follow SQL's rules rather
than YAML's (a quoted column name is exact, a bare one folds; ``ref()`` and
``source()`` name the relation a foreign key points to) and are read the same
way at column, model and version level. ``not_null``/``unique``/``primary_key``
become column flags, ``check``/``custom`` (and a multi-column ``unique``)
become checks, ``foreign_key`` a relationship.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gate.formats.common import items, optional_list, require_mapping, require_str, scalar_tuple
from gate.model import Check, ContractError, ContractWarning, Relationship
from gate.yaml_load import YMap

#: dbt's ``ConstraintType`` values.
CONSTRAINT_TYPES = frozenset(
    {"not_null", "unique", "primary_key", "foreign_key", "check", "custom"}
)
#: Constraints that are checks rather than column flags (``foreign_key`` is a relationship).
CHECK_CONSTRAINTS = frozenset({"check", "custom"})

_REF = re.compile(r"""^\s*(?:ref|source)\s*\((.*)\)\s*$""")


def relation_name(text: str) -> str:
    """``ref('customers')`` -> ``customers``; ``source('shop', 'customers')`` -> ``shop.customers``."""
    match = _REF.match(text)
    if match is None:
        return text.strip().lower()
    parts = [p.strip().strip("'\"") for p in match.group(1).split(",")]
    return ".".join(p for p in parts if p and "=" not in p).lower()


def unquote(name: str) -> tuple[str, bool]:
    """A constraint's column as SQL writes it: ``"from"`` names the column ``from``."""
    if len(name) >= 2 and name[0] == name[-1] and name[0] in '"`':
        return name[1:-1].replace(name[0] * 2, name[0]), True
    return name, False


def entries(path: str, mapping: YMap, owner: str) -> list[tuple[str, YMap, int]]:
    """(type, constraint, line) for each entry of ``constraints``."""
    listed = optional_list(mapping, "constraints", path, f"{owner}: 'constraints'")
    out: list[tuple[str, YMap, int]] = []
    for index, entry, line in items(listed):
        what = f"{owner}: constraint #{index + 1}"
        constraint = require_mapping(entry, path, what, line)
        kind = require_str(constraint, "type", path, f"{what} 'type'").lower()
        if kind not in CONSTRAINT_TYPES:
            known = ", ".join(sorted(CONSTRAINT_TYPES))
            raise ContractError(
                path,
                f"{what}: unknown constraint type '{kind}' (expected one of: {known})",
                constraint.key_line("type"),
            )
        out.append((kind, constraint, line))
    return out


def foreign_key(
    path: str,
    constraint: YMap,
    columns: tuple[str, ...],
    line: int,
    owner: str,
    warnings: list[ContractWarning] | None = None,
) -> Relationship | None:
    """A ``foreign_key`` constraint: ``to`` + ``to_columns`` (dbt >= 1.9) or an ``expression``.

    One naming neither is refused, unless ``warnings`` is given: then it is
    ``None`` with a warning there. ``dbt parse`` accepts it and dbt-adapters'
    ``render_column_constraint``/``render_model_constraint`` render nothing for
    it, so the model builds with no such constraint.
    """
    to = constraint.get("to")
    if isinstance(to, str) and to.strip():
        to_columns = constraint.get("to_columns") or []
        targets = scalar_tuple(to_columns, path, f"{owner}: foreign_key 'to_columns'", line)
        table = relation_name(to)
        target = ",".join(f"{table}.{c.lower()}" for c in targets) or table
        return Relationship(columns, target, line)
    expression = constraint.get("expression")
    if isinstance(expression, str) and expression.strip():
        # ``customers (id)``: the pre-1.9 spelling, compared as written.
        return Relationship(columns, " ".join(expression.lower().split()), line)
    if warnings is None:
        raise ContractError(
            path, f"{owner}: a foreign_key constraint needs 'to' or 'expression'", line
        )
    warnings.append(
        ContractWarning(
            path,
            f"{owner}: a foreign_key constraint names no 'to' or 'expression': not compared "
            "(dbt renders no constraint for it)",
            line,
        )
    )
    return None


def constraint_column(
    path: str, written: str, known: list[str], owner: str, kind: str, line: int
) -> str:
    """The declared column a constraint names: a quoted name exactly, a bare
    one as SQL folds it (any case, when only one column matches)."""
    name, quoted = unquote(written.strip())
    if name in known:
        return name
    folded = [c for c in known if c.casefold() == name.casefold()]
    if not quoted and len(folded) == 1:
        return folded[0]
    raise ContractError(path, f"{owner}: {kind} constraint names unknown column '{written}'", line)


@dataclass
class ModelConstraints:
    """What a model's (or version's) own ``constraints:`` say about its columns."""

    required: set[str] = field(default_factory=set)
    unique: set[str] = field(default_factory=set)
    key: list[str] | None = None
    checks: list[Check] = field(default_factory=list)
    foreign_keys: list[Relationship] = field(default_factory=list)


def model_level(
    path: str,
    mapping: YMap,
    owner: str,
    known: list[str],
    unrendered: list[ContractWarning] | None = None,
    warnings: list[ContractWarning] | None = None,
    view_only: list[tuple[str, int | None]] | None = None,
    table_only: list[tuple[str, int | None]] | None = None,
) -> ModelConstraints:
    """The model-level constraints of ``mapping``, naming columns of ``known``.

    A constraint naming a column the model does not declare is refused: dbt puts
    it in the table's DDL, which the warehouse fails. ``dbt parse`` never checks
    those names, though, and dbt renders no constraint DDL for a view, so a view
    with one builds: with ``unrendered`` (the model is a view) such a constraint
    is not compared and a warning naming it is added there instead. ``warnings``:
    as ``foreign_key``'s. ``view_only``: where each such constraint's refusal, as
    (detail, line), is kept for a model file whose ``config()`` makes it a table.
    ``table_only`` (the model is not said to be a view): where such a constraint's
    refusal is kept instead of raised, for the model file's ``config()``, which dbt
    ranks over the properties and the project, may make it a view
    (``gate.dbt.undeclared_constraints`` decides once it is read).
    """
    found = ModelConstraints()
    for kind, constraint, c_line in entries(path, mapping, owner):
        named: tuple[str, ...] = ()
        if constraint.get("columns") is not None:
            written = scalar_tuple(
                constraint["columns"], path, f"{owner}: constraint 'columns'", c_line
            )
            try:
                named = tuple(
                    constraint_column(path, n, known, owner, kind, c_line) for n in written
                )
            except ContractError as exc:
                if unrendered is None:
                    if table_only is None:
                        raise
                    table_only.append((exc.detail, exc.line))
                    continue
                if view_only is not None:
                    view_only.append((exc.detail, exc.line))
                unrendered.append(
                    ContractWarning(
                        path,
                        f"{exc.detail}: the constraint is not compared (dbt parses it and "
                        "renders no constraint for a view; a table with it fails in the "
                        "warehouse)",
                        c_line,
                    )
                )
                continue
        if kind == "foreign_key":
            if not named:
                raise ContractError(
                    path, f"{owner}: a model-level foreign_key needs 'columns'", c_line
                )
            key = foreign_key(path, constraint, named, c_line, owner, warnings)
            if key is not None:
                found.foreign_keys.append(key)
            continue
        if kind in CHECK_CONSTRAINTS or (kind == "unique" and len(named) > 1):
            spec = {k: v for k, v in constraint.items() if k != "type"}
            found.checks.append(Check.make(kind, spec, line=c_line, columns=named))
            continue
        if not named:
            raise ContractError(
                path, f"{owner}: a model-level {kind} constraint needs 'columns'", c_line
            )
        if kind == "not_null":
            found.required.update(named)
        elif kind == "unique":
            found.unique.update(named)
        else:  # primary_key
            if found.key is not None:
                raise ContractError(path, f"{owner}: more than one primary_key constraint", c_line)
            found.key = list(named)
    return found
