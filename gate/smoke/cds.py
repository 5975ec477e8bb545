"""A class-data-sharing archive of Spark's classes, so a local session starts faster.

A local session's JVM spends most of its start loading and verifying some
10,000 of Spark's classes, one thread at a time. The JVM can map them from an
archive instead (JDK AppCDS: ``-XX:ArchiveClassesAtExit`` writes the classes a
run loaded when its JVM exits, ``-XX:SharedArchiveFile`` maps them at the next
start): a bare session took 9 CPU s without and 5 with one (docs/smoke-test.md,
Performance). The archive is kept only under ``$SCHEMA_GATE_CACHE``, the
directory someone chose on purpose for the gate's compiled artefacts (the
Action's images set it; gate/formats/validate/schemas.py says why there is no
implicit home-directory cache): the JVM trusts an archive's class data, so it
must be as trusted as the gate's own install, never a place a pull request
writes. Without ``$SCHEMA_GATE_CACHE``, or with ``GATE_SPARK_CDS=0``, nothing
changes. Where ``CI`` is set (GitHub Actions, the Action's container, most CI
systems) an archive that is there is used but none is written, unless
``GATE_SPARK_CDS=1``: a CI job starts from a fresh machine, so the first run's
dump (about 25 s of CPU) would be paid on every job.

The first run with the cache set (per Java, Spark and class path: the file's
name carries a hash of them) writes the archive: its JVM dumps the classes at
exit, to a file of its own, after the gate has moved on (``Dump.finish`` does
not wait); the next run that finds that file whole renames it into place. A
lock file keeps concurrent first runs from all dumping (the others run
without an archive). Every later run maps it. The JVM
checks an archive itself and quietly runs without one it cannot use (another
JVM, changed jars, a damaged file): the options below turn its CDS logging
off, so no run ever prints about it, and a result never depends on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

#: ``0`` turns the archive off (neither written nor used); ``1`` writes a
#: missing one even where ``CI`` is set (unset: written outside CI only).
CDS_ENV = "GATE_SPARK_CDS"
#: The gate's cache directory (the compiled validators live there too).
CACHE_ENV = "SCHEMA_GATE_CACHE"
#: A lock older than this is a first run that died before it could finish.
STALE_LOCK_SECONDS = 900.0
#: Keep the JVM's own CDS messages (a mismatched or damaged archive, classes it
#: skips while dumping) out of the gate's output: they go to stdout by default.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off -Xlog:class+path=off"
#: Options a user may pass (``GATE_SPARK_JAVA_OPTIONS``) that mean "my own CDS setup".
_USER_CDS = ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare", "AutoCreateSharedArchive")


@dataclass
class Dump:
    """A run that writes the archive: its JVM dumps to ``temp``; ``finish`` moves it into place."""

    temp: Path
    key: str
    lock: Path

    def finish(self, proc: object | None) -> None:
        """After the session stopped: let the JVM exit, and dump, without waiting for it.

        ``proc`` is PySpark's ``Popen`` of the driver JVM; closing its stdin is
        how PySpark's gateway is told to exit (``System.exit(0)``, which dumps:
        15 to 45 s of wall on a loaded 2-core machine). Nobody waits for that:
        the next run that finds the file whole publishes it (``_adopt``), so
        the run that writes the archive ends as soon as it would have. (It
        first waited; under load a test's 120 s limit ran out.) Without a JVM
        (its start failed) the lock is released at once.
        """
        if proc is None:
            with contextlib.suppress(OSError):
                self.temp.unlink()
            with contextlib.suppress(OSError):
                self.lock.unlink()
            return
        stdin = getattr(proc, "stdin", None)
        if stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()


def options(extra_options: str, write: bool = True) -> tuple[str, Dump | None]:
    """The JVM options for a local session's driver, and the dump to finish (or ``None``).

    ``""`` where the archive is off: no cache directory, ``GATE_SPARK_CDS=0``,
    the user's own CDS options, or nothing to key it by; also where there is
    no archive yet and ``write`` is false (a long-lived JVM, such as a test
    suite's shared session, should not be the one that dumps at its end).
    """
    switch = os.environ.get(CDS_ENV, "").strip()
    if switch == "0":
        return "", None
    if switch != "1" and os.environ.get("CI", "").strip() not in ("", "0", "false"):
        write = False  # a CI job starts fresh: its first run's dump would be paid every job
    cache = os.environ.get(CACHE_ENV, "").strip()
    if not cache or any(flag in extra_options for flag in _USER_CDS):
        return "", None
    try:
        key = archive_key()
        if key is None:
            return "", None
        folder = Path(cache) / "spark-cds"
        found = _published(folder, key) or _adopt(folder, key)
        if found is not None:
            return f"-XX:SharedArchiveFile={found} {QUIET}", None
        if not write:
            return "", None
        folder.mkdir(parents=True, exist_ok=True)
        lock = folder / f"spark-{key}.lock"
        if not _take(lock):
            return "", None  # another run is writing it: this one runs as before
        for old in folder.glob("spark-*.tmp"):  # left by runs that died while dumping
            with contextlib.suppress(OSError):
                if time.time() - old.stat().st_mtime > STALE_LOCK_SECONDS:
                    old.unlink()
        temp = folder / f"spark-{key}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            temp.unlink()
        return f"-XX:ArchiveClassesAtExit={temp} {QUIET}", Dump(temp, key, lock)
    except OSError:
        return "", None


#: The first bytes of a JDK dynamic archive (its header is written last).
_MAGIC = (0xF00BABA8).to_bytes(4, "little")


def _complete(path: Path) -> bool:
    """A dump the JVM finished: its header (written last) is there."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == _MAGIC
    except OSError:
        return False


def _published(folder: Path, key: str) -> Path | None:
    """The archive for ``key``, if one is there whole: its name carries its size.

    A JVM that maps a truncated archive dies of SIGBUS (measured, JDK 17), so
    an archive whose size is not the one it was published with is ignored.
    """
    try:
        for path in folder.glob(f"spark-{key}-*.jsa"):
            size = path.name.removeprefix(f"spark-{key}-").removesuffix(".jsa")
            if size.isdigit() and path.stat().st_size == int(size):
                return path
    except OSError:
        return None
    return None


def _publish(temp: Path, key: str) -> Path:
    """Move a finished dump into place under its published name (which carries its size)."""
    target = temp.with_name(f"spark-{key}-{temp.stat().st_size}.jsa")
    os.replace(temp, target)
    return target


def _adopt(folder: Path, key: str) -> Path | None:
    """Publish a dump whose run ended before it could (its JVM dumps at exit all the same).

    A gate process that exits without stopping its session (killed, or out of
    time) leaves its JVM to exit on its own, and dump then; nobody renames the
    file. The header is written last, so a file that starts with it is whole.
    """
    try:
        for temp in folder.glob(f"spark-{key}.*.tmp"):
            if _complete(temp):
                found = _publish(temp, key)
                with contextlib.suppress(OSError):
                    (folder / f"spark-{key}.lock").unlink()
                return found
    except OSError:
        return None
    return None


def _take(lock: Path) -> bool:
    """Create ``lock`` exclusively; a stale one (a first run that died) is taken over once."""
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime < STALE_LOCK_SECONDS:
                    return False
                lock.unlink()
            except OSError:
                return False
    return False


def archive_key() -> str | None:
    """A hash of what an archive is only valid for: the JVM, Spark's jars, the options.

    No ``java -version`` run: the resolved ``java`` binary and its ``libjvm``'s
    size and time stand for the JVM, each jar's name, size and time for the
    class path (the JVM checks both again when it maps the archive).
    """
    java = _java()
    spark_home = _spark_home()
    if java is None or spark_home is None:
        return None
    digest = hashlib.sha256()
    digest.update(str(java).encode())
    for lib in sorted(java.parent.parent.glob("lib/*/libjvm.so")):
        stat = lib.stat()
        digest.update(f"{lib}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    jars = spark_home / "jars"
    for jar in sorted(jars.glob("*.jar")):
        stat = jar.stat()
        digest.update(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    from gate.smoke.session import JVM_OPTIONS

    digest.update(JVM_OPTIONS.encode())
    return digest.hexdigest()[:16]


def _java() -> Path | None:
    java_home = os.environ.get("JAVA_HOME")
    found = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not found:
        return None
    path = Path(found).resolve()
    return path if path.is_file() else None


def _spark_home() -> Path | None:
    """Where PySpark's launcher takes the jars from: ``$SPARK_HOME``, else the package."""
    explicit = os.environ.get("SPARK_HOME")
    if explicit:
        return Path(explicit).resolve()
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).resolve().parent
