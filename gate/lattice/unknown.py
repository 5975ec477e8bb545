"""Types a dialect does not know: which are legitimate, and which look like a typo.

Split from the lattice because it answers a reviewer's question, not a
comparison: Postgres enums, extensions and vendor types are real but unparsed
(``is_known`` says so without a warning), while ``txet`` is one edit from
``text`` (``suggest`` names it for ``type_unknown``).
"""

from __future__ import annotations

import difflib
import functools
import re

from gate.lattice.bounds import check_bounds
from gate.lattice.dialects import validate_dialect
from gate.lattice.parsing import _parse

#: Real types sqlglot does not parse, by dialect: PostgreSQL's geometric,
#: network, bit-string and text-search types and widely used extensions
#: (citext, ltree, hstore, pgvector), Spark's VOID. They are known types the
#: lattice cannot order, so they compare by spelling and raise no warning.
_POSTGRES_UNPARSED = frozenset(
    {
        "citext", "ltree", "lquery", "ltxtquery", "hstore", "tsvector", "tsquery",
        "cidr", "macaddr", "macaddr8", "box", "line", "lseg", "path", "polygon",
        "circle", "pg_lsn", "pg_snapshot", "txid_snapshot", "varbit", "bit varying",
        "halfvec", "sparsevec", "geography", "box2d", "box3d", "cube",
    }
)  # fmt: skip
_UNPARSED_NAMES: dict[str, frozenset[str]] = {
    "postgres": _POSTGRES_UNPARSED,
    "materialize": _POSTGRES_UNPARSED,
    "risingwave": _POSTGRES_UNPARSED,
    "spark": frozenset({"void"}),
    "spark2": frozenset({"void"}),
    "databricks": frozenset({"void"}),
    # MySQL's spatial types beside GEOMETRY, Oracle's binary, row-id, LOB and
    # object types, T-SQL's HIERARCHYID, DuckDB's VARINT, Hive's UNIONTYPE.
    "mysql": frozenset(
        {
            "point",
            "linestring",
            "polygon",
            "multipoint",
            "multilinestring",
            "multipolygon",
            "geometrycollection",
        }
    ),
    "oracle": frozenset(
        {"raw", "long raw", "xmltype", "rowid", "urowid", "bfile", "nclob", "sdo_geometry"}
    ),
    "tsql": frozenset({"hierarchyid"}),
    "fabric": frozenset({"hierarchyid"}),
    "duckdb": frozenset({"varint"}),
    "hive": frozenset({"uniontype"}),
}

#: Types a contract format defines whatever the dialect: ODCS's logical
#: ``vector``, which the ODCS reader spells ``vector(dimensions,elementType)``.
_FORMAT_NAMES = frozenset({"vector"})

#: How close a misspelling must be to a type name to be suggested (difflib's
#: ratio): ``txet`` -> ``text`` is 0.75; a Postgres enum like ``mood`` is at
#: most 0.57 from any type name, so it gets no suggestion.
_SUGGEST_CUTOFF = 0.75


def _base_name(text: str) -> str:
    """``varchr(10)`` -> ``varchr``; ``Text[]`` -> ``text``; ``bit  varying`` -> ``bit varying``."""
    head = re.split(r"[(<\[]", text, maxsplit=1)[0]
    return " ".join(head.lower().split())


def is_known(text: str, dialect: str = "spark") -> bool:
    """True when ``dialect`` knows the type ``text`` names.

    False is not an error: Postgres enums and domains, vendor types and
    adapter-specific dbt ``data_type`` values are legitimate. It is a question
    for the reviewer (``type_unknown``), because a typo reads the same way.
    """
    dialect = validate_dialect(dialect)
    if check_bounds(text) is not None or _parse(text, dialect) is not None:
        return True  # an oversized type is refused by the formats, not warned about
    name = _base_name(text)
    return name in _FORMAT_NAMES or name in _UNPARSED_NAMES.get(dialect, frozenset())


def suggest(text: str, dialect: str = "spark") -> str | None:
    """The known type name closest to an unknown type's name, when one is close.

    Only the leading name is compared (``varchr(10)`` -> ``varchar``): a
    struct's field names are not types.
    """
    dialect = validate_dialect(dialect)
    name = _base_name(text)
    if not name or name in _type_names(dialect):
        return None
    close = difflib.get_close_matches(name, _type_names(dialect), n=1, cutoff=_SUGGEST_CUTOFF)
    return close[0] if close else None


@functools.lru_cache(maxsize=64)
def _type_names(dialect: str) -> tuple[str, ...]:
    """sqlglot's type keywords that parse as a type in ``dialect``, plus its unparsed names."""
    from sqlglot.dialects.dialect import Dialect

    d = Dialect.get_or_raise(dialect)
    type_tokens = d.parser_class.TYPE_TOKENS
    words = {
        k.lower()
        for k, token in d.tokenizer_class.KEYWORDS.items()
        if token in type_tokens and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", k)
    }
    names = {w for w in words if _parse(w, dialect) is not None}
    return tuple(sorted(names | _UNPARSED_NAMES.get(dialect, frozenset())))
