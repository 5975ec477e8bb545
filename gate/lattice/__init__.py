"""The type lattice: is a column's new type safe for the data already stored?

Types are parsed by sqlglot in the contract's dialect, never compared as text:
``INT``, ``integer`` and ``int4`` are one type, and ``INT8`` is BIGINT in
postgres but TINYINT in ClickHouse. Each dialect's implicit parameters are
filled in first (Spark ``decimal`` is ``DECIMAL(10,0)``), so an omitted default
never hides a change.

``compare`` answers with a ``TypeChange``:

- SAME: the types are the same type once spelling and defaults are normalised;
- WIDENED: the new type holds every value of the old one (after Delta Lake 4.0's
  type widening: integers upward, integers to a wide enough double or decimal,
  float to double, decimals gaining integer digits and scale, longer strings,
  date to timestamp, containers whose parts all widen, structs gaining fields);
- NARROWED: the reverse change would be a widening, or both types belong to one
  family and the new one loses values (``int -> uint``, ``DECIMAL(10,2) ->
  DECIMAL(10,4)``);
- CHANGED: anything else: another family, a lossy move between families
  (``bigint -> double``), a time zone semantics change, an unknown type.

Nested struct fields are paired by name (case-sensitive). Removed fields are
listed, not classified: ``change`` describes the rest of the type, so the diff
can emit one ``column_removed`` per field. Field paths are relative to the
compared type: a struct field is ``name`` (``a.b`` below another field), an
array element is ``[]``, a map value ``{}`` and a map key ``{key}``; names that
contain ``. [ ] { }``, a backtick or a space are wrapped in backticks. Use
``join_path(column, path)`` to anchor a path at a column (``items[].sku``).

Decisions worth knowing, each fail-closed where the facts are unclear:

- Integer -> decimal needs Spark's digit counts (tinyint 3, smallint 5, int 10,
  bigint 20, as Spark's ``DecimalType.forType`` and Delta Lake use), so
  ``BIGINT -> DECIMAL(19,0)`` is NARROWED.
- Unsigned integers are ranked by value range: ``UTINYINT -> SMALLINT`` widens,
  ``INT <-> UINT`` is NARROWED both ways (each loses values).
- ``timestamp`` flavours (plain/NTZ, TZ, LTZ) never convert into each other:
  the time zone semantics change, so that is CHANGED. Spark's ``TIMESTAMP`` is
  its ``TIMESTAMP_LTZ``; Snowflake's ``TIMESTAMP`` is ``TIMESTAMP_NTZ`` (its
  default ``TIMESTAMP_TYPE_MAPPING``).
- Snowflake and Oracle integers are ``NUMBER(38,0)``, BigQuery's are INT64:
  ``int -> bigint`` there is SAME.
- A bare ``DECIMAL`` is unbounded (wider than any bounded one) in postgres and
  Oracle; in a dialect whose default we do not know it equals only itself.
- ``VARCHAR(n) -> CHAR(m)`` pads values and is never a widening; ``CHAR(n) ->
  CHAR(m>=n)`` widens. N-variants (NVARCHAR) are their plain types except in
  T-SQL, where switching between them is CHANGED.
- A struct field that becomes ``NOT NULL`` (or a new ``NOT NULL`` field) narrows.
- Known limitation: sqlglot reads T-SQL ``REAL`` and ``FLOAT`` as one type.

Results are cached: contracts with thousands of columns compare the same few
type pairs over and over.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialects

from gate.model import UsageError

__all__ = [
    "DIALECTS",
    "MAX_TYPE_CHARS",
    "TypeChange",
    "TypeComparison",
    "canonical",
    "check_bounds",
    "compare",
    "is_known",
    "join_path",
    "parse",
    "suggest",
    "validate_dialect",
]

T = exp.DataType.Type
if TYPE_CHECKING:  # sqlglot 30 makes DataType.Type a class attribute naming this enum
    from sqlglot.expressions.datatypes import DType as Kind
else:
    Kind = T

DIALECTS: tuple[str, ...] = tuple(sorted(d.value for d in Dialects if d.value))

#: Common names people use for a dialect that sqlglot spells differently.
_DIALECT_ALIASES = {"postgresql": "postgres", "sqlserver": "tsql", "mssql": "tsql"}


class TypeChange(str, Enum):
    SAME = "same"
    WIDENED = "widened"
    NARROWED = "narrowed"
    CHANGED = "changed"


#: Worst last: combining the parts of a nested type keeps the worst part.
_SEVERITY = {
    TypeChange.SAME: 0,
    TypeChange.WIDENED: 1,
    TypeChange.NARROWED: 2,
    TypeChange.CHANGED: 3,
}


@dataclass(frozen=True)
class TypeComparison:
    """How ``new`` relates to ``old``; ``reason`` is one phrase for reports."""

    change: TypeChange
    reason: str
    removed_fields: tuple[str, ...] = ()
    added_fields: tuple[str, ...] = ()


# -- dialect tables ------------------------------------------------------------

#: (bits, signed, decimal digits a DECIMAL needs to hold every value). The digit
#: counts follow Spark/Delta Lake (BIGINT needs DECIMAL(20,0)).
_INTEGERS: dict[Kind, tuple[int, bool, int]] = {
    T.TINYINT: (8, True, 3),
    T.SMALLINT: (16, True, 5),
    T.MEDIUMINT: (24, True, 7),
    T.INT: (32, True, 10),
    T.BIGINT: (64, True, 20),
    T.INT128: (128, True, 39),
    T.INT256: (256, True, 77),
    T.UTINYINT: (8, False, 3),
    T.USMALLINT: (16, False, 5),
    T.UMEDIUMINT: (24, False, 8),
    T.UINT: (32, False, 10),
    T.UBIGINT: (64, False, 20),
    T.UINT128: (128, False, 39),
    T.UINT256: (256, False, 78),
}

#: Significand bits: an integer type converts exactly when its values fit.
_FLOATS: dict[Kind, int] = {T.FLOAT: 24, T.DOUBLE: 53}

_DECIMALS = frozenset({T.DECIMAL, T.BIGDECIMAL})

#: Text and binary types: True when values are fixed-length (blank-padded).
_TEXTS: dict[Kind, bool] = {
    T.CHAR: True,
    T.NCHAR: True,
    T.VARCHAR: False,
    T.NVARCHAR: False,
    T.TEXT: False,
    T.TINYTEXT: False,
    T.MEDIUMTEXT: False,
    T.LONGTEXT: False,
    T.NAME: False,
}
_BINARIES = frozenset({T.BINARY, T.VARBINARY})
#: Dialects whose BINARY(n) is fixed-length (zero-padded); elsewhere it varies.
_FIXED_BINARY_DIALECTS = frozenset({"mysql", "tsql", "fabric"})
_NATIONAL = frozenset({T.NCHAR, T.NVARCHAR})
_NATIONAL_DIALECTS = frozenset({"tsql", "fabric"})

#: Lengths implied by the type name itself ("*" = every dialect).
_IMPLIED_LENGTH: dict[tuple[str, Kind], int] = {
    ("*", T.TINYTEXT): 255,
    ("*", T.MEDIUMTEXT): 16_777_215,
    ("*", T.LONGTEXT): 4_294_967_295,
    ("*", T.NAME): 63,
    ("mysql", T.TEXT): 65_535,
}

#: Timestamp flavours a DATE widens into (their ranges start at year 1).
_DATE_WIDENS_TO = frozenset(
    {T.TIMESTAMP, T.TIMESTAMPNTZ, T.TIMESTAMPTZ, T.TIMESTAMPLTZ, T.DATETIME, T.DATETIME2}
)
_TIMESTAMPS = exp.DataType.TEMPORAL_TYPES - {T.DATE, T.DATE32, T.TIME, T.TIMETZ}
_TIMES = frozenset({T.TIME, T.TIMETZ})
_ZONED = frozenset({T.TIMESTAMP, T.TIMESTAMPNTZ, T.TIMESTAMPTZ, T.TIMESTAMPLTZ})

#: Fractional-second digits of a timestamp or time declared without them.
_FRACTION_DEFAULT = {"snowflake": 9, "tsql": 7, "fabric": 7, "mysql": 0, "trino": 3, "presto": 3}

#: One type under two names in a dialect ("*" = every dialect, unless the
#: dialect maps the type to itself).
_SYNONYMS: dict[tuple[str, Kind], Kind] = {
    ("*", T.SERIAL): T.INT,
    ("*", T.SMALLSERIAL): T.SMALLINT,
    ("*", T.BIGSERIAL): T.BIGINT,
    ("*", T.NCHAR): T.CHAR,
    ("*", T.NVARCHAR): T.VARCHAR,
    ("tsql", T.NCHAR): T.NCHAR,
    ("tsql", T.NVARCHAR): T.NVARCHAR,
    ("fabric", T.NCHAR): T.NCHAR,
    ("fabric", T.NVARCHAR): T.NVARCHAR,
    ("spark", T.TIMESTAMPLTZ): T.TIMESTAMPTZ,
    ("databricks", T.TIMESTAMPLTZ): T.TIMESTAMPTZ,
    ("snowflake", T.TIMESTAMP): T.TIMESTAMPNTZ,
    ("snowflake", T.DATETIME): T.TIMESTAMPNTZ,
    ("snowflake", T.FLOAT): T.DOUBLE,
    ("bigquery", T.FLOAT): T.DOUBLE,
    ("bigquery", T.TINYINT): T.BIGINT,
    ("bigquery", T.SMALLINT): T.BIGINT,
    ("bigquery", T.MEDIUMINT): T.BIGINT,
    ("bigquery", T.INT): T.BIGINT,
}

#: Dialects whose integer types are all NUMBER(38,0).
_NUMBER_INTEGERS = frozenset({"snowflake", "oracle"})

#: Parameters a type takes when declared without them ("*" = every dialect).
_DEFAULT_PARAMS: dict[tuple[str, Kind], tuple[int, ...]] = {
    ("spark", T.DECIMAL): (10, 0),
    ("spark2", T.DECIMAL): (10, 0),
    ("databricks", T.DECIMAL): (10, 0),
    ("hive", T.DECIMAL): (10, 0),
    ("mysql", T.DECIMAL): (10, 0),
    ("tsql", T.DECIMAL): (18, 0),
    ("fabric", T.DECIMAL): (18, 0),
    ("redshift", T.DECIMAL): (18, 0),
    ("snowflake", T.DECIMAL): (38, 0),
    ("duckdb", T.DECIMAL): (18, 3),
    ("bigquery", T.DECIMAL): (38, 9),
    ("bigquery", T.BIGDECIMAL): (76, 38),
    ("*", T.CHAR): (1,),
    ("*", T.NCHAR): (1,),
    ("tsql", T.VARCHAR): (1,),
    ("tsql", T.NVARCHAR): (1,),
    ("tsql", T.BINARY): (1,),
    ("tsql", T.VARBINARY): (1,),
    ("fabric", T.VARCHAR): (1,),
    ("fabric", T.NVARCHAR): (1,),
    ("fabric", T.BINARY): (1,),
    ("fabric", T.VARBINARY): (1,),
    ("redshift", T.VARCHAR): (256,),
    ("redshift", T.CHAR): (1,),
    ("mysql", T.BINARY): (1,),
}

#: Dialects where a bare DECIMAL/NUMERIC holds any precision.
_UNBOUNDED_DECIMAL = frozenset({"postgres", "oracle"})

#: The largest DECIMAL precision each engine accepts ("*" = every other dialect:
#: no engine we know goes past Postgres's 1,000). A larger one is not a type
#: the engine can store, so it is never a widening (``bigint -> decimal(50,2)``
#: in Spark is CHANGED, not WIDENED).
_MAX_PRECISION: dict[tuple[str, Kind], int] = {
    ("*", T.DECIMAL): 1_000,
    ("*", T.BIGDECIMAL): 1_000,
    **{
        (dialect, T.DECIMAL): 38
        for dialect in (
            "spark", "spark2", "databricks", "hive", "snowflake", "bigquery", "redshift",
            "tsql", "fabric", "oracle", "duckdb", "trino", "presto", "athena", "doris",
            "starrocks", "teradata", "dremio", "drill",
        )
    },
    ("bigquery", T.BIGDECIMAL): 76,
    ("clickhouse", T.DECIMAL): 76,
    ("mysql", T.DECIMAL): 65,
    ("singlestore", T.DECIMAL): 65,
    ("exasol", T.DECIMAL): 36,
}  # fmt: skip


def _lookup(table: dict, dialect: str, key: Kind, default=None):
    return table.get((dialect, key), table.get(("*", key), default))


# -- bounds --------------------------------------------------------------------

#: Bounds on one type's text, checked before sqlglot sees it. sqlglot's cost
#: grows with the text (and comparing nested types more than linearly): a
#: decimal with 50,000 parameters took 48 s, a 10,000-field struct 29 s. Real
#: types stay far below: a wide Spark struct has a few hundred fields.
MAX_TYPE_CHARS = 10_000
MAX_TYPE_PARAMS = 64  # values in one parenthesized list: DECIMAL(p,s), ENUM('a', ...)
MAX_TYPE_DEPTH = 32  # nested <...> and (...)
MAX_STRUCT_FIELDS = 1_000  # items of every <...> list in the type together

_TYPE_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|[<>(),]")


def check_bounds(text: str) -> str | None:
    """Why ``text`` is too large to parse as a type, or ``None`` when it is not.

    A single linear scan, so the answer is immediate at any size. Quoted names
    and string literals are skipped; struct fields are counted as the items of
    every ``<...>`` list (``MAP<K, V>`` counts two), parameters as the items of
    one ``(...)`` list.
    """
    if len(text) > MAX_TYPE_CHARS:
        return f"is {len(text):,} characters long, more than {MAX_TYPE_CHARS:,}"
    depth = 0
    commas: list[int] = [0]  # per open bracket: commas seen so far
    angled: list[bool] = [False]
    fields = 0
    for match in _TYPE_TOKENS.finditer(text):
        token = match.group()
        if token in "<(":
            depth += 1
            if depth > MAX_TYPE_DEPTH:
                return f"nests more than {MAX_TYPE_DEPTH} levels deep"
            commas.append(0)
            angled.append(token == "<")
            fields += token == "<"
        elif token in ">)":
            if depth:
                depth -= 1
                commas.pop()
                angled.pop()
        elif token == ",":
            commas[-1] += 1
            if not angled[-1] and commas[-1] >= MAX_TYPE_PARAMS:
                return f"has more than {MAX_TYPE_PARAMS} parameters in one list"
            fields += angled[-1]
        if fields > MAX_STRUCT_FIELDS:
            return f"has more than {MAX_STRUCT_FIELDS:,} struct fields"
    return None


# -- parsing -------------------------------------------------------------------


def validate_dialect(name: str) -> str:
    """Normalise a dialect name, or fail with the list a user can pick from."""
    key = str(name).strip().lower()
    key = _DIALECT_ALIASES.get(key, key)
    if key not in DIALECTS:
        raise UsageError(f"unknown dialect {name!r}; choose one of: {', '.join(DIALECTS)}")
    return key


def load_dialect(dialect: str) -> None:
    """Import sqlglot's module for ``dialect`` now (~25 ms for spark) rather than at first use."""
    from sqlglot.dialects.dialect import Dialect

    Dialect.get_or_raise(dialect)


def parse(text: str, dialect: str = "spark") -> exp.DataType | None:
    """The sqlglot type with dialect defaults filled in; None when unknown.

    Unknown covers junk text, user-defined types and anything sqlglot would
    only half read: ``DataType.build`` silently drops what it cannot parse
    (``array<foo>`` becomes a bare ARRAY), so parsing here is strict.
    """
    parsed = _parse(text, validate_dialect(dialect))
    return parsed.copy() if parsed is not None else None


@functools.lru_cache(maxsize=16384)
def _parse(text: str, dialect: str) -> exp.DataType | None:
    """Shared, never mutated after normalisation: callers get ``parse`` copies."""
    if check_bounds(text) is not None:
        return None  # the formats refuse it with the file and line; never parse it
    try:
        dt = sqlglot.parse_one(text, read=dialect, into=exp.DataType)
    except Exception:  # junk text must not crash the gate: it is an unknown type
        return None
    if not isinstance(dt, exp.DataType):
        return None
    nodes = list(dt.find_all(exp.DataType))
    for node in nodes:
        if node.this in (T.USERDEFINED, T.UNKNOWN) or not _well_formed(node):
            return None
    for node in nodes:
        _normalise(node, dialect)
    return dt


def _well_formed(node: exp.DataType) -> bool:
    """Nested types must carry their parts (sqlglot drops some quietly)."""
    if node.this not in exp.DataType.NESTED_TYPES:
        return True
    for part in node.expressions:
        if isinstance(part, exp.ColumnDef):
            if not isinstance(part.args.get("kind"), exp.DataType):
                return False
        elif not isinstance(part, exp.DataType):
            return False
    return True


def _normalise(node: exp.DataType, dialect: str) -> None:
    """Rewrite one node in place: synonyms first, then implicit parameters."""
    kind = node.this
    if not isinstance(kind, T) or not all(
        isinstance(e, exp.DataTypeParam) for e in node.expressions
    ):
        return  # nested types and ENUM('a', ...) have parts, not parameters
    params = _params(node)
    if kind in _FLOATS and len(params) == 1 and isinstance(params[0], int):
        # FLOAT(p) counts significand bits (SQL standard, MySQL, T-SQL, postgres).
        kind, params = (T.FLOAT if params[0] <= 24 else T.DOUBLE), ()
    kind = _lookup(_SYNONYMS, dialect, kind, kind)
    if kind in _INTEGERS:
        params = ()  # MySQL's INT(11) is a display width, not a range
        if dialect in _NUMBER_INTEGERS:
            kind, params = T.DECIMAL, (38, 0)
    if not params and (default := _lookup(_DEFAULT_PARAMS, dialect, kind)):
        params = default
    if kind in _DECIMALS and len(params) == 1 and isinstance(params[0], int):
        params = (params[0], 0)
    if kind is node.this and params == _params(node):
        return
    node.set("this", kind)
    node.set(
        "expressions",
        [exp.DataTypeParam(this=_literal(p)) for p in params] or None,
    )


def _literal(value: int | str) -> exp.Expression:
    return exp.Literal.number(value) if isinstance(value, int) else exp.Var(this=value)


def _params(node: exp.DataType) -> tuple[int | str, ...]:
    """A leaf's parameters: ints where they are whole numbers, else text."""
    out: list[int | str] = []
    for param in node.expressions:
        if not isinstance(param, exp.DataTypeParam):
            return ()
        value = param.this
        if isinstance(value, exp.Literal) and value.is_int:
            out.append(int(value.this))
        else:
            out.append(value.sql().upper())
    return tuple(out)


# -- unknown types -------------------------------------------------------------

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


# -- spelling ------------------------------------------------------------------


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


def _render(dt: exp.DataType, dialect: str) -> str:
    if (element := _element(dt)) is not None:
        return f"{dt.this.value}<{_render(element, dialect)}>"
    if (kv := _key_value(dt)) is not None:
        return f"MAP<{_render(kv[0], dialect)}, {_render(kv[1], dialect)}>"
    if (fields := _fields(dt)) is not None:
        parts = [
            (f"{f.identifier.sql(dialect=dialect)} " if f.identifier else "")
            + _render(f.type, dialect)
            + (" NOT NULL" if f.not_null else "")
            for f in fields.values()
        ]
        return f"{dt.this.value}<{', '.join(parts)}>"
    return _render_leaf(dt, dialect)


def _render_leaf(dt: exp.DataType, dialect: str) -> str:
    """The dialect's spelling when it reads back as the same type, else sqlglot's.

    Dialect generators are not always reversible (DuckDB writes CHAR as TEXT),
    and a canonical spelling must parse back to the type it names.
    """
    spellings = [_tidy(dt.sql(dialect=dialect)), _tidy(dt.sql())]
    for spelling in spellings:
        if _parse(spelling, dialect) == dt:
            return spelling
    return spellings[-1]


def _tidy(sql: str) -> str:
    """``DECIMAL(10, 2)`` -> ``DECIMAL(10,2)``; quoted text is left alone."""
    return sql if "'" in sql else re.sub(r"(?<=\w), (?=[\w-])", ",", sql)


# -- structure -----------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    identifier: exp.Identifier | None  # None: a BigQuery positional field
    type: exp.DataType
    not_null: bool


def _element(dt: exp.DataType) -> exp.DataType | None:
    parts = dt.expressions
    if (
        dt.this in exp.DataType.ARRAY_TYPES
        and len(parts) == 1
        and isinstance(parts[0], exp.DataType)
        and not dt.args.get("values")  # DuckDB's fixed-size INT[3] stays a leaf
    ):
        return parts[0]
    return None


def _key_value(dt: exp.DataType) -> tuple[exp.DataType, exp.DataType] | None:
    parts = dt.expressions
    if dt.this is T.MAP and len(parts) == 2 and all(isinstance(p, exp.DataType) for p in parts):
        return parts[0], parts[1]
    return None


def _fields(dt: exp.DataType) -> dict[str, _Field] | None:
    """Struct fields by name; BigQuery's unnamed fields are ``_field_1``..."""
    if dt.this not in (T.STRUCT, T.OBJECT) or (dt.this is T.OBJECT and not dt.expressions):
        return None  # a bare Snowflake OBJECT is semi-structured, not a struct
    fields: dict[str, _Field] = {}
    for i, part in enumerate(dt.expressions, start=1):
        if isinstance(part, exp.ColumnDef):
            not_null = any(
                isinstance(c.args.get("kind"), exp.NotNullColumnConstraint)
                and not c.args["kind"].args.get("allow_null")
                for c in part.args.get("constraints") or []
            )
            name, f = part.name, _Field(part.this, part.args["kind"], not_null)
        else:
            name, f = f"_field_{i}", _Field(None, part, False)
        if name in fields:
            return None  # duplicate names: compare the whole struct as one leaf
        fields[name] = f
    return fields


def join_path(parent: str, child: str) -> str:
    """``join_path("items", "[].sku")`` -> ``items[].sku``; ``("a", "b")`` -> ``a.b``."""
    if not parent:
        return child
    if not child:
        return parent
    return parent + child if child[0] in "[{" else f"{parent}.{child}"


def _quote(name: str) -> str:
    if name and not re.search(r"[.\[\]{}`\s]", name):
        return name
    return "`" + name.replace("`", "``") + "`"


# -- leaves --------------------------------------------------------------------


@dataclass(frozen=True)
class _Int:
    low: int
    high: int
    digits: int


@dataclass(frozen=True)
class _Float:
    bits: int


@dataclass(frozen=True)
class _Decimal:
    precision: int | None  # None: unbounded
    scale: int

    @property
    def integer_digits(self) -> int | None:
        return None if self.precision is None else self.precision - self.scale


@dataclass(frozen=True)
class _Chars:
    binary: bool
    fixed: bool
    length: int | None  # None: unbounded
    national: bool


@dataclass(frozen=True)
class _Date:
    pass


@dataclass(frozen=True)
class _Moment:
    kind: Kind
    precision: int


@dataclass(frozen=True)
class _Other:
    """A type the lattice does not order: equal to itself only."""

    type: exp.DataType
    bare_decimal: bool = False


@dataclass(frozen=True)
class _Invalid:
    """A type the dialect cannot hold (``DECIMAL(50,2)`` in Spark): equal to itself only."""

    type: exp.DataType
    why: str


_Leaf = _Int | _Float | _Decimal | _Chars | _Date | _Moment | _Other | _Invalid


def _leaf(dt: exp.DataType, dialect: str) -> _Leaf:
    kind, params = dt.this, _params(dt)
    numbers = tuple(p for p in params if isinstance(p, int))
    ints = len(numbers) == len(params)
    if kind in _INTEGERS and not params:
        bits, signed, digits = _INTEGERS[kind]
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
        return _Int(low, high, digits)
    if kind in _FLOATS and not params:
        return _Float(_FLOATS[kind])
    if kind in _DECIMALS:
        if not params and dialect in _UNBOUNDED_DECIMAL:
            return _Decimal(None, 0)
        if len(params) == 2 and ints:
            limit = _lookup(_MAX_PRECISION, dialect, kind)
            if params[0] > limit:
                why = f"precision {params[0]} is above {dialect}'s maximum of {limit}"
                return _Invalid(dt, f"{_render_leaf(dt, dialect)} is not a valid type: {why}")
            return _Decimal(numbers[0], numbers[1])
        return _Other(dt, bare_decimal=not params)
    if (kind in _TEXTS or kind in _BINARIES) and len(params) <= 1:
        binary = kind in _BINARIES
        if params == ("MAX",):
            length = None
        elif params and ints:
            length = numbers[0]
        elif params:
            return _Other(dt)
        else:
            length = _lookup(_IMPLIED_LENGTH, dialect, kind)
        fixed = _TEXTS.get(kind, kind is T.BINARY and dialect in _FIXED_BINARY_DIALECTS)
        national = kind in _NATIONAL and dialect in _NATIONAL_DIALECTS
        return _Chars(binary, fixed and (length is not None), length, national)
    if kind is T.DATE and not params:
        return _Date()
    if (kind in _TIMESTAMPS or kind in _TIMES) and len(params) <= 1 and ints:
        return _Moment(kind, numbers[0] if numbers else _FRACTION_DEFAULT.get(dialect, 6))
    return _Other(dt)


def _widens(a: _Leaf, b: _Leaf) -> bool:
    """True when every value of ``a`` is a value of ``b``."""
    match a, b:
        case _Int(), _Int():
            return b.low <= a.low and a.high <= b.high
        case _Int(), _Float():
            return max(-a.low, a.high) <= 2**b.bits
        case _Int(), _Decimal():
            return b.integer_digits is None or b.integer_digits >= a.digits
        case _Float(), _Float():
            return b.bits >= a.bits
        case _Decimal(), _Decimal():
            if b.integer_digits is None or a.integer_digits is None:
                return b.precision is None
            return b.integer_digits >= a.integer_digits and b.scale >= a.scale
        case _Chars(), _Chars():
            return (
                a.binary == b.binary
                and a.national == b.national
                and (a.fixed or not b.fixed)
                and _longer_or_equal(b.length, a.length)
            )
        case _Date(), _Moment():
            return b.kind in _DATE_WIDENS_TO
        case _Moment(), _Moment():
            return a.kind is b.kind and b.precision >= a.precision
    return False


def _longer_or_equal(x: int | None, y: int | None) -> bool:
    return x is None or (y is not None and x >= y)


def _exact(leaf: _Leaf) -> bool:
    return isinstance(leaf, _Int | _Decimal)


def _loss(a: _Leaf, b: _Leaf) -> str:
    """What ``b`` cannot hold of ``a``, for a narrowing in one family."""
    match a, b:
        case _Int(), _Int():
            return "changes signedness" if (a.low < 0) != (b.low < 0) else "loses range"
        case ((_Int() | _Decimal()), (_Int() | _Decimal())):
            digits_a = a.digits if isinstance(a, _Int) else a.integer_digits
            digits_b = b.digits if isinstance(b, _Int) else b.integer_digits
            scale_a = a.scale if isinstance(a, _Decimal) else 0
            scale_b = b.scale if isinstance(b, _Decimal) else 0
            lost = []
            if not _longer_or_equal(digits_b, digits_a):
                lost.append("integer digits")
            if scale_b < scale_a:
                lost.append("scale")
            return "loses " + (" and ".join(lost) if lost else "range")
        case _Float(), _:
            return "loses precision"
        case _Chars(), _Chars():
            if not _longer_or_equal(b.length, a.length):
                return "loses length"
            return "pads values"
        case _Moment(), _Date():
            return "loses time of day"
        case _Moment(), _Moment():
            return "loses fractional seconds"
    return "loses values"


def _classify(a: _Leaf, b: _Leaf) -> tuple[TypeChange, str]:
    if a == b:
        return TypeChange.SAME, ""
    invalid = next((x for x in (b, a) if isinstance(x, _Invalid)), None)
    if invalid is not None:  # never a widening: the engine cannot store the type
        return TypeChange.CHANGED, f"changes type: {invalid.why}"
    if _widens(a, b):
        return TypeChange.WIDENED, "widens"
    if _widens(b, a):
        return TypeChange.NARROWED, _loss(a, b)
    # Neither holds the other: one family still narrows, as each loses values.
    if _exact(a) and _exact(b):
        return TypeChange.NARROWED, _loss(a, b)
    if isinstance(a, _Chars) and isinstance(b, _Chars) and a.binary == b.binary:
        if a.national != b.national:
            return TypeChange.CHANGED, "changes character set"
        return TypeChange.NARROWED, _loss(a, b)
    if isinstance(a, _Int | _Decimal | _Float) and isinstance(b, _Int | _Decimal | _Float):
        return TypeChange.CHANGED, "loses precision"
    if isinstance(a, _Moment) and isinstance(b, _Moment) and {a.kind, b.kind} <= _ZONED:
        return TypeChange.CHANGED, "changes time zone semantics"
    if any(isinstance(x, _Other) and x.bare_decimal for x in (a, b)):
        return TypeChange.CHANGED, "has a DECIMAL of unknown default precision"
    return TypeChange.CHANGED, "changes type"


# -- comparison ----------------------------------------------------------------


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
def compare(old: str, new: str, dialect: str = "spark") -> TypeComparison:
    """Classify the move from ``old`` to ``new``; see the module docstring."""
    dialect = validate_dialect(dialect)
    a, b = _parse(old, dialect), _parse(new, dialect)
    if a is None or b is None:
        before, after = canonical(old, dialect), canonical(new, dialect)
        if a is None and b is None and before == after:
            return TypeComparison(TypeChange.SAME, "")
        what = "an unknown type" if a is None and b is None else "to or from an unknown type"
        return TypeComparison(TypeChange.CHANGED, f"{before} -> {after} changes {what}")
    result = _compare(a, b, dialect, "")
    reason = result.reason
    if result.others and reason:
        reason += f" (+{result.others} more)"
    return TypeComparison(
        result.change,
        reason if result.change is not TypeChange.SAME else "",
        tuple(result.removed),
        tuple(result.added),
    )


def _compare(a: exp.DataType, b: exp.DataType, dialect: str, path: str) -> _Result:
    result = _Result()
    if a.this is b.this and (ea := _element(a)) is not None and (eb := _element(b)) is not None:
        result.merge(_compare(ea, eb, dialect, path + "[]"))
    elif (ka := _key_value(a)) is not None and (kb := _key_value(b)) is not None:
        result.merge(_compare(ka[0], kb[0], dialect, path + "{key}"))
        result.merge(_compare(ka[1], kb[1], dialect, path + "{}"))
    elif a.this is b.this and (fa := _fields(a)) is not None and (fb := _fields(b)) is not None:
        _compare_fields(fa, fb, dialect, path, result)
    else:
        change, phrase = _classify(_leaf(a, dialect), _leaf(b, dialect))
        where = f"{path}: " if path else ""
        before, after = _render(a, dialect), _render(b, dialect)
        result.absorb(change, f"{where}{before} -> {after} {phrase}")
    _compare_modifiers(a, b, path, result)
    return result


def _compare_fields(
    fa: dict[str, _Field], fb: dict[str, _Field], dialect: str, path: str, result: _Result
) -> None:
    """Removed paths follow the old declaration order, added paths the new one."""
    common: dict[str, _Result] = {}
    for name, old in fa.items():
        where = join_path(path, _quote(name))
        new = fb.get(name)
        if new is None:
            result.removed.append(where)
            continue
        child = common[name] = _compare(old.type, new.type, dialect, where)
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
