"""``--smoke-test`` through the CLI's ``main()`` in this process, on the shared session.

Scenarios whose assertions do not depend on a process of their own: the report
of a run, its exit code, what it refuses. Each ran as ``python -m gate`` before,
a JVM start apiece (about 20 s of CPU); here they share the ``spark`` fixture's
JVM (``gate.smoke.session.start`` uses an active session and never stops it).
The real-process runs, one per concern (the real CLI's exit codes, broken
samples and SQL text with the JVM's own stderr, the JVM's memory and time
limits, a stopped task), stay in
tests/e2e/test_cli_smoke.py and tests/e2e/test_smoke_security.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from tests.conftest import run_main
from tests.gitrepo import GitRepo
from tests.smoke_repos import BAD, CONTRACT, REGEX_CONTRACT, SECRET, C, make_glob_attack, make_shop
from tests.spark_fixtures import spark  # noqa: F401  (the session fixture)

Run = Callable[..., CompletedProcess[str]]

pytestmark = pytest.mark.spark


@pytest.fixture
def smoke_cli(spark: Any) -> Run:  # noqa: F811
    """``main()`` in this process, with the shared session active: no JVM start per run."""
    return run_main


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    return make_shop(tmp_path)


@pytest.fixture
def glob_attack(tmp_path: Path) -> GitRepo:
    return make_glob_attack(tmp_path)


# -- from tests/e2e/test_cli_smoke.py ----------------------------------------------------------


def test_changed_only_text_and_markdown(shop: GitRepo, tmp_path: Path, smoke_cli: Run) -> None:
    shop.write(
        f"{C}/items.yaml", "dataset: lake/shop/items\ncolumns:\n  - name: sku\n  - name: n\n"
    )
    proc = smoke_cli(shop.path, "--base", "main", "--smoke-test", "--smoke-changed-only")
    assert proc.returncode == 0, proc.stderr
    assert "SMOKE TEST (1 dataset(s)" in proc.stdout
    assert "NO SAMPLE lake/shop/items" in proc.stdout
    # Samples in a folder, named after the dataset ('/' becomes '.').
    shop.write("samples/lake.shop.orders.csv", BAD)
    out = tmp_path / "report.md"
    proc = smoke_cli(
        shop.path,
        "--base",
        "main",
        "--smoke-test",
        "--sample-data",
        "samples",
        "--format",
        "markdown",
        "--output",
        str(out),
    )
    assert proc.returncode == 1, proc.stderr
    md = out.read_text()
    assert "### Smoke test" in md and "`12a`" in md


def test_the_full_smoke_test_covers_discovered_dbt_models(shop: GitRepo, smoke_cli: Run) -> None:
    """Models of a dbt project outside the globs are smoke-tested when enforced
    and enabled (here by dbt_project.yml), and left out otherwise."""
    shop.write("wh/dbt_project.yml", "name: wh\nmodels:\n  wh:\n    +contract: {enforced: true}\n")
    columns = "    columns:\n      - name: id\n        data_type: int\n"
    shop.write("wh/models/dim.yml", "models:\n  - name: dim\n" + columns)
    shop.write(
        "wh/models/off.yml", "models:\n  - name: off\n    config: {enabled: false}\n" + columns
    )
    shop.write("wh/models/dim.sample.csv", "id\n1\n")
    shop.write("wh/models/off.sample.csv", "id\n1\n")
    proc = smoke_cli(shop.path, "--base", "main", "--smoke-test", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    by_dataset = {d["dataset"]: d["status"] for d in json.loads(proc.stdout)["smoke"]["datasets"]}
    assert by_dataset["dim"] == "passed"
    assert "off" not in by_dataset


# -- from tests/e2e/test_smoke_security.py (issue #8) ------------------------------------------


def test_glob_folder_names_never_reach_spark(glob_attack: GitRepo, smoke_cli: Run) -> None:
    """Hadoop globs in committed folder names match only the literal folders.

    A real process before (a JVM of its own, 17 to 20 s of CPU without the
    class-data archive): what it asserts is the report's, the same here.
    """
    proc = smoke_cli(glob_attack.path, "--base", "main", "--smoke-test", "--format", "json")
    assert SECRET not in proc.stdout + proc.stderr
    assert proc.returncode == 1, proc.stderr  # 'harmless-*' is not an INT: the data was read
    smoke = json.loads(proc.stdout)["smoke"]
    samples = {
        dataset["dataset"]: [s for r in dataset["results"] for s in r["samples"]]
        for dataset in smoke["datasets"]
    }
    assert samples == {"items": ["harmless-dir"], "orders": ["harmless-file"]}


def test_glob_folder_names_never_reach_spark_in_the_text_report(
    glob_attack: GitRepo,
    smoke_cli: Run,
) -> None:
    """The JSON report of the same attack: the test above."""
    text = smoke_cli(glob_attack.path, "--base", "main", "--smoke-test")
    assert SECRET not in text.stdout + text.stderr and "'harmless-file'" in text.stdout


def test_a_symlinked_sample_is_not_read_even_inside_the_repository(
    tmp_path: Path,
    smoke_cli: Run,
) -> None:
    """Moved from a real process (tests/e2e/test_smoke_security.py): the report's assertions."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders"))
    repo.write("contracts/elsewhere/real.csv", f"id\n{SECRET}\n")
    (repo.path / "contracts" / "orders.sample.csv").symlink_to("elsewhere/real.csv")
    repo.commit("a sample that is a link")
    proc = smoke_cli(repo.path, "--base", "main", "--smoke-test")
    assert SECRET not in proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "contracts/orders.sample.csv: a symlink; commit the sample file itself" in proc.stdout


def test_a_regex_that_nests_quantifiers_is_refused_not_run(
    tmp_path: Path,
    smoke_cli: Run,
) -> None:
    """``^(a+)+\\1$`` ran > 150 s in Java: the check is skipped and the report says why."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/nested.yaml", REGEX_CONTRACT.format(name="nested", regex=r"^(a+)+\1$"))
    repo.write("contracts/nested.sample.csv", "w\n" + "a" * 36 + "!\n")
    repo.commit("a regex with a backreference and nested quantifiers")
    proc = smoke_cli(repo.path, "--base", "main", "--smoke-test", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    nested = json.loads(proc.stdout)["smoke"]["datasets"][0]
    check = next(r for r in nested["results"] if r["kind"] == "check")
    assert check["status"] == "skipped"  # said in the report, never run, never passed
    assert "'valid_regex_sql' nests quantifiers" in check["message"]


def test_a_sample_over_the_row_limit_exits_2(tmp_path: Path, smoke_cli: Run) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders"))
    repo.write("contracts/orders.sample.jsonl", '{"id": 1}\n' * 11)
    repo.write(".schema-gate.yml", "limits:\n  sample_rows: 10\n")
    repo.commit("too many rows")
    proc = smoke_cli(repo.path, "--base", "main", "--smoke-test")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "schema-gate: error: contracts/orders.sample.jsonl: 11 rows is more than the sample "
        "limit of 10 rows (raise limits.sample_rows in the base side's config)"
    )
