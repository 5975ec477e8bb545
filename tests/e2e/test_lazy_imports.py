"""Start-up stays cheap: what --help, --version, ``rules`` and a skipped Action run import.

Each case runs in a fresh process (``-c``: run the entry point, then print the
names in ``sys.modules``), because the test session itself has imported
everything. No timing assertion: the import list is what decides the cost
(sqlglot and the engine are ~0.4 s of CPU), and it is exact on a loaded machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate import cli
from gate.action import outcome
from tests.conftest import gate_env

#: Imported only by a run that compares contracts.
HEAVY = ("sqlglot", "gate.engine", "gate.report", "gate.diff", "pyspark", "yaml")

_CLI = """
import json, sys
from gate.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("MODULES" + json.dumps(sorted(sys.modules)))
"""

_ACTION = """
import json, sys
from gate.action.run import main
main()
sys.stderr.write("MODULES" + json.dumps(sorted(sys.modules)))
"""


def _modules(code: str, args: tuple[str, ...], cwd: Path, **env: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=gate_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    _, _, names = proc.stderr.rpartition("MODULES")
    return set(json.loads(names))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("rules",), ("--list-rules",)])
def test_help_version_and_rules_import_neither_sqlglot_nor_the_engine(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    modules = _modules(_CLI, args, tmp_path)
    assert "gate.cli" in modules
    assert _heavy(modules) == []


def test_a_run_still_imports_the_engine(tmp_path: Path) -> None:
    # The probe sees imports: a comparison (here refused, not a repository) loads the engine.
    modules = _modules(_CLI, ("--base", "main"), tmp_path)
    assert "gate.engine" in modules


@pytest.mark.parametrize("event", ["push", "merge_group", "schedule"])
def test_an_action_event_with_nothing_to_compare_imports_no_engine(
    event: str, tmp_path: Path
) -> None:
    modules = _modules(
        _ACTION, (), tmp_path, GITHUB_EVENT_NAME=event, GITHUB_WORKSPACE=str(tmp_path)
    )
    assert "gate.action.run" in modules
    assert _heavy(modules) == []


def test_the_spelled_out_constants_match_the_renderers() -> None:
    # cli.FORMATS and the exit codes are written out so that start-up need not import gate.report.
    from gate import report

    assert tuple(sorted(report.RENDERERS)) == cli.FORMATS
    assert cli.EXIT_ERROR == report.EXIT_ERROR
    assert (outcome.EXIT_OK, outcome.EXIT_ERROR) == (report.EXIT_OK, report.EXIT_ERROR)


def test_the_engine_imported_lazily_is_frozen_like_the_start_up_imports(tmp_path: Path) -> None:
    # tune_gc freezes what start-up imported; the engine now comes later and
    # must not be walked by every collection of the run either.
    code = """
import gc, sys
from gate import cli
cli.tune_gc()
before = gc.get_freeze_count()
cli.main(sys.argv[1:])
print(before, gc.get_freeze_count())
"""
    proc = subprocess.run(
        [sys.executable, "-c", code, "--base", "main"],
        cwd=tmp_path,
        env=gate_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    before, after = map(int, proc.stdout.split())
    assert after > before + 10_000  # the engine, sqlglot and the renderers
