"""Patterns from the seventh round's real dbt histories (docs/precision.md, "New
histories (seventh round)"). Each test builds its own small repository with the
pattern; nothing of the public repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = (
    "name: warehouse\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    "models:\n  warehouse:\n    +materialized: view\n    +contract: {enforced: true}\n"
)


def _pr(repo: GitRepo, before: dict[str, str], after: dict[str, str]) -> None:
    for path, text in before.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    for path, text in after.items():
        repo.write(path, text)
    repo.commit("pr")


def _junction(key: str, extra: str = "") -> str:
    return (
        "models:\n"
        "  - name: stg_link\n"
        "    constraints:\n"
        "      - type: primary_key\n"
        f"        columns: [{key}]\n"
        "    columns:\n"
        "      - name: requirement_id\n"
        "        data_type: number\n"
        "      - name: requirement_project\n"
        "        data_type: number\n" + extra
    )


# Sage-Bionetworks/snowflake, transform/models/staging/synapse/_synapse__models.yml
# (0986c782, still so at 904249ad): an enforced view's model-level primary_key names
# `project_id`, a column the model renamed. `dbt parse` 1.10 accepts it (dbt never
# checks a model-level constraint's `columns` against the declared ones) and a view
# gets no constraint DDL, so the project built for months while the gate refused every
# PR touching the file: three of its 60 commits, and every other PR's view of the file.
def test_a_model_level_constraint_naming_an_undeclared_column_is_not_refused(
    cli: Cli, repo: GitRepo
) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id, project_id")
    after = _junction(
        "requirement_id, project_id",
        "      - name: note\n        data_type: varchar\n",
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/_models.yml:4" in proc.stdout, proc.stdout
    assert "'project_id'" in proc.stdout and "not compared" in proc.stdout, proc.stdout


def test_a_column_dropped_beside_such_a_constraint_still_blocks(cli: Cli, repo: GitRepo) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id, project_id")
    after = before.replace("      - name: requirement_project\n        data_type: number\n", "")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed stg_link.requirement_project" in proc.stdout, proc.stdout


def test_the_same_constraint_on_a_table_is_still_refused(cli: Cli, repo: GitRepo) -> None:
    # dbt renders a table's constraints into its DDL: the warehouse fails the build.
    project = PROJECT.replace("+materialized: view", "+materialized: table")
    files = {"dbt_project.yml": project, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id")
    after = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr
