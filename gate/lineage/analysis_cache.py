"""What a manifest reader's compiled SQL reads, kept on disk between runs.

Why: another project's ``manifest.json`` changes rarely (one artifact per
upstream build), so a local run of the gate, and a CI job that restores the
directory with ``actions/cache``, analyses the same compiled SQL again and
again; sqlglot's tokenizer and parser are most of what a manifest costs
(docs/impact.md, Cost). A warm entry costs a file read instead.

Where: ``$SCHEMA_GATE_LINEAGE_CACHE``, only when someone set it (no implicit
home-directory cache, as for ``$SCHEMA_GATE_CACHE``: ``gate.formats.validate.schemas``);
unset, empty or ``off``, there is no cache. Its entries are data, never code,
and cannot lower a verdict (below), so a CI job may restore this directory with
``actions/cache``; it must never restore ``$SCHEMA_GATE_CACHE`` that way
(compiled validators).

Why it is safe:

- **Content-addressed.** An entry's file name is the sha256 of its key: the
  analysis code (sqlglot's and msgspec's versions, the source of the gate
  modules that analyse and decode), the dialect, the sha256 of the compiled SQL
  and, per upstream, the relation it is named by and what the prefilter decided for the changed
  columns. The entry repeats its key; one that does not, or that is not
  exactly the JSON this module writes, is a miss (and is rewritten).
- **Verified against this run.** The analysis asks the contracts' columns of
  the tables the SQL names (``columns_of``); the entry records each question
  and answer, and is used only when this run answers every one the same.
- **Never a pass it did not earn.** A planted entry can claim a reader reads
  nothing. External readers never raise ``consumer_broken``, so that changes
  only the listing, except under usage-aware severity, where "nobody reads it"
  lowers an error: there an entry is trusted only when it says the reader reads
  every changed column (which can only keep errors); any other is analysed again.
- **Files, not links.** An entry is read only when it is a regular file, opened
  without following a link or blocking (a planted FIFO would hang ``open()``),
  and written through a fresh exclusive scratch file (``mkstemp``), so a link
  planted at a predictable name redirects no write.
- **Bounded.** At most ``MAX_ENTRIES`` entries and ``MAX_BYTES``, each entry at
  most ``MAX_ENTRY_BYTES`` (a manifest's ``MAX_MANIFEST_BYTES``); past that the
  oldest are removed (checked only by a run that wrote).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Entries kept; past it the oldest fifth is removed by the next run that writes.
MAX_ENTRIES = 20_000
#: The cache's size bound, whatever the count (a manifest's entry may be megabytes).
MAX_BYTES = 256 * 1024 * 1024
#: An entry larger than this is not read (a reader's columns are a few hundred bytes).
MAX_ENTRY_BYTES = 64 * 1024
#: The modules whose code decides what an entry holds (with sqlglot's and msgspec's
#: versions): the SQL analysis, and for a manifest's entry its decoding and the reads.
_ANALYSERS = (
    "lineage/dbt_mesh.py",
    "consumers/sql.py",
    "consumers/names.py",
    "lineage/dbt_manifest.py",
    "lineage/matching.py",
    "lineage/external.py",
    "dbt/identity.py",
)

#: A table's contract columns as ``columns_of`` answered: ``None`` (unknown) or sorted.
Asked = list[tuple[tuple[str, ...], list[str] | None]]
#: Per upstream: the columns read (sorted), or ``None`` for every column.
Result = tuple[frozenset[str] | None, ...]


def folder() -> Path | None:
    """The cache's directory, ``$SCHEMA_GATE_LINEAGE_CACHE``; ``None`` (no cache)
    when it is unset, empty or ``off``.

    Not ``$SCHEMA_GATE_CACHE`` by default: the Action's image sets that one to a
    directory of compiled validators that dies with the container, where the
    entries would cost every run their writes and help none; and a directory
    of its own can be restored by ``actions/cache`` (docs/impact.md, Cost)
    without restoring code."""
    own = os.environ.get("SCHEMA_GATE_LINEAGE_CACHE", "").strip()
    if not own or own.lower() in ("off", "0", "false", "no"):
        return None
    return Path(own)


def _sha256(data: bytes) -> Any:
    """``hashlib.sha256(data)`` without importing ``hashlib``, which loads OpenSSL
    (~8 ms of a warm run): CPython's own implementation, the one ``hashlib``
    falls back to, gives the same digest (``gate.approvals.fingerprint`` does the same)."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # an interpreter without them
            from hashlib import sha256  # type: ignore[assignment,no-redef,unused-ignore]
    return sha256(data)


def _blake2b(data: bytes) -> str:
    """``hashlib.blake2b(data, digest_size=32)``'s hex digest: ``hashlib.blake2b``
    is ``_blake2.blake2b`` itself, imported here without OpenSSL."""
    try:
        from _blake2 import blake2b  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # an interpreter without it
        from hashlib import blake2b  # type: ignore[assignment,no-redef,unused-ignore]
    return str(blake2b(data, digest_size=32).hexdigest())


_VERSION = re.compile(rb"""^__version__ = version = '([^'\n]+)'$""", re.MULTILINE)


def _msgspec_version() -> str:
    """``msgspec.__version__`` without importing msgspec (~12 ms, and a warm run
    decodes nothing): the line its generated ``_version.py`` holds, else the import."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("msgspec")  # a top-level package: not imported
        origin = spec.origin if spec is not None else None
        if origin:
            found = _VERSION.search((Path(origin).parent / "_version.py").read_bytes())
            if found:
                return found.group(1).decode("ascii")
    except (OSError, ValueError, ImportError, UnicodeDecodeError):
        pass
    import msgspec

    return str(msgspec.__version__)


@functools.cache
def _salt() -> str:
    import sqlglot

    gate = Path(__file__).resolve().parents[1]
    digest = _sha256(f"sqlglot {sqlglot.__version__}\nmsgspec {_msgspec_version()}\n".encode())
    for name in _ANALYSERS:
        digest.update((gate / name).read_bytes())
    return digest.hexdigest()


def key(sql: str, dialect: str, wants: Sequence[tuple[tuple[str, ...], str]]) -> str:
    """The entry's key: the analysis code, the dialect, the SQL's sha256 and the wants."""
    sql_sha = _sha256(sql.encode("utf-8", "surrogatepass")).hexdigest()
    return json.dumps([_salt(), dialect, sql_sha, [[list(t), how] for t, how in wants]])


def _path(where: Path, entry_key: str) -> Path:
    return where / f"{_sha256(entry_key.encode()).hexdigest()}.json"


def load(where: Path, entry_key: str) -> tuple[Result, Asked] | None:
    """The entry of ``entry_key``, or ``None``: none, too large, damaged or not its key."""
    data = _read(where, entry_key, MAX_ENTRY_BYTES)
    return None if data is None else _checked(data, entry_key)


def _read(where: Path, entry_key: str, limit: int) -> Any | None:
    """The JSON of ``entry_key``'s file, or ``None``: none, over ``limit`` bytes, damaged.
    Read at most one byte past the limit, so a planted huge file costs nothing."""
    try:
        raw = _read_regular(_path(where, entry_key), limit + 1)
        if raw is None or len(raw) > limit:
            return None
        return json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None


#: Opened without following a link or waiting: a restored directory is not the gate's,
#: and a FIFO planted under an entry's name would block ``open()`` for ever.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC


def _read_regular(path: Path, most: int) -> bytes | None:
    """At most ``most`` bytes of ``path`` if it is a regular file (not a link), else ``None``."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        while most > 0 and (chunk := os.read(fd, min(most, 1 << 20))):
            chunks.append(chunk)
            most -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _checked(data: Any, entry_key: str) -> tuple[Result, Asked] | None:
    """Exactly what ``store`` writes for this key, or ``None``."""
    if not isinstance(data, dict) or set(data) != {"key", "result", "asked"}:
        return None
    if data["key"] != entry_key:
        return None
    result = data["result"]
    if not isinstance(result, list):
        return None
    if not all(r is None or _strings(r) for r in result):
        return None
    if len(result) != len(json.loads(entry_key)[3]):
        return None
    asked = _asked(data["asked"])
    if asked is None:
        return None
    return tuple(None if r is None else frozenset(r) for r in result), asked


def _asked(asked: Any) -> Asked | None:
    """The recorded questions to ``columns_of``, or ``None`` when not of that shape."""
    if not isinstance(asked, list):
        return None
    checked: Asked = []
    for item in asked:
        if not (isinstance(item, list) and len(item) == 2 and _strings(item[0])):
            return None
        if not (item[1] is None or _strings(item[1])):
            return None
        checked.append((tuple(item[0]), item[1]))
    return checked


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
    return _write(where, _path(where, entry_key), text)


def _write(where: Path, path: Path, text: bytes) -> bool:
    """Write ``text`` to ``path`` atomically (a reader never sees half an entry);
    ``False`` when the directory is not writable: an unwritable cache only costs time."""
    import tempfile

    try:
        where.mkdir(parents=True, exist_ok=True)
        # A fresh name, created exclusively: a link planted at a predictable
        # scratch name would have the write land in its target.
        fd, scratch = tempfile.mkstemp(prefix=f"{path.stem}.", suffix=".tmp", dir=where)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text)
            os.replace(scratch, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(scratch)
            raise
    except OSError:
        return False
    return True


def prune(where: Path, limit: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
    """Keep the cache within ``limit`` entries and ``max_bytes``: past either, down
    to four fifths of both, oldest first."""
    try:
        entries = [(e, e.stat()) for e in os.scandir(where) if e.name.endswith(".json")]
        total = sum(st.st_size for _e, st in entries)
        if len(entries) <= limit and total <= max_bytes:
            return
        entries.sort(key=lambda item: item[1].st_mtime_ns)
        keep, budget = limit * 4 // 5, max_bytes * 4 // 5
        left = len(entries)
        for entry, st in entries:
            if left <= keep and total <= budget:
                break
            os.unlink(entry.path)
            total -= st.st_size
            left -= 1
    except OSError:
        pass


# A whole manifest's reads, for a warm run that need not even decode it.
#
# Why sound: ``read_manifest``'s reads are a function of the manifest's bytes,
# its location and the run's dialect (the key), and of the run only through
# what it asked: ``wanted`` of each other project's upstream, the changed
# columns of the wanted ones, and the contracts' columns the readers' analyses
# asked. The entry records every question with its answer and holds only when
# this run answers each the same. Not used under usage-aware severity (a
# planted "no reads" would lower an error): the per-reader entries apply there.

#: What ``read_manifest`` asked of the run: wanted per upstream; the changed
#: columns per wanted upstream (``None``: no such function); the contracts' columns.
Questions = tuple[list[tuple[str, bool]], list[tuple[str, list[str] | None]] | None, Asked]
#: An ``ExternalRead``'s fields: source, consumer, dataset, columns (sorted or ``None``),
#: location (or ``None``).
ReadFields = tuple[str, str, str, list[str] | None, str | None]


def manifest_key(data: bytes, location: str, dialect: str) -> str:
    """The manifest entry's key. BLAKE2b (256 bits), not SHA-256, for the manifest's
    bytes: as collision-resistant, and without SHA instructions in the CPU about
    twice as fast (20.6 MB: 46 ms against 82 ms of CPU, measured here)."""
    digest = _blake2b(data)
    return json.dumps(["manifest", _salt(), digest, location, dialect])


def store_manifest(
    where: Path, entry_key: str, questions: Questions, reads: list[ReadFields]
) -> None:
    wanted, changed, asked = questions
    data = {
        "key": entry_key,
        "wanted": [list(w) for w in wanted],
        "changed": None if changed is None else [list(c) for c in changed],
        "asked": [[list(t), a] for t, a in asked],
        "reads": [list(r) for r in reads],
    }
    text = json.dumps(data).encode()
    if len(text) > MAX_MANIFEST_BYTES:
        return
    if _write(where, _path(where, entry_key), text):
        prune(where)


#: A manifest's entry holds a read per reader and upstream: larger than a reader's.
MAX_MANIFEST_BYTES = 4 * 1024 * 1024


def load_manifest(where: Path, entry_key: str) -> tuple[Questions, list[ReadFields]] | None:
    """The manifest entry of ``entry_key``, or ``None``: none, too large, damaged, another key."""
    data = _read(where, entry_key, MAX_MANIFEST_BYTES)
    if not isinstance(data, dict) or set(data) != {"key", "wanted", "changed", "asked", "reads"}:
        return None
    if data["key"] != entry_key:
        return None
    wanted, changed, asked, reads = data["wanted"], data["changed"], data["asked"], data["reads"]
    if not isinstance(wanted, list) or not all(
        isinstance(w, list) and len(w) == 2 and isinstance(w[0], str) and isinstance(w[1], bool)
        for w in wanted
    ):
        return None
    if changed is not None and not (
        isinstance(changed, list)
        and all(
            isinstance(c, list)
            and len(c) == 2
            and isinstance(c[0], str)
            and (c[1] is None or _strings(c[1]))
            for c in changed
        )
    ):
        return None
    checked = _asked(asked)
    if checked is None or not isinstance(reads, list):
        return None
    out: list[ReadFields] = []
    for r in reads:
        if not (isinstance(r, list) and len(r) == 5):
            return None
        source, consumer, dataset, columns, location = r
        if not all(isinstance(v, str) for v in (source, consumer, dataset)):
            return None
        if not (location is None or isinstance(location, str)):
            return None
        if not (columns is None or _strings(columns)):
            return None
        out.append((source, consumer, dataset, columns, location))
    questions: Questions = (
        [(w[0], w[1]) for w in wanted],
        None if changed is None else [(c[0], c[1]) for c in changed],
        checked,
    )
    return questions, out
