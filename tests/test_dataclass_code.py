"""gate._dataclass_code: dataclasses' generated methods come from a table, and nothing
about a class changes (issue #26: ~1 ms of CPU per frozen class at start-up)."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gate import _dataclass_code as table
from tests.conftest import gate_env

METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


def _define() -> type:
    @dataclasses.dataclass(frozen=True)
    class Point:
        """A point."""

        x: int
        y: str = "y"
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
        note: str | None = dataclasses.field(default=None, compare=False)

    return Point


def _generated(cls: type, name: str):  # type: ignore[no-untyped-def]
    """The method dataclasses generated (``__repr__`` comes wrapped in a recursion guard)."""
    method = vars(cls)[name]
    return getattr(method, "__wrapped__", method)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty table kept in ``tmp_path``, uninstalled afterwards."""
    path = tmp_path / "dataclasses.bin"
    monkeypatch.setattr(table, "_path", lambda: str(path))
    monkeypatch.setattr(table, "_codes", {})
    monkeypatch.setattr(table, "_stored", {})
    monkeypatch.setattr(table, "_grown", False)
    monkeypatch.setattr(table, "_installed", False)
    try:
        yield path
    finally:
        table.uninstall()


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts compiled from now on (the table's misses)."""
    seen: list[str] = []
    real = compile

    def counting(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(table, "compile", counting, raising=False)
    return seen


def test_a_class_defined_through_the_table_is_the_class_exec_makes(fresh: Path) -> None:
    plain = _define()
    table.install()
    cached = _define()
    for name in METHODS:
        new, old = _generated(cached, name), _generated(plain, name)
        # Code objects compare by everything but the file name, which is <string> on both.
        assert new.__code__ == old.__code__, name
        assert new.__code__.co_filename == old.__code__.co_filename == "<string>"
        assert vars(cached)[name].__qualname__ == vars(plain)[name].__qualname__
        assert vars(cached)[name].__qualname__ == f"{cached.__qualname__}.{name}"
    a, b = cached(1, tags=("t",), note="n"), cached(1, tags=("t",))
    assert a == b and hash(a) == hash(b)  # note is not compared
    assert repr(a) == repr(plain(1, tags=("t",), note="n"))
    assert repr(a).endswith("Point(x=1, y='y', tags=('t',), note='n')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        cached()
    assert [f.name for f in dataclasses.fields(cached)] == ["x", "y", "tags", "note"]
    assert dataclasses.replace(a, x=3).x == 3


def test_a_later_process_takes_the_code_from_the_table_instead_of_compiling(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table.install()
    _define()
    assert table.save(force=True) and fresh.exists()
    # A new process: the table as read from the file, nothing compiled yet.
    table.uninstall()
    monkeypatch.setattr(table, "_codes", {})
    monkeypatch.setattr(table, "_stored", {})
    monkeypatch.setattr(table, "_grown", False)
    compiled = _compiles(monkeypatch)
    table.install()
    point = _define()
    assert compiled == []
    assert point(1) == point(1)
    assert not table.save()  # nothing new: not written again


def test_a_text_the_table_lacks_is_compiled_and_the_table_grows(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = _compiles(monkeypatch)
    table.install()
    _define()
    assert len(compiled) == len(METHODS)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not table.save() and not fresh.exists()  # as Python writes byte code
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert table.save() and fresh.exists()


@pytest.mark.parametrize(
    "content",
    [
        b"not marshal",
        marshal.dumps((b"\x00\x00\r\n", {"def __create_fn__(): pass": b"x"})),  # another Python
        marshal.dumps(("magic", "table")),
    ],
)
def test_a_table_that_cannot_be_used_is_ignored(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    fresh.write_bytes(content)
    compiled = _compiles(monkeypatch)
    table.install()
    point = _define()
    assert len(compiled) == len(METHODS)
    assert point(1).x == 1


def test_an_entry_that_is_not_code_is_compiled_again(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table.install()
    _define()
    table.save(force=True)
    magic, stored = marshal.loads(fresh.read_bytes())
    fresh.write_bytes(marshal.dumps((magic, dict.fromkeys(stored, marshal.dumps("not code")))))
    table.uninstall()
    monkeypatch.setattr(table, "_codes", {})
    monkeypatch.setattr(table, "_stored", {})
    compiled = _compiles(monkeypatch)
    table.install()
    assert _define()(2).x == 2
    assert len(compiled) == len(METHODS)


def test_uninstall_gives_dataclasses_back_its_exec(fresh: Path) -> None:
    table.install()
    assert vars(dataclasses)["exec"] is table._exec
    table.uninstall()
    assert "exec" not in vars(dataclasses)


def test_the_library_and_the_in_process_command_leave_dataclasses_alone(cli, repo) -> None:  # type: ignore[no-untyped-def]
    """Only the command's own process (``entry``) installs it, like its gc tuning."""
    repo.write("contracts/a.yaml", "dataset: a\ncolumns:\n  - name: id\n    data_type: int\n")
    repo.commit("base")
    assert cli(repo.path, "--base", "HEAD").returncode == 0
    assert "exec" not in vars(dataclasses)


def test_the_command_writes_the_table_beside_its_byte_code_and_reads_it_next_time(
    repo, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    repo.write("contracts/a.yaml", "dataset: a\ncolumns:\n  - name: id\n    data_type: int\n")
    repo.commit("base")
    prefix = tmp_path / "pycache"
    env = gate_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    argv = [sys.executable, "-m", "gate", "--base", "HEAD", "--format", "json"]
    first = subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    written = list(prefix.rglob(f"dataclasses.{sys.implementation.cache_tag}.bin"))
    assert len(written) == 1 and Path(written[0]).parent.name == "gate"
    stamp = os.stat(written[0]).st_mtime_ns
    second = subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, timeout=120)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert os.stat(written[0]).st_mtime_ns == stamp  # nothing new to write
