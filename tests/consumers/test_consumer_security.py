"""A hostile pull request cannot hang the consumer analysis (issue #27, points 1 and 7).

Each test commits a Soda contract for table ``t`` and a hostile consumer of it,
drops column ``a`` in a branch (a breaking change, so consumers are read) and
runs the CLI in-process under a CPU-time deadline: before the fixes each of
these inputs ran for minutes (figures in docs/github-action.md, "Security
model"), so a regression fails here instead of hanging. The deadline counts
this process's CPU time only, so a busy machine does not trip it.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import GitRepo

CONTRACT = "soda/contracts/t.yaml"
BASE = "dataset: t\ncolumns:\n  - name: a\n    data_type: int\n  - name: k\n    data_type: int\n"
HEAD = "dataset: t\ncolumns:\n  - name: k\n    data_type: int\n"

Cli = Callable[..., subprocess.CompletedProcess[str]]


class Overtime(BaseException):
    """Raised in the gate by the CPU deadline; no ``except Exception`` catches it."""


@contextlib.contextmanager
def cpu_deadline(seconds: float) -> Iterator[None]:
    def overtime(_signum: int, _frame: object) -> None:
        raise Overtime(f"the gate used more than {seconds} s of CPU")

    previous = signal.signal(signal.SIGPROF, overtime)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def project(tmp_path: Path, consumers: dict[str, str], config: str | None = None) -> GitRepo:
    """``main``: the contract, the consumers (and a config); ``feature``: column a dropped."""
    repo = GitRepo(tmp_path / "repo")
    repo.write(CONTRACT, BASE)
    for path, text in consumers.items():
        repo.write(path, text)
    if config is not None:
        repo.write(".schema-gate.yml", config)
    repo.commit("base")
    repo.branch("feature")
    repo.write(CONTRACT, HEAD)
    return repo


def run(cli: Cli, repo: GitRepo, *args: str, seconds: float = 10) -> dict[str, Any]:
    with cpu_deadline(seconds):
        proc = cli(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)


def readers(report: dict[str, Any]) -> set[tuple[str, int, str]]:
    removed = next(c for c in report["changes"] if c["rule"] == "column_removed")
    return {(c["path"], c["line"], c["usage"]) for c in removed["consumers"]}


def not_analysed(report: dict[str, Any]) -> dict[str, str]:
    return {n["path"]: n["reason"] for n in report["consumers_not_analysed"]}


def committed(repo: GitRepo) -> GitRepo:
    repo.commit("drop a")
    return repo


# 1. Bounded consumer analysis


def test_ctes_that_read_the_previous_one_twice_are_traced_once(tmp_path: Path, cli: Cli) -> None:
    # 24 levels, 1.3 KB: 2^24 paths to t before tracing was memoised (18 levels took 15 s).
    levels = ["c0 as (select * from t)"] + [
        f"c{i} as (select * from c{i - 1} x join c{i - 1} y on x.k = y.k)" for i in range(1, 25)
    ]
    sql = "with " + ",\n".join(levels) + "\nselect a from c24\n"
    repo = committed(project(tmp_path, {"models/deep.sql": sql}))
    report = run(cli, repo, "--head", "feature")
    assert ("models/deep.sql", 26, "selected") in readers(report)
    assert not report["consumers_not_analysed"]


def test_a_long_sum_of_one_column_is_linear(tmp_path: Path, cli: Cli) -> None:
    # 14,000 terms (56 KB, under the token budget): every column walked to the
    # scope's root, by the gate and by sqlglot's Scope.columns (4,000 took 12 s).
    sql = "select " + " + ".join(["a"] * 14_000) + " as total\nfrom t\n"
    repo = committed(project(tmp_path, {"models/sum.sql": sql}))
    report = run(cli, repo, "--head", "feature")
    assert readers(report) == {("models/sum.sql", 1, "selected")}


def test_unclosed_sqlmesh_macros_and_header_comments_are_one_pass(tmp_path: Path, cli: Cli) -> None:
    # 60 KB of @a( took 80 s (a rescan to the end per call); 40 empty comments
    # before a query took the header regex exponential time (22 took 1.5 s).
    macros = "MODEL (name shop.m);\nselect a from t where " + "@a(" * 20_000 + "\n"
    comments = "/* */" * 40 + "\nselect a from t\n"
    repo = committed(project(tmp_path, {"models/macros.sql": macros, "models/c.sql": comments}))
    report = run(cli, repo, "--head", "feature")
    assert ("models/c.sql", 2, "selected") in readers(report)
    reason = not_analysed(report)["models/macros.sql"]
    assert reason.startswith("SQLMesh model: ") and "token" in reason


def test_jinja_tags_are_scanned_once(tmp_path: Path, cli: Cli) -> None:
    # 240 KB of {{x}}, under the size bound: 12-30 s of searching for an absent
    # {# from every tag and counting lines from the start.
    model = "select a from t where " + "{{x}}" * 48_000 + "\n"
    repo = committed(project(tmp_path, {"models/tags.sql": model}))
    report = run(cli, repo, "--head", "feature")
    assert not_analysed(report)["models/tags.sql"].startswith("dbt model: ")


def test_the_step_budget_stops_a_file_no_pass_bounds(tmp_path: Path, cli: Cli) -> None:
    # USING names a column of every source of the scope: 3,000 joins over 3,000
    # tables are 9 million reads. Each pass is linear; the reads themselves are
    # what the per-file step budget bounds.
    sql = "select a from t\n" + "".join(f"join x{i} using (a)\n" for i in range(3_000))
    repo = committed(project(tmp_path, {"models/wide.sql": sql}))
    report = run(cli, repo, "--head", "feature")
    assert not_analysed(report) == {
        "models/wide.sql": "SQL: too complex: more than 1,000,000 analysis steps for one file"
    }


def _big_model(size: int) -> str:
    padding = "-- " + "x" * 97 + "\n"
    return "select a from t\n" + padding * (size // len(padding))


@pytest.mark.parametrize("where", ["head", "worktree"])
def test_a_pr_cannot_raise_the_consumer_size_bound(tmp_path: Path, cli: Cli, where: str) -> None:
    repo = project(tmp_path, {"models/big.sql": _big_model(300_000)})
    raise_it = "limits:\n  consumer_bytes: 10000000\nconsumers:\n  max_file_bytes: 10000000\n"
    repo.write(".schema-gate.yml", raise_it)
    args = ("--head", "feature") if where == "head" else ()
    if where == "head":
        committed(repo)
    report = run(cli, repo, *args)
    reason = not_analysed(report)["models/big.sql"]
    assert reason.endswith("bytes is over the 262144-byte limit")


def test_the_base_config_raises_the_consumer_size_bound(tmp_path: Path, cli: Cli) -> None:
    config = "limits:\n  consumer_bytes: 400000\n"
    repo = committed(project(tmp_path, {"models/big.sql": _big_model(300_000)}, config))
    report = run(cli, repo, "--head", "feature")
    assert readers(report) == {("models/big.sql", 1, "selected")}
    # The older key from HEAD cannot lower it either: a bound too small to read
    # any consumer would hide every consumer_broken (found by review).
    repo.write(".schema-gate.yml", config + "consumers:\n  max_file_bytes: 1000\n")
    report = run(cli, committed(repo), "--head", "feature")
    assert readers(report) == {("models/big.sql", 1, "selected")}
    assert [r["setting"] for r in report["relaxations"]] == ["consumers.max_file_bytes"]


def test_an_oversized_blob_is_not_read(tmp_path: Path) -> None:
    from gate.git import open_repo

    repo = committed(project(tmp_path, {"models/big.sql": _big_model(5_000), "a.sql": "t"}))
    with open_repo(repo.path) as git:
        blobs, over = git.read_files_within("feature", ["models/big.sql", "a.sql"], 4_096)
    assert blobs == {"a.sql": b"t"}
    assert over == {"models/big.sql": len(_big_model(5_000))}


# 7. The rest


def test_a_python_job_that_exhausts_the_parser_is_not_analysed(tmp_path: Path, cli: Cli) -> None:
    # CPython's parser answers 100,000 unary minus signs with MemoryError: that
    # was an internal error of the whole run (exit 2).
    job = "df = spark.table('t')\nx = " + "-" * 100_000 + "1\n"
    repo = committed(project(tmp_path, {"jobs/deep.py": job, "jobs/ok.py": "spark.table('t')\n"}))
    report = run(cli, repo, "--head", "feature")
    assert not_analysed(report) == {"jobs/deep.py": "too complex: the parser ran out of memory"}


@pytest.mark.parametrize("where", ["head", "worktree"])
def test_unrelated_symlinks_never_fail_a_run(tmp_path: Path, cli: Cli, where: str) -> None:
    outside = tmp_path / "outside" / "t.sql"
    outside.parent.mkdir()
    outside.write_text("select a from t\n")
    dbt = "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: [models]\n"
    repo = project(tmp_path, {"dbt_project.yml": dbt, "models/m.sql": "select a from t\n"})
    # Added by the pull request, outside the contract globs: out of the
    # repository, dangling, a directory. dbt discovery lists every changed
    # yml/sql/py, and used to refuse them all (exit 2).
    repo.symlink("analyses/out.sql", str(outside))
    repo.symlink("models/out.sql", str(outside))  # a dbt model path, not a contract glob
    repo.symlink("notes.yml", "nowhere/missing.yml")
    repo.symlink("jobs/etc.py", "/etc")
    args = ("--head", "feature") if where == "head" else ()
    if where == "head":
        committed(repo)
    report = run(cli, repo, *args)
    assert readers(report) == {("models/m.sql", 1, "selected")}
    assert "out.sql" not in json.dumps(report)  # git grep skips symlinks: never read
