"""The smoke test's row-level rules, and the one Spark job that counts them.

Rules are ``sqlexpr`` trees. A dataset's pass runs as one ``spark.sql``
query whose text holds only gate-made names, every value from the contract a
named parameter; the same trees render as ``Column`` objects where the
DataFrame API is used (repeated keys, the quarantine). Contract types go
through ``Column.try_cast`` in a projection, never through SQL text. No RDDs,
no ``sparkContext``: it runs unchanged on a local session, a cluster and
Spark Connect, and nothing from a contract is ever parsed as SQL.

A dataset's metrics (rows, malformed records, coercion failures, ``missing``
and ``invalid`` counts with their offending values, the keys of each
``duplicate`` check) come from ``Metrics``: one Spark job whose per-row
flags and keys pyarrow counts, plus one for the offending values of a large
sample when something failed, plus a Spark group-by (``repeated_keys``) only
when a key repeats. Never an exact ``count(DISTINCT)`` beside the other
aggregates (see ``group_duplicates``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from gate.smoke import sqlexpr
from gate.smoke.checkspec import MissingSpec, ValiditySpec
from gate.smoke.result import MAX_SAMPLES
from gate.smoke.schema import TargetType
from gate.smoke.sqlexpr import Expr

UUID_REGEX = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_NUMERIC_DDL = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")
_NUMERIC_TYPES = (
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    DecimalType,
)


@dataclass
class Bound:
    """A contract column bound to its column in the sample."""

    name: str  # the contract's (and sample's) column name
    internal: str  # its positional name in the frame (``c0``)
    source: DataType  # its Spark type as read
    target: TargetType | None  # what it must fit; None without a data_type
    castable: bool = True  # Spark can try_cast source -> target
    #: The frame's column that holds the value in the contract's type: the
    #: runner projects ``cast_column()`` under this name once Spark's analyzer
    #: has accepted the cast, so no contract type is ever SQL text.
    typed_name: str = ""

    def mark_uncastable(self) -> None:
        """Spark refuses the cast: check the column as it is in the file."""
        self.castable = False

    @property
    def raw(self) -> Expr:
        """The value as read from the file."""
        return sqlexpr.col(self.internal)

    @property
    def casts(self) -> bool:
        return bool(self.target and self.target.spark_ddl and self.castable)

    def cast_column(self) -> Column:
        """``try_cast`` to the contract type, as a Column (for the projection)."""
        assert self.target is not None and self.target.spark_ddl is not None
        return F.col(self.internal).try_cast(self.target.spark_ddl)

    @property
    def typed(self) -> Expr:
        """The value in the contract's type (NULL where it does not fit)."""
        if self.casts:
            return sqlexpr.col(self.typed_name)
        return self.raw

    @property
    def numeric(self) -> bool:
        if self.casts:
            assert self.target is not None and self.target.spark_ddl is not None
            return self.target.spark_ddl.upper().split("(")[0].strip() in _NUMERIC_DDL
        return isinstance(self.source, _NUMERIC_TYPES)

    @property
    def raw_text(self) -> Expr:
        """The value as read, as text: JSON for arrays, maps and structs."""
        if is_complex(self.source):
            return sqlexpr.call("to_json", self.raw)
        if isinstance(self.source, StringType):
            return self.raw
        return self.raw.cast("string")

    def shown(self, value: Column) -> Column:
        """``value``, a copy of ``typed`` (e.g. after a group-by), as ``typed_text`` shows it."""
        if self.casts:
            return value.cast("string")
        return as_text(value, self.source)

    @property
    def typed_text(self) -> Expr:
        if self.casts:
            return self.typed.cast("string")
        return self.raw_text


def is_complex(data_type: DataType) -> bool:
    return isinstance(data_type, (ArrayType, MapType, StructType))


def as_text(column: Column, data_type: DataType) -> Column:
    """A value as text: JSON for arrays, maps and structs, Spark's string cast otherwise."""
    if is_complex(data_type):
        return F.to_json(column)
    if isinstance(data_type, StringType):
        return column
    return column.cast("string")


class Metrics:
    """Every count of one pass over a dataset, from one Spark job.

    One query (SQL text with parameters, ``sqlexpr``) projects, per row, one
    bit per condition (``packed_flags``) and the typed keys of each ``duplicate`` check; it
    comes back as Arrow (``toArrow``) and pyarrow counts at C++ speed. Why per
    row rather than a ``select`` of aggregates: the aggregates needed a second
    job for the offending values (``collect_set`` in an object aggregate, not
    code-generated: beside the counts it made a million-row pass four times
    slower) and a third for each duplicate check's keys; at 10,000 rows each
    job is ~0.05-0.1 s of scheduling, more than the data costs (measured:
    docs/smoke-test.md). The flags cost one long per row per 63 conditions.

    Offending values ride along as text (NULL where the row passes) when the
    sample is small (``texts``: one partition) or when, even if every row
    failed every rule, their text would stay within ``INLINE_TEXT_BYTES``
    (each ``samples`` call says what its text can weigh). Otherwise a second
    job aggregates at most MAX_SAMPLES of them per rule, over the failing rows
    only, and only when something failed: it re-evaluates every rule (0.6 to
    1.2 s per million rows of the bench, measured), which the texts save.
    """

    def __init__(self, *, texts: bool) -> None:
        self.texts = texts
        self.exprs: list[tuple[str, Expr]] = []
        #: samples key -> (count key, condition, text to show)
        self._samples: dict[str, tuple[str, Expr, Expr]] = {}
        #: what the texts of every ``samples`` call weigh at worst (None: unknown)
        self._text_bytes: int | None = 0
        #: duplicate key -> (its key columns, the count key of the rows it considers)
        self._keys: dict[str, tuple[list[str], str | None]] = {}
        self._key_exprs: list[tuple[str, Expr]] = []

    def count_rows(self) -> str:
        return ROWS

    def count_if(self, condition: Expr) -> str:
        alias = f"m{len(self.exprs)}"
        self.exprs.append((alias, condition))
        return alias

    def samples(self, count_key: str, condition: Expr, text: Expr, worst: int | None) -> str:
        """Up to MAX_SAMPLES distinct offending values, sorted (stable across runs).

        ``count_key`` counts the same ``condition``: no job looks for samples
        of a condition that no row meets. ``worst`` is what ``text`` weighs
        in bytes if every row fails (``worst_text_bytes``; None if unknown).
        """
        key = f"s{len(self._samples)}"
        self._samples[key] = (count_key, condition, text)
        if self._text_bytes is not None:
            self._text_bytes = None if worst is None else self._text_bytes + worst
        return key

    @property
    def inline_texts(self) -> bool:
        """The offending values come back with the flags, not from a second job."""
        if self.texts:
            return True
        return self._text_bytes is not None and self._text_bytes <= INLINE_TEXT_BYTES

    def duplicates(self, typed: list[Expr], considered_key: str | None) -> str:
        """Rows beyond the first of each key among the rows ``considered_key`` counts (all if None).

        The value is ``None`` when pyarrow cannot decide (a key type whose
        equality differs from Spark's, ``_arrow_key``) and ``0`` or more
        otherwise; a caller that needs the repeated keys asks Spark
        (``group_duplicates``).
        """
        key = f"d{len(self._keys)}"
        names = []
        for index, expr in enumerate(typed):
            name = f"{key}_{index}"
            names.append(name)
            self._key_exprs.append((name, expr))
        self._keys[key] = (names, considered_key)
        return key

    def collect(self, df: DataFrame) -> dict[str, Any]:
        """The one job (flags and keys as Arrow), and the values job when one is needed."""
        import pyarrow.compute as pc

        params = sqlexpr.Params()
        inline = self.inline_texts
        words = [
            self.exprs[start : start + FLAGS_PER_WORD]
            for start in range(0, len(self.exprs), FLAGS_PER_WORD)
        ]
        select = [
            f"{packed_flags([sqlexpr.to_sql(expr, params) for _alias, expr in word])} AS `f{index}`"
            for index, word in enumerate(words)
        ]
        select += [f"{sqlexpr.to_sql(expr, params)} AS `{name}`" for name, expr in self._key_exprs]
        if inline:
            select += [
                f"CASE WHEN {sqlexpr.to_sql(condition, params)} "
                f"THEN {sqlexpr.to_sql(text, params)} END AS `{key}`"
                for key, (_count, condition, text) in self._samples.items()
            ]
        result = _query(df, select or ["true AS `_`"], None, params)
        ungrouped: set[str] = set()  # keys pyarrow cannot count: Spark groups them
        if self._keys:
            types = {field.name: field.dataType for field in result.schema.fields}
            for key, (names, _considered) in self._keys.items():
                if not all(_arrow_key(types[name]) for name in names):
                    ungrouped.add(key)
            # Never ship them: a type Arrow cannot carry would fail the whole pass.
            dropped = [name for key in ungrouped for name in self._keys[key][0]]
            if dropped:
                result = result.drop(*dropped)
        table = result.toArrow()
        values: dict[str, Any] = {ROWS: table.num_rows}
        flags = {
            alias: flag_column(table.column(f"f{index // FLAGS_PER_WORD}"), index % FLAGS_PER_WORD)
            for index, (alias, _expr) in enumerate(self.exprs)
        }
        for alias, flag in flags.items():
            values[alias] = int(pc.sum(flag).as_py() or 0)
        for key, (names, considered) in self._keys.items():
            if key in ungrouped:
                values[key] = None
                continue
            keys = table.select(names)
            if considered is not None:
                keys = keys.filter(flags[considered])
            values[key] = count_arrow(keys)
        wanted: list[tuple[str, Expr, Expr]] = []
        for key, (count_key, condition, text) in self._samples.items():
            values[key] = []
            if not values[count_key]:
                continue
            if inline:
                values[key] = smallest_texts(table.column(key))
            else:
                wanted.append((key, condition, text))
        if wanted:
            values.update(_offending_values(df, wanted))
        return values


#: The key of the row count in ``Metrics.collect``'s values.
ROWS = "rows"

#: Conditions per packed column: bits 0 to 62 of a BIGINT (the sign bit stays clear).
FLAGS_PER_WORD = 63


def packed_flags(conditions: list[str]) -> str:
    """SQL for one BIGINT whose bit ``i`` is set where ``conditions[i]`` is true (not NULL).

    Why bits rather than a boolean column per condition: Spark's Arrow writer
    costs about the same per value whatever its type, so a million rows of
    thirteen conditions wrote thirteen million values where one long per row
    does (0.4 to 0.6 s of a warm pass less, measured: docs/smoke-test.md). The
    terms are OR-ed as a balanced tree, so the expression stays shallow
    however many conditions a contract has. Only gate-made integers are
    spliced in; the conditions are the gate's own SQL text.
    """
    terms = [
        f"(CASE WHEN {condition} THEN {1 << bit}L ELSE 0L END)"
        for bit, condition in enumerate(conditions)
    ]
    if not 0 < len(terms) <= FLAGS_PER_WORD:
        raise ValueError(f"a packed column holds 1 to {FLAGS_PER_WORD} conditions")
    while len(terms) > 1:
        pairs = [f"({terms[i]} | {terms[i + 1]})" for i in range(0, len(terms) - 1, 2)]
        terms = pairs + (terms[-1:] if len(terms) % 2 else [])
    return terms[0]


def flag_column(word: Any, bit: int) -> Any:
    """Bit ``bit`` of a packed column (``packed_flags``), as an Arrow boolean per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = pa.scalar(1 << bit, pa.int64())
    return pc.not_equal(pc.bit_wise_and(word, mask), pa.scalar(0, pa.int64()))


#: The most the offending values of one dataset may weigh, if every row failed
#: every rule, to come back with the flags: the size of a sample at the
#: default limit (``limits.sample_bytes``). Arrow results stream to Python
#: partition by partition, so the driver's heap holds a few partitions' worth
#: at a time, not the whole (a 1M-row, 20-column sample whose every value
#: fails: benchmarks/bench_smoke_memory.py --all-bad).
INLINE_TEXT_BYTES = 256 * 1024 * 1024
#: Bytes a scalar shown as text takes at most, beyond its column's own bytes:
#: a timestamp's 26 characters and Arrow's 4-byte offset, rounded up.
_TEXT_WIDTH = 32


def worst_text_bytes(
    column_bytes: int | None, rows: int | None, *, as_is: bool, nested: bool = False
) -> int | None:
    """What a column's values weigh as text if every row fails (None if unknown).

    ``as_is``: the text is the column's own string (a CSV value, a string
    column), so its Arrow bytes are the answer. Otherwise it is Spark's text of
    a typed value: a number, a date, at most ``_TEXT_WIDTH`` more per row; or
    JSON of a nested value, counted as four times its Arrow bytes (an estimate).
    """
    if column_bytes is None or rows is None:
        return None
    if as_is:
        return column_bytes
    return (4 if nested else 1) * column_bytes + rows * _TEXT_WIDTH


def smallest_texts(texts: Any) -> list[str]:
    """The MAX_SAMPLES smallest distinct non-NULL texts, in ``_utf8`` order.

    Sorted in Arrow (byte order is UTF-8 order) before anything becomes a
    Python string: a column whose million values all fail would otherwise
    sort a million Python strings (seconds per column, measured).
    """
    import pyarrow.compute as pc

    distinct = pc.unique(pc.drop_null(texts))
    if len(distinct) > MAX_SAMPLES:
        distinct = distinct.take(pc.array_sort_indices(distinct)[:MAX_SAMPLES])
    return sorted(distinct.to_pylist(), key=_utf8)


def _utf8(text: str) -> bytes:
    """Spark's ``array_sort`` order for strings: their UTF-8 bytes (UTF8_BINARY)."""
    return text.encode("utf-8", "surrogatepass")


def _offending_values(df: DataFrame, wanted: list[tuple[str, Expr, Expr]]) -> dict[str, list]:
    """Up to MAX_SAMPLES distinct values per condition: one aggregation over the failing rows."""
    params = sqlexpr.Params()
    select = [
        f"slice(array_sort(collect_set(CASE WHEN {sqlexpr.to_sql(condition, params)} "
        f"THEN {sqlexpr.to_sql(text, params)} END)), 1, {int(MAX_SAMPLES)}) AS `{key}`"
        for key, condition, text in wanted
    ]
    failing = sqlexpr.any_of([condition for _key, condition, _text in wanted])
    row = _query(df, select, sqlexpr.to_sql(failing, params), params).collect()[0]
    return {key: list(row[key] or []) for key, _c, _t in wanted}


def _query(
    df: DataFrame, select: list[str], where: str | None, params: sqlexpr.Params
) -> DataFrame:
    """``select`` (and ``where``) over ``df``, as SQL text with ``params``.

    The frame goes in as ``{frame}`` (a temporary view on a local session, a
    relation of the plan over Spark Connect, dropped after analysis either
    way). ``str.format`` reads the text, so it must hold no other brace; it
    cannot, since values are parameters and names are gate-made.
    """
    text = f"SELECT {', '.join(select)} FROM {{frame}}"
    if where is not None:
        text += f" WHERE {where}"
    if text.count("{") != 1 or text.count("}") != 1:
        raise ValueError("a brace in generated SQL text")
    return df.sparkSession.sql(text, args=params.values, frame=df)


def missing_condition(bound: Bound, spec: MissingSpec) -> Expr:
    """NULL (after the cast to the contract type), a missing value, or a missing format."""
    conditions = [bound.typed.isNull()]
    if spec.values:
        conditions.append(bound.raw_text.isin(list(spec.values)))
    conditions.extend(bound.raw_text.rlike(regex) for regex in spec.regexes)
    return sqlexpr.any_of(conditions)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def invalid_condition(bound: Bound, spec: ValiditySpec) -> Expr:
    """The value breaks a validity option (only meaningful where it is not missing)."""
    text = bound.typed_text
    conditions: list[Expr] = []
    if spec.valid_values is not None:
        if bound.numeric and spec.valid_values and all(map(_is_number, spec.valid_values)):
            conditions.append(~bound.typed.isin(list(spec.valid_values)))
        else:
            conditions.append(~text.isin([_as_text(value) for value in spec.valid_values]))
    if spec.invalid_values:
        if bound.numeric and all(map(_is_number, spec.invalid_values)):
            conditions.append(bound.typed.isin(list(spec.invalid_values)))
        else:
            conditions.append(text.isin([_as_text(value) for value in spec.invalid_values]))
    conditions.extend(~text.rlike(regex) for regex in spec.valid_regexes)
    conditions.extend(text.rlike(regex) for regex in spec.invalid_regexes)
    for limit, below in ((spec.valid_min, True), (spec.valid_max, False)):
        if limit is None:
            continue
        if _is_number(limit):
            number = bound.typed if bound.numeric else text.try_cast("double")
            outside = number < limit if below else number > limit
            conditions.append(number.isNull() | outside)
        else:
            conditions.append(text < str(limit) if below else text > str(limit))
    length = sqlexpr.call("length", text)
    if spec.valid_length is not None:
        conditions.append(length != spec.valid_length)
    if spec.valid_min_length is not None:
        conditions.append(length < spec.valid_min_length)
    if spec.valid_max_length is not None:
        conditions.append(length > spec.valid_max_length)
    return sqlexpr.any_of(conditions)


@dataclass(frozen=True)
class CoercionRule:
    """One way a contract column's values can fail to fit its type."""

    condition: Expr  # the value does not fit
    text: Expr  # how to show an offending value
    message: str  # "are not valid INT", "are longer than VARCHAR(10)"


def coercion_rules(bound: Bound) -> list[CoercionRule]:
    """The value checks of a bound column's contract type (empty when there are none)."""
    target = bound.target
    if target is None or target.skip_reason:
        return []
    raw = bound.raw
    text = bound.raw_text
    rules: list[CoercionRule] = []
    if target.spark_ddl and bound.castable:
        rules.append(
            CoercionRule(raw.isNotNull() & bound.typed.isNull(), text, f"not valid {target.label}")
        )
    if target.max_length is not None:
        rules.append(
            CoercionRule(
                raw.isNotNull() & (sqlexpr.call("length", text) > target.max_length),
                text,
                f"longer than {target.label} allows",
            )
        )
    if target.validator == "json":
        rules.append(
            CoercionRule(
                raw.isNotNull() & sqlexpr.call("try_parse_json", text).isNull(),
                text,
                "not valid JSON",
            )
        )
    if target.validator == "uuid":
        rules.append(
            CoercionRule(
                raw.isNotNull() & ~sqlexpr.call("coalesce", text.rlike(UUID_REGEX), False),
                text,
                "not valid UUID",
            )
        )
    return rules


def key_text(columns: list[Column]) -> Column:
    """A duplicate key as text: ``7`` for one column, ``(7, a)`` for several."""
    if len(columns) == 1:
        return columns[0]
    shown = [F.coalesce(column, F.lit("NULL")) for column in columns]
    return F.concat(F.lit("("), F.concat_ws(", ", *shown), F.lit(")"))


def repeated_keys(
    df: DataFrame, keys: list[Column], shown: list[Any], keep: Column | None
) -> tuple[int, list[str]]:
    """(duplicate rows beyond the first of each key, sample keys), grouped by Spark.

    ``shown[i]`` turns the grouped ``i``-th key back into text (``Bound.shown``).

    Called only when ``Metrics`` found a key repeated, or could not tell: the
    keys come back with the dataset's one job (Spark's cast, so ``7`` and
    ``07`` are one BIGINT) and pyarrow counts the distinct ones at C++ speed.
    Grouping a million keys in Spark means a shuffle and a hash aggregate over
    a million groups: 3 s of JVM CPU, against about 1 s for the same keys as
    Arrow plus 0.15 s in pyarrow (measured). Keys whose equality pyarrow does
    not share with Spark (floating point: NaN, -0.0; arrays, maps, structs)
    are always grouped here.
    """
    base = df.where(keep) if keep is not None else df
    names = [f"k{index}" for index in range(len(keys))]
    selected = base.select(*[key.alias(name) for key, name in zip(keys, names, strict=True)])
    return group_duplicates(selected, names, shown)


#: Key types whose equality is the same in pyarrow as in Spark's group-by
#: (strings only with the binary collation: ``_arrow_key``).
_ARROW_KEY_TYPES = (
    BooleanType,
    ByteType,
    ShortType,
    IntegerType,
    LongType,
    DecimalType,
    StringType,
    BinaryType,
    DateType,
    TimestampType,
    TimestampNTZType,
)


def _arrow_key(data_type: DataType) -> bool:
    """pyarrow compares values of this type as Spark's group-by does (binary strings only)."""
    if isinstance(data_type, StringType):
        return getattr(data_type, "collation", "UTF8_BINARY") == "UTF8_BINARY"
    return isinstance(data_type, _ARROW_KEY_TYPES)


def count_arrow(table: Any) -> int:
    """Rows beyond the first of each distinct row of ``table`` (NULL equals NULL, as in a group-by)."""
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return 0
    if table.num_columns == 1:
        distinct = pc.count_distinct(table.column(0), mode="all").as_py()
    else:
        distinct = table.group_by(table.column_names, use_threads=False).aggregate([]).num_rows
    return int(table.num_rows - distinct)


def group_duplicates(
    selected: DataFrame, names: list[str], shown: list[Any]
) -> tuple[int, list[str]]:
    """The Spark group-by: duplicate rows and up to MAX_SAMPLES repeated keys, as text.

    A group-by of its own rather than ``count(DISTINCT key)`` in the dataset's
    aggregation: Spark rewrites a distinct aggregate next to others into an
    ``Expand`` that groups *every* aggregate by the key, so a unique id of a
    million rows made the whole pass about twice as slow (measured). Only the
    keys travel through the shuffle (their text is made after grouping), and
    only repeated keys reach the (not code-generated) ``collect_list``.
    """
    grouped = selected.groupBy(*names).agg(F.count(F.lit(1)).alias("n")).where(F.col("n") > 1)
    texts = [text_of(F.col(name)) for text_of, name in zip(shown, names, strict=True)]
    row = grouped.agg(
        F.sum(F.col("n") - 1).alias("dups"),
        F.slice(F.array_sort(F.collect_list(key_text(texts))), 1, MAX_SAMPLES).alias("samples"),
    ).collect()[0]
    return int(row["dups"] or 0), list(row["samples"] or [])


def is_complex_ddl(ddl: str | None) -> bool:
    """A Spark DDL type that is an array, a map or a struct."""
    return bool(ddl) and str(ddl).upper().startswith(("ARRAY", "MAP", "STRUCT"))
