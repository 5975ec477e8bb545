"""dbt read as dbt reads it (issues #21 and #27), scenario by scenario.

Each case is written for the gate; the pattern it reproduces is named where a
public project showed it (measured, not copied).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.conftest import gate_env
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = 'name: shop\nversion: "1.0"\nconfig-version: 2\nprofile: shop\n'


def yml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def start(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


def run(cli: Cli, repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = cli(repo.path, "--base", "main", "--format", "json", *args, env=gate_env())
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def refusal(cli: Cli, repo: GitRepo, *args: str) -> list[str]:
    proc = cli(repo.path, "--base", "main", *args, env=gate_env())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return [line.removeprefix("schema-gate: error: ") for line in proc.stderr.splitlines()]


def found(report: dict) -> list[tuple[str, str, str | None]]:
    return sorted((c["rule"], c["dataset"], c["column"]) for c in report["changes"])


ORDERS_TOP_LEVEL = yml("""
    version: 2
    models:
      - name: orders
        contract:
          enforced: true
        columns:
          - name: id
            data_type: int
          - name: amount
            data_type: int
    """)


# -- a top-level contract: (dbt-core moves it into config) ---------------------------


def test_a_top_level_contract_enforces(tmp_path: Path, cli: Cli) -> None:
    """dbt-core's ``normalize_contract_attribute`` moves ``contract:`` into config;
    jaffle-shop-mesh-style projects write it that way."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1 as id\n",
            "models/schema.yml": ORDERS_TOP_LEVEL,
        },
    )
    repo.write("models/schema.yml", ORDERS_TOP_LEVEL.split("      - name: amount")[0])
    code, report = run(cli, repo)
    assert (code, found(report)) == (1, [("column_removed", "orders", "amount")])


def test_a_contract_both_top_level_and_in_config_is_refused_as_dbt_does(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/orders.sql": "select 1\n"})
    repo.write(
        "models/schema.yml",
        ORDERS_TOP_LEVEL.replace(
            "    columns:\n",
            "    config:\n      contract: {enforced: true}\n    columns:\n",
            1,
        ),
    )
    [line] = refusal(cli, repo)
    assert line.startswith("models/schema.yml:4: model 'orders': 'contract' is both"), line


# -- Jinja and expressions in enabled / contract.enforced ----------------------------


def _enforced_orders(config: str = "contract: {enforced: true}") -> str:
    return yml(f"""
        version: 2
        models:
          - name: orders
            config: {{{config}}}
            columns:
              - name: id
                data_type: int
        """)


@pytest.mark.parametrize(
    ("config", "rule"),
    [
        ('contract: {enforced: "{{ false }}"}', "contract_enforcement_removed"),
        ('contract: {enforced: true}, enabled: "{{- false -}}"', "model_disabled"),
    ],
)
def test_constant_jinja_is_folded(tmp_path: Path, cli: Cli, config: str, rule: str) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "models/s.yml": _enforced_orders(),
        },
    )
    repo.write("models/s.yml", _enforced_orders(config))
    code, report = run(cli, repo)
    assert (code, found(report)) == (1, [(rule, "orders", None)])


@pytest.mark.parametrize(
    ("model_file", "text", "line"),
    [
        ("orders.sql", "{{ config(contract=dict(enforced=false)) }}\nselect 1\n", 1),
        ("orders.sql", "{{ config(**{'contract': {'enforced': flag}}) }}\nselect 1\n", 1),
        ("orders.sql", "{% set on = false %}\n{{ config(enabled=on) }}\nselect 1\n", 2),
        ("orders.sql", "{{ config(\n  enabled=not true\n) }}\nselect 1\n", 2),
        ("orders.sql", "{{ config(enabled=(false)) }}\nselect 1\n", 1),
        ("orders.sql", "{{ config(enabled=var('orders_on')) }}\nselect 1\n", 1),
        ("orders.py", "def model(dbt, session):\n    dbt.config(enabled=bool(0))\n", 2),
        ("orders.py", "def model(dbt, session):\n    dbt.config(**kwargs)\n", 2),
    ],
)
def test_an_expression_the_gate_cannot_evaluate_is_a_finding(
    tmp_path: Path, cli: Cli, model_file: str, text: str, line: int
) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            f"models/{model_file}": "select 1\n"
            if model_file.endswith(".sql")
            else "def model(dbt, session):\n    return 1\n",
            "models/s.yml": _enforced_orders(),
        },
    )
    repo.write(f"models/{model_file}", text)
    code, report = run(cli, repo)
    assert code == 1
    unevaluable = [c for c in report["changes"] if c["rule"] == "dbt_config_unevaluable"]
    assert [(c["path"], c["line"], c["severity"]) for c in unevaluable] == [
        (f"models/{model_file}", line, "error")
    ] * len(unevaluable), report["changes"]
    assert unevaluable
    assert (
        "enforcement now depends on an expression the gate cannot evaluate"
        in unevaluable[0]["message"]
    )
    # Unchanged at the next PR: nothing to say.
    repo.commit("expression")
    repo.write("models/s.yml", _enforced_orders() + "    description: orders\n")
    code, report = run(cli, repo, "--base", "HEAD")
    assert not [c for c in report["changes"] if c["rule"] == "dbt_config_unevaluable"]


def test_a_jinja_expression_in_a_properties_file_is_a_finding(tmp_path: Path, cli: Cli) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "models/s.yml": _enforced_orders(),
        },
    )
    repo.write("models/s.yml", _enforced_orders("contract: {enforced: \"{{ var('strict') }}\"}"))
    code, report = run(cli, repo)
    assert (code, found(report)) == (1, [("dbt_config_unevaluable", "orders", None)])
    [change] = report["changes"]
    assert (change["path"], change["line"]) == ("models/s.yml", 4)


# -- what counts as a declaration --------------------------------------------------


def _orders(*columns: str, enforced: bool = True, extra: str = "") -> str:
    config = "    config:\n      contract: {enforced: true}\n" if enforced else ""
    cols = "".join(f"      - name: {c}\n        data_type: int\n{extra}" for c in columns)
    return f"version: 2\nmodels:\n  - name: orders\n{config}    columns:\n{cols}"


def test_two_projects_sharing_a_name_are_fine_when_nothing_enforced_collides(
    tmp_path: Path, cli: Cli
) -> None:
    """Measured on copies of one template project (both ``name: jaffle_shop``)
    in one repository: the unenforced copy is no second declaration."""
    files = {
        "a/dbt_project.yml": PROJECT,
        "a/models/orders.sql": "select 1\n",
        "a/models/schema.yml": _orders("id", "amount"),
        "b/dbt_project.yml": PROJECT,
        "b/models/orders.sql": "select 1\n",
        "b/models/schema.yml": _orders("id", "amount", enforced=False),
    }
    repo = start(tmp_path, files)
    repo.write("a/models/schema.yml", _orders("id"))
    repo.write("b/models/schema.yml", _orders("id", "note", enforced=False))
    code, report = run(cli, repo)
    assert (code, found(report)) == (1, [("column_removed", "orders", "amount")])
    # Both enforced: one dataset declared twice in one format stays a refusal.
    repo.write("b/models/schema.yml", _orders("id", "note"))
    [line] = refusal(cli, repo)
    assert "dataset 'orders' is also declared in" in line, line


ODCS = """\
apiVersion: v3.1.0
kind: DataContract
id: orders-contract
version: {version}
status: active
schema:
  - name: orders
    physicalName: orders
    properties:
{properties}"""


def _odcs(version: str, *columns: str) -> str:
    props = "".join(f"      - name: {c}\n        physicalType: int\n" for c in columns)
    return ODCS.format(version=version, properties=props)


def test_a_dbt_model_and_an_odcs_contract_of_one_table_are_two_contracts(
    tmp_path: Path, cli: Cli
) -> None:
    """The two-layer pattern: an enforced dbt model and the ODCS contract
    published for the same table, each compared with its own base."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "models/schema.yml": _orders("id", "amount", "note"),
            "contracts/orders.odcs.yaml": _odcs("1.0.0", "id", "amount", "note"),
        },
    )
    repo.write("models/schema.yml", _orders("id", "note"))
    repo.write("contracts/orders.odcs.yaml", _odcs("2.0.0", "id", "amount"))
    code, report = run(cli, repo)
    assert code == 1
    by_file = sorted((c["path"], c["rule"], c["column"]) for c in report["changes"])
    assert by_file == [
        ("contracts/orders.odcs.yaml", "column_removed", "note"),
        ("contracts/orders.odcs.yaml", "version_bumped", None),
        ("models/schema.yml", "column_removed", "amount"),
    ]


# -- which keys are refused -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # dbt keeps extra column properties (custom keys): so does the gate.
        (_orders("id", extra="        policy_tags: [pii]\n        quote: true\n"), None),
        # An unenforced model is no contract: its keys are dbt's business.
        (_orders("id", enforced=False, extra="        data_tpye: int\n"), None),
        # A near miss of a known key that is absent: the typo drops a type.
        (
            _orders("id").replace("data_type", "data_tpye"),
            "unknown key 'data_tpye'",
        ),
        (_orders("id").replace("    columns:", "    column:"), "unknown key 'column'"),
    ],
)
def test_keys_are_read_as_dbt_reads_them(
    tmp_path: Path, cli: Cli, text: str, refused: str | None
) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/orders.sql": "select 1\n"})
    repo.write("models/schema.yml", text)
    if refused is None:
        code, _report = run(cli, repo)
        assert code == 0
    else:
        [line] = refusal(cli, repo)
        assert refused in line, line


def test_a_file_the_pr_did_not_touch_never_refuses_the_run(tmp_path: Path, cli: Cli) -> None:
    """A dbt_project.yml change brings every properties file of the project into
    the comparison; a problem in one the PR did not change is not the PR's."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "models/schema.yml": _orders("id").replace("    columns:", "    column:"),
            "models/legacy/old.sql": "select 1\n",
            "models/legacy/old.yml": "version: 2\nmodels:\n  - name: old\n",
        },
    )
    repo.write(
        "dbt_project.yml", PROJECT + "models:\n  shop:\n    legacy:\n      +enabled: false\n"
    )
    code, report = run(cli, repo)
    assert code == 0, report


def test_a_problem_in_an_unenforced_model_never_blocks(tmp_path: Path, cli: Cli) -> None:
    """Two columns that differ only by case: dbt builds the model; the gate would
    refuse it in a contract, but an unenforced model is no contract."""
    twice = (
        "version: 2\nmodels:\n  - name: orders\n    columns:\n      - name: id\n      - name: ID\n"
    )
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/orders.sql": "select 1\n"})
    repo.write("models/schema.yml", twice)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])
    # The model file's own config() enforces it: now it is a contract, and refused.
    repo.write("models/orders.sql", "{{ config(contract={'enforced': true}) }}\nselect 1\n")
    [line] = refusal(cli, repo)
    assert line.startswith("models/schema.yml:6: model 'orders': column 'ID' is declared twice"), (
        line
    )


def test_a_project_file_unreadable_at_the_base_does_not_block_the_pr_that_fixes_it(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": 'version: "1.0"\nconfig-version: 2\n',  # no name: dbt refuses it
            "models/orders.sql": "select 1\n",
            "models/schema.yml": _orders("id", "amount"),
        },
    )
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/schema.yml", _orders("id"))
    code, report = run(cli, repo)
    assert (code, found(report)) == (1, [("column_removed", "orders", "amount")])
    assert any(
        n.startswith("warning: the base version of dbt_project.yml") for n in report["notices"]
    ), report["notices"]


def test_an_unenforced_model_beside_an_odcs_contract_of_its_table_is_no_contract(
    tmp_path: Path, cli: Cli
) -> None:
    """Pairing is by id: the ODCS contract must never pair with the unenforced
    model (that would read as contract_enforcement_removed)."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "contracts/orders.odcs.yaml": _odcs("1.0.0", "id", "amount"),
            "models/schema.yml": _orders("id", "amount", enforced=False),
        },
    )
    repo.write("contracts/orders.odcs.yaml", _odcs("1.1.0", "id", "amount", "note"))
    repo.write("models/schema.yml", _orders("id", enforced=False))
    code, report = run(cli, repo)
    assert (code, found(report)) == (
        0,
        [("column_added", "orders", "note"), ("version_bumped", "orders", None)],
    )


def test_a_clash_between_two_files_the_pr_did_not_touch_is_a_warning(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.sql": "select 1\n",
            "models/a.yml": _orders("id"),
            "models/b.yml": _orders("id"),
            "models/legacy/old.sql": "select 1\n",
        },
    )
    repo.write(
        "dbt_project.yml", PROJECT + "models:\n  shop:\n    legacy:\n      +enabled: false\n"
    )
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])
    assert any("neither file changed in this PR" in n for n in report["notices"]), report
    # A file the PR changed declaring it as well: that clash is the PR's.
    repo.write("models/c.yml", _orders("id"))
    lines = refusal(cli, repo)
    assert any("models/c.yml" in line and "also declared" in line for line in lines), lines


def test_enforcement_switched_on_is_not_compared_with_the_documentation_before(
    tmp_path: Path, cli: Cli
) -> None:
    # ekoepplin/dbt-bigquery-core 75600af8: a model gains `contract: enforced`
    # and a documented type changes with it (`timestamp` -> `timestamp with time
    # zone` there). The unenforced properties promised nothing, so no reader
    # relied on them: nothing is compared with them.
    documented = yml("""
        version: 2
        models:
          - name: articles
            columns:
              - name: id
                data_type: bigint
              - name: draft_note
                data_type: string
    """)
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/articles.sql": "select 1 as id\n",
            "models/articles.yml": documented,
        },
    )
    enforce = "  - name: articles\n    config:\n      contract:\n        enforced: true\n"
    enforced = documented.replace("  - name: articles\n", enforce)
    enforced = enforced.replace("data_type: bigint", "data_type: int")
    enforced = enforced.replace("      - name: draft_note\n        data_type: string\n", "")
    repo.write("models/articles.yml", enforced)
    repo.commit("enforce the contract")
    code, report = run(cli, repo)
    assert code == 0
    assert found(report) == [("contract_enforcement_added", "articles", None)]
    # Once enforced (merged), the same kind of edit is breaking.
    repo.git("checkout", "-q", "-B", "main", "feature")
    repo.git("checkout", "-q", "feature")
    repo.write("models/articles.yml", enforced.replace("data_type: int", "data_type: smallint"))
    repo.commit("narrow it")
    code, report = run(cli, repo)
    assert code == 1
    assert [c["rule"] for c in report["changes"]] == ["type_narrowed"]
