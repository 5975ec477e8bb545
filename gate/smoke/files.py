"""Open sample files safely: the gate reads the bytes, nobody else gets the path.

A sample path is built from names a pull request chose (folders, contract file
names, dataset ids). Handing such a path to Spark is unsafe: Hadoop expands
``{a,b}``, ``*``, ``?`` and ``[...]`` in paths, so a committed folder named
``{x,`` holding a folder ``..}`` turns ``.../{x,/..}/orders.sample.parquet``
into a file *beside* the checkout, and its values end up in a public report.
So Spark never receives a path: this module opens the (already resolved,
in-repository) file itself, refuses symlinks at the last step (``O_NOFOLLOW``)
and anything that is not a regular file, enforces the size limit on the open
file, and returns bytes that readers hand to pyarrow as a buffer.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gate.smoke import limit_errors as limits
from gate.smoke.samples import SampleError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def read_bytes(path: Path, shown: str, max_bytes: int) -> bytes:
    """The content of one sample file; ``SampleError`` when it is not a plain file or too big."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError as err:
        reason = "a symlink" if path.is_symlink() else (err.strerror or type(err).__name__)
        raise SampleError(f"{shown}: cannot open the sample: {reason}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SampleError(f"{shown}: not a regular file")
        check_size(info.st_size, shown, max_bytes)
        data = handle.read(max_bytes + 1)
    check_size(len(data), shown, max_bytes)  # the file grew while we read it
    return data


def read_footer(path: Path, shown: str, max_bytes: int) -> bytes | None:
    """A Parquet file's footer as a file of its own (``PAR1``, metadata, length, ``PAR1``).

    Enough for pyarrow to read the metadata without reading the data: the
    limits are checked on it before Spark starts. ``None`` when the file has
    no valid footer (reading it later says why, as the dataset's error).
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size < 12:
            return None
        check_size(info.st_size, shown, max_bytes)
        handle.seek(info.st_size - 8)
        tail = handle.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] != b"PAR1" or length > info.st_size - 12:
            return None
        handle.seek(info.st_size - 8 - length)
        footer = handle.read(length)
    return b"PAR1" + footer + tail


def check_size(size: int, shown: str, max_bytes: int) -> None:
    """Refuse a sample above the byte limit (exit 2), before reading it."""
    if size > max_bytes:
        raise limits.too_many_bytes(shown, size, max_bytes)


def sample_size(path: Path) -> int:
    """Bytes of a sample file, or of every file in a Parquet folder (links not followed)."""
    if not path.is_dir():
        return path.lstat().st_size
    total = 0
    for current, _dirs, names in os.walk(path, followlinks=False):
        total += sum((Path(current) / name).lstat().st_size for name in names)
    return total


def parquet_parts(folder: Path, shown: str) -> list[tuple[Path, str]]:
    """The data files of a Parquet folder (as Spark writes it), in name order.

    Hidden and metadata files (``.crc``, ``_SUCCESS``, ``_common_metadata``) are
    skipped as Spark and pyarrow skip them; a symlink anywhere inside is
    refused, whatever it points at.
    """
    parts: list[tuple[Path, str]] = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(name for name in dirs if not name.startswith((".", "_")))
        base = Path(current)
        for name in [*dirs, *files]:
            if (base / name).is_symlink():
                inner = (base / name).relative_to(folder).as_posix()
                raise SampleError(f"{shown}/{inner}: a symlink inside a Parquet sample folder")
        for name in sorted(files):
            if name.startswith((".", "_")) or not name.endswith(".parquet"):
                continue
            inner = (base / name).relative_to(folder).as_posix()
            parts.append((base / name, f"{shown}/{inner}"))
    if not parts:
        raise SampleError(f"{shown}: a folder without .parquet files")
    return parts
