"""``model_relation_changed``: an enforced dbt model built into another relation.

A model keeps its name and columns while its configured database, schema or
alias moves (``+schema`` by folder in ``dbt_project.yml``, ``config:`` in its
properties entry, ``{{ config(...) }}`` in its model file): dbt's ``ref()``
follows, a reader of ``analytics.orders`` outside dbt breaks. The pattern was
measured on NoeFischer/dbt-contracts-demo (commits 49066024 and f86e1268: folders
renamed with their ``+schema``, every enforced model moved from ``main_marts`` to
``main_serving`` to ``main_gold``); the files here are written for the gate.
Only the meaning counts: a value restated elsewhere, trimmed, folded by the
engine or equal to dbt's default is no move.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., subprocess.CompletedProcess[str]]

PROJECT = """\
name: shop
version: "1.0"
config-version: 2
profile: shop
"""

ENFORCED = "    config:\n      contract: {enforced: true}\n"


def project(models: str = "", extra: str = "") -> str:
    return (
        PROJECT + extra + ("models:\n  shop:\n" + textwrap.indent(models, "    ") if models else "")
    )


def props(name: str = "orders", config: str = "", enforced: bool = True) -> str:
    """One model with two columns; ``config`` lines go under its ``config:``."""
    lines = "    config:\n"
    if enforced:
        lines += "      contract: {enforced: true}\n"
    lines += textwrap.indent(config, "      ")
    return (
        f"version: 2\nmodels:\n  - name: {name}\n{lines}"
        "    columns:\n      - name: id\n        data_type: int\n"
        "      - name: amount\n        data_type: int\n"
    )


def start(repo: GitRepo, files: dict[str, str]) -> GitRepo:
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


def shop(repo: GitRepo, *, models: str = "", sql: str = "select 1 as id\n", **kw: str) -> GitRepo:
    """A project with ``models/marts/orders.sql`` and its properties file."""
    return start(
        repo,
        {
            "dbt_project.yml": project(models),
            "models/marts/_orders.yml": kw.get("yml", props()),
            "models/marts/orders.sql": sql,
        },
    )


def run(cli: Cli, repo: GitRepo, *args: str) -> tuple[int, dict]:
    """The gate on the PR branch (committed: a moved or new file is a commit's)."""
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def found(report: dict) -> list[tuple[str, str]]:
    return sorted((c["rule"], c["dataset"]) for c in report["changes"])


def moved(report: dict) -> list[dict]:
    return [c for c in report["changes"] if c["rule"] == "model_relation_changed"]


MARTS = "marts:\n  +schema: marts\n"

# -- each way of moving ---------------------------------------------------------


def test_project_schema_of_the_models_folder(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models=MARTS)
    repo.write("dbt_project.yml", project("marts:\n  +schema: serving\n"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    change = moved(report)[0]
    assert (change["before"], change["after"]) == ("schema='marts'", "schema='serving'")
    assert change["breaking"] and change["severity"] == "error"
    assert "schema 'marts' -> 'serving'" in change["message"]
    assert "outside dbt" in change["message"]
    assert "generate_schema_name" not in change["message"]


def test_folders_renamed_with_their_schema(cli: Cli, repo: GitRepo) -> None:
    """dbt-contracts-demo 49066024: ``marts/`` -> ``serving/`` and ``+schema`` with it."""
    shop(repo, models=MARTS)
    repo.move("models/marts", "models/serving")
    repo.write("dbt_project.yml", project("serving:\n  +schema: serving\n"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_a_model_file_moved_to_a_folder_of_another_schema(cli: Cli, repo: GitRepo) -> None:
    """dbt places a model by its SQL file: the properties file stays, the table moves."""
    shop(repo, models=MARTS + "serving:\n  +schema: serving\n")
    repo.move("models/marts/orders.sql", "models/serving/orders.sql")
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_folders_renamed_keeping_their_schema_is_no_move(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models=MARTS)
    repo.move("models/marts", "models/gold")
    repo.write("dbt_project.yml", project("gold:\n  +schema: marts\n"))
    code, report = run(cli, repo)
    assert (code, moved(report)) == (0, [])


def test_model_file_config_schema(cli: Cli, repo: GitRepo) -> None:
    shop(repo, sql="{{ config(materialized='table', schema='marts') }}\nselect 1 as id\n")
    repo.write(
        "models/marts/orders.sql",
        "{{ config(materialized='table', schema='finance') }}\nselect 1 as id\n",
    )
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    assert "schema 'marts' -> 'finance'" in moved(report)[0]["message"]


def test_model_file_config_alias(cli: Cli, repo: GitRepo) -> None:
    shop(repo)
    repo.write("models/marts/orders.sql", "{{ config(alias='fct_orders') }}\nselect 1 as id\n")
    code, report = run(cli, repo)
    assert code == 1
    change = moved(report)[0]
    assert (change["before"], change["after"]) == (
        "alias='orders' (dbt's default)",
        "alias='fct_orders'",
    )


def test_properties_config_alias(cli: Cli, repo: GitRepo) -> None:
    shop(repo, yml=props(config="alias: orders_tbl\n"))
    repo.write("models/marts/_orders.yml", props(config="alias: orders_table\n"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_database_in_the_project_and_bigquerys_spelling(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models="marts:\n  +database: analytics\n")
    # BigQuery's ``project`` is ``database``: the same value written another way.
    repo.write("dbt_project.yml", project("marts:\n  +project: analytics\n"))
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])
    repo.write("dbt_project.yml", project("marts:\n  +project: raw\n"))
    code, report = run(cli, repo)
    assert code == 1
    assert "database 'analytics' -> 'raw'" in moved(report)[0]["message"]


def test_a_database_configured_where_there_was_none(cli: Cli, repo: GitRepo) -> None:
    shop(repo)
    repo.write("models/marts/_orders.yml", props(config="database: archive\n"))
    code, report = run(cli, repo)
    assert code == 1
    assert moved(report)[0]["before"] == "database=none (the target's)"


# -- the same relation, written another way ------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # From dbt_project.yml to the model file's config(), same value.
        ({"models": MARTS}, {"sql": "{{ config(schema='marts') }}\nselect 1 as id\n"}),
        # From the properties file's config: to dbt_project.yml.
        ({"yml": props(config="schema: marts\n")}, {"models": MARTS}),
        # Trimmed (the default macros trim) and constant Jinja.
        ({"models": MARTS}, {"models": "marts:\n  +schema: \"{{ 'marts' }} \"\n"}),
        # BigQuery's dataset is schema.
        ({"models": MARTS}, {"models": "marts:\n  +dataset: marts\n"}),
        # An alias equal to the model's name, under dbt's default generate_alias_name.
        ({}, {"yml": props(config="alias: orders\n")}),
        # An unchanged expression.
        (
            {"sql": "{{ config(schema=var('s')) }}\nselect 1 as id\n"},
            {"yml": props(config="schema: \"{{ var('s') }}\"\n")},
        ),
        # The case, on an engine that folds it (the default dialect, Spark).
        ({"models": MARTS}, {"models": "marts:\n  +schema: MARTS\n"}),
    ],
    ids=[
        "project-to-config",
        "yaml-to-project",
        "trim-jinja",
        "dataset",
        "alias-name",
        "expr",
        "case",
    ],
)
def test_restated_relations_are_no_move(
    cli: Cli, repo: GitRepo, before: dict[str, str], after: dict[str, str]
) -> None:
    shop(repo, **before)
    files = {
        "dbt_project.yml": project(after.get("models", "")),
        "models/marts/_orders.yml": after.get("yml", props()),
        "models/marts/orders.sql": after.get("sql", "select 1 as id\n"),
    }
    for path, text in files.items():
        repo.write(path, text)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_case_counts_where_dbt_quotes_names(cli: Cli, repo: GitRepo) -> None:
    """dbt-postgres quotes relation names: ``Marts`` is another schema there."""
    shop(repo, models=MARTS)
    repo.write("dbt_project.yml", project("marts:\n  +schema: Marts\n"))
    assert run(cli, repo)[0] == 0
    code, report = run(cli, repo, "--dialect", "postgres")
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_case_counts_on_snowflake_when_the_project_quotes(cli: Cli, repo: GitRepo) -> None:
    start(
        repo,
        {
            "dbt_project.yml": project(MARTS),
            "models/marts/_orders.yml": props(),
            "models/marts/orders.sql": "select 1 as id\n",
        },
    )
    repo.write("dbt_project.yml", project("marts:\n  +schema: MARTS\n"))
    assert run(cli, repo, "--dialect", "snowflake")[0] == 0
    repo.write(
        "dbt_project.yml",
        project("marts:\n  +schema: MARTS\n", extra="quoting:\n  schema: true\n"),
    )
    assert run(cli, repo, "--dialect", "snowflake")[0] == 1


# -- what is not compared, and what comes with it -----------------------------------


def test_an_unenforced_model_is_not_compared(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models=MARTS, yml=props(enforced=False))
    repo.write("dbt_project.yml", project("marts:\n  +schema: serving\n"))
    repo.write("models/marts/orders.sql", "{{ config(alias='o') }}\nselect 1 as id\n")
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_renamed_and_moved(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models=MARTS)
    repo.remove("models/marts/orders.sql")
    repo.remove("models/marts/_orders.yml")
    repo.write("models/marts/fct_orders.sql", "{{ config(schema='gold') }}\nselect 1 as id\n")
    repo.write("models/marts/_fct_orders.yml", props("fct_orders"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [
        ("model_relation_changed", "fct_orders"),
        ("model_renamed", "fct_orders"),
    ]
    change = moved(report)[0]
    # The default alias follows the name: that is the rename's own finding.
    assert (change["before"], change["after"]) == ("schema='marts'", "schema='gold'")
    assert change["old_dataset"] == "orders"


def test_renamed_keeping_its_relation_is_only_a_rename(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models=MARTS)
    repo.remove("models/marts/orders.sql")
    repo.remove("models/marts/_orders.yml")
    repo.write("models/marts/fct_orders.sql", "{{ config(alias='orders') }}\nselect 1 as id\n")
    repo.write("models/marts/_fct_orders.yml", props("fct_orders"))
    _code, report = run(cli, repo)
    assert found(report) == [("model_renamed", "fct_orders")]


def test_the_projects_own_schema_macro_is_named(cli: Cli, repo: GitRepo) -> None:
    start(
        repo,
        {
            "dbt_project.yml": project(MARTS),
            "models/marts/_orders.yml": props(),
            "models/marts/orders.sql": "select 1 as id\n",
            "macros/naming.sql": (
                "{% macro generate_schema_name(custom_schema_name, node) -%}\n"
                "  {{ custom_schema_name | trim }}\n{%- endmacro %}\n"
            ),
        },
    )
    repo.write("dbt_project.yml", project("marts:\n  +schema: serving\n"))
    code, report = run(cli, repo)
    assert code == 1
    message = moved(report)[0]["message"]
    assert "the project's own generate_schema_name" in message
    assert "generate_alias_name" not in message


def test_an_alias_equal_to_the_name_counts_under_the_projects_alias_macro(
    cli: Cli, repo: GitRepo
) -> None:
    """A project macro may use the alias differently from the name: its input changed."""
    start(
        repo,
        {
            "dbt_project.yml": project(),
            "models/marts/_orders.yml": props(),
            "models/marts/orders.sql": "select 1 as id\n",
            "macros/alias.sql": (
                "{% macro generate_alias_name(custom_alias_name=none, node=none) -%}\n"
                "  {{ custom_alias_name ~ node.name }}\n{%- endmacro %}\n"
            ),
        },
    )
    repo.write("models/marts/_orders.yml", props(config="alias: orders\n"))
    code, report = run(cli, repo)
    assert code == 1
    change = moved(report)[0]
    assert (change["before"], change["after"]) == ("alias=no alias", "alias='orders'")


def test_acknowledged_with_the_models_token(cli: Cli, repo: GitRepo, tmp_path: Path) -> None:
    shop(repo, models=MARTS)
    repo.write("dbt_project.yml", project("marts:\n  +schema: serving\n"))
    body = tmp_path / "body.md"
    body.write_text("Moving the marts.\n\naccept-breaking-change: orders\n")
    code, report = run(cli, repo, "--pr-body-file", str(body))
    assert code == 0
    assert [c["acknowledged"] for c in moved(report)] == [True]


def test_a_name_two_model_files_hold_has_no_known_relation(cli: Cli, repo: GitRepo) -> None:
    """dbt allows a disabled file beside the built one; the gate cannot tell whose
    ``config()`` counts, so it compares no relation rather than guess one."""
    start(
        repo,
        {
            "dbt_project.yml": project(),
            "models/marts/_orders.yml": props(),
            "models/a/orders.sql": "{{ config(schema='finance') }}\nselect 1 as id\n",
        },
    )
    repo.write("models/b/orders.sql", "{{ config(enabled=false) }}\nselect 1 as id\n")
    _code, report = run(cli, repo)
    assert moved(report) == []


def two_versions(repo: GitRepo) -> str:
    """``orders`` with versions 1 and 2 (a file each) committed on main, the PR branch
    checked out; returns the ``versions:`` block, which a test extends."""
    versions = "    versions:\n      - v: 1\n      - v: 2\n"
    start(
        repo,
        {
            "dbt_project.yml": project(),
            "models/marts/_orders.yml": props() + versions,
            "models/marts/orders_v1.sql": "select 1 as id\n",
            "models/marts/orders_v2.sql": "select 1 as id\n",
        },
    )
    return versions


def test_a_versions_own_alias(cli: Cli, repo: GitRepo) -> None:
    """``orders.v2`` is built as ``orders_v2`` (dbt's default alias for a version);
    giving it the alias ``orders`` moves that version only."""
    versions = two_versions(repo)
    repo.write(
        "models/marts/_orders.yml",
        props() + versions + "        config:\n          alias: orders\n",
    )
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders.v2")]
    change = moved(report)[0]
    assert (change["before"], change["after"]) == (
        "alias='orders_v2' (dbt's default)",
        "alias='orders'",
    )


# -- review: restatements and text that dbt does not run ---------------------------


def _rewrite(repo: GitRepo, after: dict[str, str]) -> None:
    files = {
        "dbt_project.yml": project(after.get("models", "")),
        "models/marts/_orders.yml": after.get("yml", props()),
        "models/marts/orders.sql": after.get("sql", "select 1 as id\n"),
    }
    for path, text in files.items():
        repo.write(path, text)


CONFIGURED = "{{ config(schema='marts') }}\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # dbt's generate_database_name gives the target's database for none: the same.
        ({}, {"yml": props(config='database: "{{ target.database }}"\n')}),
        ({}, {"models": 'marts:\n  +database: "{{target.database}}"\n'}),
        # A Jinja comment is not rendered: the commented-out config() sets nothing.
        ({}, {"sql": "{# {{ config(schema='old') }} #}\nselect 1 as id\n"}),
        ({"sql": CONFIGURED}, {"sql": CONFIGURED + "{#\n  config(alias='x')\n#}\n"}),
        # config( outside a Jinja tag is SQL text (a comment, a string), not a call.
        ({"sql": CONFIGURED}, {"sql": CONFIGURED + "-- config(schema='x') is set above\n"}),
        ({"sql": CONFIGURED}, {"sql": CONFIGURED + "select 'config(alias=1)' as id\n"}),
    ],
    ids=[
        "target-database",
        "target-database-project",
        "jinja-comment",
        "jinja-comment-2",
        "sql-comment",
        "sql-string",
    ],
)
def test_what_dbt_does_not_run_or_defaults_is_no_move(
    cli: Cli, repo: GitRepo, before: dict[str, str], after: dict[str, str]
) -> None:
    shop(repo, **before)
    _rewrite(repo, after)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_a_config_inside_a_jinja_tag_still_moves(cli: Cli, repo: GitRepo) -> None:
    """``-- {{ config(...) }}`` is rendered by dbt (a SQL comment does not stop Jinja)."""
    shop(repo, sql=CONFIGURED)
    _rewrite(repo, {"sql": CONFIGURED + "-- {{ config(schema='finance') }}\n"})
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def assert_python_model_moves(cli: Cli, repo: GitRepo, py: str) -> None:
    """``models/marts/orders.py`` built by ``py`` with its ``{}`` the schema ``marts``,
    then ``finance`` in the PR: the model moved."""
    start(
        repo,
        {
            "dbt_project.yml": project(),
            "models/marts/_orders.yml": props(),
            "models/marts/orders.py": py.format("marts"),
        },
    )
    repo.write("models/marts/orders.py", py.format("finance"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_a_python_models_config_moves(cli: Cli, repo: GitRepo) -> None:
    py = "def model(dbt, session):\n    dbt.config(materialized='table', schema='{}')\n    return 1\n"
    assert_python_model_moves(cli, repo, py)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # A formatter (sqlfmt writes double quotes, normalises spaces) restyles the
        # same Jinja expression.
        (
            {"sql": "{{ config(schema=var('s', 'marts')) }}\nselect 1 as id\n"},
            {"sql": '{{ config(schema=var( "s","marts" )) }}\nselect 1 as id\n'},
        ),
        # Moved from the model file to the properties file, whose YAML quotes it.
        (
            {"sql": '{{ config(alias=var("t")) }}\nselect 1 as id\n'},
            {"yml": props(config="alias: \"{{var('t')}}\"\n")},
        ),
    ],
    ids=["restyled", "moved-to-yaml"],
)
def test_an_expression_restyled_is_no_move(
    cli: Cli, repo: GitRepo, before: dict[str, str], after: dict[str, str]
) -> None:
    shop(repo, **before)
    _rewrite(repo, after)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_an_expression_changed_is_a_move(cli: Cli, repo: GitRepo) -> None:
    shop(repo, sql="{{ config(schema=var('s', 'marts')) }}\nselect 1 as id\n")
    _rewrite(repo, {"sql": "{{ config(schema=var('s', 'mart s')) }}\nselect 1 as id\n"})
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_a_python_model_with_braces_in_a_string_keeps_its_config(cli: Cli, repo: GitRepo) -> None:
    """A Python model is not Jinja: ``"{{"`` in its code (an f-string's literal brace)
    does not make its ``dbt.config()`` SQL text."""
    py = (
        "def model(dbt, session):\n"
        "    dbt.config(materialized='table', schema='{}')\n"
        '    label = f"{{{{total}}}}"\n'
        "    return label\n"
    )
    assert_python_model_moves(cli, repo, py)
