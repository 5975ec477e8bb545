"""The class-data-sharing archive's bookkeeping (gate/smoke/cds.py), without a JVM.

Whether a JVM maps the archive and what it saves is measured, not asserted
here (docs/smoke-test.md, Performance); what must hold whatever the JVM does:
no cache directory or ``GATE_SPARK_CDS=0`` changes nothing, one run at a time
writes the archive, only a whole archive is ever handed to a JVM (a truncated
one killed the JVM with SIGBUS, measured), and a failed dump leaves nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gate.smoke import cds
from tests.spark_fixtures import skip_without_spark

MAGIC = (0xF00BABA8).to_bytes(4, "little")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    skip_without_spark()  # the key needs a java and a Spark home
    monkeypatch.setenv(cds.CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(cds.CDS_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    return tmp_path


def test_off_without_a_cache_directory_or_when_switched_off(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cds.CDS_ENV, "0")
    assert cds.options("") == ("", None)
    monkeypatch.delenv(cds.CDS_ENV)
    monkeypatch.delenv(cds.CACHE_ENV)
    assert cds.options("") == ("", None)
    assert not list(cache.iterdir())


def test_the_users_own_cds_options_win(cache: Path) -> None:
    assert cds.options("-XX:SharedArchiveFile=/x/mine.jsa") == ("", None)
    assert cds.options("-Xshare:off") == ("", None)


def test_one_run_dumps_the_others_run_as_before(cache: Path) -> None:
    first, dump = cds.options("")
    assert dump is not None
    assert first.startswith(f"-XX:ArchiveClassesAtExit={dump.temp} ")
    assert "-Xlog:cds=off" in first  # the JVM's CDS messages stay out of the output
    assert cds.options("") == ("", None)  # the lock is held
    assert cds.options("", write=False) == ("", None)  # nothing to map yet


def test_a_whole_dump_is_published_by_the_next_run_and_then_mapped(cache: Path) -> None:
    _, dump = cds.options("")
    assert dump is not None
    proc = _waiting()
    dump.finish(proc)  # tells the JVM to exit (and dump), does not wait for it
    assert proc.wait(timeout=60) == 0
    assert cds.options("") == ("", None)  # nothing written yet: still locked
    dump.temp.write_bytes(MAGIC + b"\0" * 96)  # the JVM's dump, header last
    sharing, again = cds.options("")
    assert again is None
    archive = Path(sharing.split()[0].removeprefix("-XX:SharedArchiveFile="))
    assert archive.name.endswith("-100.jsa") and archive.stat().st_size == 100
    assert not dump.temp.exists() and not dump.lock.exists()
    assert cds.options("", write=False)[0] == sharing


def test_a_truncated_archive_is_never_handed_to_a_jvm(cache: Path) -> None:
    _, dump = cds.options("")
    assert dump is not None
    dump.temp.write_bytes(MAGIC + b"\0" * 96)
    assert cds.options("")[1] is None  # published
    (archive,) = (cache / "spark-cds").glob("*.jsa")
    archive.write_bytes(MAGIC + b"\0" * 10)
    sharing, again = cds.options("")
    assert sharing.startswith("-XX:ArchiveClassesAtExit=")  # written again instead
    assert again is not None
    again.finish(None)


def test_a_dump_without_its_header_is_never_published(cache: Path) -> None:
    _, dump = cds.options("")
    assert dump is not None
    dump.temp.write_bytes(b"\0" * 100)  # a JVM killed while it wrote: the header comes last
    assert cds.options("") == ("", None)
    assert cds.options("", write=False) == ("", None)


def test_a_session_that_failed_to_start_releases_the_lock(cache: Path) -> None:
    _, dump = cds.options("")
    assert dump is not None
    dump.finish(None)
    assert list((cache / "spark-cds").iterdir()) == []
    assert cds.options("")[1] is not None  # the next run tries again


def test_a_stale_lock_is_taken_over(cache: Path) -> None:
    import os

    _, dump = cds.options("")
    assert dump is not None and cds.options("") == ("", None)
    old = dump.lock.stat().st_mtime - cds.STALE_LOCK_SECONDS - 1
    os.utime(dump.lock, (old, old))
    assert cds.options("")[1] is not None


def _waiting() -> subprocess.Popen[bytes]:
    """A process that exits when its stdin closes, as PySpark's gateway JVM does."""
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )


def test_a_dump_whose_run_ended_first_is_adopted_by_the_next_run(cache: Path) -> None:
    """A gate killed (or out of time) leaves its JVM to exit, and dump, on its own."""
    _, dump = cds.options("")
    assert dump is not None
    dump.temp.write_bytes(b"\0" * 100)  # still being written: the header comes last
    assert cds.options("") == ("", None)
    dump.temp.write_bytes(MAGIC + b"\0" * 96)  # the JVM finished; its run is gone
    sharing, again = cds.options("")
    assert again is None and sharing.startswith("-XX:SharedArchiveFile=")
    assert sharing.split()[0].endswith("-100.jsa")
    assert not dump.lock.exists() and not dump.temp.exists()


def test_in_ci_an_archive_is_used_but_written_only_when_asked(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI job starts fresh: a dump there would cost every job, and serve none."""
    monkeypatch.setenv("CI", "true")
    assert cds.options("") == ("", None)
    assert not list(cache.iterdir())
    monkeypatch.setenv(cds.CDS_ENV, "1")  # the test suite in .ci/run: many JVMs share it
    _, dump = cds.options("")
    assert dump is not None
    dump.temp.write_bytes(MAGIC + b"\0" * 96)
    monkeypatch.delenv(cds.CDS_ENV)
    assert cds.options("")[0].startswith("-XX:SharedArchiveFile=")
