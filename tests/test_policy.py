"""A pull request cannot weaken its own gate (issue #27, point 2; gate/policy.py).

Each scenario is a real git repository: the base branch carries a config, the
pull request changes it together with a contract, and the CLI decides.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

C = "contracts"
ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: note
    data_type: string
"""
WITHOUT_NOTE = ORDERS.replace("  - name: note\n    data_type: string\n", "")
HELD = "the base branch's setting applies until it is merged"


def _repo(tmp_path: Path, config: dict[str, str]) -> GitRepo:
    """main with one contract and ``config`` (path -> text), then branch ``feature``."""
    repo = GitRepo(tmp_path / "repo")
    repo.write(f"{C}/orders.yaml", ORDERS)
    for path, text in config.items():
        repo.write(path, text)
    repo.commit("contracts and config")
    repo.branch("feature")
    return repo


def _json(cli: Cli, repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = cli(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _relaxations(report: dict) -> list[tuple[str, str, str, str]]:
    return [(r["file"], r["setting"], r["base"], r["head"]) for r in report["relaxations"]]


def test_lowering_the_rule_a_pr_breaks_does_not_unblock_it(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {".schema-gate.yml": "rules:\n  column_removed: error\n"})
    repo.write(".schema-gate.yml", "rules:\n  column_removed: off\n")
    repo.write(f"{C}/orders.yaml", WITHOUT_NOTE)
    code, report = _json(cli, repo)
    assert code == 1
    assert [(c["rule"], c["severity"]) for c in report["changes"]] == [("column_removed", "error")]
    assert _relaxations(report) == [(".schema-gate.yml", "rules.column_removed", "error", "off")]
    notice = f"this PR relaxes rules.column_removed in .schema-gate.yml (error -> off); {HELD}"
    assert notice in report["notices"]
    # The same line in every other output, once.
    text = cli(repo.path, "--base", "main")
    assert text.stdout.count(f"note: {notice}") == 1
    github = cli(repo.path, "--base", "main", "--format", "github").stdout.splitlines()
    assert github.count(f"::notice title=schema-contract-gate::{notice}") == 1
    markdown = cli(repo.path, "--base", "main", "--format", "markdown").stdout
    assert markdown.count("this PR relaxes rules.column\\_removed in .schema-gate.yml") == 1
    # Once merged, the relaxation is the base side's own setting: it applies.
    repo.commit("drop the note")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "feature")
    repo.branch("next")
    repo.write("README.md", "x\n")
    repo.commit("unrelated")
    code, report = _json(cli, repo)
    assert code == 0 and report["relaxations"] == []


def test_a_tightening_applies_at_once(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {".schema-gate.yml": "rules:\n  column_added: info\n"})
    repo.write(".schema-gate.yml", "rules:\n  column_added: error\nfail_on: warning\n")
    repo.write(f"{C}/orders.yaml", ORDERS + "  - name: memo\n    data_type: string\n")
    code, report = _json(cli, repo)
    assert code == 1
    assert report["fail_on"] == "warning"
    assert [(c["rule"], c["severity"]) for c in report["changes"]] == [("column_added", "error")]
    assert report["relaxations"] == []


def test_a_deleted_config_is_named_and_still_applies(tmp_path: Path, cli: Cli) -> None:
    config = "fail_on: warning\nrules:\n  column_added: warning\n"
    repo = _repo(tmp_path, {".schema-gate.yml": config})
    repo.remove(".schema-gate.yml")
    repo.write(f"{C}/orders.yaml", ORDERS + "  - name: memo\n    data_type: string\n")
    code, report = _json(cli, repo)
    assert code == 1  # a warning under the base's fail_on: warning
    assert report["fail_on"] == "warning"
    assert _relaxations(report) == [
        (".schema-gate.yml", "rules.column_added", "warning", "info"),
        (".schema-gate.yml", "fail_on", "warning", "error"),
    ]


def test_a_config_moved_into_pyproject_cannot_relax_on_the_way(tmp_path: Path, cli: Cli) -> None:
    repo = _repo(tmp_path, {".schema-gate.yml": "perspective: both\nallow-empty: false\n"})
    repo.remove(".schema-gate.yml")
    repo.write(
        "pyproject.toml",
        '[tool.schema-gate]\nperspective = "consumer"\nallow-empty = true\n'
        '[tool.schema-gate.rules]\ncolumn_removed = "warning"\n',
    )
    repo.write(f"{C}/orders.yaml", ORDERS.replace("bigint", "int"))  # type_narrowed: producers
    code, report = _json(cli, repo)
    assert code == 1
    assert [(c["rule"], c["severity"]) for c in report["changes"]] == [("type_narrowed", "error")]
    where = "pyproject.toml [tool.schema-gate]"
    assert _relaxations(report) == [
        (where, "rules.column_removed", "error", "warning"),
        (where, "perspective", "both", "consumer"),
        (where, "allow-empty", "false", "true"),
    ]


def test_an_exclude_cannot_hide_a_contract_the_base_checks(tmp_path: Path, cli: Cli) -> None:
    globs = 'contracts:\n  - "contracts/**/*.yaml"\n'
    repo = _repo(tmp_path, {".schema-gate.yml": globs})
    repo.write(".schema-gate.yml", globs + '  - "!contracts/orders.yaml"\n')
    repo.write(f"{C}/orders.yaml", WITHOUT_NOTE)
    code, report = _json(cli, repo)
    assert code == 1
    assert [c["rule"] for c in report["changes"]] == ["column_removed"]
    assert _relaxations(report) == [
        (
            ".schema-gate.yml",
            "contracts",
            "contracts/**/*.yaml",
            "contracts/**/*.yaml, !contracts/orders.yaml",
        )
    ]


def test_new_contract_globs_add_to_the_base_ones(tmp_path: Path, cli: Cli) -> None:
    # Moving the globs elsewhere keeps the old folder checked until the merge,
    # and the new folder is checked at once.
    repo = _repo(tmp_path, {".schema-gate.yml": 'contracts: ["contracts/**/*.yaml"]\n'})
    repo.write(".schema-gate.yml", 'contracts: ["data/**/*.yaml"]\n')
    repo.write(f"{C}/orders.yaml", WITHOUT_NOTE)
    repo.write("data/items.yaml", "dataset: lake/shop/items\ncolumns:\n  - name: id\n")
    code, report = _json(cli, repo)
    assert code == 1
    rules = sorted((c["rule"], c["dataset"]) for c in report["changes"])
    assert rules == [("column_removed", "lake/shop/orders"), ("model_added", "lake/shop/items")]
    assert [r[1] for r in _relaxations(report)] == ["contracts"]


@pytest.mark.parametrize(
    ("base", "head", "setting"),
    [
        ("consumers:\n  enabled: true\n", "consumers: false\n", "consumers.enabled"),
        ("policies:\n  - datasets: ['lake/*']\n    schema_contract: freeze\n", "", "policies"),
        ("dialect: snowflake\n", "dialect: spark\n", "dialect"),
    ],
)
def test_other_settings_are_held_back_and_named(
    tmp_path: Path, cli: Cli, base: str, head: str, setting: str
) -> None:
    repo = _repo(tmp_path, {".schema-gate.yml": base})
    repo.write(".schema-gate.yml", head or "{}\n")
    repo.write("README.md", "touch\n")
    _code, report = _json(cli, repo)
    assert [r[1] for r in _relaxations(report)] == [setting]


def test_a_frozen_policy_stays_frozen_in_the_pr_that_removes_it(tmp_path: Path, cli: Cli) -> None:
    frozen = "policies:\n  - datasets: ['lake/shop/*']\n    schema_contract: freeze\n"
    repo = _repo(tmp_path, {".schema-gate.yml": frozen})
    repo.remove(".schema-gate.yml")
    repo.write(f"{C}/orders.yaml", ORDERS + "  - name: memo\n    data_type: string\n")
    code, report = _json(cli, repo)
    assert code == 1
    assert [(c["rule"], c["severity"]) for c in report["changes"]] == [("column_added", "error")]


def test_a_pr_branched_before_a_tightening_is_judged_by_it(tmp_path: Path, cli: Cli) -> None:
    """The floor is the base branch as it is now, not as it was where the PR branched.

    Attack: main freezes the dataset; the author branches from a commit before
    the freeze (or keeps an old branch) and adds a column. Compared from the
    merge-base, whose config had no freeze, the column passed as additive,
    although merging it lands an addition main forbids. The diff stays measured
    from the merge-base; only the settings come from the tip of --base.
    """
    repo = _repo(tmp_path, {})
    repo.checkout("main")
    repo.write(
        ".schema-gate.yml",
        "policies:\n  - datasets: ['lake/shop/*']\n    schema_contract: freeze\n",
    )
    repo.commit("freeze the shop")
    repo.checkout("feature")  # branched before the freeze
    repo.write(f"{C}/orders.yaml", ORDERS + "  - name: memo\n    data_type: string\n")
    repo.commit("add memo")
    for head in ((), ("--head", "HEAD")):
        code, report = _json(cli, repo, *head)
        assert code == 1
        assert [(c["rule"], c["severity"]) for c in report["changes"]] == [
            ("column_added", "error")
        ]
        # The PR relaxed nothing (its config is the one it branched with): the
        # base branch moved on, and the notice says so, not "this PR relaxes".
        assert _relaxations(report) == []
        assert any(
            n.startswith("the base branch changed policies since this PR branched")
            for n in report["notices"]
        ), report["notices"]
        assert not any(n.startswith("this PR relaxes") for n in report["notices"])
    # A PR that does weaken its own config is still told it does.
    repo.write(".schema-gate.yml", "rules:\n  column_added: off\n")
    repo.commit("switch a rule off here")
    _code, report = _json(cli, repo)
    assert [r[1] for r in _relaxations(report)] == ["rules.column_added"], report["notices"]
    assert any(n.startswith("this PR relaxes rules.column_added") for n in report["notices"])
    assert any(n.startswith("the base branch changed policies") for n in report["notices"])
    repo.git("reset", "-q", "--hard", "HEAD~1")
    # The changes are still measured from the merge-base: main's own commits
    # since the branch point are not reported as this PR's.
    repo.checkout("main")
    repo.write(f"{C}/items.yaml", "dataset: lake/shop/items\ncolumns:\n  - name: id\n")
    repo.commit("items on main")
    repo.checkout("feature")
    _code, report = _json(cli, repo)
    assert [c["dataset"] for c in report["changes"]] == ["lake/shop/orders"]


def test_renaming_the_dbt_project_does_not_escape_its_frozen_policy(
    tmp_path: Path, cli: Cli
) -> None:
    """``platform.*`` in the base config freezes every model of the ``platform``
    project. Attack: the PR renames the project (``name:`` in dbt_project.yml)
    and adds a column; the models then went by ``plat2.orders`` only, no policy
    matched, and the addition passed as additive."""
    orders = (
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: order_id\n        data_type: int\n"
    )
    project = "name: platform\nversion: '1.0'\nprofile: shop\n"
    repo = GitRepo(tmp_path / "repo")
    repo.write("dbt_project.yml", project)
    repo.write("models/orders.sql", "select 1 as order_id\n")
    repo.write("models/orders.yml", orders)
    repo.write(
        ".schema-gate.yml", "policies:\n  - datasets: ['platform.*']\n    schema_contract: freeze\n"
    )
    repo.commit("a frozen dbt project")
    repo.branch("feature")
    repo.write("dbt_project.yml", project.replace("platform", "plat2"))
    repo.write("models/orders.sql", "select 1 as order_id, 'x' as memo\n")
    repo.write("models/orders.yml", orders + "      - name: memo\n        data_type: string\n")
    code, report = _json(cli, repo)
    assert code == 1
    assert [(c["rule"], c["severity"]) for c in report["changes"]] == [("column_added", "error")]


@pytest.mark.parametrize(
    ("base_config", "head_config", "stale_copy"),
    [
        # an exclude the PR drops: the archive is checked from now on
        (
            'contracts:\n  - "contracts/**/*.yaml"\n  - "!contracts/archive/**"\n',
            'contracts:\n  - "contracts/**/*.yaml"\n',
            "contracts/archive/orders_2023.yaml",
        ),
        # a glob the PR adds: a documentation example is checked from now on
        (
            None,
            'contracts:\n  - "contracts/**/*.yaml"\n  - "docs/**/*.yaml"\n',
            "docs/examples/orders.yaml",
        ),
    ],
)
def test_globs_a_pr_widens_bring_no_copy_that_hides_a_removal(
    tmp_path: Path, cli: Cli, base_config: str | None, head_config: str, stale_copy: str
) -> None:
    """New globs count at once (more files checked is stricter), but a file
    they bring in was no contract at the base. Attack: the PR deletes the live
    contract and widens the globs over an unchanged stale copy (an archived
    version, a docs example) declaring the same dataset; the gate took that
    copy for a second declaration at the base, so the removal "removed
    nothing" and the run passed."""
    stale = "dataset: lake/shop/orders\ncolumns:\n  - name: order_id\n    data_type: int\n"
    files = {stale_copy: stale}
    if base_config:
        files[".schema-gate.yml"] = base_config
    repo = _repo(tmp_path, files)
    repo.write(".schema-gate.yml", head_config)
    repo.remove(f"{C}/orders.yaml")
    code, report = _json(cli, repo)
    assert code == 1
    assert [c["rule"] for c in report["changes"]] == ["model_removed"]
    assert not any("removes nothing" in n for n in report["notices"])


def test_a_copy_the_base_globs_cover_still_declares_the_dataset(tmp_path: Path, cli: Cli) -> None:
    """The other side of the line: a second copy that was a contract at the base
    still declares the dataset, so deleting one copy removes nothing."""
    repo = _repo(tmp_path, {f"{C}/copy/orders.yaml": ORDERS})
    repo.remove(f"{C}/orders.yaml")
    code, report = _json(cli, repo)
    assert code == 0
    assert any("removes nothing" in n for n in report["notices"])
