"""Start-up stays cheap: what --help, --version, ``rules`` and a skipped Action run import,
and what a run imports for what it compares (issue #26: only the formats it meets,
the renderer it prints, the consumer readers only for a break).

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
from tests.gitrepo import GitRepo

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


def _soda(columns: dict[str, str]) -> str:
    lines = ["dataset: lake/orders", "columns:"]
    for name, data_type in columns.items():
        lines += [f"  - name: {name}", f"    data_type: {data_type}"]
    return "\n".join(lines) + "\n"


def _soda_pr(root: Path, head: dict[str, str]) -> GitRepo:
    """A repository with one Soda contract and a branch that changes its columns to ``head``."""
    repo = GitRepo(root)
    repo.write("soda/contracts/orders.yaml", _soda({"id": "bigint", "amount": "int"}))
    repo.commit("base")
    repo.branch("pr")
    repo.write("soda/contracts/orders.yaml", _soda(head))
    repo.commit("pr")
    return repo


#: The parsers and checks of the other formats, the renderers not asked for,
#: the worker pool's multiprocessing and the PR-body Markdown reader.
_NOT_FOR_SODA_JSON = (
    "gate.formats.dbt.properties",
    "gate.formats.odcs",
    "gate.formats.dcs",
    "gate.formats.validate.scoped",
    "gate.formats.validate.dcs_keys",
    "fastjsonschema",
    "jsonschema",
    "gate.report.text",
    "gate.report.markdown",
    "gate.report.github",
    "gate.report.sarif",
    "gate.report.junit",
    "gate.report.gitlab",
    "multiprocessing",
    "gate.rendered_lines",
)


@pytest.mark.parametrize("head", [[], ["--head", "HEAD"]], ids=["worktree", "head"])
def test_a_soda_only_run_imports_only_the_soda_parser_and_the_json_renderer(
    head: list[str], tmp_path: Path
) -> None:
    repo = _soda_pr(tmp_path / "repo", {"amount": "bigint"})  # a break: id dropped
    modules = _modules(_CLI, ("--base", "main", "--format", "json", *head), repo.path)
    assert {"gate.engine", "gate.formats.soda", "gate.report.json_report"} <= modules
    assert sorted(m for m in _NOT_FOR_SODA_JSON if m in modules) == []
    # The fingerprints use CPython's own SHA-256: no OpenSSL loaded for them (#26).
    assert "_hashlib" not in modules


def test_an_additive_change_analyses_no_consumer_sql(tmp_path: Path) -> None:
    # Nothing breaks: no consumer file is read, so sqlglot's scopes and the
    # readers (dbt Jinja, SQLMesh, PySpark) are never imported.
    repo = _soda_pr(tmp_path / "repo", {"id": "bigint", "amount": "int", "note": "string"})
    repo.write("models/report.sql", "select id, amount from lake.orders\n")
    repo.commit("a reader")
    modules = _modules(_CLI, ("--base", "main", "--format", "json"), repo.path)
    assert "gate.engine" in modules
    assert sorted(m for m in modules if m.startswith("gate.consumers.")) == [
        "gate.consumers.impact",
        "gate.consumers.names",
        "gate.consumers.scan",
    ]


_EXPOSURE_SCOPE = """
import json, sys
import gate.consumers.exposures
sys.stderr.write("MODULES" + json.dumps(sorted(sys.modules)))
"""


def test_the_exposure_scope_loads_no_consumer_reader(tmp_path: Path) -> None:
    # The scan asks exposures.globs() for every break; the readers (sqlglot's
    # optimizer, ~10-20 ms) are loaded only once a file is to be read (#26).
    modules = _modules(_EXPOSURE_SCOPE, (), tmp_path)
    assert "gate.consumers.exposures" in modules
    assert "gate.consumers.reader" not in modules
    assert "gate.lineage.flow" not in modules
    assert "gate.consumers.jinja" not in modules  # dbt's Jinja: only an exposure file read


#: Loaded only when the base side's ``approvals:`` policy is active (issue #26):
#: deciding, CODEOWNERS, the owners' lookup and the step's base-side reads.
_APPROVALS = (
    "gate.approvals.decide",
    "gate.approvals.codeowners",
    "gate.approvals.sides",
    "gate.approvals.owners",
)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("head", [[], ["--head", "HEAD"]], ids=["worktree", "head"])
def test_a_break_without_an_approval_policy_loads_no_approval_module(
    head: list[str], fmt: str, tmp_path: Path
) -> None:
    repo = _soda_pr(tmp_path / "repo", {"amount": "bigint"})  # a break: id dropped
    repo.write(".github/CODEOWNERS", "* @alice\n")
    repo.commit("owners, no policy")
    modules = _modules(_CLI, ("--base", "main", "--format", fmt, *head), repo.path)
    assert {"gate.engine", "gate.approvals.step"} <= modules
    assert sorted(m for m in _APPROVALS if m in modules) == []
    # No dbt project: no exposure file read, so dbt's Jinja reader stays unloaded,
    # unless the consumer readers were warmed up while git grep was still running
    # (gate.consumers.scan overlaps the two; the reader imports it): a race by
    # design, which CI lost once under load. test_the_exposure_scope_loads_no_
    # consumer_reader checks the exposure scope alone, without the race.
    if "gate.consumers.reader" not in modules:
        assert "gate.consumers.jinja" not in modules


def test_a_break_under_an_approval_policy_loads_them(tmp_path: Path) -> None:
    # The probe's other side: a policy on the base branch decides, with CODEOWNERS.
    repo = GitRepo(tmp_path / "repo")
    repo.write("soda/contracts/orders.yaml", _soda({"id": "bigint", "amount": "int"}))
    repo.write(".github/CODEOWNERS", "* @alice\n")
    repo.write(
        ".schema-gate.yml",
        "approvals:\n  rules:\n    - datasets: ['*']\n      approval: owners\n",
    )
    repo.commit("base")
    repo.branch("pr")
    repo.write("soda/contracts/orders.yaml", _soda({"amount": "bigint"}))
    repo.commit("pr")
    modules = _modules(_CLI, ("--base", "main", "--format", "json"), repo.path)
    assert sorted(m for m in _APPROVALS if m in modules) == sorted(_APPROVALS)


def test_the_early_git_walks_import_nothing_of_the_gate_but_their_package(
    tmp_path: Path,
) -> None:
    """gate.git.early runs before the command's imports (its walks overlap them):
    importing it, gate.git's names stay unloaded until asked for (issue #26)."""
    code = "import json, sys, gate.git.early\nsys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))"
    modules = _modules(code, (), tmp_path)
    assert sorted(m for m in modules if m.startswith("gate")) == [
        "gate",
        "gate._renamed",
        "gate.git",
        "gate.git.early",
    ]
