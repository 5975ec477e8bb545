"""The quarantine pattern: write the rows that break the contract aside, with the reasons.

With ``--quarantine DIR`` every dataset whose sample has violating rows gets
``DIR/<dataset>.quarantine.parquet`` (``/`` in the dataset id becomes ``.``):
the offending rows exactly as read from the sample (same column names, CSV
values as text), plus ``_violated_checks``, a list of the rules each row breaks
(``cast_to_int(amount)``, ``missing(email)``, ``invalid(status)``,
``duplicate(id)``, ``malformed_record``) and, when the sample had records that
could not be parsed, ``_malformed_record`` with the raw record. A row is
quarantined when it breaks a row-level rule, whatever the check's threshold
(a ``missing`` check with ``must_be_less_than: 5`` percent still lists its
missing rows). A dataset without violating rows has its old file removed, so
the folder always reflects the last run.

Where ``DIR`` may be:

- a relative path: inside the repository, resolved like the samples (a symlink
  leading outside, or into ``.git``, is refused with ``UsageError``);
- an absolute path: inside the repository under the same rule, or anywhere
  else the person running the gate chose on the command line (a CI artifact
  folder such as ``$RUNNER_TEMP/quarantine``). The path comes from the
  invocation, not from the pull request; a caller must not take it from a file
  the pull request can change.

The file is written on this machine with pyarrow (rows are collected from
Spark with ``toArrow``), so it lands in the same place for a local session and
for Spark Connect.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gate.git import Repo
from gate.model import UsageError
from gate.smoke.samples import sample_stem

VIOLATIONS = "_violated_checks"
MALFORMED = "_malformed_record"
SUFFIX = ".quarantine.parquet"


def resolve_dir(repo: Repo, value: str | None) -> Path | None:
    """The quarantine folder, created when absent; ``UsageError`` when refused."""
    if value is None:
        return None
    if not value.strip() or "\0" in value:
        raise UsageError(f"invalid --quarantine path: {value!r}")
    given = Path(value).expanduser()
    if given.is_absolute() and not _inside(given, repo.root):
        folder = Path(os.path.abspath(given))
    else:
        folder = repo.safe_path(value)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{value}: --quarantine must be a folder, not a file")
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise UsageError(
            "--quarantine writes Parquet with pyarrow, which is not installed: "
            "pip install 'schema-contract-gate[connect]' (or pyarrow)"
        ) from None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"{value}: cannot create the quarantine folder: {err}") from None
    return folder


def _inside(path: Path, root: Path) -> bool:
    absolute = os.path.abspath(path)
    for base in {os.path.abspath(root), os.path.realpath(root)}:
        if absolute == base or absolute.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def target(folder: Path, dataset_id: str) -> Path:
    return folder / f"{sample_stem(dataset_id)}{SUFFIX}"


def write(table: object, folder: Path, dataset_id: str) -> Path:
    """Write an Arrow table of violating rows atomically; returns the file."""
    import pyarrow.parquet as pq

    path = target(folder, dataset_id)
    if path.is_symlink() or path.is_dir():
        raise UsageError(f"{path}: refusing to replace a symlink or folder with quarantine rows")
    handle, temp = tempfile.mkstemp(prefix=".quarantine-", suffix=".parquet", dir=folder)
    os.close(handle)
    try:
        pq.write_table(table, temp)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return path


def clear(folder: Path, dataset_id: str) -> None:
    """Remove a previous run's file for a dataset that has no violating rows now."""
    path = target(folder, dataset_id)
    if path.is_file() and not path.is_symlink():
        path.unlink()
