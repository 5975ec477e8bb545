"""Sample limits exceeded: one line, exit 2, the key that raises the limit.

The limits themselves are fields of ``gate.limits.Limits`` (``sample_bytes``,
``sample_rows``, ``sample_decoded_bytes``, ``smoke_seconds_per_dataset``...), read from the ``limits:``
section of the config on the **base** side, so a pull request cannot raise
them for itself. Pure Python: no Spark, no I/O.
"""

from __future__ import annotations

from gate.model import UsageError

MIB = 1024 * 1024


class LimitExceeded(UsageError):
    """A sample above a limit: the whole run stops with exit 2 and this one line."""


def too_many_bytes(shown: str, size: int, limit: int) -> LimitExceeded:
    return LimitExceeded(
        f"{shown}: {_size(size)} is more than the sample limit of {_size(limit)} "
        "(raise limits.sample_bytes in the base side's config)"
    )


def too_many_rows(shown: str, rows: int, limit: int, *, at_least: bool = False) -> LimitExceeded:
    more = "more than " if at_least else ""
    return LimitExceeded(
        f"{shown}: {more}{rows:,} rows is more than the sample limit of {limit:,} rows "
        "(raise limits.sample_rows in the base side's config)"
    )


def too_much_decoded(shown: str, size: int, limit: int) -> LimitExceeded:
    return LimitExceeded(
        f"{shown}: {_size(size)} once decoded is more than the sample limit of {_size(limit)} "
        "(raise limits.sample_decoded_bytes in the base side's config)"
    )


def _size(number: int) -> str:
    if number >= MIB:
        return f"{number / MIB:.1f} MiB".replace(".0 MiB", " MiB")
    if number >= 1024:
        return f"{number / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{number:,} bytes"
