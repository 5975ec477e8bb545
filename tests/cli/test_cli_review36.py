"""Defects found reviewing the session's merged change (integ36), each a failing test first."""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.cli.test_cli_dbt_access import _entry, _pr
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

# 1. A properties file refused at the base and at HEAD with the same message
# (``access: Public`` kept) was compared on neither side: a column the same pull
# request narrowed or dropped in it passed, "PASS: no contract changes".

NO_COLUMNS = "    columns:\n      - name: id\n        data_type: int\n"


def test_an_inherited_bad_access_does_not_hide_a_narrowed_column(cli: Cli, repo: GitRepo) -> None:
    base = _entry(access="Public")
    _pr(repo, base, base.replace("data_type: int", "data_type: varchar"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "orders" in proc.stdout and "PASS" not in proc.stdout
    assert "its base version is refused the same way" in proc.stdout + proc.stderr


def test_an_inherited_bad_access_does_not_hide_a_dropped_column(cli: Cli, repo: GitRepo) -> None:
    base = _entry(access="Public")
    _pr(
        repo,
        base,
        base.replace(NO_COLUMNS, "    columns:\n      - name: other\n        data_type: int\n"),
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_renamed orders" in proc.stdout or "column_removed orders" in proc.stdout


def test_an_inherited_refusal_the_lenient_reading_cannot_read_is_still_refused(
    cli: Cli, repo: GitRepo
) -> None:
    """Only an ``access`` dbt refuses is read as the base is read; any other refusal
    both sides share stays one (fail closed: nothing else there can be compared)."""
    base = _entry().replace("enforced: true", "enforced: 'yes'")
    _pr(repo, base, base.replace("data_type: int", "data_type: varchar"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/_models.yml" in proc.stderr
    assert "Traceback" not in proc.stderr


# 2. A project renamed in place: a model whose ``access`` is Jinja the gate cannot
# evaluate may be public (``ref('shop', 'orders')`` from other projects), so it keeps
# its base project as a public model does; it followed the rename: exit 0.


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def test_a_jinja_access_model_does_not_follow_its_projects_rename(cli: Cli, repo: GitRepo) -> None:
    entry = (
        "version: 2\nmodels:\n  - name: orders\n    access: \"{{ var('orders_access') }}\"\n"
        "    config:\n      contract:\n        enforced: true\n    columns:\n"
        "      - name: id\n        data_type: int\n"
    )
    repo.write("shop/dbt_project.yml", _project("shop"))
    repo.write("shop/models/orders.sql", "select 1 as id\n")
    repo.write("shop/models/_m.yml", entry)
    repo.write("web/dbt_project.yml", _project("web"))
    repo.write("web/models/report.sql", "select id from {{ ref('shop', 'orders') }}\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("shop/dbt_project.yml", _project("shop2"))
    repo.write("shop/models/_m.yml", entry + "# renamed\n")
    repo.commit("pr: shop becomes shop2")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_renamed" in proc.stdout


def _two(items_access: str) -> str:
    model = (
        "  - name: {name}\n    access: {access}\n"
        "    config:\n      contract:\n        enforced: true\n"
        "    columns:\n      - name: id\n        data_type: int\n"
    )
    return (
        "version: 2\nmodels:\n"
        + model.format(name="orders", access="Public")
        + model.format(name="items", access=items_access)
    )


def test_an_inherited_bad_access_does_not_hide_a_misspelled_one_the_pr_writes(
    cli: Cli, repo: GitRepo
) -> None:
    """``access: public`` -> ``Publc`` further down a file refused for ``Public``: read
    leniently it was unknown, no finding, exit 0; a misspelling stays refused."""
    repo.write("models/marts/items.sql", "select 1 as id\n")
    _pr(repo, _two("public"), _two("Publc"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
