"""The type lattice, table-driven in both directions.

Every row is (dialect, old, new, expected forward change). The reverse of a
widening must be a narrowing, the reverse of a change a change, the reverse of
SAME SAME; a narrowing reverses to a widening or (two types that each lose some
of the other's values) a narrowing.
"""

from __future__ import annotations

import pytest
from sqlglot import exp

from gate.lattice import (
    DIALECTS,
    TypeChange,
    TypeComparison,
    canonical,
    compare,
    join_path,
    parse,
    validate_dialect,
)
from gate.model import UsageError

S, W, N, C = TypeChange.SAME, TypeChange.WIDENED, TypeChange.NARROWED, TypeChange.CHANGED

LATTICE = [
    # -- Spark (the default dialect): integers upward, spelled every way ---------
    ("spark", "tinyint", "smallint", W),
    ("spark", "smallint", "int", W),
    ("spark", "int", "bigint", W),
    ("spark", "tinyint", "int", W),
    ("spark", "tinyint", "bigint", W),
    ("spark", "byte", "short", W),
    ("spark", "SHORT", "integer", W),
    ("spark", "integer", "LONG", W),
    ("spark", "int", "tinyint", N),
    ("spark", "bigint", "tinyint", N),
    ("spark", "bigint", "int", N),
    ("spark", "long", "bigint", S),
    ("spark", "INT", "integer", S),
    ("spark", "int", "Int", S),
    # floating point: exact only while the integer fits the significand
    ("spark", "float", "double", W),
    ("spark", "real", "double", W),
    ("spark", "tinyint", "float", W),
    ("spark", "smallint", "float", W),
    ("spark", "tinyint", "double", W),
    ("spark", "smallint", "double", W),
    ("spark", "int", "double", W),
    ("spark", "int", "float", C),
    ("spark", "bigint", "float", C),
    ("spark", "bigint", "double", C),
    ("spark", "float", "real", S),
    # decimals: integer digits and scale may only grow
    ("spark", "decimal(10,2)", "decimal(12,2)", W),
    ("spark", "decimal(10,2)", "decimal(12,4)", W),
    ("spark", "decimal(10,2)", "decimal(11,3)", W),
    ("spark", "decimal(10,2)", "decimal(5,2)", N),
    ("spark", "decimal(10,2)", "decimal(10,4)", N),
    ("spark", "decimal(10, 2)", "DECIMAL(10,2)", S),
    ("spark", "decimal", "decimal(10,0)", S),
    ("spark", "decimal(10)", "decimal(10,0)", S),
    ("spark", "numeric(10,2)", "dec(10,2)", S),
    ("spark", "decimal", "decimal(12,0)", W),
    # integers into decimals: p - s must hold the integer's digits
    ("spark", "tinyint", "decimal(3,0)", W),
    ("spark", "smallint", "decimal(5,0)", W),
    ("spark", "int", "decimal(10,0)", W),
    ("spark", "int", "decimal(12,2)", W),
    ("spark", "bigint", "decimal(20,0)", W),
    ("spark", "bigint", "decimal(38,18)", W),
    ("spark", "int", "decimal(9,0)", N),
    ("spark", "int", "decimal(12,4)", N),
    ("spark", "bigint", "decimal(19,0)", N),
    ("spark", "decimal(10,2)", "double", C),
    ("spark", "double", "decimal(38,18)", C),
    ("spark", "decimal(5,2)", "float", C),
    # strings: longer or unbounded widens, padding never does
    ("spark", "varchar(10)", "varchar(100)", W),
    ("spark", "varchar(100)", "varchar(10)", N),
    ("spark", "varchar(10)", "string", W),
    ("spark", "string", "varchar(10)", N),
    ("spark", "char(5)", "varchar(5)", W),
    ("spark", "char(5)", "varchar(50)", W),
    ("spark", "char(5)", "char(5)", S),
    ("spark", "char(5)", "char(10)", W),
    ("spark", "char(5)", "string", W),
    ("spark", "varchar(10)", "char(10)", N),
    ("spark", "string", "char(10)", N),
    ("spark", "varchar(10)", "char(20)", N),
    ("spark", "string", "binary", C),
    ("spark", "binary", "BINARY", S),
    # dates and timestamps
    ("spark", "date", "timestamp", W),
    ("spark", "date", "timestamp_ntz", W),
    ("spark", "date", "timestamp_ltz", W),
    ("spark", "timestamp", "date", N),
    ("spark", "timestamp_ntz", "date", N),
    ("spark", "timestamp", "timestamp_ntz", C),
    ("spark", "timestamp_ltz", "timestamp", S),
    ("spark", "date", "string", C),
    ("spark", "timestamp", "bigint", C),
    # other families
    ("spark", "int", "string", C),
    ("spark", "string", "int", C),
    ("spark", "boolean", "int", C),
    ("spark", "boolean", "BOOLEAN", S),
    # unknown names compare by spelling, and fail closed
    ("spark", "geo_point", "geo_point", S),
    ("spark", "geo_point", "GEO_POINT", S),
    ("spark", "geo_point", "geo_shape", C),
    ("spark", "int", "geo_point", C),
    # -- nested types --------------------------------------------------------------
    ("spark", "array<int>", "array<bigint>", W),
    ("spark", "array<bigint>", "array<int>", N),
    ("spark", "array<int>", "array<string>", C),
    ("spark", "array<int>", "int", C),
    ("spark", "array<array<tinyint>>", "array<array<int>>", W),
    ("spark", "map<string,int>", "map<string,bigint>", W),
    ("spark", "map<int,string>", "map<bigint,string>", W),
    ("spark", "map<string,int>", "map<string,string>", C),
    ("spark", "map<string,int>", "array<int>", C),
    ("spark", "struct<a:int>", "struct<a:bigint>", W),
    ("spark", "struct<a:int>", "struct<a:int,zip:string>", W),
    ("spark", "struct<a:int,b:string>", "struct<b:string,a:int>", S),
    ("spark", "struct<a:int,b:bigint>", "struct<a:bigint,b:int>", N),
    ("spark", "struct<a:struct<b:int>>", "struct<a:struct<b:bigint>>", W),
    ("spark", "array<struct<a:int>>", "array<struct<a:int,b:date>>", W),
    ("spark", "array<struct<a:date>>", "array<struct<a:string>>", C),
    ("spark", "struct<a:int>", "struct<a:int not null>", N),
    # -- postgres: INT8 is BIGINT, a bare NUMERIC is unbounded ----------------------
    ("postgres", "int8", "bigint", S),
    ("postgres", "INT8", "INT4", N),
    ("postgres", "int2", "int4", W),
    ("postgres", "integer", "bigint", W),
    ("postgres", "serial", "bigint", W),
    ("postgres", "real", "double precision", W),
    ("postgres", "float4", "float8", W),
    ("postgres", "float", "real", N),
    ("postgres", "numeric(10,2)", "numeric", W),
    ("postgres", "numeric", "numeric(38,10)", N),
    ("postgres", "numeric", "decimal", S),
    ("postgres", "bigint", "numeric", W),
    ("postgres", "double precision", "numeric", C),
    ("postgres", "varchar(10)", "text", W),
    ("postgres", "character varying(10)", "varchar(20)", W),
    ("postgres", "varchar", "text", S),
    ("postgres", "char", "char(1)", S),
    ("postgres", "text", "varchar(10)", N),
    ("postgres", "timestamp", "timestamptz", C),
    ("postgres", "date", "timestamptz", W),
    ("postgres", "timestamp(3)", "timestamp(6)", W),
    ("postgres", "timestamp", "timestamp(6)", S),
    ("postgres", "timestamp with time zone", "timestamptz", S),
    ("postgres", "int[]", "bigint[]", W),
    ("postgres", "integer[]", "text[]", C),
    ("postgres", "bytea", "bytea", S),
    # -- snowflake: every integer is NUMBER(38,0), FLOAT is 64-bit ------------------
    ("snowflake", "number", "number(38,0)", S),
    ("snowflake", "number", "decimal", S),
    ("snowflake", "int", "bigint", S),
    ("snowflake", "smallint", "number(38,0)", S),
    ("snowflake", "number(10,2)", "number(12,2)", W),
    ("snowflake", "number(12,2)", "number(10,2)", N),
    ("snowflake", "number(10,0)", "int", W),
    ("snowflake", "float", "double", S),
    ("snowflake", "varchar", "string", S),
    ("snowflake", "varchar(10)", "varchar", W),
    ("snowflake", "timestamp", "timestamp_ntz", S),
    ("snowflake", "timestamp_ntz", "timestamp_tz", C),
    ("snowflake", "timestamp_ltz", "timestamp_tz", C),
    ("snowflake", "date", "timestamp_ltz", W),
    ("snowflake", "number(38,0)", "float", C),
    # -- bigquery: INT64 under every name, NUMERIC is (38,9) ------------------------
    ("bigquery", "int64", "int", S),
    ("bigquery", "int64", "smallint", S),
    ("bigquery", "numeric", "numeric(38,9)", S),
    ("bigquery", "numeric", "bignumeric", W),
    ("bigquery", "numeric(10,2)", "numeric(12,2)", W),
    ("bigquery", "int64", "numeric", W),
    ("bigquery", "int64", "float64", C),
    ("bigquery", "float64", "float", S),
    ("bigquery", "string", "bytes", C),
    ("bigquery", "string(10)", "string", W),
    ("bigquery", "date", "datetime", W),
    ("bigquery", "date", "timestamp", W),
    ("bigquery", "datetime", "timestamp", C),
    ("bigquery", "array<int64>", "array<numeric>", W),
    ("bigquery", "struct<a int64>", "struct<a int64, b string>", W),
    # -- duckdb: unsigned and 128-bit integers; lengths are ignored -----------------
    ("duckdb", "tinyint", "hugeint", W),
    ("duckdb", "utinyint", "smallint", W),
    ("duckdb", "utinyint", "tinyint", N),
    ("duckdb", "ubigint", "hugeint", W),
    ("duckdb", "integer", "uinteger", N),
    ("duckdb", "uinteger", "bigint", W),
    ("duckdb", "uinteger", "double", W),
    ("duckdb", "ubigint", "double", C),
    ("duckdb", "int8", "bigint", S),
    ("duckdb", "decimal", "decimal(18,3)", S),
    ("duckdb", "decimal(18,3)", "decimal(20,3)", W),
    ("duckdb", "varchar(100)", "varchar(10)", S),
    ("duckdb", "timestamp", "timestamptz", C),
    ("duckdb", "date", "timestamp", W),
    ("duckdb", "int[]", "bigint[]", W),
    ("duckdb", "struct(a int)", "struct(a int, b varchar)", W),
    ("duckdb", "map(varchar, int)", "map(varchar, bigint)", W),
    ("duckdb", "float", "double", W),
    ("duckdb", "int[3]", "int[4]", C),
    # -- T-SQL: TINYINT is unsigned, bare VARCHAR is VARCHAR(1) ---------------------
    ("tsql", "tinyint", "smallint", W),
    ("tsql", "tinyint", "bit", C),
    ("tsql", "varchar", "varchar(1)", S),
    ("tsql", "nvarchar(10)", "varchar(10)", C),
    ("tsql", "nvarchar(10)", "varchar(5)", C),
    ("tsql", "nvarchar(5)", "nvarchar(10)", W),
    ("tsql", "decimal", "decimal(18,0)", S),
    ("tsql", "datetime2(3)", "datetime2(7)", W),
    ("tsql", "datetime2", "datetime2(7)", S),
    ("tsql", "varchar(100)", "varchar(max)", W),
    ("tsql", "binary(4)", "varbinary(4)", W),
    ("tsql", "varbinary(4)", "binary(8)", N),
    ("tsql", "varbinary(4)", "varbinary(max)", W),
    ("spark", "binary", "string", C),
    # -- MySQL: display widths are not ranges -----------------------------------
    ("mysql", "int(11)", "bigint(20)", W),
    ("mysql", "int unsigned", "bigint", W),
    ("mysql", "int", "int unsigned", N),
    ("mysql", "tinytext", "text", W),
    ("mysql", "text", "longtext", W),
    ("mysql", "decimal", "decimal(10,0)", S),
    # -- hive / databricks share Spark's decimal default ---------------------------
    ("hive", "decimal", "decimal(10,0)", S),
    ("databricks", "timestamp_ltz", "timestamp", S),
    ("databricks", "decimal(10,2)", "decimal(12,2)", W),
]

REVERSE = {S: {S}, W: {N}, N: {W, N}, C: {C}}


def _id(row: tuple[str, str, str, TypeChange]) -> str:
    dialect, old, new, expected = row
    return f"{dialect}:{old}->{new}:{expected.value}"


@pytest.mark.parametrize("row", LATTICE, ids=[_id(r) for r in LATTICE])
def test_lattice_forward(row: tuple[str, str, str, TypeChange]) -> None:
    dialect, old, new, expected = row
    result = compare(old, new, dialect)
    assert result.change is expected, result.reason
    assert (result.reason == "") == (expected is S)


@pytest.mark.parametrize("row", LATTICE, ids=[_id(r) for r in LATTICE])
def test_lattice_reverse(row: tuple[str, str, str, TypeChange]) -> None:
    dialect, old, new, expected = row
    forward, reverse = compare(old, new, dialect), compare(new, old, dialect)
    assert reverse.removed_fields == forward.added_fields
    assert reverse.added_fields == forward.removed_fields
    # Removed fields are reported apart, so undoing an addition leaves the rest SAME.
    allowed = REVERSE[expected] | ({S} if forward.added_fields else set())
    assert reverse.change in allowed, reverse.reason


def test_lattice_covers_the_dialects_and_every_verdict() -> None:
    assert len(LATTICE) >= 80
    dialects = {row[0] for row in LATTICE}
    assert {"spark", "postgres", "snowflake", "bigquery", "duckdb"} <= dialects
    assert {row[3] for row in LATTICE} == {S, W, N, C}


# -- the seed implementation's measured bugs -----------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "dialect", "expected"),
    [
        ("int", "tinyint", "spark", N),  # passed as safe
        ("bigint", "tinyint", "spark", N),  # passed as safe
        ("float", "double", "spark", W),  # failed as breaking
        ("tinyint", "int", "spark", W),  # failed as breaking
        ("decimal(10,2)", "decimal(5,2)", "spark", N),  # parameters were dropped
        ("varchar(100)", "varchar(10)", "spark", N),  # parameters were dropped
        ("INT8", "BIGINT", "postgres", S),  # no dialect: INT8 parsed as TINYINT
        ("INT8", "SMALLINT", "postgres", N),
    ],
)
def test_seed_bugs_do_not_come_back(old: str, new: str, dialect: str, expected: TypeChange) -> None:
    assert compare(old, new, dialect).change is expected


def test_dialect_decides_what_int8_is() -> None:
    assert canonical("INT8", "postgres") == "BIGINT"
    assert canonical("INT8", "duckdb") == "BIGINT"
    assert canonical("Int8", "clickhouse") != "BIGINT"


# -- nested fields -------------------------------------------------------------------


def test_removed_field_is_listed_and_the_rest_classified() -> None:
    result = compare("struct<a:int,zip:string>", "struct<a:int>")
    assert result == TypeComparison(S, "", removed_fields=("zip",))
    result = compare("struct<a:int,zip:string>", "struct<a:bigint>")
    assert result.change is W
    assert result.removed_fields == ("zip",)


def test_added_field_is_listed_and_widens() -> None:
    result = compare("struct<a:int>", "struct<a:int,zip:string,city:string>")
    assert result.change is W
    assert result.added_fields == ("zip", "city")
    assert result.reason == "fields zip, city added"


@pytest.mark.parametrize(
    ("old", "new", "removed", "added"),
    [
        ("array<struct<sku:string,qty:int>>", "array<struct<qty:int>>", ("[].sku",), ()),
        ("map<string,struct<a:int,b:int>>", "map<string,struct<b:int>>", ("{}.a",), ()),
        ("map<struct<k:int>,int>", "map<struct<k:int,j:int>,int>", (), ("{key}.j",)),
        (
            "struct<items:array<struct<sku:string>>>",
            "struct<items:array<struct<id:int>>>",
            ("items[].sku",),
            ("items[].id",),
        ),
        ("struct<a:struct<b:int,c:int>>", "struct<a:struct<b:int>>", ("a.c",), ()),
        ("struct<`a.b`:int,c:int>", "struct<c:int>", ("`a.b`",), ()),
        ("struct<zip:string>", "struct<Zip:string>", ("zip",), ("Zip",)),
    ],
)
def test_field_paths(old: str, new: str, removed: tuple[str, ...], added: tuple[str, ...]) -> None:
    result = compare(old, new)
    assert result.removed_fields == removed
    assert result.added_fields == added


def test_case_only_rename_is_a_removal_and_an_addition() -> None:
    result = compare("struct<zip:string>", "struct<Zip:string>")
    assert result.change is W
    assert (result.removed_fields, result.added_fields) == (("zip",), ("Zip",))


def test_required_field_added_narrows() -> None:
    result = compare("struct<a:int>", "struct<a:int,b:int not null>")
    assert result.change is N
    assert result.added_fields == ("b",)
    assert "required field b added" in result.reason


def test_bigquery_positional_struct_fields() -> None:
    result = compare("struct<int64, string>", "struct<int64, string, bool>", "bigquery")
    assert result.change is W
    assert result.added_fields == ("_field_3",)


def test_join_path_anchors_a_field_path_at_a_column() -> None:
    assert join_path("address", "zip") == "address.zip"
    assert join_path("items", "[].sku") == "items[].sku"
    assert join_path("m", "{}.a") == "m{}.a"
    assert join_path("", "zip") == "zip"
    assert join_path("col", "") == "col"


# -- reasons --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "dialect", "reason"),
    [
        ("bigint", "int", "spark", "BIGINT -> INT loses range"),
        (
            "decimal(10,2)",
            "decimal(5,2)",
            "spark",
            "DECIMAL(10,2) -> DECIMAL(5,2) loses integer digits",
        ),
        ("decimal(10,2)", "decimal(10,1)", "spark", "DECIMAL(10,2) -> DECIMAL(10,1) loses scale"),
        ("varchar(100)", "varchar(10)", "spark", "VARCHAR(100) -> VARCHAR(10) loses length"),
        ("int", "bigint", "spark", "INT -> BIGINT widens"),
        ("bigint", "double", "spark", "BIGINT -> DOUBLE loses precision"),
        ("timestamp", "date", "spark", "TIMESTAMP -> DATE loses time of day"),
        (
            "timestamp",
            "timestamp_ntz",
            "spark",
            "TIMESTAMP -> TIMESTAMP_NTZ changes time zone semantics",
        ),
        ("int", "uinteger", "duckdb", "INT -> UINTEGER changes signedness"),
        ("array<int>", "array<bigint>", "spark", "[]: INT -> BIGINT widens"),
        ("struct<a:int>", "struct<a:int,zip:string>", "spark", "field zip added"),
        (
            "struct<a:int,b:int>",
            "struct<a:bigint,b:string>",
            "spark",
            "b: INT -> STRING changes type (+1 more)",
        ),
        ("my_type", "other_type", "spark", "MY_TYPE -> OTHER_TYPE changes an unknown type"),
        ("int", "my_type", "spark", "INT -> MY_TYPE changes to or from an unknown type"),
    ],
)
def test_reasons(old: str, new: str, dialect: str, reason: str) -> None:
    assert compare(old, new, dialect).reason == reason


def test_decimal_of_unknown_default_fails_closed() -> None:
    result = compare("decimal", "decimal(10,2)", "trino")
    assert result.change is C
    assert "unknown default precision" in result.reason
    assert compare("decimal", "DECIMAL", "trino").change is S


# -- canonical ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dialect", "expected"),
    [
        ("long", "spark", "BIGINT"),
        ("integer", "spark", "INT"),
        ("string", "spark", "STRING"),
        ("decimal", "spark", "DECIMAL(10,0)"),
        ("decimal(10, 2)", "spark", "DECIMAL(10,2)"),
        ("  Decimal( 10 ,2 )  ", "spark", "DECIMAL(10,2)"),
        ("array<struct<a:int>>", "spark", "ARRAY<STRUCT<a INT>>"),
        ("map<string,array<long>>", "spark", "MAP<STRING, ARRAY<BIGINT>>"),
        (
            "struct<a:int not null, b:string comment 'x'>",
            "spark",
            "STRUCT<a INT NOT NULL, b STRING>",
        ),
        ("timestamp_ltz", "spark", "TIMESTAMP"),
        ("INT8", "postgres", "BIGINT"),
        ("numeric", "postgres", "DECIMAL"),
        ("float4", "postgres", "REAL"),
        ("int[]", "postgres", "ARRAY<INT>"),
        ("number", "snowflake", "DECIMAL(38,0)"),
        ("int", "snowflake", "DECIMAL(38,0)"),
        ("numeric", "bigquery", "NUMERIC(38,9)"),
        ("int", "bigquery", "INT64"),
        ("decimal", "duckdb", "DECIMAL(18,3)"),
        ("varchar", "tsql", "VARCHAR(1)"),
        ("my   udt", "spark", "MY UDT"),
        ("  ", "spark", ""),
    ],
)
def test_canonical(text: str, dialect: str, expected: str) -> None:
    assert canonical(text, dialect) == expected


# -- parse ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "foo",
        "my_udt",
        "((",
        "int foo",
        "int)",
        "array<int",
        "array<foo>",
        "struct<a:foo>",
        "'int'",
        "int, int",
        "unknown",
        "\x00",
        "`unterminated",
        "array<" * 1000 + "int" + ">" * 1000,  # deeper than sqlglot parses
    ],
)
def test_parse_returns_none_for_unknown_or_junk(text: str) -> None:
    assert parse(text) is None


def test_parse_fills_dialect_defaults() -> None:
    dt = parse("decimal", "spark")
    assert isinstance(dt, exp.DataType)
    assert dt.sql() == "DECIMAL(10, 0)"
    assert parse("int8", "postgres").this is exp.DataType.Type.BIGINT


def test_parse_rejects_what_sqlglot_would_half_read() -> None:
    assert parse("struct<a:int>", "duckdb") is None  # sqlglot drops the field types
    assert parse("struct(a int)", "duckdb") is not None


def test_parse_returns_a_copy_callers_may_change() -> None:
    dt = parse("array<int>")
    dt.set("this", exp.DataType.Type.MAP)
    assert canonical("array<int>") == "ARRAY<INT>"
    assert parse("array<int>").this is exp.DataType.Type.ARRAY


# -- dialects -------------------------------------------------------------------------


def test_dialects_are_sqlglots_sorted() -> None:
    assert list(DIALECTS) == sorted(DIALECTS)
    assert {"spark", "postgres", "snowflake", "bigquery", "duckdb", "databricks"} <= set(DIALECTS)
    assert "" not in DIALECTS


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("spark", "spark"),
        (" Postgres ", "postgres"),
        ("postgresql", "postgres"),
        ("SQLServer", "tsql"),
    ],
)
def test_validate_dialect(name: str, expected: str) -> None:
    assert validate_dialect(name) == expected


@pytest.mark.parametrize("name", ["", "sparksql!", "pg", "oracle12"])
def test_validate_dialect_rejects_unknown(name: str) -> None:
    with pytest.raises(UsageError, match=r"unknown dialect .*; choose one of: athena, bigquery"):
        validate_dialect(name)


def test_unknown_dialect_is_a_usage_error_everywhere() -> None:
    for call in (lambda: compare("int", "int", "nope"), lambda: canonical("int", "nope")):
        with pytest.raises(UsageError):
            call()
    with pytest.raises(UsageError):
        parse("int", "nope")


# -- speed ----------------------------------------------------------------------------


def test_repeated_comparisons_are_served_from_the_cache() -> None:
    compare("int", "bigint", "spark")
    hits = compare.cache_info().hits
    for _ in range(10_000):
        compare("int", "bigint", "spark")
    assert compare.cache_info().hits >= hits + 10_000
