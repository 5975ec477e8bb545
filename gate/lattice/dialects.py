"""Each SQL dialect's facts about its types: sizes, synonyms, implicit parameters, limits.

Split from the lattice so the tables that differ by engine (Spark ``decimal`` is
``DECIMAL(10,0)``, Snowflake integers are ``NUMBER(38,0)``, ``INT8`` is BIGINT in
postgres) are read in one place, apart from the logic that uses them. A key
``("*", kind)`` holds for every dialect unless the dialect has its own entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.dialects.dialect import Dialects

from gate.model import UsageError

T = exp.DataType.Type
if TYPE_CHECKING:  # sqlglot 30 makes DataType.Type a class attribute naming this enum
    from sqlglot.expressions.datatypes import DType as Kind
else:
    Kind = T

DIALECTS: tuple[str, ...] = tuple(sorted(d.value for d in Dialects if d.value))

#: Common names people use for a dialect that sqlglot spells differently.
_DIALECT_ALIASES = {"postgresql": "postgres", "sqlserver": "tsql", "mssql": "tsql"}


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
