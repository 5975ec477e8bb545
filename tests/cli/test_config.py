"""The config file through the CLI: read from HEAD, validated, overridden by flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.model import ContractError
from gate.rules import Severity
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

C = "soda/contracts"
ORDERS = "dataset: shop.orders\ncolumns:\n  - name: id\n    data_type: int\n"
WIDER = ORDERS.replace("int", "bigint") + "  - name: note\n    data_type: string\n"


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.commit("base")
    repo.branch("feature")
    repo.write(f"{C}/orders.yaml", WIDER)
    return repo


def gate(repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def severities(report: dict) -> dict[str, str]:
    return {c["rule"]: c["severity"] for c in report["changes"]}


def test_without_config_additive_changes_pass(shop: GitRepo) -> None:
    code, report = gate(shop)
    assert code == 0
    assert severities(report) == {"type_widened": "info", "column_added": "info"}


def test_freeze_policy_makes_additive_changes_breaking(shop: GitRepo) -> None:
    shop.write(
        ".schema-gate.yml",
        "policies:\n  - datasets: ['shop.*']\n    schema_contract:\n      columns: freeze\n",
    )
    code, report = gate(shop)
    assert code == 1
    assert severities(report) == {"type_widened": "info", "column_added": "error"}
    assert any(".schema-gate.yml" in n for n in report["notices"])
    shop.write(
        ".schema-gate.yml", "policies:\n  - datasets: ['shop.*']\n    schema_contract: freeze\n"
    )
    code, report = gate(shop)
    assert severities(report) == {"type_widened": "error", "column_added": "error"}
    shop.write(
        ".schema-gate.yml", "policies:\n  - datasets: ['hr.*']\n    schema_contract: freeze\n"
    )
    assert gate(shop)[0] == 0


def test_rule_levels_and_fail_on_from_pyproject(shop: GitRepo) -> None:
    shop.land(  # on the base branch: turning a rule off in the PR itself waits (gate/policy.py)
        "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.schema-gate]\nfail-on = "warning"\n'
        'rules = { column_added = "warning", type_widened = "off" }\n',
    )
    code, report = gate(shop)
    assert code == 1
    assert severities(report) == {"column_added": "warning"}
    assert report["fail_on"] == "warning"
    # Flags override the file.
    code, report = gate(shop, "--fail-on", "error")
    assert code == 0


def test_config_is_read_from_the_head_commit(shop: GitRepo) -> None:
    shop.write(".schema-gate.yml", "fail_on: warning\nrules:\n  column_added: warning\n")
    # Not committed: --head HEAD does not see it (and no contract change either).
    code, report = gate(shop, "--head", "HEAD")
    assert code == 0 and report["changes"] == []
    shop.commit("config and contract")
    code, report = gate(shop, "--head", "HEAD")
    assert code == 1 and severities(report)["column_added"] == "warning"


def test_config_contracts_and_dialect(shop: GitRepo) -> None:
    shop.write("data/x.yaml", "dataset: x\ncolumns:\n  - name: a\n    data_type: int8\n")
    shop.land(".schema-gate.yml", "contracts: ['data/*.yaml']\ndialect: postgres\n")
    _, report = gate(shop)
    assert [c["dataset"] for c in report["changes"]] == ["x"]
    shop.commit("x")
    shop.write("data/x.yaml", "dataset: x\ncolumns:\n  - name: a\n    data_type: bigint\n")
    _, report = gate(shop, "--base", "HEAD")  # INT8 is BIGINT in postgres: no change
    assert report["changes"] == []
    # The flag overrides the file: in Spark's reading INT8 is a TINYINT.
    _, report = gate(shop, "--base", "HEAD", "--dialect", "spark")
    assert [(c["rule"], c["before"]) for c in report["changes"]] == [("type_widened", "TINYINT")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fail_on: sometimes\n", ".schema-gate.yml:1: 'fail_on': 'sometimes' is not one of"),
        ("rules:\n  column_gone: error\n", ".schema-gate.yml:2: unknown rule 'column_gone'"),
        ("rules:\n  column_added: fatal\n", ".schema-gate.yml:2: rule 'column_added': 'fatal'"),
        ("colour: blue\n", ".schema-gate.yml:1: unknown config key 'colour'"),
        (
            "policies:\n  - datasets: [a]\n    schema_contract: {columns: melt}\n",
            ".schema-gate.yml:2: unknown mode 'melt'",
        ),
        (  # the one-word form named an entity the user never wrote ("for 'tables'")
            "policies:\n  - datasets: [a]\n    schema_contract: frozen\n",
            ".schema-gate.yml:2: unknown schema_contract mode 'frozen' (did you mean 'freeze'?); "
            "use evolve, freeze, discard_row, discard_value\n",
        ),
        # A typo gets its fix (issue #21, point 6).
        (
            "fail-on: warning\n",
            ".schema-gate.yml:1: unknown config key 'fail-on' (did you mean 'fail_on'?); known keys: ",
        ),
        (
            "rules:\n  column_remove: off\n",
            ".schema-gate.yml:2: unknown rule 'column_remove' (did you mean 'column_removed'?)\n",
        ),
        (
            "policies:\n  - dataset: [a]\n",
            ".schema-gate.yml:2: unknown policy key(s): dataset (did you mean 'datasets'?)\n",
        ),
        (
            "consumers:\n  pyhton: ['**/*.py']\n",
            ".schema-gate.yml:2: unknown consumers key 'pyhton' (did you mean 'python'?); ",
        ),
        (
            "policies:\n  - schema_contract: freeze\n",
            ".schema-gate.yml:2: a policy needs 'datasets'",
        ),
        ("fail_on: error\ndialect: ''\n", ".schema-gate.yml:2: 'dialect' is empty"),
        ("- a\n", ".schema-gate.yml:1: the config must be a mapping"),
        ("a: [\n", ".schema-gate.yml:2: invalid YAML"),
    ],
)
def test_invalid_config_exits_2(shop: GitRepo, text: str, expected: str) -> None:
    shop.write(".schema-gate.yml", text)
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"schema-gate: error: {expected}"), proc.stderr


def test_explicit_config_must_exist(shop: GitRepo) -> None:
    proc = run_gate(shop.path, "--base", "main", "--config", "ci/gate.yml")
    assert proc.returncode == 2 and proc.stderr == (
        "schema-gate: error: config file ci/gate.yml not found in the working tree "
        "(a relative --config path starts at the repository root)\n"
    )
    shop.write("ci/gate.yml", "rules:\n  column_added: error\n")
    proc = run_gate(shop.path, "--base", "main", "--config", "ci/gate.yml")
    assert proc.returncode == 1, proc.stderr


def test_config_path_is_the_repositorys_from_a_subdirectory_too(shop: GitRepo) -> None:
    # Seen running from a dbt project's models/ folder: `--config ../gate.yml`
    # said "refusing a path that leaves the repository".
    shop.write("gate.yml", "rules:\n  column_added: error\n")
    shop.write("soda/contracts/orders.yaml", ORDERS + "  - name: extra\n")
    sub = shop.path / "soda"
    proc = run_gate(sub, "--base", "main", "--config", "../gate.yml")
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: --config ../gate.yml: give the path relative to the repository "
        "root (it is read from the HEAD side, like git show HEAD:PATH) or an absolute path\n"
    )
    proc = run_gate(sub, "--base", "main", "--contracts", "../soda/**/*.yaml")
    assert proc.returncode == 2 and proc.stderr == (
        "schema-gate: error: contract glob '../soda/**/*.yaml' leaves the repository "
        "(globs start at the repository root wherever the gate runs)\n"
    )
    for path in ("gate.yml", str(shop.path / "gate.yml")):
        proc = run_gate(sub, "--base", "main", "--config", path)
        assert proc.returncode == 1, proc.stderr
        assert "column_added" in proc.stdout


def test_perspective_grades_findings_for_the_side_a_team_protects() -> None:
    from gate.config import parse_config

    narrowed = ("type_narrowed", "d")  # breaks producers
    dropped = ("required_removed", "d")  # breaks consumers
    both = parse_config({}, "c.yml").severity_fn()
    consumer = parse_config({"perspective": "consumer"}, "c.yml").severity_fn()
    producer = parse_config({"perspective": "producer"}, "c.yml").severity_fn()
    assert (both(*narrowed), both(*dropped)) == (Severity.ERROR, Severity.ERROR)
    assert (consumer(*narrowed), consumer(*dropped)) == (Severity.INFO, Severity.ERROR)
    assert (producer(*narrowed), producer(*dropped)) == (Severity.ERROR, Severity.INFO)
    # A directional finding takes the side it is given.
    assert consumer("check_changed", "d", "producers") is Severity.INFO
    assert consumer("check_changed", "d", "consumers") is Severity.WARNING
    # An explicit rule override wins over the perspective.
    pinned = parse_config({"perspective": "consumer", "rules": {"type_narrowed": "error"}}, "c.yml")
    assert pinned.severity_fn()(*narrowed) is Severity.ERROR


def test_unknown_perspective_is_refused_with_its_line() -> None:
    from gate.config import config_from_files

    with pytest.raises(ContractError, match=r"c.yml:2: 'perspective' must be one of"):
        config_from_files(b"fail_on: error\nperspective: readers\n", None, "c.yml")


def test_every_rule_side_is_documented_in_the_perspective_table() -> None:
    from pathlib import Path

    from gate import rules

    page = (Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md").read_text()
    for rule in rules.all_rules():
        rows = [
            [cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in page.splitlines()
            if line.startswith(f"| `{rule.id}` | ")
        ]
        (cells,) = [row for row in rows if len(row) == 5]
        assert cells[2:] == [
            rule.severity_for("consumer").value,
            rule.severity_for("producer").value,
            rule.severity.value,
        ], rule.id


def test_a_change_graded_by_the_config_says_so_in_the_text_report(shop: GitRepo) -> None:
    # A frozen dataset's column_added sat under BREAKING with "column 'x' was
    # added" and nothing saying why an addition blocks.
    shop.write(
        ".schema-gate.yml",
        "policies:\n  - datasets: [shop.*]\n    schema_contract: {columns: freeze}\n"
        "rules:\n  type_widened: warning\n",
    )
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert "  column_added shop.orders.note: (none) -> STRING  [error by config; default info]" in (
        lines
    )
    assert "  type_widened shop.orders.id: INT -> BIGINT  [warning by config; default info]" in (
        lines
    )
    shop.remove(".schema-gate.yml")
    assert "by config" not in run_gate(shop.path, "--base", "main").stdout
