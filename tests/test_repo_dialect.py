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


# one tree walk instead of a listing per glob and a git grep (issue #26)

#: Paths the shortcut must tell apart as the globs do: vendored projects, names in
#: another case, folders named like the files, files named like them with a suffix.
TRICKY = {
    "dbt_project.yml": PROJECT,
    "Dbt_project.yml": PROJECT,
    "dbt_packages/dep/dbt_project.yml": PROJECT,
    "a/dbt_modules/dep/dbt_project.yml": PROJECT,
    "lib/dbt_packages": "a file, not a folder\n",
    "x/dbt_project.yml/inside.txt": "a folder named like the file\n",
    "x/my_dbt_project.yml": PROJECT,
    "profiles.yml": DUCKDB_PROFILE,
    "dbt_packages/profiles.yml": DUCKDB_PROFILE,
    "sub/profiles.yml.bak": DUCKDB_PROFILE,
    "config.yml.txt": "model_defaults:\n  dialect: duckdb\n",
}


def test_the_one_walk_lists_what_the_globs_list(tmp_path: Path) -> None:
    from gate.git import open_repo
    from gate.repo_dialect import _NAMES, _PROFILES_GLOBS, _PROJECT_GLOBS, _listed

    repo = GitRepo(tmp_path / "repo")
    for path, text in TRICKY.items():
        repo.write(path, text)
    repo.commit("tricky")
    # A submodule named like a project file: a gitlink, no file (list_files drops it).
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub/dbt_project.yml")
    repo.git("commit", "-q", "-m", "a gitlink")
    head = repo.head()
    with open_repo(repo.path) as r:
        present = r.named(head, _NAMES)
        assert present["sub/dbt_project.yml"] == "160000"
        assert "x/dbt_project.yml/inside.txt" not in present and "config.yml.txt" not in present
        for name, globs in [("dbt_project.yml", _PROJECT_GLOBS), ("profiles.yml", _PROFILES_GLOBS)]:
            listed = _listed(r, head, present, name, globs)
            assert listed == sorted(r.list_files(head, globs)), name
        assert _listed(r, head, present, "dbt_project.yml", _PROJECT_GLOBS) == ["dbt_project.yml"]


def test_no_sqlmesh_config_anywhere_skips_the_grep(tmp_path: Path, cli: Cli) -> None:
    """The git grep for ``model_defaults`` runs only where a config.yaml/.yml/.py exists."""
    repo = _repo(tmp_path, {"config.yml.txt": "model_defaults:\n  dialect: duckdb\n"})
    log = tmp_path / "git.log"
    env = _logging_git(tmp_path, log)
    args = ("--base", "main", "--head", "HEAD", "--format", "json")
    report = json.loads(cli(repo.path, *args, env=env).stdout)
    assert report["dialect_source"] == "the default"
    assert "grep" not in log.read_text().split()
    repo.checkout("main")
    repo.write("conf/config.yml", "model_defaults:\n  dialect: duckdb\n")
    repo.commit("a SQLMesh config")
    log.write_text("")
    report = json.loads(cli(repo.path, *args, env=env).stdout)
    assert report["dialect_source"] == "conf/config.yml: SQLMesh model_defaults dialect"
    assert "grep" in log.read_text().split()


def test_a_symlinked_project_file_is_still_followed_by_the_listing(
    tmp_path: Path, cli: Cli
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric"))
    repo.write("real/dbt_project.yml", PROJECT)
    repo.write("real/profiles.yml", DUCKDB_PROFILE)
    repo.symlink("shop/dbt_project.yml", "../real/dbt_project.yml")
    repo.symlink("out/dbt_project.yml", str(tmp_path / "elsewhere.yml"))
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CONTRACT.format(type="numeric(18,2)"))
    code, report = _run(cli, repo)
    # The link out of the repository refuses the listing, as it always did: a notice.
    assert (code, report["dialect_source"]) == (0, "the default")
    assert any("out/dbt_project.yml" in n for n in report["notices"]), report["notices"]


def _logging_git(tmp_path: Path, log: Path) -> dict[str, str]:
    import os
    import shutil

    from tests.conftest import gate_env

    real = shutil.which("git")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return gate_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
