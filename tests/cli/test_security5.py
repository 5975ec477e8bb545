"""Hostile pull requests, round five: the newest readers (repeated dbt keys, dbt
projects renamed and moved, files-server moves, Jinja access, struck-out
acknowledgements). Each test commits the attack to a real git repository and
runs the CLI in-process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def _public(name: str = "orders", columns: tuple[str, ...] = ("id", "amount")) -> str:
    cols = "".join(f"      - name: {c}\n        data_type: int\n" for c in columns)
    return (
        f"version: 2\nmodels:\n  - name: {name}\n    access: public\n"
        "    config:\n      contract:\n        enforced: true\n    columns:\n" + cols
    )


def _rules(proc: CompletedProcess[str]) -> list[tuple[str, str | None, str | None]]:
    report = json.loads(proc.stdout)
    return sorted((c["rule"], c["before"], c["after"]) for c in report["changes"])


def test_renaming_a_project_breaks_the_cross_project_refs_of_its_public_models(
    cli: Cli, repo: GitRepo
) -> None:
    """A public model is read from other projects as ``ref('shop', 'orders')``; a PR
    renaming the project in place (``name: shop`` -> ``shop2``) leaves every such ref
    unresolved. The rename was followed for every model ("the same project"), so
    "no contract changes", exit 0, while ``web`` no longer compiles. A public model
    keeps its base project: ``model_renamed``, as for a model moved to another
    project. Protected models (no other project may read them) still follow."""
    repo.write("shop/dbt_project.yml", _project("shop"))
    repo.write("shop/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("shop/models/_m.yml", _public())
    repo.write("shop/models/items.sql", "select 1 as id\n")
    repo.write("shop/models/_items.yml", _public("items", ("id",)).replace("public", "protected"))
    repo.write("web/dbt_project.yml", _project("web"))
    repo.write("web/models/report.sql", "select id, amount from {{ ref('shop', 'orders') }}\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("shop/dbt_project.yml", _project("shop2"))
    repo.write("shop/models/_m.yml", _public() + "# renamed\n")
    repo.write("shop/models/_items.yml", (repo.path / "shop/models/_items.yml").read_text() + "#\n")
    repo.commit("pr: shop becomes shop2")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _rules(proc) == [("model_renamed", "shop.orders", "shop2.orders")]


def test_two_projects_swapping_names_compare_what_each_ref_now_reads(
    cli: Cli, repo: GitRepo
) -> None:
    """``alpha`` and ``beta`` swap names (each folder's ``dbt_project.yml``): read as
    two renames in place, each folder's models paired with themselves, so "no
    contract changes", while ``ref('alpha', 'orders')`` now reads beta's table,
    which has no ``amount``. Public models keep their project: the column is gone."""
    repo.write("a/dbt_project.yml", _project("alpha"))
    repo.write("a/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("a/models/_m.yml", _public())
    repo.write("b/dbt_project.yml", _project("beta"))
    repo.write("b/models/orders.sql", "select 1 as id\n")
    repo.write("b/models/_m.yml", _public(columns=("id",)))
    repo.commit("base")
    repo.branch("feature")
    repo.write("a/dbt_project.yml", _project("beta"))
    repo.write("b/dbt_project.yml", _project("alpha"))
    repo.write("a/models/_m.yml", _public() + "#\n")
    repo.write("b/models/_m.yml", _public(columns=("id",)) + "#\n")
    repo.commit("pr: swap")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("column_removed", "INT", None) in _rules(proc)
