"""The analysis cache of manifest readers (gate.lineage.analysis_cache).

A warm run reads what a cold one analysed, without sqlglot; an entry that is
damaged, planted under another key or made for other contract columns is a
miss; one that claims a reader reads nothing lowers no error under usage-aware
severity; the cache is bounded and can be switched off.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from gate.lineage import analysis_cache, dbt_mesh
from gate.lineage.dbt_mesh import read_manifest
from gate.lineage.run import _ColumnsOf
from gate.model import Column, Dataset
from tests.conftest import gate_env, run_main
from tests.lineage.mesh_repo import FINANCE, MODELS, PROPERTIES, drop, make
from tests.lineage.test_cli_lineage import MANIFEST, WITH_PATH, removed
from tests.lineage.test_manifest_cost import ANY, _contracts, _manifest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _read(columns_of=None, trust_unread: bool = True) -> list[tuple[str, object]]:
    reads = read_manifest(
        _manifest(6), "m.json", "duckdb", ANY, columns_of or _contracts(), trust_unread=trust_unread
    )
    return [(r.consumer, r.columns) for r in reads]


def _entries(cache: Path) -> list[Path]:
    """The readers' entries (not the whole manifest's)."""
    return [p for p in sorted(cache.glob("*.json")) if '"result"' in p.read_text()]


def _manifest_entries(cache: Path) -> list[Path]:
    return [p for p in sorted(cache.glob("*.json")) if '"reads"' in p.read_text()]


def _forget_manifest(cache: Path) -> None:
    """Remove the whole manifest's entry, so a run reads the readers' entries."""
    for path in _manifest_entries(cache):
        path.unlink()


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_args: object, **_kw: object) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(dbt_mesh, "_analysis", fail)
    monkeypatch.setattr(dbt_mesh, "_tokens", fail)


def test_a_warm_run_reads_the_same_without_parsing(cache: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", "off")
    uncached = _read()
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", str(cache))
    assert _read() == uncached
    assert len(_entries(cache)) == 5  # the reader without SQL has nothing to analyse
    assert len(_manifest_entries(cache)) == 1
    _forget_manifest(cache)
    _no_parse(monkeypatch)
    assert _read() == uncached  # from the readers' entries


def test_a_warm_run_reads_the_manifests_entry_without_decoding(cache: Path, monkeypatch) -> None:
    from gate.lineage import dbt_manifest

    cold = _read()
    _no_parse(monkeypatch)
    monkeypatch.setattr(dbt_manifest, "decode", _no_parse)  # would fail: not called
    assert _read() == cold


def test_a_manifest_entry_holds_only_for_the_same_answers(cache: Path) -> None:
    cold = _read()
    for path in _manifest_entries(cache):
        data = json.loads(path.read_text())
        data["reads"] = []  # planted: were it used, nothing would be read
        path.write_text(json.dumps(data))
    planted = json.loads(_manifest_entries(cache)[0].read_text())
    assert _read() == []  # the same run's answers: used (usage-aware off)
    _manifest_entries(cache)[0].write_text(json.dumps(planted))
    assert _read(trust_unread=False) == cold  # usage-aware: never used
    _manifest_entries(cache)[0].write_text(json.dumps(planted))
    other = _ColumnsOf(
        [
            Dataset(
                id="stg_orders",
                path="models/_models.yml",
                format="dbt",
                columns=(Column("order_id"), Column("amount")),
            )
        ]
    )
    assert _read(other) != []  # other contract columns: analysed again
    _manifest_entries(cache)[0].write_text(json.dumps(planted))
    reads = read_manifest(_manifest(6), "m.json", "duckdb", lambda _u: False, _contracts())
    assert reads == []  # nothing wanted
    _manifest_entries(cache)[0].write_text(json.dumps(planted))
    reads = read_manifest(
        _manifest(6), "m.json", "duckdb", ANY, _contracts(), changed_columns=lambda _u: None
    )
    assert [(r.consumer, r.columns) for r in reads] == cold  # asked other questions


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: {**data, "reads": [["a", "b", "c", [1], None]]},
        lambda data: {**data, "wanted": [["x", "yes"]]},
        lambda data: {**data, "key": data["key"] + " "},
        lambda data: {k: v for k, v in data.items() if k != "asked"},
    ],
)
def test_a_damaged_manifest_entry_is_a_miss(cache: Path, damage) -> None:
    cold = _read()
    for path in _manifest_entries(cache):
        path.write_text(json.dumps(damage(json.loads(path.read_text()))))
    assert _read() == cold


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],
        lambda text: "not json",
        lambda text: text.replace('"result"', '"results"'),
        lambda text: text.replace('"key": "[', '"key": "[ '),
        lambda text: json.dumps({**json.loads(text), "result": [1]}),
        lambda text: json.dumps({**json.loads(text), "result": []}),
        lambda text: " " * (analysis_cache.MAX_ENTRY_BYTES + 1),
    ],
)
def test_a_damaged_entry_is_a_miss_and_rewritten(cache: Path, monkeypatch, damage) -> None:
    cold = _read()
    _forget_manifest(cache)
    for path in _entries(cache):
        path.write_text(damage(path.read_text()))
    assert _read() == cold
    _forget_manifest(cache)
    _no_parse(monkeypatch)  # rewritten whole
    assert _read() == cold


def test_an_entry_under_another_keys_name_is_a_miss(cache: Path) -> None:
    cold = _read()
    _forget_manifest(cache)
    first, *others = _entries(cache)
    for path in others:
        path.write_bytes(first.read_bytes())  # a valid entry, of another key
    assert _read() == cold


def _say_reads_nothing(cache: Path) -> None:
    """Plant "reads nothing" in every entry, the readers' and the manifest's."""
    for path in _entries(cache):
        data = json.loads(path.read_text())
        data["result"] = [[] for _ in data["result"]]
        path.write_text(json.dumps(data))
    for path in _manifest_entries(cache):
        data = json.loads(path.read_text())
        data["reads"] = []
        path.write_text(json.dumps(data))


def test_other_contract_columns_are_a_miss(cache: Path) -> None:
    cold = _read()
    _forget_manifest(cache)
    _say_reads_nothing(cache)  # planted, but made for the old contract columns
    other = _ColumnsOf(
        [
            Dataset(
                id="stg_orders",
                path="models/_models.yml",
                format="dbt",
                columns=(Column("order_id"), Column("amount")),
            )
        ]
    )
    assert _read(other) != [(c, frozenset()) for c, _ in cold]


def test_a_planted_reads_nothing_is_analysed_again_under_usage_aware(cache: Path) -> None:
    cold = _read()
    _forget_manifest(cache)
    _say_reads_nothing(cache)
    assert _read() != cold  # trusted where it only changes the listing
    _forget_manifest(cache)
    _say_reads_nothing(cache)
    assert _read(trust_unread=False) == cold  # and rewritten: the real reads again
    _forget_manifest(cache)
    assert _read() == cold


def test_switched_off_writes_nothing(cache: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", "off")
    _read()
    assert not cache.exists()


def test_only_a_directory_of_its_own(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SCHEMA_GATE_LINEAGE_CACHE")
    monkeypatch.setenv("SCHEMA_GATE_CACHE", str(tmp_path / "validators"))
    _read()
    assert analysis_cache.folder() is None and not (tmp_path / "validators").exists()


def test_the_cache_is_bounded_oldest_first(cache: Path) -> None:
    import os

    cache.mkdir(parents=True)
    for i in range(10):
        path = cache / f"{i:02}.json"
        path.write_text("{}")
        os.utime(path, ns=(i * 10**9, i * 10**9))
    analysis_cache.prune(cache, limit=5)
    assert [p.name for p in sorted(cache.glob("*.json"))] == [
        "06.json",
        "07.json",
        "08.json",
        "09.json",
    ]
    analysis_cache.prune(cache, limit=100, max_bytes=5)  # 2 bytes each: down to 4 bytes
    assert [p.name for p in sorted(cache.glob("*.json"))] == ["08.json", "09.json"]


def test_through_the_cli_a_planted_entry_never_lowers_an_error(cache: Path, tmp_path) -> None:
    repo = make(tmp_path / "r", WITH_PATH + "  usage_aware_severity: true\n", {MANIFEST: FINANCE})
    repo.write(PROPERTIES, drop(MODELS, "discount_code"))
    repo.commit("drop discount_code")
    env = {**gate_env(), "SCHEMA_GATE_LINEAGE_CACHE": str(cache)}

    def run(*args: str) -> tuple[int, dict]:
        argv = ("--base", "main", "--head", "feature", "--format", "json", *args)
        proc = run_main(repo.path, *argv, env=env)
        return proc.returncode, json.loads(proc.stdout)

    code, report = run()
    cold = removed(report, "discount_code")
    assert code == 1 and cold["severity"] == "error" and cold["external_consumers"]
    assert _entries(cache)
    _say_reads_nothing(cache)
    code, report = run()
    assert code == 1 and removed(report, "discount_code") == cold


def test_a_planted_read_of_one_dropped_column_never_lowers_another(cache: Path, tmp_path) -> None:
    """Usage-aware severity grades each removed column by its own readers. An entry
    was trusted there when it named a read of any changed column: planted as
    "``fct_revenue`` reads ``amount`` only" in a pull request dropping ``amount``
    and ``discount_code``, it kept ``amount`` an error and graded
    ``discount_code``, which the reader does read, a warning. An entry is trusted
    there only when it says the reader reads every changed column."""
    finance = json.loads(FINANCE)
    finance["exposures"] = {}  # the dashboard reads every column: models only here
    config = WITH_PATH + "  usage_aware_severity: true\n"
    repo = make(tmp_path / "r", config, {MANIFEST: json.dumps(finance)})
    repo.write(PROPERTIES, drop(drop(MODELS, "discount_code"), "amount"))
    repo.commit("drop discount_code and amount")
    env = {**gate_env(), "SCHEMA_GATE_LINEAGE_CACHE": str(cache)}

    def run() -> tuple[int, dict]:
        argv = ("--base", "main", "--head", "feature", "--format", "json")
        proc = run_main(repo.path, *argv, env=env)
        return proc.returncode, json.loads(proc.stdout)

    code, report = run()
    cold = removed(report, "discount_code")
    assert code == 1 and cold["severity"] == "error" and cold["external_consumers"]
    assert _entries(cache)
    for path in _entries(cache):
        data = json.loads(path.read_text())
        data["result"] = [["amount"] for _ in data["result"]]
        path.write_text(json.dumps(data))
    code, report = run()
    assert code == 1 and removed(report, "discount_code") == cold


def test_the_key_changes_with_any_module_that_decides_a_manifest_entry(monkeypatch) -> None:
    """A manifest entry holds ``read_manifest``'s reads: the decoding
    (``dbt_manifest.py``, msgspec), the upstream ids (``matching.py``) and the
    reads' fields decide them as much as the SQL analysis does. Only three
    modules were hashed into the key, so an upgrade that fixed the decoding kept
    answering from the old entries (a restored ``actions/cache`` directory)."""
    from gate.lineage import dbt_manifest

    original = Path.read_bytes
    decoder = Path(dbt_manifest.__file__).resolve()

    def patched(self: Path) -> bytes:
        data = original(self)
        return data + b"\n# fixed\n" if self.resolve() == decoder else data

    analysis_cache._salt.cache_clear()
    before = analysis_cache.manifest_key(b"{}", "m.json", "duckdb")
    monkeypatch.setattr(Path, "read_bytes", patched)
    analysis_cache._salt.cache_clear()
    try:
        after = analysis_cache.manifest_key(b"{}", "m.json", "duckdb")
    finally:
        monkeypatch.undo()
        analysis_cache._salt.cache_clear()
    assert before != after


def test_pruning_a_crowded_cache_is_linear(monkeypatch) -> None:
    """A restored cache directory may hold far more entries than ``MAX_ENTRIES``
    (any run may write; ``actions/cache`` restores what a job saved). Each
    removal copied the rest of the list (``entries[1:]``): 60,000 entries down to
    eight was 1.8 billion copies. Now one pass."""
    import os
    import time
    from types import SimpleNamespace

    count = 60_000
    stat = [SimpleNamespace(st_size=1, st_mtime_ns=i) for i in range(count)]
    entries = [
        SimpleNamespace(name=f"{i}.json", path=f"/x/{i}.json", stat=lambda i=i: stat[i])
        for i in range(count)
    ]
    removed: list[str] = []
    monkeypatch.setattr(os, "scandir", lambda _where: iter(entries))
    monkeypatch.setattr(os, "unlink", removed.append)
    started = time.process_time()
    analysis_cache.prune(Path("/x"), limit=10)
    assert time.process_time() - started < 2.0
    assert len(removed) == count - 8 and removed[0] == "/x/0.json"


def test_a_fifo_planted_as_an_entry_is_a_miss_not_a_hang(cache: Path) -> None:
    """A restored cache directory is not the gate's: an entry replaced by a FIFO made
    the read wait for a writer forever (open() of a FIFO blocks). Now only a regular
    file is read, opened without blocking or following a link."""
    import os
    import threading

    cold = _read()
    for path in sorted(cache.glob("*.json")):
        path.unlink()
        os.mkfifo(path)
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(_read()), daemon=True)
    worker.start()
    worker.join(60)  # a hang, not a speed: the read never returns without the fix
    if worker.is_alive():  # let the blocked open() return so the thread ends
        for path in cache.glob("*.json"):
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    assert got == [cold]


def test_a_symlink_planted_at_a_scratch_name_is_not_written_through(
    cache: Path, tmp_path: Path
) -> None:
    """An entry was written to ``<entry>.<pid>.tmp`` first, a predictable name
    opened following links: a symlink planted there had the gate overwrite its
    target, a file anywhere the run may write."""
    import os

    _read()
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    for path in sorted(cache.glob("*.json")):
        path.unlink()
        for pid in {os.getpid(), *range(1, 64)}:
            path.with_suffix(f".{pid}.tmp").symlink_to(victim)
    _read()
    assert victim.read_text() == "untouched\n"
    assert sorted(cache.glob("*.json")), "entries are still written"


def test_only_readers_that_were_parsed_get_an_entry(cache: Path, monkeypatch) -> None:
    """A reader its tokens decide (dbt style's ``select *`` CTE, never spelling the
    changed column) is decided again in a fraction of a millisecond: a cold run
    writes no entry for it, only for the readers it parsed."""

    def read() -> list[tuple[str, object]]:
        reads = read_manifest(
            _manifest(6),
            "m.json",
            "duckdb",
            ANY,
            _contracts(),
            changed_columns=lambda _u: frozenset({"discount_code"}),
        )
        return [(r.consumer, r.columns) for r in reads]

    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", "off")
    uncached = read()
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", str(cache))
    assert read() == uncached
    # m1 (its star reaches the output) and m2 (spells the column) were parsed;
    # m0's star ends inside (tokens), m3 and m4 never spell it (text), m5 has no SQL.
    assert len(_entries(cache)) == 2
    _forget_manifest(cache)

    def no_parse(*_args: object, **_kw: object) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(dbt_mesh, "_analysis", no_parse)
    assert read() == uncached  # m1, m2 from their entries; m0 from its tokens again


def test_a_warm_run_imports_neither_msgspec_nor_openssl(cache: Path) -> None:
    """A warm run hashes the manifest and reads its entry: msgspec (~12 ms to
    import) and hashlib's OpenSSL (~8 ms) are not loaded for that; the digests
    are CPython's own implementations, the same as hashlib's."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gate.lineage.dbt_mesh import read_manifest\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "reads = read_manifest(data, 'm.json', 'duckdb', lambda _u: True)\n"
        "print(len(reads), sorted(m for m in ('msgspec', 'hashlib', '_hashlib') if m in sys.modules))\n"
    )
    manifest = cache.parent / "manifest.json"
    manifest.write_bytes(_manifest(6))
    env = {**os.environ, "SCHEMA_GATE_LINEAGE_CACHE": str(cache)}
    root = Path(__file__).resolve().parents[2]

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, str(manifest)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert "'msgspec'" in run()  # cold: decoded with msgspec
    assert run() == "6 []"  # warm: neither
    assert analysis_cache._sha256(b"sql").hexdigest() == hashlib.sha256(b"sql").hexdigest()
    assert (
        analysis_cache._blake2b(b"m" * 999)
        == hashlib.blake2b(b"m" * 999, digest_size=32).hexdigest()
    )
    assert analysis_cache._msgspec_version() == __import__("msgspec").__version__
