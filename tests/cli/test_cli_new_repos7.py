"""Patterns from the seventh round's real dbt histories (docs/precision.md, "New
histories (seventh round)"). Each test builds its own small repository with the
pattern; nothing of the public repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

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


# The model file's own config() ranks above the project and properties (dbt's
# ContextConfig applies the config call last): a view by `+materialized: view` that
# its file makes a table gets the constraint in its DDL, and the warehouse fails it.
TABLE_FILE = "{{ config(materialized='table') }}\nselect 1 as requirement_id\n"


def test_a_view_its_model_file_makes_a_table_is_refused(cli: Cli, repo: GitRepo) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": TABLE_FILE}
    before = _junction("requirement_id")
    after = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr
    assert "models/_models.yml:4" in proc.stderr, proc.stderr
    assert "materialized='table'" in proc.stderr, proc.stderr


def test_a_model_file_made_a_table_under_such_a_constraint_is_refused(
    cli: Cli, repo: GitRepo
) -> None:
    # Only the model file changes: its properties file is compared again, and refused.
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/stg_link.sql": TABLE_FILE})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "model",
    [
        # Jinja in the materialization: the properties' reading (a view) stands
        "{{ config(materialized=var('kind', 'table')) }}\nselect 1 as requirement_id\n",
        "{% if target.name == 'prod' %}{{ config(materialized='table') }}{% endif %}\n"
        "select 1 as requirement_id\n",
        "{{ config(materialized='view') }}\nselect 1 as requirement_id\n",
        "{{ config(materialized='ephemeral') }}\nselect 1 as requirement_id\n",
    ],
)
def test_a_model_file_that_leaves_it_a_view_keeps_the_warning(
    cli: Cli, repo: GitRepo, model: str
) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": model}
    before = _junction("requirement_id, project_id")
    after = _junction(
        "requirement_id, project_id", "      - name: note\n        data_type: varchar\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not compared" in proc.stdout, proc.stdout


def test_a_table_by_its_model_file_the_pr_did_not_break_is_a_warning(
    cli: Cli, repo: GitRepo
) -> None:
    # The base holds the same constraint and the same model file: not this PR's defect.
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": TABLE_FILE}
    before = _junction("requirement_id, project_id")
    after = _junction(
        "requirement_id, project_id", "      - name: note\n        data_type: varchar\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the base branch holds the same" in proc.stdout + proc.stderr, proc.stdout


# The reverse: the project or the properties make it a table, its model file's own
# config() a view (dbt ranks that call last, over both: ContextConfig applies the
# project's levels, then the properties' `config:`, then the call). A view gets no
# constraint DDL, so `dbt run` builds it: not refused, a warning as for any view.
TABLE_PROJECT = PROJECT.replace("+materialized: view", "+materialized: table")
NOTE = "      - name: note\n        data_type: varchar\n"


@pytest.mark.parametrize("kind", ["view", "ephemeral"])
def test_a_table_its_model_file_makes_a_view_is_not_refused(
    cli: Cli, repo: GitRepo, kind: str
) -> None:
    model = f"{{{{ config(materialized='{kind}') }}}}\nselect 1 as requirement_id\n"
    files = {"dbt_project.yml": TABLE_PROJECT, "models/stg_link.sql": model}
    before = _junction("requirement_id, project_id")
    after = _junction("requirement_id, project_id", NOTE)
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/_models.yml:4" in proc.stdout, proc.stdout
    assert "'project_id'" in proc.stdout and "not compared" in proc.stdout, proc.stdout


def test_a_table_by_its_properties_config_its_model_file_makes_a_view_is_not_refused(
    cli: Cli, repo: GitRepo
) -> None:
    model = "{{ config(materialized='view') }}\nselect 1 as requirement_id\n"
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": model}
    table = "    config:\n      materialized: table\n"
    before = _junction("requirement_id, project_id").replace(
        "    constraints:\n", table + "    constraints:\n"
    )
    after = _junction("requirement_id, project_id", NOTE).replace(
        "    constraints:\n", table + "    constraints:\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "'project_id'" in proc.stdout and "not compared" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "model",
    [
        # Jinja in the materialization, or a call under a condition: the table stands
        "{{ config(materialized=var('kind', 'view')) }}\nselect 1 as requirement_id\n",
        "{% if target.name == 'dev' %}{{ config(materialized='view') }}{% endif %}\n"
        "select 1 as requirement_id\n",
        "{{ config(materialized='incremental') }}\nselect 1 as requirement_id\n",
        "select 1 as requirement_id\n",
    ],
)
def test_a_model_file_that_leaves_it_a_table_keeps_the_refusal(
    cli: Cli, repo: GitRepo, model: str
) -> None:
    files = {"dbt_project.yml": TABLE_PROJECT, "models/stg_link.sql": model}
    before = _junction("requirement_id")
    after = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr
    assert "models/_models.yml:4" in proc.stderr, proc.stderr


def test_a_model_file_whose_view_the_pr_removes_is_refused(cli: Cli, repo: GitRepo) -> None:
    # Only the model file changes: without its config(materialized='view') the
    # project's table stands, and the warehouse fails the constraint.
    view = "{{ config(materialized='view') }}\nselect 1 as requirement_id\n"
    files = {"dbt_project.yml": TABLE_PROJECT, "models/stg_link.sql": view}
    before = _junction("requirement_id, project_id")
    _pr(
        repo,
        {**files, "models/_models.yml": before},
        {"models/stg_link.sql": "select 1 as requirement_id\n"},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr


def test_a_table_constraint_the_pr_did_not_write_is_a_warning(cli: Cli, repo: GitRepo) -> None:
    # The base holds the same constraint on the same table: not this PR's defect.
    files = {
        "dbt_project.yml": TABLE_PROJECT,
        "models/stg_link.sql": "select 1 as requirement_id\n",
    }
    before = _junction("requirement_id, project_id")
    after = _junction(
        "requirement_id, project_id", "      - name: note\n        data_type: varchar\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stdout + proc.stderr, proc.stdout


def test_a_table_constraint_in_a_properties_file_the_pr_moves_is_a_warning(
    cli: Cli, repo: GitRepo
) -> None:
    files = {
        "dbt_project.yml": TABLE_PROJECT,
        "models/stg_link.sql": "select 1 as requirement_id\n",
    }
    text = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": text}, {"models/_link.yml": text})
    repo.remove("models/_models.yml")
    repo.commit("move")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/_link.yml:4" in proc.stdout, proc.stdout
    assert "the base branch holds the same" in proc.stdout, proc.stdout


def test_a_project_that_makes_such_a_view_a_table_is_refused(cli: Cli, repo: GitRepo) -> None:
    # Only dbt_project.yml changes: the unchanged properties file is compared, and refused.
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"dbt_project.yml": TABLE_PROJECT})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr


def test_an_unenforced_table_is_refused_nothing(cli: Cli, repo: GitRepo) -> None:
    # dbt renders constraints only under an enforced contract.
    project = TABLE_PROJECT.replace("    +contract: {enforced: true}\n", "")
    files = {"dbt_project.yml": project, "models/stg_link.sql": "select 1 as requirement_id\n"}
    before = _junction("requirement_id")
    after = _junction("requirement_id, project_id")
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr


# The single-side path (`--smoke-test` reads every contract at HEAD, through
# gate.contract_files.every_contract) decides table or view with the same precedence.
# No sample data: no Spark session is started.
@pytest.mark.parametrize(
    ("project", "model", "refused"),
    [
        (TABLE_PROJECT, "{{ config(materialized='view') }}\n", False),
        (TABLE_PROJECT, "", True),
        (PROJECT, "{{ config(materialized='table') }}\n", True),
        (PROJECT, "", False),
    ],
)
def test_every_contract_at_head_reads_the_model_files_materialization(
    cli: Cli, repo: GitRepo, project: str, model: str, refused: bool
) -> None:
    files = {
        "dbt_project.yml": project,
        "models/stg_link.sql": model + "select 1 as requirement_id\n",
        "models/_models.yml": _junction("requirement_id, project_id"),
    }
    # The PR changes another model only: every contract at HEAD is read all the same.
    _pr(repo, files, {"models/other.sql": "select 1 as a\n"})
    proc = cli(repo.path, "--base", "main", "--smoke-test")
    if refused:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "names unknown column 'project_id'" in proc.stderr, proc.stderr
        assert "models/_models.yml:4" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_inherited_constraint_of_a_moved_properties_file_is_a_warning(
    cli: Cli, repo: GitRepo
) -> None:
    """The base is matched by model, not by properties path: moving the file into a
    folder (an everyday refactor) did not introduce what the base already held."""
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": TABLE_FILE}
    before = _junction("requirement_id, project_id")
    after = _junction(
        "requirement_id, project_id", "      - name: note\n        data_type: varchar\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {})
    repo.git("mv", "models/_models.yml", "models/_link.yml")
    repo.write("models/_link.yml", after)
    repo.commit("pr: the properties file renamed, a column added")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the base branch holds the same" in proc.stderr + proc.stdout


# Nothing says how to build it: no `+materialized` at any level of dbt_project.yml,
# no properties `config:`, no `config(materialized=...)` in the model file. dbt's
# default is a view (dbt-core's NodeConfig: `materialized: str = "view"`), which gets no
# constraint DDL: `dbt run` builds it, so the constraint is a warning, as for a view.
UNSAID_PROJECT = PROJECT.replace("    +materialized: view\n", "")


def test_a_model_nothing_makes_a_table_is_a_view(cli: Cli, repo: GitRepo) -> None:
    files = {
        "dbt_project.yml": UNSAID_PROJECT,
        "models/stg_link.sql": "select 1 as requirement_id\n",
    }
    before = _junction("requirement_id, project_id")
    after = _junction("requirement_id, project_id", NOTE)
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/_models.yml:4" in proc.stdout, proc.stdout
    assert "'project_id'" in proc.stdout and "not compared" in proc.stdout, proc.stdout
    assert "dbt's default" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    ("project", "model", "properties"),
    [
        # Jinja or a call under a condition at the deciding level: it may be a table
        (UNSAID_PROJECT, "{{ config(materialized=var('kind', 'view')) }}\n", ""),
        (
            UNSAID_PROJECT,
            "{% if target.name == 'prod' %}{{ config(materialized='table') }}{% endif %}\n",
            "",
        ),
        (UNSAID_PROJECT, "{{ config(**var('settings')) }}\n", ""),
        # dbt's config() takes one positional dict as its keywords (Config.__call__)
        (UNSAID_PROJECT, "{{ config({'materialized': 'table'}) }}\n", ""),
        (UNSAID_PROJECT, "{% set c = {'materialized': 'table'} %}{{ config(c) }}\n", ""),
        # and config.set(name, value) is config({name: value}) (dbt-core's Config.set)
        (UNSAID_PROJECT, "{% do config.set('materialized', 'table') %}\n", ""),
        (UNSAID_PROJECT, "", "    config:\n      materialized: \"{{ var('kind') }}\"\n"),
        (
            UNSAID_PROJECT.replace("models:\n", "models:\n  +materialized: table\n"),
            "",
            "",
        ),
        # a table said at any level wins over the default
        (
            UNSAID_PROJECT.replace("    +contract", "    +materialized: table\n    +contract"),
            "",
            "",
        ),
        (UNSAID_PROJECT, "{{ config(materialized='table') }}\n", ""),
        (UNSAID_PROJECT, "", "    config:\n      materialized: incremental\n"),
    ],
)
def test_a_model_that_may_be_a_table_keeps_the_refusal(
    cli: Cli, repo: GitRepo, project: str, model: str, properties: str
) -> None:
    files = {
        "dbt_project.yml": project,
        "models/stg_link.sql": model + "select 1 as requirement_id\n",
    }
    before = _junction("requirement_id").replace(
        "    constraints:\n", properties + "    constraints:\n"
    )
    after = _junction("requirement_id, project_id").replace(
        "    constraints:\n", properties + "    constraints:\n"
    )
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "names unknown column 'project_id'" in proc.stderr, proc.stderr


# dbt places a model by its SQL file: a folder's `+materialized: table` counts for the
# model whose SQL file is there, wherever its properties file is.
@pytest.mark.parametrize(("folder", "refused"), [("marts", True), ("staging", False)])
def test_a_folders_table_is_found_by_the_models_sql_file(
    cli: Cli, repo: GitRepo, folder: str, refused: bool
) -> None:
    # Only dbt_project.yml changes: its new folder table brings the file into the comparison.
    files = {
        "dbt_project.yml": UNSAID_PROJECT,
        f"models/{folder}/stg_link.sql": "select 1 as requirement_id\n",
        "models/_models.yml": _junction("requirement_id, project_id"),
    }
    project = UNSAID_PROJECT + "    marts:\n      +materialized: table\n"
    _pr(repo, files, {"dbt_project.yml": project})
    proc = cli(repo.path, "--base", "main")
    if refused:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "names unknown column 'project_id'" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("model", "refused"),
    [
        ("", False),
        ("{{ config(materialized=var('kind', 'view')) }}\n", True),
        ("{{ config(materialized='table') }}\n", True),
    ],
)
def test_every_contract_at_head_reads_the_default_view(
    cli: Cli, repo: GitRepo, model: str, refused: bool
) -> None:
    files = {
        "dbt_project.yml": UNSAID_PROJECT,
        "models/stg_link.sql": model + "select 1 as requirement_id\n",
        "models/_models.yml": _junction("requirement_id, project_id"),
    }
    _pr(repo, files, {"models/other.sql": "select 1 as a\n"})
    proc = cli(repo.path, "--base", "main", "--smoke-test")
    if refused:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "names unknown column 'project_id'" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _project(name: str) -> str:
    return (
        f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
        f"models:\n  {name}:\n    +contract: {{enforced: true}}\n"
    )


def _enrollment(*columns: str) -> str:
    cols = "".join(f"      - name: {c}\n        data_type: string\n" for c in columns)
    return f"models:\n  - name: rpt_enrollment\n    columns:\n{cols}"


# TEAMSchools/teamster b02ae979 (src/dbt/kippmiami): the district project's model
# `rpt_focus__student_enrollment` reads `source("kipptaf_extracts",
# "rpt_focus__student_enrollment")`, the network project's model of the same name,
# and filters on its `end_date`. The PR dropped `end_date` from the district model's
# own output; the network model keeps it. The read was attributed to the district
# model itself: `consumer_broken` told the author to fix a reader that still runs.
# A dbt model never reads its own relation by name (a ref to itself is a cycle dbt
# refuses), so a name it reads that is its own is another relation.
def test_a_dbt_model_is_never_a_reader_of_itself(cli: Cli, repo: GitRepo) -> None:
    reader = (
        "select d.student_id\n"
        "from {{ source('network_extracts', 'rpt_enrollment') }} as d\n"
        "where d.end_date is null\n"
    )
    network = {
        "network/dbt_project.yml": _project("network"),
        "network/models/rpt_enrollment.sql": "select 1 as student_id\n",
        "network/models/_models.yml": _enrollment("student_id", "end_date"),
    }
    district = {
        "district/dbt_project.yml": _project("district"),
        "district/models/rpt_enrollment.sql": reader,
        "district/models/sources.yml": (
            "sources:\n  - name: network_extracts\n    tables:\n      - name: rpt_enrollment\n"
        ),
    }
    _pr(
        repo,
        {
            **network,
            **district,
            "district/models/_models.yml": _enrollment("student_id", "end_date"),
        },
        {"district/models/_models.yml": _enrollment("student_id")},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed rpt_enrollment.end_date" in proc.stdout, proc.stdout
    assert "consumer_broken" not in proc.stdout, proc.stdout


def test_its_read_of_the_other_projects_model_still_breaks(cli: Cli, repo: GitRepo) -> None:
    reader = (
        "select d.student_id\n"
        "from {{ source('network_extracts', 'rpt_enrollment') }} as d\n"
        "where d.end_date is null\n"
    )
    district = {
        "district/dbt_project.yml": _project("district"),
        "district/models/rpt_enrollment.sql": reader,
        "district/models/_models.yml": _enrollment("student_id"),
        "district/models/sources.yml": (
            "sources:\n  - name: network_extracts\n    tables:\n      - name: rpt_enrollment\n"
        ),
        "network/dbt_project.yml": _project("network"),
        "network/models/rpt_enrollment.sql": "select 1 as student_id\n",
    }
    _pr(
        repo,
        {**district, "network/models/_models.yml": _enrollment("student_id", "end_date")},
        {"network/models/_models.yml": _enrollment("student_id")},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "consumer_broken rpt_enrollment.end_date" in proc.stdout, proc.stdout
    assert "district/models/rpt_enrollment.sql:3" in proc.stdout, proc.stdout


def _scores(extra: str = "") -> str:
    return (
        "models:\n"
        "  - name: stg_scores\n"
        "    columns:\n"
        "      - name: score_id\n"
        "        data_type: int64\n"
        "      - name: section_id\n"
        "        data_type: int64\n"
        "        constraints:\n"
        "          - type: foreign_key\n" + extra
    )


# TEAMSchools/teamster, src/dbt/powerschool/models/sis/staging/properties (44 files
# since 2026-04-16, built as enforced tables on BigQuery): a column's `foreign_key`
# constraint with neither `to` nor `expression`. dbt parses it and dbt-adapters'
# `render_column_constraint` renders nothing for it (no DDL), so the tables build;
# the gate refused 5 of the 11 PRs that touched those files since.
def test_a_foreign_key_naming_no_target_is_not_refused(cli: Cli, repo: GitRepo) -> None:
    project = PROJECT.replace("+materialized: view", "+materialized: table")
    files = {"dbt_project.yml": project, "models/stg_scores.sql": "select 1 as score_id\n"}
    after = _scores("      - name: is_late\n        data_type: int64\n")
    _pr(repo, {**files, "models/_models.yml": _scores()}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/_models.yml:9" in proc.stdout, proc.stdout
    assert "names no 'to' or 'expression'" in proc.stdout, proc.stdout


def test_a_foreign_key_given_a_target_is_compared(cli: Cli, repo: GitRepo) -> None:
    project = PROJECT.replace("+materialized: view", "+materialized: table")
    files = {"dbt_project.yml": project, "models/stg_scores.sql": "select 1 as score_id\n"}
    after = _scores().replace(
        "          - type: foreign_key\n",
        "          - type: foreign_key\n            to: ref('stg_sections')\n"
        "            to_columns: [section_id]\n",
    )
    _pr(repo, {**files, "models/_models.yml": _scores()}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert "relationship_added stg_scores.section_id" in proc.stdout, proc.stdout + proc.stderr


def _summary(*columns: tuple[str, str]) -> str:
    cols = "".join(f"      - name: {n}\n        data_type: {t}\n" for n, t in columns)
    return f"models:\n  - name: stg_summary\n    columns:\n{cols}"


# TEAMSchools/teamster, src/dbt/iready/models/staging/properties/
# stg_iready__personalized_instruction_summary.yml (b86daabe, 2025-10-21, still so at
# HEAD): `comprehension_lessons_completed` is listed twice. dbt keeps one column per
# name, the last entry's (dbt 1.10 built a table with it once, and checked the
# contract against the last `data_type`), so the project builds; the gate refused the
# file, and so every PR touching it (6 since).
def test_a_column_listed_twice_under_one_spelling_is_read_as_dbt_reads_it(
    cli: Cli, repo: GitRepo
) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_summary.sql": "select 1 as a\n"}
    twice = (("a", "int64"), ("b", "int64"), ("a", "int64"))
    _pr(
        repo,
        {**files, "models/_models.yml": _summary(*twice)},
        {"models/_models.yml": _summary(*twice, ("c", "string"))},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "column_added stg_summary.c" in proc.stdout, proc.stdout
    assert "models/_models.yml:8" in proc.stdout and "declared twice" in proc.stdout


def test_the_last_entry_of_a_repeated_column_is_the_one_compared(cli: Cli, repo: GitRepo) -> None:
    files = {"dbt_project.yml": PROJECT, "models/stg_summary.sql": "select 1 as a\n"}
    before = _summary(("a", "int64"), ("b", "int64"), ("a", "int64"))
    after = _summary(("a", "int64"), ("b", "int64"), ("a", "string"))
    _pr(repo, {**files, "models/_models.yml": before}, {"models/_models.yml": after})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "type_changed stg_summary.a" in proc.stdout, proc.stdout


# include-dcc/include-dbt-sandbox 2044e8bc: a properties file whose descriptions are
# quoted `'{{ doc("...") }}'` calls, broken by an indentation slip (dbt fails it too;
# the PR was reverted). The refusal is right, but it added "the file holds Jinja
# markup: a template is not a contract", which sent the author to exclude a real
# properties file. Jinja inside a quoted scalar is valid YAML and not the cause.
def test_quoted_jinja_in_a_broken_properties_file_is_not_called_a_template(
    cli: Cli, repo: GitRepo
) -> None:
    good = (
        "models:\n  - name: stg_link\n    description: '{{ doc(\"stg_link\") }}'\n"
        "    columns:\n      - name: requirement_id\n        data_type: number\n"
    )
    broken = good + "- name: other\n  description: '{{ doc(\"other\") }}'\n    config:\n"
    files = {"dbt_project.yml": PROJECT, "models/stg_link.sql": "select 1 as requirement_id\n"}
    _pr(repo, {**files, "models/_models.yml": good}, {"models/_models.yml": broken})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "invalid YAML" in proc.stderr, proc.stderr
    assert "template" not in proc.stderr, proc.stderr
