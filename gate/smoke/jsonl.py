"""JSON Lines parsed by pyarrow into what Spark's JSON reader would give, or nothing.

Spark's JSON reader infers a schema in one pass over the records and parses
them in another: about 9 s of wall time for a million records on 2 cores,
where pyarrow's C++ reader takes 0.6 s (measured, docs/smoke-test.md). The
smoke test's findings depend on the types Spark infers (a JSON number 1.5 is a
DOUBLE, ``"1.5"`` a STRING), so pyarrow's table is used only where it is the
table Spark would have made, and ``None`` sends the sample down Spark's own
route (``readers``), where malformed records are set aside one by one.

What differs, and how it is handled (checked against Spark record for record
by tests/smoke/test_smoke_jsonl.py):

- pyarrow fails the whole read where Spark would set a record aside or widen a
  column to STRING (a malformed line, a number in one record and text in
  another, a top-level array, a duplicate key, single quotes): ``None``.
- pyarrow's parser recurses: a record nested 20,000 levels deep crashed the
  process (measured), where Spark's parser refuses more than 1,000 levels (a
  malformed record). A line with more opening brackets than that goes to
  Spark (``_shallow``).
- pyarrow reads an object that spans lines, and two objects on one line;
  Spark reads line by line (two malformed records; the first object): only a
  file whose every line is one object (``_object_lines``) is taken.
- pyarrow infers TIMESTAMP from ISO-looking strings; Spark keeps STRING
  (``inferTimestamp`` is off by default): those columns are read again as text.
- pyarrow keeps fields in the order first seen; Spark sorts them by name, at
  every level: the columns are reordered.
- A field that is NULL in every record (and an always-empty array's element)
  is pyarrow's NULL type, Spark's STRING: cast.
- An integer beyond BIGINT is a DOUBLE for pyarrow, a DECIMAL for Spark; an
  empty object is a struct of no fields for pyarrow; names that differ only in
  case are resolved by Spark's case-insensitive analysis; Spark drops a field
  whose name is empty, and takes a top-level field named like the gate's
  corrupt-record column for that column: ``None``.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from gate.smoke.parse import CORRUPT

#: Doubles from this magnitude up may have been integers Spark reads as DECIMAL.
_BEYOND_BIGINT = 2.0**63


def read_records(data: bytes) -> pa.Table | None:
    """The table Spark's JSON reader would infer and parse from ``data``, or None."""
    lines = _object_lines(data)
    if lines is None or not _shallow(data):
        return None
    try:
        table = _read(data, None)
        if table.num_columns == 0 or table.num_rows != lines:
            return None
        if any(_has_timestamp(field.type) for field in table.schema):
            table = _read(data, pa.schema([_as_text(field) for field in table.schema]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    target = _spark_schema(table.schema)
    if target is None or CORRUPT in target.names:
        return None
    if any(_beyond_bigint(table.column(name)) for name in table.column_names):
        return None
    try:
        return table.select(target.names).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _object_lines(data: bytes) -> int | None:
    """The number of lines when every line starts with ``{`` and ends with ``}``, else None.

    Then no object spans lines: a line break between two tokens of one object
    leaves a line ending in ``{ [ : ,`` or a value, or the next one starting
    with ``, } ] :``, and JSON strings cannot hold a raw line break. With as
    many records as lines, no line holds two. Counting bytes is enough (and
    takes milliseconds); a file with blank lines or spaces at a line's ends
    goes to Spark's reader, which reads it the same, only slower.
    """
    if not data:
        return None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    starts = data.count(b"\n{") + (1 if data.startswith(b"{") else 0)
    ends = data.count(b"}\n") + (1 if data.endswith(b"}") else 0)
    if b"\r" in data:
        ends += data.count(b"}\r\n")
    return lines if starts == lines == ends else None


#: Opening brackets a line may hold for pyarrow to parse it: its nesting
#: depth cannot exceed them. Jackson's limit, so Spark's reader refuses the
#: records this sends its way too.
MAX_OPENINGS = 1000


def _shallow(data: bytes) -> bool:
    """No line holds more than MAX_OPENINGS ``[`` and ``{`` (0.3 s per 150 MB)."""
    if data.count(b"[") + data.count(b"{") <= MAX_OPENINGS:
        return True
    return all(
        line.count(b"[") + line.count(b"{") <= MAX_OPENINGS
        for line in data.split(b"\n")
        if len(line) > MAX_OPENINGS
    )


def _read(data: bytes, schema: pa.Schema | None) -> pa.Table:
    block = max(1 << 20, len(data) // 4 + 1)  # a few blocks parsed in parallel
    return pj.read_json(
        pa.BufferReader(data),
        read_options=pj.ReadOptions(use_threads=True, block_size=block),
        parse_options=pj.ParseOptions(explicit_schema=schema, newlines_in_values=False),
    )


def _has_timestamp(data_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(data_type):
        return True
    if pa.types.is_list(data_type):
        return _has_timestamp(data_type.value_type)
    if pa.types.is_struct(data_type):
        return any(_has_timestamp(field.type) for field in data_type)
    return False


def _as_text(field: pa.Field) -> pa.Field:
    """``field`` with every TIMESTAMP pyarrow inferred read as the string it was."""
    data_type = field.type
    if pa.types.is_timestamp(data_type):
        return field.with_type(pa.string())
    if pa.types.is_list(data_type):
        return field.with_type(pa.list_(_as_text(data_type.value_field)))
    if pa.types.is_struct(data_type):
        return field.with_type(pa.struct([_as_text(child) for child in data_type]))
    return field


def _spark_schema(schema: pa.Schema) -> pa.Schema | None:
    fields = _sorted_fields(list(schema))
    return None if fields is None else pa.schema(fields)


def _sorted_fields(fields: list[pa.Field]) -> list[pa.Field] | None:
    """Fields as Spark infers them: sorted by name (Java's string order), Spark's types."""
    if len({field.name.lower() for field in fields}) != len(fields):
        return None
    if any(field.name == "" for field in fields):
        return None
    out = []
    for field in sorted(fields, key=lambda field: field.name.encode("utf-16-be")):
        data_type = _spark_type(field.type)
        if data_type is None:
            return None
        out.append(pa.field(field.name, data_type))
    return out


def _spark_type(data_type: pa.DataType) -> pa.DataType | None:
    if pa.types.is_null(data_type):
        return pa.string()
    if (
        pa.types.is_int64(data_type)
        or pa.types.is_float64(data_type)
        or pa.types.is_boolean(data_type)
        or pa.types.is_string(data_type)
    ):
        return data_type
    if pa.types.is_list(data_type):
        element = _spark_type(data_type.value_type)
        return None if element is None else pa.list_(element)
    if pa.types.is_struct(data_type):
        if data_type.num_fields == 0:
            return None
        children = _sorted_fields(list(data_type))
        return None if children is None else pa.struct(children)
    return None


def _beyond_bigint(values: Any) -> bool:
    """A double that may have been an integer literal beyond BIGINT (Spark: DECIMAL)."""
    data_type = values.type
    if pa.types.is_float64(data_type):
        magnitude = pc.max(pc.abs(values)).as_py()
        return magnitude is not None and magnitude >= _BEYOND_BIGINT
    if pa.types.is_list(data_type):
        return _beyond_bigint(pc.list_flatten(values))
    if pa.types.is_struct(data_type):
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        return any(
            _beyond_bigint(pa.chunked_array([chunk.field(i) for chunk in chunks], field.type))
            for i, field in enumerate(data_type)
        )
    return False
