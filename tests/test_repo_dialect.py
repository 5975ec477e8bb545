"""The repository's own dialect: dbt profiles and SQLMesh config (issue #21, point 5).

``numeric -> numeric(18,2)`` widens in Spark (DECIMAL(10,0)) and narrows in
DuckDB (DECIMAL(18,3)): a DuckDB project must be graded as DuckDB.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from gate.repo_dialect import _sqlmesh_py, adapter_dialect
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

CONTRACT = """\
dataset: lake/shop/orders
columns:
  - name: amount
    data_type: {type}
"""
PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\n"
#: The shape of dbt-labs' jaffle_shop_duckdb profiles.yml (a project-local profile).
DUCKDB_PROFILE = """\
shop:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: shop.duckdb
      threads: 4
"""


def _repo(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric"))
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric(18,2)"))
    return repo


def _run(cli: Cli, repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = cli(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _rules(report: dict) -> list[str]:
    return [c["rule"] for c in report["changes"]]


def test_a_duckdb_dbt_project_is_graded_as_duckdb(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {"dbt_project.yml": PROJECT, "profiles.yml": DUCKDB_PROFILE})
    code, report = _run(cli, repo)
    assert (code, _rules(report)) == (1, ["type_narrowed"])
    assert report["dialect"] == "duckdb"
    assert report["dialect_source"] == "profiles.yml: profile 'shop', target 'dev', type duckdb"
    text = cli(repo.path, "--base", "main").stdout
    assert (
        "data types read as duckdb SQL (profiles.yml: profile 'shop', target 'dev', type duckdb)"
        in text
    )
    markdown = cli(repo.path, "--base", "main", "--format", "markdown").stdout
    assert "data types read as `duckdb` SQL (`profiles.yml: profile 'shop'" in markdown
    # The flag (and the config's dialect:) still decide: in Spark it is a widening.
    code, report = _run(cli, repo, "--dialect", "spark")
    assert (code, _rules(report), report["dialect_source"]) == (0, ["type_widened"], "--dialect")


def test_without_any_hint_the_default_is_named(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {})
    code, report = _run(cli, repo)
    assert (code, _rules(report)) == (0, ["type_widened"])
    assert (report["dialect"], report["dialect_source"]) == ("spark", "the default")


def test_the_config_dialect_beats_the_profile(tmp_path: Path, cli: Cli) -> None:
    files = {
        "dbt_project.yml": PROJECT,
        "profiles.yml": DUCKDB_PROFILE,
        ".schema-gate.yml": "dialect: spark\n",
    }
    code, report = _run(cli, _repo(tmp_path, files))
    assert (code, report["dialect"], report["dialect_source"]) == (
        0,
        "spark",
        "dialect: in .schema-gate.yml",
    )


def test_a_pr_cannot_switch_the_profile_to_grade_itself(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {"dbt_project.yml": PROJECT, "profiles.yml": DUCKDB_PROFILE})
    repo.write("profiles.yml", DUCKDB_PROFILE.replace("duckdb", "spark"))
    code, report = _run(cli, repo)
    assert (code, report["dialect"]) == (1, "duckdb")
    assert report["relaxations"] == [
        {"file": "profiles.yml", "setting": "dialect", "base": "duckdb", "head": "spark"}
    ]
    assert (
        "this PR changes dialect in profiles.yml (duckdb -> spark); the base branch's "
        "setting applies until it is merged"
    ) in report["notices"]


def test_a_pr_adding_a_profile_is_graded_as_before_until_merged(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {})
    repo.write("dbt_project.yml", PROJECT)
    repo.write("profiles.yml", DUCKDB_PROFILE)
    code, report = _run(cli, repo)
    assert (code, report["dialect"], report["dialect_source"]) == (0, "spark", "the default")
    assert [(r["setting"], r["base"], r["head"]) for r in report["relaxations"]] == [
        ("dialect", "spark", "duckdb")
    ]
    # An unrelated PR pays one git diff, and names nothing.
    repo = _repo(tmp_path / "other", {"dbt_project.yml": PROJECT, "profiles.yml": DUCKDB_PROFILE})
    _code, report = _run(cli, repo)
    assert report["relaxations"] == []


def test_a_project_profile_in_a_subfolder_and_a_templated_target(tmp_path: Path, cli: Cli) -> None:
    profile = (
        "shop:\n  target: \"{{ env_var('DBT_TARGET', 'dev') }}\"\n  outputs:\n"
        "    dev: {type: snowflake, account: x}\n    prod: {type: snowflake, account: y}\n"
    )
    repo = _repo(
        tmp_path, {"warehouse/dbt_project.yml": PROJECT, "warehouse/profiles.yml": profile}
    )
    code, report = _run(cli, repo)
    assert (code, report["dialect"]) == (1, "snowflake")  # DECIMAL(38,0) -> (18,2)
    assert report["dialect_source"] == (
        "warehouse/profiles.yml: profile 'shop', every target, type snowflake"
    )


def test_targets_of_several_engines_fall_back_with_a_notice(tmp_path: Path, cli: Cli) -> None:
    profile = (
        "shop:\n  target: \"{{ env_var('DBT_TARGET') }}\"\n  outputs:\n"
        "    dev: {type: duckdb}\n    prod: {type: snowflake}\n"
    )
    repo = _repo(tmp_path, {"dbt_project.yml": PROJECT, "profiles.yml": profile})
    _code, report = _run(cli, repo)
    assert report["dialect_source"] == "the default"
    assert any("profile 'shop' has outputs of several types" in n for n in report["notices"])


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            "config.yaml",
            "gateways:\n  local:\n    connection:\n      type: duckdb\n"
            "model_defaults:\n  dialect: postgres,normalization_strategy=case_sensitive\n",
        ),
        (
            "mesh/config.py",
            "from sqlmesh.core.config import Config, ModelDefaultsConfig\n"
            "config = Config(model_defaults=ModelDefaultsConfig(dialect='postgres'))\n",
        ),
    ],
)
def test_sqlmesh_model_defaults(tmp_path: Path, cli: Cli, path: str, text: str) -> None:
    code, report = _run(cli, _repo(tmp_path, {path: text}))
    assert (code, report["dialect"]) == (1, "postgres")
    assert report["dialect_source"] == f"{path}: SQLMesh model_defaults dialect"


def test_sqlmesh_config_py_is_read_never_run(tmp_path: Path, cli: Cli) -> None:
    planted = tmp_path / "ran"
    text = (
        f"open({str(planted)!r}, 'w').write('x')\n"
        "config = Config(model_defaults={'dialect': 'duckdb'})\n"
    )
    _code, report = _run(cli, _repo(tmp_path, {"config.py": text}))
    assert report["dialect"] == "duckdb"
    assert not planted.exists()


def test_adapter_names_map_to_sqlglot_dialects() -> None:
    assert [adapter_dialect(a) for a in ("sqlserver", "Databricks", "glue", "firebolt")] == [
        "tsql",
        "databricks",
        "spark",
        None,
    ]
    assert _sqlmesh_py("def (:") is None


def test_a_profiles_dir_below_the_project(tmp_path: Path, cli: Cli) -> None:
    # mattermost-data-warehouse keeps transform/<project>/profile/profiles.yml
    # and passes --profiles-dir in CI.
    files = {
        "transform/shop/dbt_project.yml": PROJECT,
        "transform/shop/profile/profiles.yml": DUCKDB_PROFILE,
    }
    _code, report = _run(cli, _repo(tmp_path, files))
    assert report["dialect_source"] == (
        "transform/shop/profile/profiles.yml: profile 'shop', target 'dev', type duckdb"
    )


def test_a_profile_symlinked_out_of_the_repository_is_a_notice(tmp_path: Path, cli: Cli) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric"))
    repo.write("dbt_project.yml", PROJECT)
    repo.symlink("profiles.yml", str(tmp_path / "home" / ".dbt" / "profiles.yml"))
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric(18,2)"))
    code, report = _run(cli, repo)
    assert (code, report["dialect_source"]) == (0, "the default")
    assert any(n.startswith("the repository's dialect was not read") for n in report["notices"])
