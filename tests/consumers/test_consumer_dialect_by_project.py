"""A reader's SQL is parsed in its own dbt project's dialect, where projects' warehouses differ.

The contracts of each dbt project were graded in its own adapter's dialect
(tests/test_repo_dialect_projects.py), but its readers were parsed in the run's one
dialect (Spark where the projects disagree). Read as Spark, a Postgres model's
``select "status"`` selects a string literal (no column read: a dropped ``status``
passed), and a Snowflake model's ``payload:status`` path access does not parse (not
analysed). Each test builds its own small repository; nothing is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _profile(name: str, adapter: str) -> str:
    return f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: {adapter}\n"


def _project(name: str) -> str:
    return (
        f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"
        f"models:\n  {name}:\n    +contract: {{enforced: true}}\n"
    )


def _contract(model: str, *columns: str) -> str:
    listed = "".join(f"      - name: {c}\n        data_type: text\n" for c in columns)
    return f"models:\n  - name: {model}\n    columns:\n{listed}"


#: project -> (adapter, contract model, its reader's SQL)
PROJECTS = {
    "pg": ("postgres", "orders", "select \"status\", id from {{ ref('orders') }}\n"),
    "snow": (
        "snowflake",
        "events",
        "select payload:kind::string as kind, status from {{ ref('events') }}\n",
    ),
    "duck": ("duckdb", "users", "select id from {{ ref('users') }}\n"),
}


def _base(repo: GitRepo) -> None:
    for name, (adapter, model, reader) in PROJECTS.items():
        repo.write(f"{name}/dbt_project.yml", _project(name))
        repo.write(f"{name}/profiles.yml", _profile(name, adapter))
        repo.write(f"{name}/models/{model}.sql", "select 1 as id, 'a' as status, 'p' as payload\n")
        repo.write(f"{name}/models/_{model}.yml", _contract(model, "id", "status", "payload"))
        repo.write(f"{name}/models/report_{model}.sql", reader)
    repo.commit("base")
    repo.branch("feature")


def _broken(stdout: str) -> set[str]:
    """The reader files the ``consumer_broken`` findings point at."""
    lines = stdout.splitlines()
    out = set()
    for i, line in enumerate(lines):
        if line.strip().startswith("consumer_broken") and i + 1 < len(lines):
            out.add(lines[i + 1].rsplit("(", 1)[-1].split(":", 1)[0])
    return out


def _drop_status(repo: GitRepo) -> None:
    for name in ("pg", "snow"):
        _adapter, model, _reader = PROJECTS[name]
        repo.write(f"{name}/models/_{model}.yml", _contract(model, "id", "payload"))


def test_each_reader_is_parsed_in_its_projects_dialect(cli: Cli, repo: GitRepo) -> None:
    _base(repo)
    _drop_status(repo)
    repo.commit("pr: drop status")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _broken(proc.stdout) == {"pg/models/report_orders.sql", "snow/models/report_events.sql"}
    assert "not analysed" not in proc.stdout.lower(), proc.stdout


def test_the_readers_dialect_is_the_base_sides(cli: Cli, repo: GitRepo) -> None:
    # The pull request names BigQuery for the Postgres project (where "status" is a
    # string): its own readers are still read as the base side's Postgres.
    _base(repo)
    _drop_status(repo)
    repo.write("pg/profiles.yml", _profile("pg", "bigquery"))
    repo.commit("pr: drop status, switch the warehouse")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pg/models/report_orders.sql" in _broken(proc.stdout), proc.stdout


def test_lineage_past_the_reader_is_parsed_in_its_projects_dialect(cli: Cli, repo: GitRepo) -> None:
    # The next model passes the Postgres reader's "status" on: read as Spark, its
    # "status" is a string and the path ends at the reader.
    repo.write("pg/models/mart.sql", "select \"status\" as state from {{ ref('report_orders') }}\n")
    _base(repo)
    _drop_status(repo)
    repo.commit("pr: drop status")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "-> mart.state (pg/models/mart.sql:1)" in proc.stdout, proc.stdout
