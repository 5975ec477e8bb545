"""A dbt model whose model file is deleted while its properties entry stays.

dbt only warns about such an entry (``NoNodeForYamlKey``: "Did not find
matching node for patch with name 'orders' in the 'models' section of file
...", dbt-core ``parser/schemas.py``) and builds nothing, so every ``ref()``
and warehouse reader of the model breaks; dbt's own state comparison says
"Contracted model '...' was deleted or renamed." (``same_contract_removed``).
The scenarios are written for the gate after reading that code; real git
repositories, ``python -m gate`` as a subprocess.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.dbt.test_dbt_projects import ENFORCED, PROJECT, gate, model, props, rules, start
from tests.gitrepo import GitRepo

ORDERS = props(model("orders", "id", "amount", config=ENFORCED), model("keep", "id"))


def shop(tmp_path: Path, extra: dict[str, str] | None = None) -> GitRepo:
    return start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/marts/orders.yml": ORDERS,
            "models/marts/orders.sql": "select 1 as id, 2 as amount\n",
            "models/marts/keep.sql": "select 1 as id\n",
            **(extra or {}),
        },
    )


def test_deleting_only_the_sql_file_removes_the_model(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    change = report["changes"][0]
    # Anchored at the properties entry that remains, where the fix goes.
    assert (change["path"], change["line"]) == ("models/marts/orders.yml", 3)
    assert "models/marts/orders.sql was deleted" in change["message"]
    assert "delete the properties entry too, or restore the file" in change["message"]
    # The usual acknowledgement clears it.
    code, report = gate(repo, "--accept", "orders")
    assert code == 0
    assert report["changes"][0]["acknowledged"] is True


def test_a_model_that_still_refs_the_deleted_one_is_consumer_broken(tmp_path: Path) -> None:
    # Found on DataRecce/jaffle-shop-expand: the remaining properties entry made
    # the model look present to the consumer check, so its reader was only listed.
    repo = shop(tmp_path, {"models/marts/report.sql": "select id from {{ ref('orders') }}\n"})
    repo.remove("models/marts/orders.sql")
    code, report = gate(repo)
    assert code == 1
    broken = [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert [(c["dataset"], c["path"], c["line"]) for c in broken] == [
        ("orders", "models/marts/report.sql", 1)
    ]


def test_committed_head_mode_sees_the_deletion_too(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    repo.commit("drop the orders model file")
    repo.write("models/marts/orders.sql", "select 1 as id, 2 as amount\n")  # not committed
    code, report = gate(repo, "--head", "feature")
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_moving_the_sql_file_to_another_folder_is_no_change(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.move("models/marts/orders.sql", "models/staging/orders.sql")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])
    # Also when git sees a delete plus an add (the content changed too).
    repo.write("models/staging/orders.sql", "-- rewritten\nselect 3 as id, 4 as amount, 5 as x\n")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_renaming_the_sql_file_to_another_name_removes_the_model(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.move("models/marts/orders.sql", "models/marts/sales.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_moving_the_sql_file_out_of_the_model_paths_removes_the_model(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.move("models/marts/orders.sql", "analyses/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_deleting_the_sql_file_and_the_entry_is_one_removal(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    repo.write("models/marts/orders.yml", props(model("keep", "id")))
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    assert "was deleted" not in report["changes"][0]["message"]


def test_deleting_the_sql_file_of_an_unenforced_model_is_nothing(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.remove("models/marts/keep.sql")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_a_contract_enforced_in_the_deleted_sql_file(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(model("orders", "id")),
            "models/marts/orders.sql": "{{ config(contract={'enforced': true}) }}\nselect 1\n",
        },
    )
    repo.remove("models/marts/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    assert report["changes"][0]["path"] == "models/schema.yml"


def test_the_properties_file_changing_too_is_still_one_removal(tmp_path: Path) -> None:
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    repo.write(
        "models/marts/orders.yml",
        props(model("orders", "id", config=ENFORCED), model("keep", "id")),
    )
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_a_deleted_python_model(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/orders.yml": props(model("orders", "id", config=ENFORCED)),
            "models/orders.py": "def model(dbt, session):\n    return session.table('x')\n",
        },
    )
    repo.remove("models/orders.py")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    assert "models/orders.py was deleted" in report["changes"][0]["message"]
    # A Python model replaced by a SQL one of the same name is the same model.
    repo.write("models/orders.sql", "select 1 as id\n")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


VERSIONED = textwrap.dedent(
    """\
    - name: customers
      config:
        contract: {enforced: true}
      latest_version: 2
      columns:
        - name: id
          data_type: int
      versions:
        - v: 2
        - v: 1
        - v: 0
          defined_in: customers_legacy
    """
)


def versioned(tmp_path: Path) -> GitRepo:
    return start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/customers.yml": props(VERSIONED),
            "models/customers_v2.sql": "select 1 as id\n",
            "models/customers_v1.sql": "select 1 as id\n",
            "models/legacy/customers_legacy.sql": "select 1 as id\n",
        },
    )


def test_a_deleted_version_file(tmp_path: Path) -> None:
    repo = versioned(tmp_path)
    repo.remove("models/customers_v1.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "customers.v1", None)])
    assert "models/customers_v1.sql was deleted" in report["changes"][0]["message"]


def test_a_deleted_defined_in_file(tmp_path: Path) -> None:
    repo = versioned(tmp_path)
    repo.remove("models/legacy/customers_legacy.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "customers.v0", None)])


def test_the_latest_version_may_live_in_the_unsuffixed_file(tmp_path: Path) -> None:
    """dbt-core ``ModelPatchParser``: the latest version falls back to ``<model>.sql``."""
    repo = versioned(tmp_path)
    repo.move("models/customers_v2.sql", "models/customers.sql")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])
    # Only the latest version may: v1 has no such fallback.
    repo.remove("models/customers_v1.sql")
    assert rules(gate(repo)[1]) == [("model_removed", "customers.v1", None)]


def test_a_second_project_is_looked_up_on_its_own(tmp_path: Path) -> None:
    other = PROJECT.replace("name: shop", "name: other")
    repo = shop(
        tmp_path,
        {
            "other/dbt_project.yml": other,
            # An unguarded model of the same file name in another project.
            "other/models/orders.sql": "select 1\n",
            "other/models/o.yml": props(model("o", "id", config=ENFORCED)),
            "other/models/o.sql": "select 1 as id\n",
        },
    )
    # The other project's orders.sql does not keep this project's model alive.
    repo.remove("models/marts/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    # Deleting the other project's file touches nothing here.
    repo.write("models/marts/orders.sql", "select 1 as id, 2 as amount\n")
    repo.remove("other/models/orders.sql")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_deleting_after_the_deprecation_date_is_not_a_break(tmp_path: Path) -> None:
    old = model("orders", "id", config=ENFORCED, extra="  deprecation_date: 2020-01-01\n")
    repo = start(
        tmp_path,
        {"dbt_project.yml": PROJECT, "models/o.yml": props(old), "models/orders.sql": "select 1\n"},
    )
    repo.remove("models/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (0, [("model_removed_after_deprecation", "orders", None)])


# -- a properties entry that never had a model file --------------------------


def test_a_changed_entry_without_any_model_file_is_a_warning(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/o.yml": props(model("orders", "id", "amount", config=ENFORCED)),
        },
    )
    repo.write("models/o.yml", props(model("orders", "id", config=ENFORCED)))
    code, report = gate(repo)
    # The columns are still compared: the gate cannot tell a missing file from a generated one.
    assert (code, rules(report)) == (
        1,
        [("column_removed", "orders", "amount"), ("model_file_missing", "orders", None)],
    )
    missing = next(c for c in report["changes"] if c["rule"] == "model_file_missing")
    assert missing["severity"] == "warning"
    assert "orders.sql/.py" in missing["message"]


def test_a_new_model_without_a_file_blocks_only_with_fail_on_warning(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/keep.sql": "select 1\n"})
    repo.write("models/o.yml", props(model("orders", "id", config=ENFORCED)))
    code, report = gate(repo)
    assert (code, rules(report)) == (
        0,
        [("model_added", "orders", None), ("model_file_missing", "orders", None)],
    )
    assert gate(repo, "--fail-on", "warning")[0] == 1
    repo.write("models/orders.sql", "select 1 as id\n")
    assert rules(gate(repo)[1]) == [("model_added", "orders", None)]


def test_an_unenforced_entry_without_a_model_file_is_nothing(tmp_path: Path) -> None:
    repo = start(tmp_path, {"dbt_project.yml": PROJECT, "models/keep.sql": "select 1\n"})
    repo.write("models/o.yml", props(model("orders", "id")))
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])


def test_two_files_of_one_name_are_not_missing(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(model("orders", "id", "x", config=ENFORCED)),
            "models/a/orders.sql": "select 1\n",
            "models/b/orders.sql": "select 1\n",
        },
    )
    repo.write("models/schema.yml", props(model("orders", "id", config=ENFORCED)))
    assert rules(gate(repo)[1]) == [("column_removed", "orders", "x")]


# -- attacks from review (review2): each one was a silent pass or is a shape
# the first tests did not cover --------------------------------------------


def test_a_moved_properties_file_with_the_model_file_deleted(tmp_path: Path) -> None:
    """The properties file moved unchanged (git: a rename, same blob) while its
    model's file was deleted: the move is not "pure", the model is gone.
    Was a silent pass with a committed HEAD (the worktree saw delete + add)."""
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    repo.move("models/marts/orders.yml", "models/other/orders.yml")
    repo.commit("move the properties, drop the model")
    code, report = gate(repo, "--head", "feature")
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    assert report["changes"][0]["path"] == "models/other/orders.yml"
    assert "models/marts/orders.sql was deleted" in report["changes"][0]["message"]


def test_a_moved_properties_file_with_the_contract_dropped_in_the_model_file(
    tmp_path: Path,
) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/marts/orders.yml": props(model("orders", "id")),
            "models/marts/orders.sql": "{{ config(contract={'enforced': true}) }}\nselect 1\n",
        },
    )
    repo.write("models/marts/orders.sql", "select 1 as id\n")
    repo.move("models/marts/orders.yml", "models/other/orders.yml")
    repo.commit("move the properties, unenforce in SQL")
    code, report = gate(repo, "--head", "feature")
    assert (code, rules(report)) == (1, [("contract_enforcement_removed", "orders", None)])


def test_both_files_of_a_name_deleted_one_was_disabled(tmp_path: Path) -> None:
    """dbt allows two files of one name when all but one are disabled; the gate
    could not say which file the base built, so it counted "no file" and
    deleting both was only a model_file_missing warning (exit 0)."""
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT,
            "models/schema.yml": props(model("orders", "id", config=ENFORCED)),
            "models/a/orders.sql": "select 1 as id\n",
            "models/b/orders.sql": "{{ config(enabled=false) }}\nselect 1 as id\n",
        },
    )
    repo.remove("models/a/orders.sql")
    repo.remove("models/b/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_a_model_file_in_a_second_nested_model_path(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT + "model-paths: [models, more/models]\n",
            "models/schema.yml": props(model("orders", "id", config=ENFORCED)),
            "more/models/deep/er/orders.py": "def model(dbt, session):\n    return 1\n",
        },
    )
    repo.remove("more/models/deep/er/orders.py")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    assert "more/models/deep/er/orders.py was deleted" in report["changes"][0]["message"]


def test_dropping_the_model_path_that_holds_the_file(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        {
            "dbt_project.yml": PROJECT + "model-paths: [models, extra]\n",
            "models/schema.yml": props(model("orders", "id", config=ENFORCED)),
            "extra/orders.sql": "select 1 as id\n",
        },
    )
    repo.write("dbt_project.yml", PROJECT + "model-paths: [models]\n")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
    # Renaming the model path and moving every file with it is no change ...
    repo.write("dbt_project.yml", PROJECT + "model-paths: [transform]\n")
    repo.move("models/schema.yml", "transform/schema.yml")
    repo.move("extra/orders.sql", "transform/orders.sql")
    code, report = gate(repo)
    assert (code, report["changes"]) == (0, [])
    # ... but leaving the model file behind removes the model.
    repo.move("transform/orders.sql", "models/orders.sql")
    code, report = gate(repo)
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_a_model_file_renamed_and_edited(tmp_path: Path) -> None:
    """git sees a delete plus an add: the new name is another model."""
    repo = shop(tmp_path)
    repo.remove("models/marts/orders.sql")
    repo.write("models/marts/sales.sql", "-- rewritten\nselect 9 as id, 8 as amount, 7 as z\n")
    repo.commit("rename and rewrite")
    code, report = gate(repo, "--head", "feature")
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])


def test_a_model_file_renamed_only_in_case(tmp_path: Path) -> None:
    """dbt names a model by its file's stem, case and all (``Orders`` is not
    ``orders`` on the case-sensitive file systems CI runs on)."""
    repo = shop(tmp_path)
    repo.move("models/marts/orders.sql", "models/marts/Orders.sql")
    repo.commit("case")
    code, report = gate(repo, "--head", "feature")
    assert (code, rules(report)) == (1, [("model_removed", "orders", None)])
