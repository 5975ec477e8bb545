"""``type_unknown``: a data_type the dialect does not know is a warning, never a silent pass.

The case comes from a new-user review: ``data_type: txet`` on a new column was
reported as a plain ``column_added`` and ``string -> txet`` as a plain
``type_changed``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate import lattice as types
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

#: Types real projects declare, per dialect: none of them may be flagged.
REAL_TYPES: dict[str, list[str]] = {
    "spark": [
        "string", "int", "integer", "bigint", "long", "short", "byte", "tinyint", "smallint",
        "double", "float", "real", "boolean", "date", "timestamp", "timestamp_ntz",
        "timestamp_ltz", "binary", "decimal(10,2)", "decimal", "numeric", "dec", "char(3)",
        "varchar(10)", "void", "variant", "interval day to second", "array<int>",
        "array<struct<a: int, b: string>>", "map<string, array<int>>", "struct<a:int>",
        "vector(1536,float32)",  # ODCS logicalType vector, as the ODCS reader spells it
    ],
    "databricks": ["string", "bigint", "timestamp_ntz", "variant", "void"],
    "snowflake": [
        "number", "number(38,0)", "number(10,2)", "decimal", "int", "byteint", "float",
        "double precision", "varchar", "text", "string", "string(10)", "binary", "varbinary",
        "boolean", "date", "time", "timestamp_ntz", "timestamp_ntz(9)", "timestamp_ltz",
        "timestamp_tz", "variant", "object", "array", "geography", "geometry",
        "vector(float, 3)",
    ],
    "postgres": [
        "text", "integer", "int4", "int8", "int2", "bigint", "smallint", "serial", "bigserial",
        "numeric(10,2)", "real", "double precision", "float8", "boolean", "bool", "uuid",
        "json", "jsonb", "bytea", "date", "timestamp", "timestamptz",
        "timestamp with time zone", "time with time zone", "interval", "inet", "money",
        "varchar(10)", "character varying(10)", "char(2)", "int[]", "text[]", "point",
        "hstore", "xml", "int4range", "tstzrange", "daterange", "bit(3)", "geometry",
        "vector(3)", "citext", "tsvector", "tsquery", "ltree", "cidr", "macaddr", "macaddr8",
        "box", "line", "lseg", "path", "polygon", "circle", "pg_lsn", "varbit",
        "bit varying(5)", "halfvec(3)",
    ],
    "bigquery": [
        "int64", "string", "float64", "numeric", "bignumeric", "bignumeric(40,2)", "bool",
        "bytes", "timestamp", "datetime", "date", "json", "geography", "interval",
        "struct<a int64, b string>", "array<string>", "array<struct<a int64>>",
        "range<date>",
    ],
    "duckdb": [
        "varchar", "integer", "hugeint", "uuid", "json", "blob", "int[]", "struct(a int)",
        "map(varchar, int)",
    ],
    "redshift": ["super", "varchar(256)", "integer", "timestamptz", "float8"],
    "trino": ["varchar", "bigint", "row(a bigint)", "array(varchar)", "timestamp(3) with time zone"],
    "tsql": ["nvarchar(max)", "int", "datetime2", "uniqueidentifier", "bit", "money"],
    "mysql": [
        "int(11)", "tinyint(1)", "enum('a','b')", "json", "longtext", "year", "datetime(6)",
        "int unsigned",
    ],
    "clickhouse": [
        "UInt64", "String", "LowCardinality(String)", "Nullable(Int32)", "DateTime64(3)",
        "Array(String)", "Map(String, UInt8)", "FixedString(3)", "IPv4",
    ],
    # Real types sqlglot does not parse (review2: each was flagged type_unknown).
    "oracle": ["varchar2(10)", "number(10,2)", "raw(16)", "long raw", "xmltype", "nclob"],
    "fabric": ["hierarchyid"],
    "hive": ["uniontype<int,string>"],
}  # fmt: skip
REAL_TYPES["mysql"] += ["point", "polygon", "multipolygon"]
REAL_TYPES["tsql"] += ["hierarchyid"]
REAL_TYPES["duckdb"] += ["varint"]


@pytest.mark.parametrize(
    ("dialect", "text"),
    [pytest.param(d, t, id=f"{d}:{t}") for d, ts in REAL_TYPES.items() for t in ts],
)
def test_real_types_are_known(dialect: str, text: str) -> None:
    assert types.is_known(text, dialect)


@pytest.mark.parametrize(
    ("text", "dialect", "hint"),
    [
        ("txet", "spark", "text"),
        ("txet", "postgres", "text"),
        ("integr", "postgres", "integer"),
        ("varchr(10)", "postgres", "varchar"),
        ("strng", "bigquery", "string"),
        ("timestmp", "snowflake", "timestamp"),
        ("boolen", "duckdb", "boolean"),
        ("nubmer", "snowflake", "number"),
        ("tsvectr", "postgres", "tsvector"),
        # A Postgres enum or domain is a real type: unknown, and nothing suggested.
        ("mood", "postgres", None),
        ("order_status", "postgres", None),
        ("user_role", "postgres", None),
        # Field names are not types: only the leading name is compared.
        ("struct<a: txet>", "spark", None),
    ],
)
def test_unknown_types_and_suggestions(text: str, dialect: str, hint: str | None) -> None:
    assert not types.is_known(text, dialect)
    assert types.suggest(text, dialect) == hint


def test_a_type_known_only_to_another_dialect_is_unknown_in_this_one() -> None:
    assert types.is_known("citext", "postgres")
    assert not types.is_known("citext", "spark")


BASE = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: note
    data_type: string
"""


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write("soda/contracts/orders.yaml", BASE)
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def gate_json(repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def findings(report: dict) -> list[tuple[str, str, str | None, int | None]]:
    return [(c["rule"], c["severity"], c["column"], c["line"]) for c in report["changes"]]


def test_a_misspelt_type_on_a_new_column_is_a_warning_with_a_suggestion(shop: GitRepo) -> None:
    shop.write("soda/contracts/orders.yaml", BASE + "  - name: comment\n    data_type: txet\n")
    code, report = gate_json(shop)
    assert code == 0
    assert sorted(findings(report)) == [
        ("column_added", "info", "comment", 7),
        ("type_unknown", "warning", "comment", 7),
    ]
    warning = next(c for c in report["changes"] if c["rule"] == "type_unknown")
    assert warning["message"] == (
        "column 'comment' has type 'txet', which spark SQL does not know (did you mean "
        "'text'?); it is compared by spelling only. A real type (an enum, a domain)? "
        "Set 'dialect:' to your engine's, or 'rules: {type_unknown: off}'"
    )
    assert warning["after"] == "TXET" and warning["breaking"] is False
    code, _ = gate_json(shop, "--fail-on", "warning")
    assert code == 1
    text = run_gate(shop.path, "--base", "main")
    assert text.returncode == 0
    assert "type_unknown lake/shop/orders.comment" in text.stdout
    assert "(did you mean 'text'?)" in text.stdout
    assert "soda/contracts/orders.yaml:7" in text.stdout
    markdown = run_gate(shop.path, "--base", "main", "--format", "markdown")
    assert markdown.returncode == 0
    assert "| ⚠️ | `type_unknown` | `lake/shop/orders` | `comment` |" in markdown.stdout
    # The table has no room for the suggestion; the line under it carries it.
    assert (
        "- `lake/shop/orders.comment`: `TXET` is not a `spark` type; did you mean `TEXT`?"
        in markdown.stdout.splitlines()
    )


def test_a_changed_type_to_an_unknown_one_is_still_type_changed(shop: GitRepo) -> None:
    shop.write("soda/contracts/orders.yaml", BASE.replace("data_type: string", "data_type: txet"))
    code, report = gate_json(shop)
    assert code == 1
    assert sorted(findings(report)) == [
        ("type_changed", "error", "note", 5),
        ("type_unknown", "warning", "note", 5),
    ]


def test_an_unknown_type_already_there_is_not_news(shop: GitRepo) -> None:
    shop.write("soda/contracts/orders.yaml", BASE.replace("data_type: string", "data_type: mood"))
    shop.commit("an enum type, merged long ago")
    shop.git("checkout", "-q", "main")
    shop.git("merge", "-q", "--ff-only", "feature")
    shop.git("checkout", "-q", "feature")
    shop.write(
        "soda/contracts/orders.yaml",
        shop.path.joinpath("soda/contracts/orders.yaml").read_text().replace("bigint", "BIGINT"),
    )
    code, report = gate_json(shop)
    assert code == 0 and report["changes"] == []
    # Declaring it where there was none is new: a warning beside type_declared.
    shop.write(
        "soda/contracts/orders.yaml",
        "dataset: lake/shop/orders\ncolumns:\n"
        "  - name: order_id\n    data_type: bigint\n  - name: note\n",
    )
    shop.commit("drop the type")
    shop.git("checkout", "-q", "main")
    shop.git("merge", "-q", "--ff-only", "feature")
    shop.git("checkout", "-q", "feature")
    shop.write("soda/contracts/orders.yaml", BASE.replace("data_type: string", "data_type: mood"))
    code, report = gate_json(shop)
    assert sorted(findings(report)) == [
        ("type_declared", "info", "note", 5),
        ("type_unknown", "warning", "note", 5),
    ]


def test_a_postgres_enum_stays_a_warning_without_a_suggestion(shop: GitRepo) -> None:
    shop.land(".schema-gate.yml", "dialect: postgres\n")  # a PR cannot switch it (gate/policy.py)
    shop.write(
        "soda/contracts/orders.yaml",
        BASE
        + "  - name: status\n    data_type: order_status\n"
        + "  - name: tags\n    data_type: citext\n",
    )
    code, report = gate_json(shop)
    assert code == 0
    unknown = [c for c in report["changes"] if c["rule"] == "type_unknown"]
    assert [(c["column"], c["severity"]) for c in unknown] == [("status", "warning")]
    assert "which postgres SQL does not know; it is compared" in unknown[0]["message"]
    assert "did you mean" not in unknown[0]["message"]


def test_config_turns_it_off_or_regrades_it_per_dataset(shop: GitRepo) -> None:
    shop.write("soda/contracts/orders.yaml", BASE + "  - name: comment\n    data_type: txet\n")
    shop.land(".schema-gate.yml", "rules:\n  type_unknown: off\n")  # merged (gate/policy.py)
    code, report = gate_json(shop, "--fail-on", "warning")
    assert code == 0
    assert findings(report) == [("column_added", "info", "comment", 7)]
    shop.write(".schema-gate.yml", "rules:\n  type_unknown: error\n")  # a tightening: at once
    code, report = gate_json(shop)
    assert code == 1
    assert ("type_unknown", "error", "comment", 7) in findings(report)


def test_a_new_dataset_with_a_typo_is_flagged(shop: GitRepo) -> None:
    shop.write(
        "soda/contracts/events.yaml",
        "dataset: lake/shop/events\ncolumns:\n  - name: id\n    data_type: integr\n"
        "  - name: at\n    data_type: timestamp\n",
    )
    code, report = gate_json(shop)
    assert code == 0
    assert sorted(findings(report)) == [
        ("model_added", "info", None, 1),
        ("type_unknown", "warning", "id", 3),
    ]
    message = next(c["message"] for c in report["changes"] if c["rule"] == "type_unknown")
    assert "(did you mean 'integer'?)" in message


def test_a_hostile_unknown_type_comes_out_inert_in_every_format(shop: GitRepo) -> None:
    """The type text is the PR's: it reaches the type_unknown message in every report."""
    hostile = "big`int @admin ::error::x <img src=x> \u202e"
    shop.write(
        "soda/contracts/orders.yaml", BASE.replace("data_type: string", f'data_type: "{hostile}"')
    )
    shop.commit("hostile type")
    text = run_gate(shop.path, "--base", "main", "--head", "HEAD", "--format", "text").stdout
    assert "type_unknown" in text
    assert "\u202e" not in text and not any(ln.startswith("::") for ln in text.splitlines())
    md = run_gate(shop.path, "--base", "main", "--head", "HEAD", "--format", "markdown").stdout
    assert "type_unknown" in md and "\u202e" not in md
    hostile_lines = [ln for ln in md.splitlines() if "<img" in ln.lower() or "@admin" in ln.lower()]
    assert hostile_lines  # the type is shown, so the next line checks something
    for line in hostile_lines:  # only inside code spans: no tag, no mention
        outside = "".join(line.split("``")[::2])
        assert "<img" not in outside.lower() and "@admin" not in outside.lower(), line
    gh = run_gate(shop.path, "--base", "main", "--head", "HEAD", "--format", "github").stdout
    assert "title=type_unknown" in gh and "\u202e" not in gh
    assert all(ln.startswith("::") for ln in gh.splitlines())  # no line of its own
