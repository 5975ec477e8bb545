"""dbt properties files: contracts, constraints, tests, versions, enforcement, refusals, detection."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from gate.formats import dbt, parse_contract
from gate.formats.dbt.project import Project
from gate.model import Column, ContractError, Dataset
from tests.format_helpers import column_row, load_fixture

FIXTURES = Path(__file__).parent.parent.parent / "fixtures" / "dbt"


def load(name: str) -> tuple[Dataset, ...]:
    return load_fixture("dbt", name)


def row(column: Column) -> tuple[Any, ...]:
    return column_row(column, nested=False)


def parse_text(text: str, path: str = "models/schema.yml"):
    return parse_contract(textwrap.dedent(text).encode(), path)


ENFORCED = "    config:\n      contract:\n        enforced: true\n"


# -- the exact model ----------------------------------------------------------


def test_orders_base_exact_model() -> None:
    (orders,) = load("orders.base.yaml")
    assert orders.id == "orders"
    assert orders.format == "dbt"
    assert orders.path == "dbt/orders.base.yaml"
    assert orders.line == 4
    assert orders.version is None
    assert orders.enforced is True
    assert orders.stable_id is None
    assert [row(c) for c in orders.columns] == [
        ("order_id", "bigint", 15, 0, True, True, 0, None, ()),
        ("customer_id", "bigint", 21, 1, True, False, None, None, ()),
        ("status", "string", 29, 2, True, False, None,
         ("placed", "shipped", "delivered", "cancelled"), ("accepted_values",)),
        ("order_total", "decimal(10,2)", 37, 3, True, False, None, None, ()),
        ("currency", "varchar(3)", 41, 4, True, False, None, None, ()),
        ("created_at", "timestamp", 45, 5, True, False, None, None, ()),
        # dbt never declares a column nullable: no not_null constraint is "unknown".
        ("note", "string", 49, 6, None, False, None, None, ()),
        ("shipping_address", "struct<street:string,city:string,postal_code:string>", 52, 7,
         None, False, None, None, ()),
    ]  # fmt: skip
    # A foreign_key constraint is a relationship, compared by the relationship_* rules.
    (fk,) = orders.relationships
    assert (fk.line, fk.columns, fk.to) == (26, ("customer_id",), "customers.customer_id")
    accepted = orders.column("status").checks[0]
    assert (accepted.line, accepted.columns) == (34, ("status",))
    # dbt >= 1.10 ``arguments:`` are flattened so both spellings are one check.
    assert accepted.spec == {"values": ["placed", "shipped", "delivered", "cancelled"]}
    (row_count,) = orders.checks
    assert row_count.kind == "dbt_expectations.expect_table_row_count_to_be_between"
    assert (row_count.line, row_count.columns, row_count.spec) == (11, (), {"min_value": 1})


def test_shop_exact_model() -> None:
    datasets = load("shop.yml")
    assert [(d.id, d.line, d.enforced) for d in datasets] == [
        ("customers.v2", 34, True),
        ("customers.v1", 35, True),
        ("orders", 43, True),
        ("order_items", 66, True),
        ("payments", 89, False),
    ]
    v2, v1, orders, order_items, payments = datasets
    assert [row(c) for c in v2.columns] == [
        ("customer_id", "bigint", 13, 0, True, False, 0, None, ()),
        ("email", "varchar(254)", 17, 1, True, True, None, None, ()),
        # accepted_values with ``config: {severity: warn}`` (shop.yml:24-28) only warns:
        # it stays a check, but its values are no enum a consumer can rely on.
        ("segment", "string", 22, 2, None, False, None, None, ("accepted_values",)),
        ("country_code", "char(2)", 29, 3, None, False, None, None, ()),
        ("signed_up_on", "date", 31, 4, None, False, None, None, ()),
    ]  # fmt: skip
    # v1: include all but country_code; its own ``segment`` entry replaces the top-level one.
    assert [row(c) for c in v1.columns] == [
        ("customer_id", "bigint", 13, 0, True, False, 0, None, ()),
        ("email", "varchar(254)", 17, 1, True, True, None, None, ()),
        ("segment", "string", 39, 2, None, False, None, None, ()),
        ("signed_up_on", "date", 31, 3, None, False, None, None, ()),
    ]
    assert [row(c) for c in orders.columns] == [
        ("order_id", "bigint", 48, 0, True, False, 0, None, ("unique", "not_null")),
        ("customer_id", "bigint", 56, 1, None, False, None, None, ("relationships",)),
        ("ordered_at", "timestamp", 63, 2, None, False, None, None, ()),
    ]
    # Tests are checks only: a ``unique`` test does not make the column unique.
    assert orders.column("order_id").unique is False
    assert [row(c) for c in order_items.columns] == [
        ("order_id", "bigint", 77, 0, None, False, 0, None, ()),
        ("line_number", "int", 79, 1, None, False, 1, None, ()),
        ("quantity", "int", 81, 2, None, False, None, None, ("check",)),
        ("unit_price", "decimal(12,4)", 86, 3, None, False, None, None, ()),
    ]
    (model_check,) = order_items.checks
    assert (model_check.kind, model_check.columns, model_check.line) == ("check", ("quantity",), 73)
    assert [row(c) for c in payments.columns] == [
        ("payment_id", None, 92, 0, None, False, None, None, ("unique", "not_null")),
        ("method", None, 94, 1, None, False, None, ("card", "paypal", "invoice"),
         ("accepted_values",)),
    ]  # fmt: skip


def test_variants_differ_from_base_by_one_semantic_change() -> None:
    def columns(name: str) -> dict[str, Column]:
        (orders,) = load(name)
        return {c.name: c for c in orders.columns}

    base = columns("orders.base.yaml")
    assert "note" not in columns("orders.column_removed.yaml")
    assert columns("orders.type_narrowed.yaml")["customer_id"].data_type == "int"
    renamed = columns("orders.column_renamed.yaml")
    assert "note" not in renamed and renamed["order_note"].position == base["note"].position
    assert columns("orders.required_added.yaml")["note"].required is True
    assert columns("orders.enum_value_removed.yaml")["status"].enum == (
        "placed",
        "shipped",
        "delivered",
    )
    changed = columns("orders.primary_key_changed.yaml")
    assert [
        changed["customer_id"].primary_key_position,
        changed["order_id"].primary_key_position,
    ] == [
        0,
        1,
    ]
    assert load("orders.check_removed.yaml")[0].checks == ()
    (not_enforced,) = load("orders.enforcement_removed.yaml")
    assert not_enforced.enforced is False
    assert [c.name for c in not_enforced.columns] == list(base)


# -- semantics ----------------------------------------------------------------


def test_files_without_models_hold_no_datasets() -> None:
    assert load("sources_only.yml") == ()
    assert parse_text("version: 2\n").datasets == ()
    assert parse_text("version: 2\nexposures:\n  - name: weekly\n").format == "dbt"
    assert parse_text("models:\n").datasets == ()


def test_dbt_project_yml_holds_no_datasets() -> None:
    contract = parse_text(
        """\
        name: shop
        version: '1.0.0'
        config-version: 2
        profile: shop
        models:
          shop:
            +contract:
              enforced: true
        """,
        "dbt_project.yml",
    )
    assert (contract.format, contract.datasets) == ("dbt", ())


def test_enforcement_is_read_from_model_and_version_config() -> None:
    contract = parse_text(
        """\
        models:
          - name: a
            columns: [{name: x, data_type: int}]
          - name: b
            config: {contract: {enforced: false}}
          - name: c
            config: {materialized: view}
          - name: d
            config: {contract: {enforced: true}}
            columns: [{name: x, data_type: int}]
            versions:
              - v: 1
                config: {contract: {enforced: false}}
              - v: 2
              - v: '2.1'
          - name: e
            columns: [{name: x, data_type: int}]
            versions:
              - v: 1
                config: {contract: {enforced: true}}
        """
    )
    assert [(d.id, d.enforced) for d in contract.datasets] == [
        ("a", False),
        ("b", False),
        ("c", False),
        ("d.v1", False),
        ("d.v2", True),
        ("d.v2.1", True),
        ("e.v1", True),
    ]


def test_model_level_constraints() -> None:
    contract = parse_text(
        """\
        models:
          - name: t
            constraints:
              - type: not_null
                columns: [a, b]
              - type: unique
                columns: [a]
              - type: unique
                columns: [a, b]
              - type: primary_key
                columns: [b, a]
              - type: foreign_key
                columns: [a]
                to: ref('other')
                to_columns: [id]
              - type: custom
                expression: "distkey"
            columns:
              - name: a
              - name: b
              - name: c
                constraints:
                  - type: Not_Null
        """
    )
    (dataset,) = contract.datasets
    assert [(c.name, c.required, c.unique, c.primary_key_position) for c in dataset.columns] == [
        ("a", True, True, 1),
        ("b", True, False, 0),
        ("c", True, False, None),
    ]
    # A multi-column unique constraint is a guarantee on the combination: a check.
    assert [(c.kind, c.columns) for c in dataset.checks] == [
        ("unique", ("a", "b")),
        ("custom", ()),
    ]
    assert [(r.columns, r.to) for r in dataset.relationships] == [(("a",), "other.id")]


def test_version_columns_include_list_and_overrides() -> None:
    contract = parse_text(
        """\
        models:
          - name: m
            columns:
              - name: a
                data_type: int
              - name: b
                data_type: int
              - name: c
                data_type: int
            versions:
              - v: 1
                columns:
                  - include: [c, a]
                  - name: d
                    data_type: string
              - v: 2
                columns:
                  - name: b
                    data_type: bigint
                    constraints: [{type: not_null}]
              - v: 3
                columns:
                  - include: '*'
                    exclude: [a, b, c]
        """
    )
    v1, v2, v3 = contract.datasets
    # Included columns keep the top-level order; the version's own columns follow.
    assert [(c.name, c.data_type, c.position) for c in v1.columns] == [
        ("a", "int", 0),
        ("c", "int", 1),
        ("d", "string", 2),
    ]
    assert [(c.name, c.data_type, c.required) for c in v2.columns] == [
        ("a", "int", None),
        ("b", "bigint", True),
        ("c", "int", None),
    ]
    assert v3.columns == ()


def test_versions_inherit_or_override_constraints_and_tests() -> None:
    contract = parse_text(
        """\
        models:
          - name: m
            constraints: [{type: primary_key, columns: [id]}]
            data_tests: [{dbt_utils.recency: {datepart: day, field: ts, interval: 1}}]
            columns: [{name: id}, {name: ts}]
            versions:
              - v: 1
              - v: 2
                constraints: []
                data_tests: []
        """
    )
    v1, v2 = contract.datasets
    assert v1.column("id").primary_key_position == 0
    assert [c.kind for c in v1.checks] == ["dbt_utils.recency"]
    assert v2.column("id").primary_key_position is None
    assert v2.checks == ()


def test_test_spellings() -> None:
    contract = parse_text(
        """\
        models:
          - name: t
            columns:
              - name: a
                tests:
                  - not_null
                  - accepted_values:
                      values: [1, 2]
                      quote: false
                  - dbt_utils.accepted_range:
                      min_value: 0
                  - name: a_is_known
                    test_name: relationships
                    to: ref('x')
                    field: id
        """
    )
    (column,) = contract.datasets[0].columns
    assert [c.kind for c in column.checks] == [
        "not_null",
        "accepted_values",
        "dbt_utils.accepted_range",
        "relationships",
    ]
    assert column.enum == ("1", "2")
    assert column.required is None  # a not_null *test* is a check, not a constraint


def test_accepted_values_old_and_new_spellings_are_one_check() -> None:
    old = parse_text(
        "models:\n  - name: t\n    columns:\n      - name: a\n        data_tests:\n"
        "          - accepted_values:\n              values: [x]\n"
    )
    new = parse_text(
        "models:\n  - name: t\n    columns:\n      - name: a\n        data_tests:\n"
        "          - accepted_values:\n              arguments:\n                values: [x]\n"
    )
    assert old.datasets[0].columns[0].checks == new.datasets[0].columns[0].checks


# -- refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("models:\n  orders: {}\n", 1, "'models' must be a list, found a mapping"),
        ("models:\n  - orders\n", 2, "model #1 must be a mapping, found a string"),
        ("models:\n  - description: x\n", 2, "model #1 has no 'name'"),
        ("models:\n  - name: [a]\n", 2, "model #1 'name' must be a string, found a list"),
        ("models:\n  - name: a\n  - name: A\n", 3, "dataset 'A' is declared twice (as 'a')"),
        ("models:\n  - name: a\n    config: table\n", 3, "model 'a': 'config' must be a mapping"),
        (
            "models:\n  - name: a\n    config:\n      contract: true\n",
            4,
            "model 'a': 'config.contract' must be a mapping, found a boolean",
        ),
        (
            # YAML 1.2: ``yes`` is a string, and a string is not a boolean.
            "models:\n  - name: a\n    config:\n      contract:\n        enforced: yes\n",
            5,
            "model 'a': 'config.contract.enforced' must be true or false, found a string",
        ),
        ("models:\n  - name: a\n    columns: a\n", 3, "model 'a': 'columns' must be a list"),
        (
            "models:\n  - name: a\n    columns:\n      - data_type: int\n",
            4,
            "model 'a': column #1 has no 'name'",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n      - name: ID\n",
            5,
            "model 'a': column 'ID' is declared twice (as 'id')",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n        data_type: 5\n",
            5,
            "column 'id': 'data_type' must be a string, found a number",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n        constraints:\n"
            "          - type: nonnull\n",
            6,
            "column 'id': constraint #1: unknown constraint type 'nonnull'",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n        constraints:\n"
            "          - not_null\n",
            6,
            "column 'id': constraint #1 must be a mapping, found a string",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n        constraints:\n"
            "          - expression: x > 0\n",
            6,
            "column 'id': constraint #1 'type' is missing",
        ),
        (
            "models:\n  - name: a\n    constraints:\n      - type: primary_key\n"
            "    columns:\n      - name: id\n",
            4,
            "model 'a': a model-level primary_key constraint needs 'columns'",
        ),
        (
            "models:\n  - name: a\n    constraints:\n      - type: primary_key\n"
            "        columns: [id]\n      - type: primary_key\n        columns: [b]\n"
            "    columns:\n      - name: id\n      - name: b\n",
            6,
            "model 'a': more than one primary_key constraint",
        ),
        (
            "models:\n  - name: a\n    constraints:\n      - type: primary_key\n"
            "        columns: [id]\n    columns:\n      - name: id\n      - name: b\n"
            "        constraints: [{type: primary_key}]\n",
            2,
            "model 'a': column 'b' has a primary_key constraint but is not in the model's",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: id\n        tests: [unique]\n"
            "        data_tests: [not_null]\n",
            6,
            "column 'id': declare either 'tests' or 'data_tests', not both",
        ),
        (
            "models:\n  - name: a\n    data_tests:\n      - unique: {}\n        not_null: {}\n",
            4,
            "model 'a': a test needs one key naming it (or a 'test_name')",
        ),
        (
            "models:\n  - name: a\n    data_tests:\n      - accepted_values: [1, 2]\n",
            4,
            "model 'a': test 'accepted_values' options must be a mapping, found a list",
        ),
        (
            "models:\n  - name: a\n    data_tests:\n      - 5\n",
            4,
            "model 'a': a test must be a name or a mapping, found a number",
        ),
        (
            "models:\n  - name: a\n    columns:\n      - name: s\n        data_tests:\n"
            "          - accepted_values:\n              quote: false\n",
            6,
            "'accepted_values' needs 'values'",
        ),
        (
            "models:\n  - name: a\n    versions:\n      - defined_in: a_v1\n",
            4,
            "model 'a': version #1 has no 'v'",
        ),
        (
            "models:\n  - name: a\n    versions:\n      - v: 1\n      - v: '1'\n",
            5,
            "model 'a': version 1 is declared twice",
        ),
        (
            "models:\n  - name: a\n    versions:\n      - v: [1]\n",
            4,
            "model 'a': version 'v' must be a number or a string, found a list",
        ),
        (
            "models:\n  - name: a\n    latest_version: 3\n    versions:\n      - v: 1\n",
            3,
            "model 'a': latest_version 3 is not one of its versions",
        ),
        (
            "models:\n  - name: a\n    columns: [{name: x}]\n    versions:\n      - v: 1\n"
            "        columns:\n          - include: [y]\n",
            7,
            "model 'a' version 1: 'include'/'exclude' names unknown column 'y'",
        ),
        (
            "models:\n  - name: a\n    columns: [{name: x}]\n    versions:\n      - v: 1\n"
            "        columns:\n          - include: all\n          - include: []\n",
            8,
            "model 'a' version 1: at most one 'include'/'exclude' entry",
        ),
        (
            "models:\n  - name: a\n    columns: [{name: x}]\n    versions:\n      - v: 1\n"
            "        columns:\n          - include: [x]\n            exclude: [x]\n",
            8,
            "model 'a' version 1: 'exclude' needs include: '*' or 'all'",
        ),
        (
            "models:\n  - name: a\n    versions:\n      - v: 1\n        columns:\n"
            "          - name: z\n          - name: Z\n",
            7,
            "model 'a' version 1: column 'Z' is declared twice",
        ),
    ],
)
def test_refusals_name_the_file_and_line(text: str, line: int, message: str) -> None:
    path = "models/marts/schema.yml"
    # Enforced by the project: a problem inside an unenforced model's entry is
    # no refusal (that model is no contract, issue #21).
    enforcing = Project(
        path="dbt_project.yml",
        root="",
        name="shop",
        model_paths=("models",),
        source_paths=("models",),
        levels={(): (True, None)},
    )
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), path, enforcing)
    rendered = str(caught.value)
    assert rendered.startswith(f"{path}:{line}: "), rendered
    assert message in rendered
    assert "\n" not in rendered


def test_a_model_level_constraint_naming_an_undeclared_column_waits_for_the_model_file() -> None:
    # Not refused by the parser: the model file's config(materialized='view'), which
    # dbt ranks over the properties and the project, may make the table a view
    # (gate.dbt.undeclared_constraints decides; tests/cli/test_cli_new_repos7.py).
    enforcing = Project(
        path="dbt_project.yml",
        root="",
        name="shop",
        model_paths=("models",),
        source_paths=("models",),
        levels={(): (True, None)},
    )
    text = (
        "models:\n  - name: a\n    constraints:\n      - type: primary_key\n"
        "        columns: [nope]\n    columns:\n      - name: id\n"
    )
    (dataset,) = parse_contract(text.encode(), "models/marts/schema.yml", enforcing).datasets
    assert dataset.table_only == (
        ("model 'a': primary_key constraint names unknown column 'nope'", 4),
    )
    assert dataset.view_only == ()
    assert all(c.primary_key_position is None for c in dataset.columns)


# -- detection ----------------------------------------------------------------


def test_detection() -> None:
    assert dbt.detect({"version": 2, "models": []})
    assert dbt.detect({"sources": []})
    assert dbt.detect({"macros": [], "version": 2})
    assert dbt.detect({"version": 2})
    assert not dbt.detect({"version": 2, "name": "x"})
    assert not dbt.detect({"dataset": "orders", "models": []})  # Soda keeps its files
    assert not dbt.detect({"dataContractSpecification": "1.1.0"})
    assert not dbt.detect([{"models": []}])
