"""Precision items left by the fifth round (docs/precision.md, "Items decided after
the fifth round"): what dbt really does with a version's own ``access:``, ``access``
in another case, parenthesised ``ref()`` arguments, ``config(**{...})``, star readers
under ``DISTINCT``/``ALL``, and a server removed beside another that moves. Each test
builds its own real git repository; nothing public is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.consumer_projects import DBT_PROJECT
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
STG = "models/staging/stg_models.yml"


def _versioned(model: str = "", version: str = "") -> str:
    return (
        "version: 2\nmodels:\n  - name: orders\n"
        + model
        + "    config:\n      contract:\n        enforced: true\n"
        + "    columns:\n      - name: id\n        data_type: int\n"
        + "    versions:\n      - v: 1\n"
        + version
    )


def _entry(access: str = "", config_access: str = "") -> str:
    out = "version: 2\nmodels:\n  - name: orders\n"
    if access:
        out += f"    access: {access}\n"
    out += "    config:\n      contract:\n        enforced: true\n"
    if config_access:
        out += f"      access: {config_access}\n"
    return out + "    columns:\n      - name: id\n        data_type: int\n"


def _pr(
    repo: GitRepo,
    before: dict[str, str],
    after: dict[str, str],
) -> None:
    for path, text in before.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    for path, text in after.items():
        repo.write(path, text)
    repo.commit("pr")


# Item 2. dbt-core (core/dbt/parser/schemas.py, ModelPatchParser.patch_node_properties
# then patch_node_config; read with the search tool, and confirmed by the fifth round's
# `dbt parse`): a version's top-level `access` is set on the node, then overwritten by
# the config's `access` (ModelConfig's default `protected`). It has no effect; the
# author is told where it is.
def test_a_versions_top_level_access_is_named_as_having_no_effect(cli: Cli, repo: GitRepo) -> None:
    files = {"dbt_project.yml": PROJECT, "models/marts/orders_v1.sql": "select 1 as id\n"}
    _pr(
        repo,
        {**files, "models/marts/_models.yml": _versioned()},
        {"models/marts/_models.yml": _versioned(version="        access: public\n")},
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the version entry's `access:` is line 12 of the file
    assert "models/marts/_models.yml:12" in proc.stdout, proc.stdout
    assert "version 1: a version's own 'access' has no effect in dbt" in proc.stdout
    assert "config: {access: public}" in proc.stdout


# Item 6. dbt-core validates `access` with `AccessType.is_valid` (a StrEnum of
# `private`, `protected`, `public`; `AccessType('Public')` raises) in
# `patch_node_properties`, `patch_node_config` and `update_parsed_node_config`, and
# raises InvalidAccessTypeError: `dbt parse` fails. The gate refuses such a value as
# it refuses an `enabled` that is no boolean (exit 2, file and line), instead of
# reading `Public` as public or a misspelling as "unknown".
@pytest.mark.parametrize(
    ("files", "where"),
    [
        ({"models/marts/_models.yml": _entry(access="Public")}, "models/marts/_models.yml:4"),
        (
            {"models/marts/_models.yml": _entry(config_access="PUBLIC")},
            "models/marts/_models.yml:7",
        ),
        (
            {"models/marts/_models.yml": _entry(config_access="publik")},
            "models/marts/_models.yml:7",
        ),
        (
            {"models/marts/_models.yml": _versioned(version="        access: Public\n")},
            "models/marts/_models.yml:12",
        ),
        (
            {"models/marts/orders.sql": "{{ config(access='Public') }}\nselect 1 as id\n"},
            "models/marts/orders.sql:1",
        ),
        (
            {"dbt_project.yml": PROJECT + "models:\n  shop:\n    +access: Public\n"},
            "dbt_project.yml:7",
        ),
    ],
)
def test_an_access_dbt_refuses_is_refused(
    cli: Cli, repo: GitRepo, files: dict[str, str], where: str
) -> None:
    base = {
        "dbt_project.yml": PROJECT,
        "models/marts/orders.sql": "select 1 as id\n",
        "models/marts/orders_v1.sql": "select 1 as id\n",
        "models/marts/_models.yml": _entry(config_access="public"),
    }
    _pr(repo, base, files)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert where in proc.stderr, proc.stderr
    assert "is not one of private, protected, public" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_access_in_dbts_own_spelling_still_reads(cli: Cli, repo: GitRepo) -> None:
    base = {
        "dbt_project.yml": PROJECT,
        "models/marts/orders.sql": "select 1 as id\n",
        "models/marts/_models.yml": _entry(config_access="public"),
    }
    _pr(repo, base, {"models/marts/_models.yml": _entry(config_access="private")})
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


# Item 6. `{{ config(**{'access': 'public'}) }}`: dbt unpacks the literal into keyword
# arguments, so it is `config(access='public')`.
def test_config_kwargs_literal_access_narrows(cli: Cli, repo: GitRepo) -> None:
    base = {
        "dbt_project.yml": PROJECT,
        "models/marts/orders.sql": "{{ config(**{'access': 'public'}) }}\nselect 1 as id\n",
        "models/marts/_models.yml": _entry(),
    }
    after = {"models/marts/orders.sql": "{{ config(**{'access': 'private'}) }}\nselect 1 as id\n"}
    _pr(repo, base, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def _consumers(tmp_path: Path, model: str) -> dict:
    repo = GitRepo(tmp_path / "repo")
    for path, text in DBT_PROJECT.items():
        repo.write(path, text)
    repo.write("models/marts/reader.sql", model)
    repo.commit("project")
    repo.branch("feature")
    lines = DBT_PROJECT[STG].splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == "- name: discount_code")
    repo.write(STG, "".join(lines[:start] + lines[start + 2 :]))
    repo.commit("drop discount_code")
    from tests.conftest import run_main

    proc = run_main(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _readers(report: dict) -> set[tuple[str, str]]:
    removed = next(
        c
        for c in report["changes"]
        if c["rule"] == "column_removed" and c["column"] == "discount_code"
    )
    return {(c["path"], c["usage"]) for c in removed["consumers"]}


# Item 6. Jinja evaluates `ref((('stg_orders')))` as `ref('stg_orders')`; the pre-pass
# read it as an unknown expression, so the reader was missed.
@pytest.mark.parametrize(
    "call",
    ["ref((('stg_orders')))", "ref( ( 'stg_orders' ) )", "ref(('jaffle'), ('stg_orders'))"],
)
def test_a_parenthesised_ref_is_a_reader(tmp_path: Path, call: str) -> None:
    model = f"select discount_code from {{{{ {call} }}}}\nwhere discount_code is not null\n"
    report = _consumers(tmp_path, model)
    assert ("models/marts/reader.sql", "filtered") in _readers(report), report
    broken = [c["path"] for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert "models/marts/reader.sql" in broken


# Item 3. A star under DISTINCT or ALL is a star: the reader uses every column.
@pytest.mark.parametrize(
    "select",
    [
        "select distinct * from {{ ref('stg_orders') }}",
        "select all * from {{ ref('stg_orders') }}",
        "select distinct o.* from {{ ref('stg_orders') }} as o",
    ],
)
def test_a_distinct_or_all_star_is_a_star_reader(tmp_path: Path, select: str) -> None:
    report = _consumers(tmp_path, select + "\n")
    assert ("models/marts/reader.sql", "star") in _readers(report), report


# Item 4. A server removed (or renamed) in the pull request that moves another: the
# move of the server present on both sides is still reported, the removed one moves
# nothing.
DCS = (
    "dataContractSpecification: 1.1.0\nid: stations\ninfo:\n  title: Stations\n"
    "  version: 0.1.0\nservers:\n{servers}"
    "models:\n  stations:\n    type: table\n    fields:\n"
    "      station_id:\n        type: string\n        required: true\n"
)
PROD = "  prod:\n    type: postgres\n    database: {db}\n    schema: public\n"
DEV = "  {name}:\n    type: postgres\n    database: dev\n    schema: public\n"


@pytest.mark.parametrize("other", ["", DEV.format(name="staging")])
def test_a_server_removed_or_renamed_beside_a_move_keeps_the_move(
    cli: Cli, repo: GitRepo, other: str
) -> None:
    before = DCS.format(servers=PROD.format(db="analytics") + DEV.format(name="dev"))
    after = DCS.format(servers=PROD.format(db="warehouse") + other)
    _pr(repo, {"contracts/stations.yaml": before}, {"contracts/stations.yaml": after})
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = [c for c in json.loads(proc.stdout)["changes"] if c["rule"] == "model_relation_changed"]
    assert len(found) == 1, found
    assert "server 'prod' (postgres): database 'analytics' -> 'warehouse'" in found[0]["message"]
    assert "'dev'" not in found[0]["message"]


ODCS = (
    "apiVersion: v3.0.2\nkind: DataContract\nid: stations\nname: stations\n"
    "version: 1.0.0\nstatus: active\nservers:\n{servers}"
    "schema:\n  - name: stations\n    properties:\n"
    "      - name: station_id\n        logicalType: string\n        required: true\n"
)
ODCS_SERVER = "  - server: {name}\n    type: postgres\n    database: {db}\n    schema: public\n"


def test_an_odcs_server_removed_beside_a_move_keeps_the_move(cli: Cli, repo: GitRepo) -> None:
    before = ODCS.format(
        servers=ODCS_SERVER.format(name="dev", db="dev")
        + ODCS_SERVER.format(name="prod", db="analytics")
    )
    after = ODCS.format(servers=ODCS_SERVER.format(name="prod", db="warehouse"))
    _pr(repo, {"contracts/stations.odcs.yaml": before}, {"contracts/stations.odcs.yaml": after})
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = [c for c in json.loads(proc.stdout)["changes"] if c["rule"] == "model_relation_changed"]
    assert [c["dataset"] for c in found] == ["stations"], found
    assert "database 'analytics' -> 'warehouse'" in found[0]["message"]


@pytest.mark.parametrize(
    ("broken", "fixed"),
    [
        (
            {"models/marts/orders.sql": "{{ config(access='Public') }}\nselect 1 as id\n"},
            {"models/marts/orders.sql": "{{ config(access='public') }}\nselect 1 as id\n"},
        ),
        (
            {"dbt_project.yml": PROJECT + "models:\n  shop:\n    +access: Public\n"},
            {"dbt_project.yml": PROJECT + "models:\n  shop:\n    +access: public\n"},
        ),
        (
            {"models/marts/_models.yml": _entry(config_access="Public")},
            {"models/marts/_models.yml": _entry(config_access="public")},
        ),
    ],
)
def test_a_pull_request_fixing_an_access_dbt_refuses_is_not_refused(
    cli: Cli, repo: GitRepo, broken: dict[str, str], fixed: dict[str, str]
) -> None:
    """The refusal is for what the pull request brings: a base that already holds
    such a value (written before the gate read it so) must not block the PR that
    fixes it, as an unreadable base properties file does not."""
    base = {
        "dbt_project.yml": PROJECT,
        "models/marts/orders.sql": "select 1 as id\n",
        "models/marts/_models.yml": _entry(config_access="public"),
    }
    _pr(repo, {**base, **broken}, fixed)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
