"""Bounds on untrusted input: the gate answers every pull request quickly.

Contracts come from pull requests, and a hostile one can be huge. Each bound
is checked before the work it protects, with an exit-2 message that names the
file and the config key that raises it. The defaults answer the worst input of
each kind in well under 5 s on a 2-core runner (docs/github-action.md, "Security
model") while staying far above what real contracts use.

The bounds come from the ``limits:`` section of the config **on the base side**:
a pull request cannot raise them for itself (see ``gate.config``). New kinds of
input add a field here; ``gate.config`` reads every field by its name.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """Upper bounds, each a positive integer (see docs/configuration.md)."""

    #: Bytes of one contract file (also of the config file itself).
    contract_bytes: int = 2 * 1024 * 1024
    #: YAML nodes (mappings, lists, scalars) of one contract file, counted while
    #: parsing: parsing cost follows nodes, not bytes (1 MB of ``[a,a,a,...``
    #: is half a million nodes).
    yaml_nodes: int = 100_000
    #: Columns of one dataset, nested fields included.
    columns_per_dataset: int = 10_000
    #: Characters of the distinct ``data_type`` texts of one file together. Types
    #: are parsed once per distinct text, at about a millisecond per 20
    #: characters; repeated spellings (most columns) cost nothing more.
    type_chars_per_file: int = 20_000
    #: Bytes of one smoke-test sample file (or Parquet folder), checked before
    #: Spark starts.
    sample_bytes: int = 256 * 1024 * 1024
    #: Rows of one smoke-test sample, checked once parsed.
    sample_rows: int = 2_000_000
    #: Bytes of one Parquet sample (file or folder) once decoded, held against
    #: the file's metadata before anything is decoded: a 1 MB file can hold 20 GB
    #: of repeated strings (``gate.smoke.parquet``).
    sample_decoded_bytes: int = 512 * 1024 * 1024
    #: Seconds of Spark work per dataset; then its jobs are cancelled and the
    #: dataset is "not evaluated" (a regex that backtracks for hours).
    smoke_seconds_per_dataset: int = 300
    #: Bytes of one consumer file (a dbt/SQLMesh model, a PySpark job), checked
    #: on the blob's size before it is read; a bigger one is "not analysed".
    #: The older ``consumers.max_file_bytes`` key counts only on the base side.
    consumer_bytes: int = 256 * 1024
    #: Seconds of the whole smoke test, the session's start included; then the
    #: datasets still running are stopped and those not begun are not evaluated.
    smoke_seconds: int = 900
    #: Models a changed column is followed through past its first reader
    #: (downstream lineage, ``gate.lineage.downstream``); then the path is cut.
    lineage_depth: int = 5
    #: Bytes of one dbt model file read for its ``config()`` calls
    #: (``gate.formats.dbt.model_config``); a bigger one is refused (exit 2):
    #: what it sets cannot be read, and skipping it would fail open.
    model_file_bytes: int = 4 * 1024 * 1024

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


DEFAULT_LIMITS = Limits()
