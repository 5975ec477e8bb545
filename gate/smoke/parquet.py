"""Parquet samples read within the base side's limits, never decoded into a bomb.

A Parquet file is compressed and encoded twice over, so its size says little
about its size once read: one 100 KB string repeated 200,000 times through a
dictionary is a 1 MB file (far under ``limits.sample_bytes``) and 20 GB of
Arrow memory (measured). So before anything is decoded the file's metadata is
held against the limits (``check``):

- ``num_rows`` against ``limits.sample_rows``;
- leaf columns against ``limits.columns_per_dataset``;
- the row groups' uncompressed size, and per column chunk what its values
  weigh once decoded (``num_values`` times the width of a fixed-width type;
  for strings the uncompressed pages plus an offset per value), against
  ``limits.sample_decoded_bytes``.

The statistics' min and max are not used: they are not the longest value (a
column holding ``a``, ``ab...`` (1 MB) and ``b`` has min ``a`` and max ``b``),
and pyarrow writes none for a value over 4 KiB, as in the file above.

What metadata cannot bound is a string column with a dictionary page: each
of its values may be the longest dictionary entry. Those columns are read as
Arrow dictionaries (indices and one copy of each entry: the size of the
pages), their decoded size is counted exactly from the entries' lengths
(``decoded_bytes``), and only a table within the limit is decoded
(``pyarrow.Table.cast``). The runner does all this before Spark starts
(``precheck``: exit 2 before the JVM), then reads the sample plainly; on a
million-row file with a mostly unique string column the count costs about
0.5 s (measured). A ``DELTA_BYTE_ARRAY`` column shares prefixes
between values, so it can grow like a dictionary without one: such a sample
is refused (pyarrow cannot read it as a dictionary).
"""

from __future__ import annotations

from typing import Any

from gate.limits import Limits
from gate.smoke import files
from gate.smoke.limit_errors import LimitExceeded, too_many_rows, too_much_decoded
from gate.smoke.samples import Sample, SampleError

#: Bytes per value of Parquet's fixed-width physical types, as Arrow holds them.
_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 8, "FLOAT": 4, "DOUBLE": 8}
#: Offsets Arrow keeps beside each string value (and list) it decodes.
_OFFSET = 4


def precheck(sample: Sample, limits: Limits) -> None:
    """Hold a Parquet sample against the limits before Spark starts (exit 2).

    Its footers (``check``), and the exact decoded size of its dictionary
    columns (``_dictionary_bytes``), so a bomb stops the run before the JVM
    starts, at the cost of reading those columns' indices twice.

    Only ``LimitExceeded`` leaves: a file that cannot be read (or bounded) is
    the dataset's error when its sample is read.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if sample.path.is_dir():
            parts = files.parquet_parts(sample.path, sample.relpath)
        else:
            parts = [(sample.path, sample.relpath)]
    except SampleError:
        return
    budget = limits.sample_decoded_bytes
    for path, shown in parts:
        footer = files.read_footer(path, shown, limits.sample_bytes)
        if footer is None:
            continue
        try:
            metadata = pq.ParquetFile(pa.BufferReader(footer)).metadata
            dictionaries, estimate = check(metadata, shown, limits, budget)
            if dictionaries:  # what metadata cannot bound: count it from the entries
                top = {column.split(".", 1)[0] for column in dictionaries}
                estimate += _dictionary_bytes(path, shown, limits, dictionaries)
                estimate -= _estimate_of(metadata, top)  # counted exactly instead
        except SampleError:
            continue
        except LimitExceeded:
            raise
        except Exception:  # pyarrow refuses the file: the read reports it
            continue
        if estimate > budget:
            raise too_much_decoded(shown, estimate, budget)
        budget -= estimate


def _estimate_of(metadata: Any, top: set[str]) -> int:
    """The metadata's estimate for the leaf columns under the top-level columns ``top``."""
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema.split(".", 1)[0] in top:
                total += _chunk_estimate(chunk, metadata.schema.column(index), "")
    return total


def _dictionary_bytes(path: Any, shown: str, limits: Limits, dictionaries: list[str]) -> int:
    """Decoded bytes of the top-level columns that hold dictionary-encoded strings.

    Read as dictionaries (indices and entries, about the pages' size) and
    counted, then dropped: the sample is read again when its dataset runs.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = files.read_bytes(path, shown, limits.sample_bytes)
    top = list(dict.fromkeys(column.split(".", 1)[0] for column in dictionaries))
    table = pq.read_table(pa.BufferReader(data), columns=top, read_dictionary=dictionaries)
    return table_decoded_bytes(table)


def check(metadata: Any, shown: str, limits: Limits, budget: int) -> tuple[list[str], int]:
    """Hold a file's metadata against the limits.

    Returns the columns to read as dictionaries and the estimated decoded size.

    ``budget`` is what is left of ``limits.sample_decoded_bytes`` (a Parquet
    folder shares one). ``LimitExceeded`` (exit 2) above a limit,
    ``SampleError`` for a column whose decoded size cannot be bounded.
    """
    if metadata.num_rows > limits.sample_rows:
        raise too_many_rows(shown, metadata.num_rows, limits.sample_rows)
    if metadata.num_columns > limits.columns_per_dataset:
        raise LimitExceeded(
            f"{shown}: {metadata.num_columns:,} Parquet columns is more than the limit of "
            f"{limits.columns_per_dataset:,} (raise limits.columns_per_dataset in the base "
            "side's config)"
        )
    uncompressed = 0
    estimate = 0
    dictionaries: list[str] = []
    schema = metadata.schema
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        uncompressed += max(0, row_group.total_byte_size)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            estimate += _chunk_estimate(chunk, schema.column(index), shown)
            if (
                chunk.physical_type == "BYTE_ARRAY"
                and chunk.has_dictionary_page
                and chunk.path_in_schema not in dictionaries
            ):
                dictionaries.append(chunk.path_in_schema)
        if max(uncompressed, estimate) > budget:
            raise too_much_decoded(shown, max(uncompressed, estimate), budget)
    return dictionaries, max(uncompressed, estimate)


def _chunk_estimate(chunk: Any, column: Any, shown: str) -> int:
    """What one column chunk's values weigh once decoded (a lower bound for dictionaries)."""
    values = max(0, chunk.num_values)
    physical = chunk.physical_type
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return values * max(1, column.length or 1)
    if physical != "BYTE_ARRAY":
        return values * _WIDTH.get(physical, 8)
    if "DELTA_BYTE_ARRAY" in chunk.encodings:
        raise SampleError(
            f"{shown}: column '{chunk.path_in_schema}' is DELTA_BYTE_ARRAY-encoded, whose "
            "decoded size cannot be bounded before decoding; write the sample with "
            "dictionary or plain encoding"
        )
    return max(0, chunk.total_uncompressed_size) + _OFFSET * values


def decoded_bytes(array: Any) -> int:
    """Bytes of ``array`` with every dictionary decoded, counted without decoding it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        entries = array.dictionary
        if pa.types.is_string(entries.type) or pa.types.is_binary(entries.type):
            lengths = pc.binary_length(entries)
            taken = pc.sum(pc.take(lengths, array.indices)).as_py() or 0
            return int(taken) + _OFFSET * (len(array) + 1)
        return int(array.indices.nbytes) * 2 + int(entries.nbytes)
    if pa.types.is_map(kind):  # its whole key and item arrays (a slice counts them all)
        return _OFFSET * (len(array) + 1) + decoded_bytes(array.keys) + decoded_bytes(array.items)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _OFFSET * (len(array) + 1) + decoded_bytes(array.flatten())
    if pa.types.is_struct(kind):
        return sum(decoded_bytes(child) for child in array.flatten())
    return int(array.nbytes)


def table_decoded_bytes(table: Any) -> int:
    """``decoded_bytes`` of every chunk of every column of ``table``."""
    return sum(decoded_bytes(chunk) for column in table.columns for chunk in column.chunks)


def decode(table: Any) -> Any:
    """``table`` with every dictionary column (nested ones too) as plain values."""
    import pyarrow as pa

    plain = pa.schema(
        [pa.field(f.name, _plain(f.type), f.nullable, f.metadata) for f in table.schema],
        metadata=table.schema.metadata,
    )
    return table if plain.equals(table.schema) else table.cast(plain)


def _plain(kind: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _plain(kind.value_type)
    if pa.types.is_map(kind):
        return pa.map_(_plain(kind.key_type), _plain(kind.item_type))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        field = kind.value_field
        inner = pa.field(field.name, _plain(field.type), field.nullable, field.metadata)
        return pa.list_(inner) if pa.types.is_list(kind) else pa.large_list(inner)
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _plain(f.type), f.nullable, f.metadata) for f in kind])
    return kind
