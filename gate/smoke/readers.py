"""Read a sample file into a Spark DataFrame, every column as it is in the file.

CSV columns are all strings; JSON columns are what Spark infers; Parquet
columns keep their own types. The gate reads the bytes itself (after
``samples`` has checked the path) and hands them to Spark as data, never as a
path, so the same code works for a local session, a cluster and Spark Connect
(whose server cannot see this machine's files), and Spark never opens a path a
pull request chose.

- CSV: RFC 4180 (``"`` quotes, ``""`` escapes a quote, quoted newlines), a
  header line, empty fields are NULL (Spark's default). Records are split here
  and parsed by Spark's CSV parser (``spark.read.csv`` of a DataFrame of
  records). A record with too few or too many fields is a malformed record.
- JSON Lines (``.jsonl``): one JSON object per line, parsed by Spark's JSON
  reader with schema inference; a line that is not valid JSON is malformed.
- JSON (``.json``): one array of objects (or one object); the array is split
  into its elements here, each element's text kept exactly as written.
- Parquet: a file, or a folder of part files as Spark writes them, read by
  pyarrow from the bytes (``files``), never by Spark from a path.

pyarrow is required (the ``spark`` extra installs it): Spark must never open a
path built from names a pull request chose, because Hadoop expands globs and
``..`` in paths (see ``files``).

Columns are renamed to positional names (``c0``, ``c1``...) so that odd names
(dots, backticks, spaces, duplicates) never reach a Spark expression; the
original names travel beside them.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from gate.smoke import files
from gate.smoke.samples import Sample, SampleError

#: The internal name of the column Spark fills with records it cannot parse.
CORRUPT = "__gate_corrupt_record"

#: Samples are samples: beyond this the smoke test refuses to read one.
MAX_SAMPLE_BYTES = 256 * 1024 * 1024


@dataclass
class Loaded:
    """A sample in Spark: positional columns, original names beside them."""

    df: DataFrame  # columns c0..cN-1, then CORRUPT when ``corrupt``
    names: list[str]  # original column names, by position
    corrupt: bool  # df has the CORRUPT column
    what: str  # "CSV" | "JSON" | "Parquet", for messages


def load(spark: SparkSession, sample: Sample) -> Loaded:
    """Read ``sample``; ``SampleError`` for a file that cannot be a sample."""
    if sample.format == "parquet":
        return _parquet(spark, sample)
    text = _text(sample)
    if sample.format == "csv":
        return _csv(spark, text, sample)
    if sample.format == "jsonl":
        records = [line.rstrip("\r") for line in text.split("\n")]
        return _json(spark, [record for record in records if record.strip()])
    return _json(spark, _json_elements(text, sample))


def _text(sample: Sample) -> str:
    data = files.read_bytes(sample.path, sample.relpath, MAX_SAMPLE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SampleError(f"{sample.relpath}: not UTF-8 text (byte {err.start})") from None


def strings_frame(spark: SparkSession, values: list[str]) -> DataFrame:
    """A one-column (``value``) DataFrame of strings, through Arrow when available."""
    import pyarrow as pa

    if not values:  # Spark Connect cannot infer a schema from no rows
        return spark.createDataFrame([], "value string")
    return spark.createDataFrame(pa.table({"value": pa.array(values, type=pa.string())}))


def split_csv_records(text: str) -> list[str]:
    """Split CSV text into records, keeping newlines inside quoted fields.

    With ``"`` as quote and ``""`` as its escape, a record ends at a newline
    seen after an even number of quotes. Blank lines are dropped (Spark skips
    them too).
    """
    records: list[str] = []
    pending: list[str] = []
    quotes = 0
    for piece in text.split("\n"):
        quotes += piece.count('"')
        pending.append(piece)
        if quotes % 2 == 0:
            record = "\n".join(pending)
            if record.endswith("\r"):
                record = record[:-1]
            if record.strip():
                records.append(record)
            pending = []
            quotes = 0
    if pending:  # an unterminated quote: let Spark see the rest as one record
        record = "\n".join(pending).rstrip("\r")
        if record.strip():
            records.append(record)
    return records


def _csv(spark: SparkSession, text: str, sample: Sample) -> Loaded:
    records = split_csv_records(text)
    if not records:
        raise SampleError(f"{sample.relpath}: empty CSV (a sample needs a header line)")
    try:
        header = next(csv.reader([records[0]], strict=True))
    except (csv.Error, StopIteration) as err:
        raise SampleError(f"{sample.relpath}: unreadable CSV header: {err}") from None
    names = [name if name != "" else f"_c{index}" for index, name in enumerate(header)]
    schema = StructType(
        [StructField(f"c{index}", StringType(), True) for index in range(len(names))]
        + [StructField(CORRUPT, StringType(), True)]
    )
    df = spark.read.csv(
        strings_frame(spark, records[1:]),
        schema=schema,
        header=False,
        quote='"',
        escape='"',
        mode="PERMISSIVE",
        columnNameOfCorruptRecord=CORRUPT,
    )
    return Loaded(df, names, corrupt=True, what="CSV")


def _json_elements(text: str, sample: Sample) -> list[str]:
    """The records of a ``.json`` sample: an array's elements, or the one object."""
    decoder = json.JSONDecoder()
    index = _skip_space(text, 0)
    if index >= len(text):
        return []
    if text[index] != "[":
        try:
            _value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            raise SampleError(f"{sample.relpath}: not valid JSON: {err}") from None
        if _skip_space(text, end) != len(text):
            raise SampleError(
                f"{sample.relpath}: several JSON documents; use .jsonl for one object per line"
            )
        return [text[index:end]]
    elements: list[str] = []
    index = _skip_space(text, index + 1)
    if index < len(text) and text[index] == "]":
        return elements
    while True:
        try:
            _value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            raise SampleError(f"{sample.relpath}: not valid JSON: {err}") from None
        elements.append(text[index:end])
        index = _skip_space(text, end)
        if index < len(text) and text[index] == ",":
            index = _skip_space(text, index + 1)
            continue
        if index < len(text) and text[index] == "]":
            if _skip_space(text, index + 1) != len(text):
                raise SampleError(f"{sample.relpath}: text after the JSON array")
            return elements
        raise SampleError(f"{sample.relpath}: not valid JSON: expected ',' or ']' at {index}")


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _json(spark: SparkSession, records: list[str]) -> Loaded:
    lines = strings_frame(spark, records)
    if not records:
        return Loaded(spark.range(0).select(), [], corrupt=False, what="JSON")
    df = spark.read.json(lines, mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
    return _positional(df, "JSON")


def _parquet(spark: SparkSession, sample: Sample) -> Loaded:
    """Parquet read by pyarrow from bytes the gate read itself (a file or a Spark folder)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if sample.path.is_dir():
        parts = files.parquet_parts(sample.path, sample.relpath)
    else:
        parts = [(sample.path, sample.relpath)]
    tables = []
    budget = MAX_SAMPLE_BYTES
    for path, shown in parts:
        data = files.read_bytes(path, shown, budget)
        budget -= len(data)
        try:
            tables.append(pq.read_table(pa.BufferReader(data)))
        except Exception as err:
            raise SampleError(f"{shown}: unreadable Parquet: {_line(err)}") from None
    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    except Exception as err:
        raise SampleError(
            f"{sample.relpath}: the Parquet files do not share one schema: {_line(err)}"
        ) from None
    names = list(table.column_names)
    table = table.rename_columns([f"c{index}" for index in range(len(names))])
    try:
        df = spark.createDataFrame(table)
    except Exception as err:
        raise SampleError(
            f"{sample.relpath}: Spark cannot hold these Parquet types: {_line(err)}"
        ) from None
    return Loaded(df, names, corrupt=False, what="Parquet")


def _positional(df: DataFrame, what: str) -> Loaded:
    columns = list(df.columns)
    corrupt = CORRUPT in columns
    names = [name for name in columns if name != CORRUPT]
    renamed: list[str] = []
    index = 0
    for name in columns:
        if name == CORRUPT:
            renamed.append(CORRUPT)
        else:
            renamed.append(f"c{index}")
            index += 1
    df = df.toDF(*renamed)
    if corrupt:  # keep the corrupt column last, as CSV has it
        df = df.select(*[f"c{i}" for i in range(len(names))], CORRUPT)
    return Loaded(df, names, corrupt=corrupt, what=what)


def _line(err: Any) -> str:
    from gate.smoke.session import first_line

    return first_line(err)
