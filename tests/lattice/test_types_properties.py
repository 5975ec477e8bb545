"""Properties of the type lattice over generated types, nested ones included.

Types are generated as small trees (scalar, ARRAY, MAP, STRUCT) and rendered
to text in several spellings, so the properties also cover spelling: case and
whitespace never matter, the canonical spelling reads back as the same type,
and no pair of types widens both ways.
"""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from gate.lattice import TypeChange, canonical, compare, parse

S, W, N, C = TypeChange.SAME, TypeChange.WIDENED, TypeChange.NARROWED, TypeChange.CHANGED

#: Scalars that order within each dialect: the rungs of the lattice.
LADDERS: dict[str, list[str]] = {
    "spark": [
        "tinyint", "smallint", "int", "bigint", "float", "double", "decimal",
        "decimal(3,0)", "decimal(5,0)", "decimal(10,0)", "decimal(10,2)", "decimal(12,2)",
        "decimal(12,4)", "decimal(19,0)", "decimal(20,0)", "decimal(38,18)", "char(5)",
        "char(10)", "varchar(5)", "varchar(10)", "string", "binary", "date", "timestamp",
        "timestamp_ntz", "boolean",
    ],
    "postgres": [
        "smallint", "integer", "bigint", "real", "double precision", "numeric",
        "numeric(10,2)", "numeric(12,4)", "numeric(5)", "varchar(5)", "varchar(10)", "text",
        "char(3)", "date", "timestamp", "timestamp(3)", "timestamptz", "time", "time(3)",
        "bytea", "boolean",
    ],
    "snowflake": [
        "number", "number(10,2)", "number(12,4)", "int", "float", "varchar(10)", "varchar",
        "string", "char(5)", "date", "timestamp", "timestamp_tz", "timestamp_ltz",
        "timestamp(3)", "binary", "boolean",
    ],
    "bigquery": [
        "int64", "numeric", "bignumeric", "numeric(10,2)", "float64", "string", "string(10)",
        "bytes", "bytes(5)", "date", "datetime", "timestamp", "bool",
    ],
    "duckdb": [
        "utinyint", "usmallint", "uinteger", "ubigint", "tinyint", "smallint", "integer",
        "bigint", "hugeint", "uhugeint", "float", "double", "decimal(18,3)", "decimal(10,2)",
        "varchar", "date", "timestamp", "timestamptz", "timestamp_ns", "blob",
    ],
    "tsql": [
        "tinyint", "smallint", "int", "bigint", "real", "decimal", "decimal(10,2)",
        "varchar(10)", "varchar(max)", "nvarchar(10)", "nvarchar(20)", "char(5)", "nchar(5)",
        "binary(4)", "varbinary(8)", "date", "datetime2", "datetime2(3)", "datetimeoffset",
        "bit",
    ],
    "mysql": [
        "tinyint", "tinyint unsigned", "smallint", "int", "int unsigned", "bigint",
        "bigint unsigned", "float", "double", "decimal", "decimal(10,2)", "varchar(10)",
        "char(5)", "text", "tinytext", "longtext", "binary(4)", "varbinary(8)", "date",
        "datetime", "timestamp",
    ],
}  # fmt: skip

#: Names from every dialect, so each dialect also meets names it does not know.
EXTRA = [
    "long", "byte", "short", "real", "int8", "int4", "int2", "serial", "number",
    "timestamp_ltz", "uuid", "json", "interval", "geo_point", "my_udt", "float(10)",
    "float(40)", "decimal(7)", "time",
]  # fmt: skip

DIALECTS = [*LADDERS, "databricks", "hive", "trino", "redshift", "oracle"]
FIELD_NAMES = ["a", "b", "c", "zip", "Zip", "sku"]

# A type tree: a scalar's text, ("array", t), ("map", k, v) or ("struct", ((name, t), ...)).
Tree = str | tuple


# The strategies below are built once per dialect, not once per example: building
# and validating a recursive strategy cost about four times what the properties
# themselves do (cProfile, 2,100 examples). The same strategies, so the same
# examples are drawn and checked.


@functools.cache
def _scalars(dialect: str) -> st.SearchStrategy[str]:
    return st.sampled_from(LADDERS.get(dialect, LADDERS["spark"]) + EXTRA)


@functools.cache
def _trees(leaves: st.SearchStrategy[str]) -> st.SearchStrategy[Tree]:
    def grow(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
        fields = st.lists(
            st.tuples(st.sampled_from(FIELD_NAMES), children),
            min_size=1,
            max_size=4,
            unique_by=lambda f: f[0],
        )
        return st.one_of(
            st.tuples(st.just("array"), children),
            st.tuples(st.just("map"), leaves, children),
            st.tuples(st.just("struct"), fields.map(tuple)),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def render(tree: Tree, upper: bool = True, sep: str = ", ") -> str:
    """Type text; ``upper`` and ``sep`` vary the spelling, never the type."""
    if isinstance(tree, str):
        return tree.upper() if upper else tree.lower()
    kind = tree[0].upper() if upper else tree[0]
    if tree[0] == "array":
        return f"{kind}<{render(tree[1], upper, sep)}>"
    if tree[0] == "map":
        return f"{kind}<{render(tree[1], upper, sep)}{sep}{render(tree[2], upper, sep)}>"
    fields = sep.join(f"{name} {render(t, upper, sep)}" for name, t in tree[1])
    return f"{kind}<{fields}>"


@st.composite
def typed(draw: st.DrawFn) -> tuple[str, str]:
    """A dialect and a type text in it."""
    dialect = draw(st.sampled_from(DIALECTS))
    tree = draw(_trees(_scalars(dialect)))
    return dialect, render(tree, draw(st.booleans()), draw(st.sampled_from([", ", ","])))


@st.composite
def respelled(draw: st.DrawFn) -> tuple[str, str, str]:
    """A dialect and one type spelled twice (case and whitespace differ)."""
    dialect = draw(st.sampled_from(DIALECTS))
    tree = draw(_trees(_scalars(dialect)))
    one = render(tree, upper=True, sep=", ")
    two = "  " + render(tree, upper=False, sep=",   ") + "\n"
    return dialect, one, two


@functools.cache
def _ladder(dialect: str) -> st.SearchStrategy[str]:
    """The scalars on ``dialect``'s ladder only."""
    return st.sampled_from(LADDERS[dialect])


def _mutate(draw: st.DrawFn, tree: Tree, leaves: st.SearchStrategy[str]) -> Tree:
    """A type of the same shape: some leaves replaced, some fields dropped or added."""
    if isinstance(tree, str):
        return draw(st.one_of(st.just(tree), leaves))
    if tree[0] == "array":
        return ("array", _mutate(draw, tree[1], leaves))
    if tree[0] == "map":
        return ("map", _mutate(draw, tree[1], leaves), _mutate(draw, tree[2], leaves))
    fields = [(n, _mutate(draw, t, leaves)) for n, t in tree[1] if draw(st.integers(0, 4))]
    spare = [n for n in FIELD_NAMES if n not in {name for name, _ in tree[1]}]
    if spare and draw(st.booleans()):
        fields.append((draw(st.sampled_from(spare)), draw(leaves)))
    return ("struct", tuple(fields)) if fields else tree


@st.composite
def related(draw: st.DrawFn) -> tuple[str, str, str]:
    """A dialect and two types of one shape whose leaves are on its ladder."""
    dialect = draw(st.sampled_from(list(LADDERS)))
    leaves = _ladder(dialect)
    old = draw(_trees(leaves))
    new = _mutate(draw, old, leaves)
    return dialect, render(old), render(new)


PROPS = settings(max_examples=300, deadline=None)


@PROPS
@given(typed())
def test_every_type_is_the_same_as_itself(case: tuple[str, str]) -> None:
    dialect, text = case
    assert compare(text, text, dialect) == compare("int", "int", dialect)
    assert compare(text, text, dialect).change is S


@PROPS
@given(respelled())
def test_spelling_never_matters(case: tuple[str, str, str]) -> None:
    dialect, one, two = case
    result = compare(one, two, dialect)
    assert (result.change, result.removed_fields, result.added_fields) == (S, (), ())
    spelled = compare(canonical(one, dialect), canonical(two, dialect), dialect)
    assert (spelled.change, spelled.removed_fields, spelled.added_fields) == (S, (), ())


@PROPS
@given(typed())
def test_canonical_is_idempotent_and_names_the_same_type(case: tuple[str, str]) -> None:
    dialect, text = case
    spelled = canonical(text, dialect)
    assert canonical(spelled, dialect) == spelled
    result = compare(text, spelled, dialect)
    assert (result.change, result.removed_fields, result.added_fields) == (S, (), ())
    assert (parse(text, dialect) is None) == (parse(spelled, dialect) is None)


@PROPS
@given(related())
def test_widened_one_way_is_never_widened_back(case: tuple[str, str, str]) -> None:
    dialect, old, new = case
    forward, reverse = compare(old, new, dialect), compare(new, old, dialect)
    if forward.change is W and not forward.removed_fields:
        # Undoing a widening narrows; undoing only added fields leaves the rest SAME.
        # (A struct that loses a field and gains another widens both ways: the
        # removal is reported apart, as a removed field.)
        assert reverse.change is N or (reverse.change is S and forward.added_fields)


@PROPS
@given(related())
def test_same_and_changed_are_symmetric(case: tuple[str, str, str]) -> None:
    dialect, old, new = case
    forward, reverse = compare(old, new, dialect), compare(new, old, dialect)
    assert (forward.removed_fields, forward.added_fields) == (
        reverse.added_fields,
        reverse.removed_fields,
    )
    if forward.change is S and not (forward.removed_fields or forward.added_fields):
        assert reverse.change is S
    assert (forward.change is C) == (reverse.change is C)


@PROPS
@given(
    st.sampled_from(list(LADDERS)).flatmap(
        lambda d: st.tuples(st.just(d), *[st.sampled_from(LADDERS[d])] * 3)
    )
)
def test_widening_is_transitive(case: tuple[str, str, str, str]) -> None:
    dialect, a, b, c = case
    if compare(a, b, dialect).change is W and compare(b, c, dialect).change is W:
        assert compare(a, c, dialect).change is W


@PROPS
@given(st.sampled_from(DIALECTS), st.text(max_size=40), st.text(max_size=40))
def test_junk_text_never_raises(dialect: str, one: str, two: str) -> None:
    parse(one, dialect)
    assert isinstance(canonical(one, dialect), str)
    assert compare(one, two, dialect).change in set(TypeChange)
