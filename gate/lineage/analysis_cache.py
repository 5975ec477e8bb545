"""What a manifest reader's compiled SQL reads, kept on disk between runs.

Why: another project's ``manifest.json`` changes rarely (one artifact per
upstream build), so a local run of the gate, and a CI job that restores the
directory with ``actions/cache``, analyses the same compiled SQL again and
again; sqlglot's tokenizer and parser are most of what a manifest costs
(docs/impact.md, Cost). A warm entry costs a file read instead.

Where: ``$SCHEMA_GATE_LINEAGE_CACHE``, else ``$SCHEMA_GATE_CACHE/lineage-analysis/``
(the gate's cache directory), used only when someone set one
(``gate.formats.validate.schemas`` says why there is no implicit home-directory
cache); ``SCHEMA_GATE_LINEAGE_CACHE=off`` switches this cache off alone. Its
entries are data, never code, and need no more trust than the manifest they
came from (below), so a CI job may restore this directory with ``actions/cache``;
it must never restore ``$SCHEMA_GATE_CACHE`` that way (compiled validators).

Why it is safe:

- **Content-addressed.** An entry's file name is the sha256 of its key: the
  analysis code (sqlglot's version, the source of the gate modules that
  analyse), the dialect, the sha256 of the compiled SQL and, per upstream, the
  relation it is named by and what the prefilter decided for the changed
  columns. The entry repeats its key; one that does not, or that is not
  exactly the JSON this module writes, is a miss (and is rewritten).
- **Verified against this run.** The analysis asks the contracts' columns of
  the tables the SQL names (``columns_of``); the entry records each question
  and answer, and is used only when this run answers every one the same.
- **Never a pass it did not earn.** A planted entry can claim a reader reads
  nothing. External readers never raise ``consumer_broken``, so that changes
  only the listing, except under usage-aware severity, where "nobody reads it"
  lowers an error: there an entry is trusted only when it names a read (which
  can only keep an error), and a reader it says reads nothing is analysed again.
- **Bounded.** At most ``MAX_ENTRIES`` entries of at most ``MAX_ENTRY_BYTES``;
  past that the oldest are removed (checked only by a run that wrote).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Entries kept; past it the oldest fifth is removed by the next run that writes.
MAX_ENTRIES = 20_000
#: An entry larger than this is not read (a reader's columns are a few hundred bytes).
MAX_ENTRY_BYTES = 64 * 1024
_FOLDER = "lineage-analysis"
#: The modules whose code decides what an entry holds (with sqlglot's version).
_ANALYSERS = ("lineage/dbt_mesh.py", "consumers/sql.py", "consumers/names.py")

#: A table's contract columns as ``columns_of`` answered: ``None`` (unknown) or sorted.
Asked = list[tuple[tuple[str, ...], list[str] | None]]
#: Per upstream: the columns read (sorted), or ``None`` for every column.
Result = tuple[frozenset[str] | None, ...]


def folder() -> Path | None:
    """The cache's directory: ``$SCHEMA_GATE_LINEAGE_CACHE`` (``off`` switches it off),
    else ``$SCHEMA_GATE_CACHE/lineage-analysis``, else ``None``: no cache.

    A directory of its own can be restored by ``actions/cache`` (docs/impact.md,
    Cost) without restoring ``$SCHEMA_GATE_CACHE``, which holds compiled code."""
    own = os.environ.get("SCHEMA_GATE_LINEAGE_CACHE", "").strip()
    if own.lower() in ("off", "0", "false", "no"):
        return None
    if own:
        return Path(own)
    root = os.environ.get("SCHEMA_GATE_CACHE")
    return Path(root) / _FOLDER if root else None


@functools.cache
def _salt() -> str:
    import hashlib

    import sqlglot

    gate = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"sqlglot {sqlglot.__version__}\n".encode())
    for name in _ANALYSERS:
        digest.update((gate / name).read_bytes())
    return digest.hexdigest()


def key(sql: str, dialect: str, wants: Sequence[tuple[tuple[str, ...], str]]) -> str:
    """The entry's key: the analysis code, the dialect, the SQL's sha256 and the wants."""
    import hashlib  # here: without a cache directory a run does not load OpenSSL

    sql_sha = hashlib.sha256(sql.encode("utf-8", "surrogatepass")).hexdigest()
    return json.dumps([_salt(), dialect, sql_sha, [[list(t), how] for t, how in wants]])


def _path(where: Path, entry_key: str) -> Path:
    import hashlib

    return where / f"{hashlib.sha256(entry_key.encode()).hexdigest()}.json"


def load(where: Path, entry_key: str) -> tuple[Result, Asked] | None:
    """The entry of ``entry_key``, or ``None``: none, too large, damaged or not its key."""
    path = _path(where, entry_key)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        data = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    return _checked(data, entry_key)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _checked(data: Any, entry_key: str) -> tuple[Result, Asked] | None:
    """Exactly what ``store`` writes for this key, or ``None``."""
    if not isinstance(data, dict) or set(data) != {"key", "result", "asked"}:
        return None
    if data["key"] != entry_key:
        return None
    result, asked = data["result"], data["asked"]
    if not isinstance(result, list) or not isinstance(asked, list):
        return None
    if not all(r is None or _strings(r) for r in result):
        return None
    if len(result) != len(json.loads(entry_key)[3]):
        return None
    checked: Asked = []
    for item in asked:
        if not (isinstance(item, list) and len(item) == 2 and _strings(item[0])):
            return None
        if not (item[1] is None or _strings(item[1])):
            return None
        checked.append((tuple(item[0]), item[1]))
    return tuple(None if r is None else frozenset(r) for r in result), checked


def answers(columns_of: Any, tables: Sequence[tuple[str, ...]]) -> Asked:
    """``columns_of``'s answers for ``tables``, in the form an entry records them."""
    out: Asked = []
    for table in tables:
        found = columns_of(table)
        out.append((tuple(table), None if found is None else sorted(found)))
    return out


def store(where: Path, entry_key: str, result: Result, asked: Asked) -> bool:
    """Write the entry (atomically); ``False`` when the directory is not writable."""
    data = {
        "key": entry_key,
        "result": [None if r is None else sorted(r) for r in result],
        "asked": [[list(t), a] for t, a in asked],
    }
    text = json.dumps(data).encode()
    if len(text) > MAX_ENTRY_BYTES:
        return False
    path = _path(where, entry_key)
    try:
        where.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_bytes(text)
        os.replace(scratch, path)
    except OSError:
        return False  # an unwritable cache only costs time
    return True


def prune(where: Path, limit: int = MAX_ENTRIES) -> None:
    """Keep the cache within ``limit`` entries: past it, down to four fifths, oldest first."""
    try:
        entries = [e for e in os.scandir(where) if e.name.endswith(".json")]
        if len(entries) <= limit:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for entry in entries[: len(entries) - limit * 4 // 5]:
            os.unlink(entry.path)
    except OSError:
        pass
