"""A warn-only ``accepted_values`` declares no enum: adding or removing it blocks nothing.

TEAMSchools/teamster 1a02b55a: its dbt_project.yml says ``data_tests: +severity: warn``
(every test of the project only warns), and the pull request added an
``accepted_values`` test to a column of an enforced model: ``enum_declared`` blocked
it, though no run of the project can fail on that test. Each test builds its own
small repository with the pattern; nothing is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = (
    "name: network\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    "models:\n  network:\n    +contract: {enforced: true}\n"
)
WARN_ONLY = PROJECT + "data_tests:\n  +severity: warn\n  +store_failures: true\n"
TEST = "        data_tests:\n          - accepted_values:\n              values: [9, 10, 11, 12]\n"


def _roster(test: str = "") -> str:
    return (
        "models:\n  - name: rpt_roster\n    columns:\n"
        "      - name: student_number\n        data_type: int64\n"
        f"      - name: grade_level\n        data_type: int64\n{test}"
    )


def _pr(repo: GitRepo, before: dict[str, str], after: dict[str, str]) -> None:
    for path, text in {"models/rpt_roster.sql": "select 1 as student_number\n", **before}.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    for path, text in after.items():
        repo.write(path, text)
    repo.commit("pr")


def test_a_warn_only_accepted_values_added_declares_no_enum(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        {"dbt_project.yml": WARN_ONLY, "models/_roster.yml": _roster()},
        {"models/_roster.yml": _roster(TEST)},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "enum_" not in proc.stdout, proc.stdout
    assert "check_added" in proc.stdout, proc.stdout  # still a check the report lists


def test_the_same_test_failing_the_run_still_blocks(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        {"dbt_project.yml": PROJECT, "models/_roster.yml": _roster()},
        {"models/_roster.yml": _roster(TEST)},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "enum_declared rpt_roster.grade_level" in proc.stdout, proc.stdout


def test_a_warn_only_accepted_values_removed_is_no_break(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        {"dbt_project.yml": WARN_ONLY, "models/_roster.yml": _roster(TEST)},
        {"models/_roster.yml": _roster()},
    )
    proc = cli(repo.path, "--base", "main")
    assert "enum_" not in proc.stdout, proc.stdout


def test_a_project_that_makes_its_tests_fail_the_run_declares_the_enum(
    cli: Cli, repo: GitRepo
) -> None:
    # Only dbt_project.yml changes: its properties files are compared again.
    _pr(
        repo,
        {"dbt_project.yml": WARN_ONLY, "models/_roster.yml": _roster(TEST)},
        {"dbt_project.yml": PROJECT},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "enum_declared rpt_roster.grade_level" in proc.stdout, proc.stdout


# A test that cannot fail the build otherwise: disabled, or an error_if that lets
# failures pass, on the test or from dbt_project.yml (by folder or by the test's name).
DISABLED = TEST + "              config: {enabled: false}\n"
TOLERANT = TEST + '              config: {error_if: ">100"}\n'
BY_NAME = PROJECT + (
    "data_tests:\n  network:\n"
    "    accepted_values_rpt_roster_grade_level__9__10__11__12:\n      +enabled: false\n"
)


def test_a_disabled_or_tolerant_accepted_values_declares_no_enum(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        {"dbt_project.yml": PROJECT, "models/_roster.yml": _roster()},
        {"models/_roster.yml": _roster(DISABLED)},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "enum_" not in proc.stdout, proc.stdout
    repo.checkout("main")
    repo.branch("tolerant")
    repo.write("models/_roster.yml", _roster(TOLERANT))
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "enum_" not in proc.stdout, proc.stdout


def test_a_test_disabled_by_its_name_in_the_project_declares_no_enum(
    cli: Cli, repo: GitRepo
) -> None:
    _pr(
        repo,
        {"dbt_project.yml": BY_NAME, "models/_roster.yml": _roster()},
        {"models/_roster.yml": _roster(TEST)},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "enum_" not in proc.stdout, proc.stdout


def test_enabling_the_test_again_declares_the_enum(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        {"dbt_project.yml": PROJECT, "models/_roster.yml": _roster(DISABLED)},
        {"models/_roster.yml": _roster(TEST)},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "enum_declared rpt_roster.grade_level" in proc.stdout, proc.stdout
