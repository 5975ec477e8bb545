"""dbt projects as dbt sees them, end to end: real git repos, ``python -m gate``.

Scenarios for disabling, deleting and deprecating contracted models follow
dbt-core's own state tests (``tests/functional/defer_state/test_modified_state.py``,
``TestDisable*ContractedModel``, ``TestDelete*ContractedModel``) and
``ModelNode.same_contract_removed``; the cases here are written for the gate.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_gate
from tests.gitrepo import GitRepo

PROJECT = """\
name: shop
version: "1.0"
config-version: 2
profile: shop
"""


def props(*models: str) -> str:
    return "version: 2\nmodels:\n" + "".join(
        textwrap.indent(textwrap.dedent(m), "  ") for m in models
    )


def model(name: str, *columns: str, config: str = "", extra: str = "") -> str:
    cols = "".join(f"    - name: {c}\n      data_type: int\n" for c in columns)
    text = f"- name: {name}\n"
    if config:
        text += "  config:\n" + textwrap.indent(textwrap.dedent(config), "    ")
    text += extra
    return text + "  columns:\n" + cols


ENFORCED = "contract: {enforced: true}\n"


def gate(repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def gate_error(repo: GitRepo, *args: str) -> str:
    proc = run_gate(repo.path, "--base", "main", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0].removeprefix("schema-gate: error: ")


def rules(report: dict) -> list[tuple[str, str, str | None]]:
    return sorted((c["rule"], c["dataset"], c["column"]) for c in report["changes"])


def sql(folder: str, *names: str) -> dict[str, str]:
    """Model files for ``names``: dbt builds no model without one (see model_file_missing)."""
    return {f"{folder}/{name}.sql": "select 1 as id\n" for name in names}


def start(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


# -- finding projects ---------------------------------------------------------


def test_a_project_anywhere_with_its_own_model_paths(tmp_path: Path) -> None:
    root = "analytics/warehouse"
    repo = start(
        tmp_path,
        {
            f"{root}/dbt_project.yml": PROJECT + "model-paths: [transform]\n",
            f"{root}/transform/marts/orders.yml": props(
                model("orders", "id", "amount", config=ENFORCED)
            ),
            # Beside the project, not in a resource path: dbt does not read it.
            f"{root}/.sqlfluff.yml": "anything: [1, 2\n",
            **sql(f"{root}/transform/marts", "orders"),
        },
    )
    repo.write(f"{root}/transform/marts/orders.yml", props(model("orders", "id", config=ENFORCED)))
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("column_removed", "orders", "amount")]
    assert report["changes"][0]["path"] == f"{root}/transform/marts/orders.yml"


def test_yaml_outside_the_resource_paths_is_not_a_contract(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt/dbt_project.yml": PROJECT})
    repo.write("dbt/profiles.yml", "shop:\n  target: dev\n")  # no contract format, not dbt's
    repo.write("dbt/models/unrelated.yml", "just: some yaml\n")  # dbt reads it: no models
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_the_users_exclusions_apply_to_discovered_projects(tmp_path: Path) -> None:
    body = props(model("orders", "id", "amount", config=ENFORCED))
    repo = start(tmp_path, {"legacy/dbt_project.yml": PROJECT, "legacy/models/o.yml": body})
    repo.write("legacy/models/o.yml", props(model("orders", "id", config=ENFORCED)))
    assert gate(repo)[0] == 1
    # Nothing is left to gate, so the config must say that is fine (issue #9).
    # Landed on the base branch first: in the PR that changes legacy/ itself, a new
    # exclude could not hide it (gate/policy.py, tests/test_policy.py).
    repo.land(
        ".schema-gate.yml", 'contracts: ["soda/**/*.yaml", "!legacy/**"]\nallow-empty: true\n'
    )
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_a_bad_dbt_project_file_exits_2_naming_it(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt/dbt_project.yml": PROJECT, "dbt/models/a.yml": props()})
    repo.write("dbt/dbt_project.yml", PROJECT + "model-paths: ['../../etc']\n")
    repo.write("dbt/models/a.yml", props(model("a", "id")))
    line = gate_error(repo)
    assert line.startswith("dbt/dbt_project.yml:5:"), line
    assert "inside the project" in line


# -- enforcement from dbt_project.yml -----------------------------------------

FOLDERS = PROJECT + textwrap.dedent(
    """\
    models:
      shop:
        marts:
          +contract:
            enforced: true
          legacy:
            +contract: {enforced: false}
    """
)


def test_folder_level_contract_and_overrides(tmp_path: Path) -> None:
    files = {
        "dbt_project.yml": FOLDERS,
        "models/marts/orders.yml": props(model("orders", "id", "amount")),
        "models/marts/legacy/old.yml": props(model("old", "id", "amount")),
        # The properties file overrides the project, both ways.
        "models/marts/refunds.yml": props(
            model("refunds", "id", "amount", config="contract: {enforced: false}\n")
        ),
        "models/staging/stg.yml": props(model("stg", "id", "amount", config=ENFORCED)),
        "models/staging/raw.yml": props(model("raw", "id", "amount")),
        **sql("models/marts", "orders", "refunds"),
        **sql("models/marts/legacy", "old"),
        **sql("models/staging", "stg", "raw"),
    }
    repo = start(tmp_path, files)
    for path, text in files.items():
        if path.endswith(".yml") and path != "dbt_project.yml":
            repo.write(path, text.replace("      - name: amount\n        data_type: int\n", ""))
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [
        ("column_removed", "orders", "amount"),
        ("column_removed", "stg", "amount"),
    ]


def test_a_model_is_placed_by_its_sql_file(tmp_path: Path) -> None:
    """dbt's fqn follows the model's SQL file, not the properties file that describes it."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": FOLDERS,
            "models/schema.yml": props(
                model("orders", "id", "amount"), model("raw", "id", "amount")
            ),
            "models/marts/orders.sql": "select 1 as id, 2 as amount\n",
            "models/raw.sql": "select 1 as id, 2 as amount\n",
        },
    )
    repo.write("models/schema.yml", props(model("orders", "id"), model("raw", "id")))
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("column_removed", "orders", "amount")]


def test_changing_only_dbt_project_yml_rereads_its_models(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": FOLDERS,
            "models/marts/orders.yml": props(model("orders", "id")),
            "models/staging/stg.yml": props(model("stg", "id")),
        },
    )
    # A change that cannot alter any contract reads no properties file.
    repo.write("dbt_project.yml", FOLDERS + "vars:\n  region: eu\n")
    code, report = gate(repo)
    assert (code, report["changes"], report["summary"]["files_compared"]) == (0, [], 0)
    # Switching the folder's contract off is reported for the unchanged file's model.
    repo.write("dbt_project.yml", FOLDERS.replace("enforced: true", "enforced: false"))
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("contract_enforcement_removed", "orders", None)]
    assert report["summary"]["files_compared"] == 2


def test_moving_model_paths_reads_the_new_folder(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT + "models:\n  +contract: {enforced: true}\n",
            "models/orders.yml": props(model("orders", "id", "amount")),
            "src/orders.yml": props(model("orders", "id")),
            **sql("models", "orders"),
            **sql("src", "orders"),
        },
    )
    repo.write(
        "dbt_project.yml", PROJECT + "model-paths: [src]\nmodels:\n  +contract: {enforced: true}\n"
    )
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("column_removed", "orders", "amount")]


def test_jinja_in_dbt_project_counts_as_enforced(tmp_path: Path) -> None:
    project = (
        PROJECT
        + "models:\n  shop:\n    +contract:\n      enforced: \"{{ target.name == 'prod' }}\"\n"
    )
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": project,
            "models/o.yml": props(model("o", "id", "x")),
            **sql("models", "o"),
        },
    )
    repo.write("models/o.yml", props(model("o", "id")))
    assert rules(gate(repo)[1]) == [("column_removed", "o", "x")]


def test_versioned_model_enforced_from_the_project(tmp_path: Path) -> None:
    versioned = textwrap.dedent(
        """\
        - name: customers
          latest_version: 2
          columns:
            - name: id
              data_type: int
            - name: email
              data_type: string
          versions:
            - v: 2
            - v: 1
        """
    )
    project = (
        PROJECT
        + "models:\n  shop:\n    customers:\n      v1:\n        +contract: {enforced: true}\n"
    )
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": project,
            "models/customers.yml": props(versioned),
            "models/customers_v1.sql": "select 1\n",
            "models/customers_v2.sql": "select 1\n",
        },
    )
    repo.write(
        "models/customers.yml",
        props(versioned.replace("    - name: email\n      data_type: string\n", "")),
    )
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("column_removed", "customers.v1", "email")]


def test_head_commit_mode_reads_both_sides_from_git(tmp_path: Path) -> None:
    repo = start(
        tmp_path, {"p/dbt_project.yml": FOLDERS, "p/models/marts/o.yml": props(model("o", "id"))}
    )
    repo.write("p/dbt_project.yml", PROJECT)
    repo.commit("drop folder configs")
    repo.write("p/dbt_project.yml", FOLDERS)  # the working tree must not count
    code, report = gate(repo, "--head", "feature")
    assert code == 1
    assert rules(report) == [("contract_enforcement_removed", "o", None)]


# -- disabled, deleted, deprecated --------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # TestDisableUnversionedContractedModel
        (model("orders", "id", config=ENFORCED), model("orders", "id", config=ENFORCED + "enabled: false\n"),
         [("model_disabled", "orders", None)]),
        # TestDisableUnversionedUncontractedModel: no contract, no break
        (model("orders", "id"), model("orders", "id", config="enabled: false\n"), []),
        # Disabled before and after: nothing to say.
        (model("orders", "id", config=ENFORCED + "enabled: false\n"),
         model("orders", "id", "x", config=ENFORCED + "enabled: false\n"), []),
        # Enabled again: the model is back, as new.
        (model("orders", "id", config=ENFORCED + "enabled: false\n"), model("orders", "id", config=ENFORCED),
         [("model_added", "orders", None)]),
    ],
)  # fmt: skip
def test_disabling_a_model(tmp_path: Path, before: str, after: str, expected: list) -> None:
    repo = start(
        tmp_path,
        {"dbt_project.yml": PROJECT, "models/o.yml": props(before), **sql("models", "orders")},
    )
    repo.write("models/o.yml", props(after))
    code, report = gate(repo)
    assert rules(report) == expected
    assert code == (1 if any(r == "model_disabled" for r, _d, _c in expected) else 0)


def test_disabling_one_version_of_a_contracted_model(tmp_path: Path) -> None:
    """TestDisableVersionedContractedModel: dbt raises ContractBreakingChangeError."""
    versioned = textwrap.dedent(
        """\
        - name: table_model
          config:
            contract: {enforced: true}
          latest_version: 1
          columns:
            - name: id
              data_type: int
          versions:
            - v: 1
            - v: 2
        """
    )
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(versioned),
            **sql("models", "table_model_v1", "table_model_v2"),
        },
    )
    disabled = versioned.replace(
        "    - v: 1\n", "    - v: 1\n      config:\n        enabled: false\n"
    )
    repo.write("models/schema.yml", props(disabled))
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("model_disabled", "table_model.v1", None)]
    change = report["changes"][0]
    assert (change["path"], change["line"]) == ("models/schema.yml", 11)
    assert "disabled" in change["message"]


def test_disabling_from_dbt_project_yml(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": FOLDERS,
            "models/marts/o.yml": props(model("o", "id")),
            "models/marts/o.sql": "x",
        },
    )
    repo.write("dbt_project.yml", FOLDERS + "      o:\n        +enabled: false\n")
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("model_disabled", "o", None)]


@pytest.mark.parametrize(
    ("deprecation", "rule", "code"),
    [
        ("2020-01-01", "model_removed_after_deprecation", 0),
        ("'2020-01-01T10:00:00+02:00'", "model_removed_after_deprecation", 0),
        ("2999-12-31", "model_removed", 1),
    ],
)
def test_removing_a_model_after_its_deprecation_date(
    tmp_path: Path, deprecation: str, rule: str, code: int
) -> None:
    """``same_contract_removed``: past its deprecation_date a deletion is no contract break."""
    old = model("orders", "id", config=ENFORCED, extra=f"  deprecation_date: {deprecation}\n")
    repo = start(
        tmp_path, {"dbt_project.yml": PROJECT, "models/o.yml": props(old, model("keep", "id"))}
    )
    repo.write("models/o.yml", props(model("keep", "id")))
    got, report = gate(repo)
    assert (got, rules(report)) == (code, [(rule, "orders", None)])
    if rule == "model_removed_after_deprecation":
        assert report["changes"][0]["severity"] == "info"


def test_disabling_after_the_deprecation_date_is_not_a_break(tmp_path: Path) -> None:
    old = model("orders", "id", config=ENFORCED, extra="  deprecation_date: 2020-01-01\n")
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/o.yml": props(old)})
    repo.write(
        "models/o.yml",
        props(old.replace("enforced: true}\n", "enforced: true}\n    enabled: false\n")),
    )
    code, report = gate(repo)
    assert (code, rules(report)) == (0, [("model_removed_after_deprecation", "orders", None)])


def test_a_bad_deprecation_date_exits_2(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT})
    repo.write("models/o.yml", props(model("o", "id", extra="  deprecation_date: next year\n")))
    line = gate_error(repo)
    assert line.startswith("models/o.yml:4:") and "deprecation_date" in line, line


# -- renames, quoting ---------------------------------------------------------


def test_an_unenforced_model_is_never_renamed_into_a_contract(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/o.yml": props(model("staging_orders", "id", "amount")),
            **sql("models", "staging_orders", "orders"),
        },
    )
    repo.write("models/o.yml", props(model("orders", "id", "amount", config=ENFORCED)))
    code, report = gate(repo)
    assert (code, rules(report)) == (0, [("model_added", "orders", None)])


def test_quoted_identifiers_in_constraints_name_the_column(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        - name: trips
          config:
            contract: {enforced: true}
            materialized: table
          constraints:
            - type: primary_key
              columns: ['"from"', TO_STOP]
          columns:
            - name: from
              data_type: int
              quote: true
            - name: to_stop
              data_type: int
        """
    )
    repo = start(
        tmp_path,
        {"dbt_project.yml": PROJECT, "models/t.yml": props(text), **sql("models", "trips")},
    )
    repo.write("models/t.yml", props(text.replace("['\"from\"', TO_STOP]", "['\"from\"']")))
    code, report = gate(repo)
    assert code == 1
    (change,) = report["changes"]
    assert (change["rule"], change["before"], change["after"]) == (
        "primary_key_changed",
        "from, to_stop",
        "from",
    )
    repo.write("models/t.yml", props(text.replace("'\"from\"'", "'\"FROM\"'")))
    assert "unknown column '\"FROM\"'" in gate_error(repo)


# -- the model file's own config() --------------------------------------------


def test_a_contract_enforced_in_the_model_sql_is_guarded(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(model("orders", "id", "amount")),
            "models/marts/orders.sql": "{{ config(materialized='table', contract={'enforced': true}) }}\nselect 1\n",
        },
    )
    repo.write("models/schema.yml", props(model("orders", "id")))
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("column_removed", "orders", "amount")])


@pytest.mark.parametrize(
    ("sql", "rule"),
    [
        ('{{ config(contract={"enforced": False}) }}\nselect 1\n', "contract_enforcement_removed"),
        ("{{\n  config(\n    enabled=false,\n  )\n}}\nselect 1\n", "model_disabled"),
    ],
)
def test_changing_only_the_model_sql_config_is_seen(tmp_path: Path, sql: str, rule: str) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(
                model("orders", "id", config=ENFORCED), model("other", "id")
            ),
            "models/orders.sql": "select 1\n",
        },
    )
    repo.write("models/orders.sql", sql)
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [(rule, "orders", None)])
    assert report["summary"]["files_compared"] == 1
    # A change to the SQL that leaves its config alone reads no properties file.
    repo.write("models/orders.sql", "select 2\n")
    code, report = gate(repo)
    assert (code, report["changes"], report["summary"]["files_compared"]) == (0, [], 0)


# -- latest_version -----------------------------------------------------------

VERSIONED = textwrap.dedent(
    """\
    - name: customers
      config:
        contract: {enforced: true}
      latest_version: 1
      columns:
        - name: id
          data_type: int
      versions:
        - v: 1
        - v: 2
    """
)


def test_moving_latest_version_is_a_warning(tmp_path: Path) -> None:
    """dbt-core TestModifiedLatestVersion: both versions modified, no contract error."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/c.yml": props(VERSIONED),
            **sql("models", "customers_v1", "customers_v2"),
        },
    )
    repo.write("models/c.yml", props(VERSIONED.replace("latest_version: 1", "latest_version: 2")))
    code, report = gate(repo)
    assert (code, rules(report)) == (0, [("latest_version_changed", "customers.v2", None)])
    change = report["changes"][0]
    assert (change["severity"], change["before"], change["after"]) == (
        "warning",
        "customers.v1",
        "customers.v2",
    )
    assert gate(repo, "--fail-on", "warning")[0] == 1


def test_without_latest_version_the_highest_version_is_latest(tmp_path: Path) -> None:
    base = VERSIONED.replace("  latest_version: 1\n", "")
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/c.yml": props(base),
            **sql("models", "customers_v1", "customers_v2", "customers_v10"),
        },
    )
    repo.write("models/c.yml", props(base + "    - v: 10\n"))
    code, report = gate(repo)
    assert code == 0
    assert rules(report) == [
        ("latest_version_changed", "customers.v10", None),
        ("model_added", "customers.v10", None),
    ]
    # Pinning the old latest keeps unpinned consumers where they were.
    repo.write(
        "models/c.yml",
        props(base.replace("  columns:", "  latest_version: 2\n  columns:") + "    - v: 10\n"),
    )
    assert rules(gate(repo)[1]) == [("model_added", "customers.v10", None)]


def test_a_project_folder_with_glob_characters_is_read_literally(tmp_path: Path) -> None:
    root = "team [a]*"
    repo = start(
        tmp_path,
        {
            f"{root}/dbt_project.yml": FOLDERS,
            f"{root}/models/marts/o.yml": props(model("o", "id")),
            "team a/models/marts/x.yml": "not: read\n",  # what an unescaped [a] would match
        },
    )
    repo.write(f"{root}/dbt_project.yml", FOLDERS.replace("enforced: true", "enforced: false"))
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("contract_enforcement_removed", "o", None)])
    assert report["summary"]["files_compared"] == 1


def test_a_disabled_twin_is_no_duplicate_but_two_enabled_ones_are(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {"dbt_project.yml": PROJECT, "models/a.yml": props(model("o", "id", config=ENFORCED))},
    )
    repo.write("models/b.yml", props(model("o", "id", config="enabled: false\n")))
    assert gate(repo)[1]["changes"] == []
    # An unenforced model is no contract, so never a second declaration (issue #21).
    repo.write("models/b.yml", props(model("o", "id")))
    assert gate(repo)[1]["changes"] == []
    repo.write("models/b.yml", props(model("o", "id", config=ENFORCED)))
    assert "dataset 'o' is also declared in models/a.yml" in gate_error(repo)


def test_moving_only_the_sql_file_out_of_a_contracted_folder(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": FOLDERS,
            "models/schema.yml": props(model("orders", "id")),
            "models/marts/orders.sql": "select 1 as id\n",
        },
    )
    repo.move("models/marts/orders.sql", "models/staging/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("contract_enforcement_removed", "orders", None)])


def test_a_new_untracked_project_in_the_working_tree(tmp_path: Path) -> None:
    repo = start(tmp_path, {"README.md": "x\n"})
    repo.write("new/dbt_project.yml", FOLDERS)
    repo.write("new/models/marts/o.yml", props(model("o", "id")))
    repo.write("new/models/staging/s.yml", props(model("s", "id")))
    repo.write("new/models/marts/o.sql", "select 1 as id\n")
    code, report = gate(repo)
    assert (code, rules(report)) == (0, [("model_added", "o", None)])


def test_a_copied_versioned_model_clashes_with_the_unchanged_original(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/c.yml": props(VERSIONED)})
    repo.write("models/copy.yml", props(VERSIONED))
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        "schema-gate: error: models/copy.yml:11: dataset 'customers.v1' is also declared in models/c.yml",
        "schema-gate: error: models/copy.yml:12: dataset 'customers.v2' is also declared in models/c.yml",
        "schema-gate: refused 1 contract file (2 errors); nothing was compared",
    ], proc.stderr
