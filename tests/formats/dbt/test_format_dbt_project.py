"""dbt_project.yml: resource paths, the models config tree, and how dbt resolves it."""

from __future__ import annotations

import textwrap

import pytest

from gate.formats import parse_contract
from gate.formats.dbt.project import parse_project
from gate.model import ContractError

TREE = textwrap.dedent(
    """\
    name: shop
    model-paths: [transform, "./more/"]
    seed-paths: [data]
    models:
      +enabled: true
      shop:
        +contract: {enforced: false}
        marts:
          +contract:
            enforced: true
          materialized: table
          contract:              # no '+' and a mapping: a folder named "contract"
            +enabled: false
          legacy:
            +contract: {enforced: false}
            enabled: false       # no '+' but not a mapping: a config
        orders:
          v2:
            +contract: {enforced: true}
      other_package:
        +contract: {enforced: true}
    """
)


def test_paths_are_repository_relative_and_keep_dbt_defaults() -> None:
    project = parse_project(TREE, "wh/dbt_project.yml")
    assert (project.root, project.name) == ("wh", "shop")
    assert project.model_paths == ("wh/transform", "wh/more")
    assert set(project.source_paths) == {
        "wh/transform", "wh/more", "wh/data", "wh/snapshots", "wh/analyses",
        "wh/macros", "wh/tests", "wh/functions",
    }  # fmt: skip
    assert project.source_path_of("wh/transform/marts/x/o.yml") == ("wh/transform", ("marts", "x"))
    assert project.source_path_of("wh/profiles.yml") is None
    assert project.source_path_of("wh/transformers/o.yml") is None
    root = parse_project("name: p\nsource-paths: [src]\n", "dbt_project.yml")
    assert root.model_paths == ("src",) and root.root == ""


@pytest.mark.parametrize(
    ("fqn", "expected"),
    [
        (["shop", "o"], (False, True)),
        (["shop", "marts", "o"], (True, True)),
        (["shop", "marts", "legacy", "o"], (False, False)),
        (["shop", "marts", "contract", "o"], (True, False)),
        (["shop", "orders", "v2"], (True, True)),
        (["shop", "orders", "v1"], (False, True)),
        (["other_package", "o"], (True, True)),
        (["elsewhere", "marts", "o"], (None, True)),  # fqn_search stops at a missing level
    ],
)
def test_resolve_walks_the_fqn_most_specific_last(fqn: list[str], expected: tuple) -> None:
    assert parse_project(TREE, "dbt_project.yml").resolve(fqn) == expected


def test_only_configs_the_gate_reads_make_folder_configs() -> None:
    assert parse_project(TREE, "dbt_project.yml").folder_configs
    plain = (
        "name: p\nmodels:\n  p:\n    +contract: {enforced: true}\n    marts:\n      +tags: [x]\n"
    )
    assert not parse_project(plain, "dbt_project.yml").folder_configs
    # a folder's table is found by the model's SQL file (dbt's default is a view)
    table = plain.replace("+tags: [x]", "+materialized: table")
    assert parse_project(table, "dbt_project.yml").folder_configs


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("version: 2\n", 1, "needs a 'name'"),
        ("name: p\nmodel-paths: models\n", 2, "must be a list"),
        ("name: p\nmodel-paths: ['../../up']\n", 2, "inside the project"),  # out of the repo
        ("name: p\nmodel-paths: ['/etc']\n", 2, "inside the project"),
        ("name: p\nmodel-paths: ['m*']\n", 2, "inside the project"),
        ("name: p\nmodels:\n  p:\n    +enabled: 'no'\n", 4, "'+enabled' must be true or false"),
        ("name: p\nmodels:\n  +contract:\n    enforced: 1\n", 4, "must be true or false"),
        ("name: p\nmodels:\n  +contract: true\n", 3, "must be a mapping"),
    ],
)
def test_bad_project_files_name_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ContractError) as err:
        parse_project(text, "dbt/dbt_project.yml")
    assert (err.value.path, err.value.line) == ("dbt/dbt_project.yml", line)
    assert message in err.value.detail


def test_properties_file_config_beats_the_project_and_version_beats_model() -> None:
    project = parse_project(TREE, "dbt_project.yml")
    text = textwrap.dedent(
        """\
        models:
          - name: a                  # folder marts: enforced by the project
            columns: [{name: id, data_type: int}]
          - name: b
            config: {contract: {enforced: false}}
          - name: orders
            config: {enabled: false}
            deprecation_date: 2020-01-01
            columns: [{name: id, data_type: int}]
            versions:
              - v: 1
              - v: 2
                config: {enabled: true}
                deprecation_date: "2030-01-01T00:00:00+01:00"
        """
    )
    datasets = parse_contract(text, "transform/marts/x.yml", project).datasets
    got = {d.id: (d.enforced, d.enabled, str(d.deprecation_date)) for d in datasets}
    assert got == {
        "a": (True, True, "None"),
        "b": (False, True, "None"),
        "orders.v1": (True, False, "2020-01-01 00:00:00+00:00"),
        "orders.v2": (True, True, "2030-01-01 00:00:00+01:00"),
    }


def test_a_file_in_a_project_that_no_format_claims_holds_nothing() -> None:
    project = parse_project("name: p\n", "dbt_project.yml")
    assert parse_contract(b"just: yaml\n", "models/x.yml", project).datasets == ()
    assert parse_contract(b"", "models/empty.yml", project).datasets == ()
    with pytest.raises(ContractError, match="not a recognised contract"):
        parse_contract(b"just: yaml\n", "models/x.yml")


def test_a_folder_beside_the_project_inside_the_repository_is_read() -> None:
    """dbt joins ``../macros`` to the project's root (Obsidian-Owl/floe's projects
    share one macro folder): a folder that stays in the repository is no refusal."""
    project = parse_project(
        "name: p\nmodel-paths: ['models', '../shared/models']\nmacro-paths: ['../macros']\n",
        "demo/p/dbt_project.yml",
    )
    assert project.model_paths == ("demo/p/models", "demo/shared/models")
    assert "demo/macros" in project.source_paths
