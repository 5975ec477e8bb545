"""Hand a sample to Spark as Arrow data, every column as it is in the file.

CSV columns are all strings; JSON columns are what Spark's JSON reader infers;
Parquet columns keep their own types. The gate reads the bytes itself
(``files``, after ``samples`` has checked the path), parses them with
pyarrow's C++ readers (``parse``) and hands Spark a ``pyarrow.Table``, never
Python rows and never a path. So the same code works for a local session, a
cluster and Spark Connect (whose server cannot see this machine's files), and
Spark never opens a path a pull request chose: Hadoop expands globs and ``..``
in paths (see ``files``).

- CSV: parsed by pyarrow into string columns; malformed records (wrong number
  of fields, an unterminated quote) come with their text in ``CORRUPT``.
- JSON Lines: parsed by pyarrow's JSON reader where its table is the one
  Spark's JSON reader would infer and parse (``jsonl``: fifteen times faster).
  Otherwise, and for a ``.json`` array: split into records by pyarrow (or
  ``parse``), handed over as one Arrow string column, parsed by Spark's JSON
  reader with schema inference; a record that is not valid JSON is malformed.
  On a classic session the parsed rows come back once as Arrow (``_parsed_once``).
- Parquet: a file, or a folder of part files as Spark writes them.

Columns are renamed to positional names (``c0``, ``c1``...) so that odd names
(dots, backticks, spaces, duplicates) never reach a Spark expression; the
original names travel beside them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from gate.limits import Limits
from gate.smoke import files, jsonl, parse
from gate.smoke.limit_errors import too_many_rows
from gate.smoke.parse import CORRUPT
from gate.smoke.samples import Sample, SampleError

__all__ = ["CORRUPT", "Loaded", "Read", "load", "read", "to_spark"]


@dataclass
class Loaded:
    """A sample in Spark: positional columns, original names beside them."""

    df: DataFrame  # columns c0..cN-1, then CORRUPT when ``corrupt``
    names: list[str]  # original column names, by position
    corrupt: bool  # df has the CORRUPT column
    what: str  # "CSV" | "JSON" | "Parquet", for messages
    rows: int | None = None  # records in the file, where known before Spark runs
    #: Bytes of each column (``c0``..., ``CORRUPT``) as handed to Spark, where
    #: the gate holds the Arrow table: what shipping its values back can cost.
    column_bytes: dict[str, int] = field(default_factory=dict)


def load(spark: SparkSession, sample: Sample, limits: Limits) -> Loaded:
    """Read ``sample``; ``SampleError`` for a file that cannot be a sample.

    ``LimitExceeded`` (exit 2) for a sample above ``limits``.
    """
    return to_spark(spark, read(sample, limits), sample)


@dataclass
class Read:
    """A sample read and parsed by pyarrow, before Spark sees it."""

    what: str  # "CSV" | "JSON" | "Parquet"
    #: A table of positional columns (and CORRUPT for CSV), or for JSON that
    #: pyarrow could not read as Spark would (``records``) the records, one
    #: string each, for Spark's JSON reader.
    data: Any
    names: list[str]  # original column names, by position (a table's)
    malformed: int = 0  # CSV records set aside in CORRUPT
    records: bool = False  # ``data`` is JSON records, not a table


def read(sample: Sample, limits: Limits, counted: bool = False) -> Read:
    """Read and parse ``sample`` without Spark (errors as ``load``).

    ``counted``: a Parquet sample's dictionary columns were counted already
    (``parquet.precheck``, which the runner calls before Spark starts), so it
    is read plainly instead of through dictionaries again (half the time on a
    million rows of mostly unique strings, measured).

    Spark is not needed for this part, so the runner does it for the next
    large sample while Spark works on the current one, or while the session
    starts: a million CSV rows take 0.5 to 0.9 s here (measured).
    """
    if sample.format == "parquet":
        return _parquet(sample, limits, counted)
    data = files.read_bytes(sample.path, sample.relpath, limits.sample_bytes)
    if sample.format == "csv":
        parsed = parse.csv_table(data, sample.relpath, limits.sample_rows)
        return Read("CSV", parsed.table, parsed.names, parsed.malformed)
    if sample.format == "jsonl":
        table = jsonl.read_records(data.removeprefix(parse.BOM))
        if table is not None:
            if table.num_rows > limits.sample_rows:
                raise too_many_rows(sample.relpath, table.num_rows, limits.sample_rows)
            names = list(table.column_names)
            table = table.rename_columns([f"c{index}" for index in range(len(names))])
            return Read("JSON", table, names)
        records = parse.json_lines(data, sample.relpath, limits.sample_rows)
    else:
        records = parse.json_elements(data, sample.relpath, limits.sample_rows)
    return Read("JSON", records, [], records=True)


def to_spark(spark: SparkSession, read: Read, sample: Sample) -> Loaded:
    """Hand a read sample to Spark as Arrow data; ``read`` lets go of it then.

    Spark holds its own copy once the frame exists, so the table's memory can
    go even while ``read`` is still referenced (a finished read-ahead holds it).
    """
    data, read.data = read.data, None
    if read.records:
        loaded = _json(spark, data, sample)
        loaded.rows = len(data)
        return loaded
    return Loaded(
        _frame(spark, data, sample),
        read.names,
        corrupt=bool(read.malformed),
        what=read.what,
        rows=data.num_rows,
        column_bytes=column_bytes(data),
    )


def column_bytes(table: Any) -> dict[str, int]:
    """Each column's Arrow buffers, in bytes (metadata only: nothing is scanned)."""
    return {name: int(table.column(name).nbytes) for name in table.column_names}


#: Rows below which a sample stays one partition (a task costs more than it saves).
MIN_PARTITION_ROWS = 50_000
#: Partitions per core of a local or classic session.
PARTITIONS_PER_CORE = 2

_BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: Below this many bytes PySpark turns an Arrow table into a ``LocalRelation``:
#: rows converted in the driver and kept in the plan, which every job then
#: re-optimizes and re-serializes (about 0.15 s of JVM CPU per job on 10,000
#: rows, against 0.1 s for the same rows as Arrow batches; measured).
_LOCAL_CONF = "spark.sql.execution.arrow.localRelationThreshold"
_BATCH_LOCK = threading.Lock()


def _frame(spark: SparkSession, table: Any, sample: Sample) -> DataFrame:
    try:
        if table.num_rows == 0:  # Spark Connect cannot take an empty Arrow table
            from pyspark.sql.pandas.types import from_arrow_schema

            return spark.createDataFrame([], from_arrow_schema(table.schema))
        if _is_connect(spark):
            return spark.createDataFrame(table)  # one Arrow stream; the server splits it
        return _partitioned(spark, table)
    except Exception as err:
        raise SampleError(
            f"{sample.relpath}: Spark cannot hold this sample: {_line(err)}"
        ) from None


def _partitioned(spark: SparkSession, table: Any) -> DataFrame:
    """A classic session's DataFrame of ``table``: Arrow batches, a few partitions, not hundreds.

    PySpark makes one partition of every Arrow batch of at most
    ``maxRecordsPerBatch`` (10,000) rows, and splits at the table's chunk
    boundaries too (pyarrow's CSV reader makes one chunk per MiB): a million
    rows became 159 partitions, and every job over them paid 159 tasks (a
    third of the JVM's CPU for a plain count, measured). Two per core is
    enough to keep the cores busy; chunks are joined (one copy) only when
    there are more of them than partitions wanted.

    A one-partition frame says so (``coalesce(1)``, no data moves): Spark then
    aggregates it in one stage, where an Arrow frame of unknown partitioning
    costs a shuffle to one partition, and with adaptive execution a second job
    (measured: 7 jobs per 10k-row dataset became 3, about a quarter less JVM
    CPU over 20 datasets).
    """
    rows = table.num_rows
    cores = max(1, int(spark.sparkContext.defaultParallelism))
    parts = max(1, min(PARTITIONS_PER_CORE * cores, rows // MIN_PARTITION_ROWS))
    per = -(-rows // parts)
    if len(table.to_batches(max_chunksize=per)) > 2 * parts:
        table = table.combine_chunks()
    wanted = {_BATCH_CONF: str(per), _LOCAL_CONF: "0"}
    with _BATCH_LOCK:  # session settings: one dataset at a time sets and restores them
        before = {key: spark.conf.get(key) for key in wanted}
        for key, value in wanted.items():
            spark.conf.set(key, value)
        try:
            df = spark.createDataFrame(table)
        finally:
            for key, old in before.items():
                if old is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, old)
    return df.coalesce(1) if parts == 1 else df


def _json(spark: SparkSession, records: Any, sample: Sample) -> Loaded:
    import pyarrow as pa

    if len(records) == 0:
        return Loaded(spark.range(0).select(), [], corrupt=False, what="JSON")
    lines = _frame(spark, pa.table({"value": records}), sample)
    df = spark.read.json(lines, mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
    loaded = _positional(df, "JSON")
    if not _is_connect(spark):
        parsed = _parsed_once(loaded.df)
        if parsed is not None:
            loaded.df = _partitioned(spark, parsed)
            loaded.column_bytes = column_bytes(parsed)
    return loaded


def _parsed_once(df: DataFrame) -> Any | None:
    """A JSON sample parsed by Spark once, then held as Arrow like a CSV one.

    Spark's JSON reader parses the records again in every job over it (the
    aggregation, the offending values, each duplicate check): a million
    records took 14, 12 and 23 s of CPU in three jobs, where the same rows as
    Arrow take a third of that (measured). At 10,000 records too: 0.63 to
    0.70 s per dataset against 0.84 to 0.96 s (measured, warm JVM), so every
    sample of a classic session takes this route. One job brings the parsed rows back
    as Arrow (the sample is in this process already, so memory stays of the
    same order). Anything Spark cannot hand over as Arrow (``None``) keeps the
    reader's DataFrame.
    """
    try:
        return df.toArrow()
    except Exception:  # e.g. a type Arrow cannot carry: parse per job, as before
        return None


def _parquet(sample: Sample, limits: Limits, counted: bool = False) -> Read:
    """Parquet read by pyarrow from bytes the gate read itself (a file or a Spark folder)."""
    import pyarrow as pa

    if sample.path.is_dir():
        parts = files.parquet_parts(sample.path, sample.relpath)
    else:
        parts = [(sample.path, sample.relpath)]
    limit = limits.sample_bytes
    if len(parts) > 1:  # the folder as a whole, before reading any of it
        files.check_size(sum(path.lstat().st_size for path, _ in parts), sample.relpath, limit)
    tables = []
    budget = limits.sample_decoded_bytes  # the folder as a whole, as for the bytes
    for path, shown in parts:
        data = files.read_bytes(path, shown, limit)
        limit -= len(data)
        table, decoded = parse.parquet_table(data, shown, limits, budget, counted)
        budget -= decoded
        tables.append(table)
    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    except Exception as err:
        raise SampleError(
            f"{sample.relpath}: the Parquet files do not share one schema: {_line(err)}"
        ) from None
    if table.num_rows > limits.sample_rows:
        raise too_many_rows(sample.relpath, table.num_rows, limits.sample_rows)
    names = list(table.column_names)
    table = table.rename_columns([f"c{index}" for index in range(len(names))])
    return Read("Parquet", table, names)


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


def _is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _line(err: Any) -> str:
    from gate.smoke.session import first_line

    return first_line(err)
