"""Hostile pull requests, round six: fail-open paths in the newest readers (each
dbt project's own dialect, exclusions, ``../`` resource paths) and inputs of a few
KB that should not take seconds. Each test commits the attack to a real git
repository and runs the CLI in-process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.cost import cpu_seconds
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _profile(name: str, adapter: str) -> str:
    return f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: {adapter}\n"


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"


def _contract(type_: str) -> str:
    return f"dataset: lake/x\ncolumns:\n  - name: id\n    data_type: {type_}\n"


def _rules(proc: CompletedProcess[str]) -> list[tuple[str, str | None, str | None]]:
    report = json.loads(proc.stdout)
    return sorted((c["rule"], c["before"], c["after"]) for c in report["changes"])


def test_a_contract_moved_into_another_warehouses_project_keeps_its_old_types(
    cli: Cli, repo: GitRepo
) -> None:
    """Each dbt project is graded in its own dialect, and a pair was graded in the
    dialect of its HEAD path only. A PR moving a Postgres contract into the
    Databricks project read the base's ``int8`` (Postgres: BIGINT) as Spark's
    TINYINT: ``bigint -> smallint`` passed as a widening, exit 0. The base side's
    types are read in the base path's dialect."""
    repo.write("pg/dbt_project.yml", _project("pg"))
    repo.write("pg/profiles.yml", _profile("pg", "postgres"))
    repo.write("sp/dbt_project.yml", _project("sp"))
    repo.write("sp/profiles.yml", _profile("sp", "databricks"))
    repo.write("pg/contracts/x.yaml", _contract("int8"))
    repo.commit("base")
    repo.branch("feature")
    repo.move("pg/contracts/x.yaml", "sp/contracts/x.yaml")
    repo.write("sp/contracts/x.yaml", _contract("smallint"))
    repo.commit("pr: move into the Spark project and narrow")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _rules(proc) == [("type_narrowed", "BIGINT", "SMALLINT")]
    # The same text moved as it is: Postgres' int8 is Databricks' TINYINT there.
    repo.checkout("main")
    repo.branch("same-text")
    repo.move("pg/contracts/x.yaml", "sp/contracts/x.yaml")
    repo.write("sp/contracts/x.yaml", _contract("int8") + "  - name: note\n    data_type: int\n")
    repo.commit("pr: move into the Spark project as it is")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _rules(proc) == [("column_added", None, "INT"), ("type_narrowed", "BIGINT", "TINYINT")]
    # The other way round: Spark's ``int8`` (TINYINT) moved to Postgres as smallint widens.
    repo.checkout("main")
    repo.branch("back")
    repo.move("pg/contracts/x.yaml", "sp/contracts/x.yaml")
    repo.commit("the contract lives in the Spark project")
    repo.branch("pr2")
    repo.move("sp/contracts/x.yaml", "pg/contracts/x.yaml")
    repo.write("pg/contracts/x.yaml", _contract("int2"))
    repo.commit("pr: move into the Postgres project as int2")
    proc = cli(
        repo.path, "--base", "back", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _rules(proc) == [("type_widened", "TINYINT", "SMALLINT")]
    # A project folder the PR renames (pg -> pg2) is in no base project: the
    # contract is read in its old dialect on both sides, as before the merge.
    repo.checkout("main")
    repo.branch("rename")
    for name in ("dbt_project.yml", "profiles.yml", "contracts/x.yaml"):
        repo.move(f"pg/{name}", f"pg2/{name}")
    repo.write("pg2/contracts/x.yaml", _contract("int8") + "  - name: note\n    data_type: text\n")
    repo.commit("pr: pg becomes pg2, a column added")
    proc = cli(
        repo.path, "--base", "main", "--contracts", "**/contracts/*.yaml", "--format", "json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _rules(proc) == [("column_added", None, "TEXT")]


def _dbt(cols: tuple[str, ...]) -> str:
    return (
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n"
        + "".join(f"      - name: {c}\n        data_type: int\n" for c in cols)
    )


def test_a_project_folder_named_with_a_leading_bang_is_no_exclusion(
    cli: Cli, repo: GitRepo
) -> None:
    """Folders of a dbt project are written into git globs (``<root>/**/*.yml``) with
    their glob characters escaped, but a leading ``!`` was left as it was: the
    folder ``!shop`` made ``!shop/**/*.yml``, an *exclusion*. Its own properties
    files were taken out of the listings and searches built from it, and a
    column removal there stopped on "no contract globs given" (exit 2, naming
    nothing) for a repository dbt builds. The folder is written ``./!shop``."""
    project = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    repo.write("!shop/dbt_project.yml", project)
    repo.write("!shop/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("!shop/models/_m.yml", _dbt(("id", "amount")))
    repo.write("!shop/models/reader.sql", "select amount from {{ ref('orders') }}\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("!shop/models/orders.sql", "select 1 as id\n")
    repo.write("!shop/models/_m.yml", _dbt(("id",)))
    repo.commit("pr: drop amount")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [r for r, _b, _a in _rules(proc)] == ["column_removed", "consumer_broken"]


def test_a_model_folder_reached_through_a_symlink_is_refused(cli: Cli, repo: GitRepo) -> None:
    """dbt walks its resource paths following symlinks (``os.walk(followlinks=True)``);
    git lists a symlinked folder as one entry and the gate never looked inside.
    ``shop/models -> ../shared/models`` held an enforced contract the gate had
    never seen: a PR replacing the link with a real folder whose contract drops
    a column (and breaks a reader) was ``model_added``, exit 0. A folder link
    inside a dbt project's resource paths is refused with its name, at either
    side, until it is excluded or replaced by the folder."""
    project = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    repo.write("shop/dbt_project.yml", project)
    repo.write("shared/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("shared/models/_m.yml", _dbt(("id", "amount")))
    repo.write("shared/models/reader.sql", "select amount from {{ ref('orders') }}\n")
    (repo.path / "shop/models").symlink_to("../shared/models")
    repo.commit("base: the project's models through a link")
    repo.branch("feature")
    (repo.path / "shop/models").unlink()
    repo.write("shop/models/orders.sql", "select 1 as id\n")
    repo.write("shop/models/_m.yml", _dbt(("id",)))
    repo.write("shop/models/reader.sql", "select amount from {{ ref('orders') }}\n")
    repo.commit("pr: the link becomes a folder, amount dropped")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        "schema-gate: error: shop/models: a symlink to a folder in dbt project 'shop' at the"
        " base (dbt reads the files through it; git lists one entry, so the gate cannot"
        " compare them); replace it with the folder, or exclude it ('!shop/models')"
    ]
    # The working tree as HEAD: a link added there (not committed) is refused too.
    (repo.path / "shop/extra").symlink_to("../shared/models")
    repo.write("shop/dbt_project.yml", project.replace("[models]", "[models, extra]"))
    proc = cli(repo.path, "--base", "feature")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "shop/extra: a symlink to a folder in dbt project 'shop' at the working tree" in (
        proc.stderr
    )
    # Committed, with other edits in the working tree (the index is listed, not HEAD).
    repo.branch("linked")
    repo.commit("the link committed")
    repo.write("shop/models/orders.sql", "select 2 as id\n")
    proc = cli(repo.path, "--base", "feature")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "shop/extra: a symlink to a folder in dbt project 'shop' at the working tree" in (
        proc.stderr
    )
    # Excluded by the config's globs, it is not read (as any excluded file).
    globs = ("--contracts", "shop/models/*.yml", "--contracts", "!shop/extra")
    proc = cli(repo.path, "--base", "feature", *globs)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_chain_of_merge_keys_is_refused_before_it_is_built(cli: Cli, repo: GitRepo) -> None:
    """Each ``<<: *previous`` copies every key the previous mapping holds: 8,000 of
    them (350 KB) are 32 million keys, built (~20 s of CPU) before the alias-bomb
    walk refused them. What merges copy is counted against the same budget as the
    walk (4 nodes a byte) before a mapping takes them."""
    repo.write("soda/contracts/orders.yaml", _contract("int"))
    repo.commit("base")
    repo.branch("feature")
    chain = "anchors:\n  c0: &c0 {k0: 1}\n" + "".join(
        f"  c{i}: &c{i}\n    <<: *c{i - 1}\n    k{i}: 1\n" for i in range(1, 8000)
    )
    repo.write("soda/contracts/orders.yaml", chain + _contract("bigint"))
    repo.commit("pr: a merge chain")
    with cpu_seconds() as cpu:
        proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == (
        "schema-gate: error: soda/contracts/orders.yaml: YAML aliases expand too far"
        " (possible alias bomb); refusing to load\n"
    )
    assert cpu.seconds < 5, cpu.seconds


def test_a_shared_macros_folder_behind_a_symlink_is_read_as_before(cli: Cli, repo: GitRepo) -> None:
    """Only model paths are refused behind a link: monorepos share ``macros/``
    that way, and no model is built from there."""
    project = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    repo.write("shop/dbt_project.yml", project)
    repo.write("shared/macros/cents.sql", "{% macro cents(c) %}{{ c }} * 100{% endmacro %}\n")
    (repo.path / "shop").mkdir(exist_ok=True)
    (repo.path / "shop/macros").symlink_to("../shared/macros")
    repo.write("shop/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("shop/models/_m.yml", _dbt(("id", "amount")))
    repo.commit("base")
    repo.branch("feature")
    repo.write("shop/models/orders.sql", "select 1 as id\n")
    repo.write("shop/models/_m.yml", _dbt(("id",)))
    repo.commit("pr: drop amount")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [r for r, _b, _a in _rules(proc)] == ["column_removed"]


def test_a_model_folder_link_nothing_in_the_pr_reaches_refuses_no_pr(
    cli: Cli, repo: GitRepo
) -> None:
    """A base holding a model folder behind a link refused every pull request, one
    editing the README too, and the one replacing the link as well: the config
    that could exclude it is read at the base, so nothing could merge. Where the
    project's folder and what the link leads to are the same trees at both
    sides, dbt reads the same files through it: no contract behind it changed.
    Whatever reaches them (the link's target, the project) is still refused, and so
    is the working tree, which has no tree ids to compare (``--contracts '!link'``
    there)."""
    project = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    repo.write("shop/dbt_project.yml", project)
    repo.write("shared/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("shared/models/_m.yml", _dbt(("id", "amount")))
    (repo.path / "shop/models").symlink_to("../shared/models")
    # a link inside the linked folder, to a file elsewhere: the folder's tree holds
    # only the link, so what it leads to is compared too
    repo.write("elsewhere/items.sql", "select 1 as id\n")
    (repo.path / "shared/models/items.sql").symlink_to("../../elsewhere/items.sql")
    repo.write("README.md", "shop\n")
    repo.write("soda/contracts/lake.yaml", _contract("int"))  # a contract in sight
    repo.commit("base: the project's models through a link")
    repo.branch("readme")
    repo.write("README.md", "shop, documented\n")
    repo.commit("pr: the README only")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert cli(repo.path, "--base", "main").returncode == 2  # the working tree
    refused = "shop/models: a symlink to a folder in dbt project 'shop' at the base"
    for path, text in (
        ("shared/models/_m.yml", _dbt(("id",))),  # behind the link: amount dropped
        ("shop/dbt_project.yml", project + "models:\n  shop:\n    +enabled: false\n"),
        ("elsewhere/items.sql", "select 2 as id\n"),
    ):
        repo.checkout("main")
        repo.branch(f"edit-{path.replace('/', '-')}")
        repo.write(path, text)
        repo.commit(f"pr: {path}")
        proc = cli(repo.path, "--base", "main", "--head", "HEAD")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert refused in proc.stderr, proc.stderr
