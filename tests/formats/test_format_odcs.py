"""ODCS v3 parser: the exact model, stable ids, every refusal with its line, detection."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from gate.formats import odcs, parse_contract
from gate.model import Column, ContractError, Dataset
from tests.format_helpers import column_row, load_fixture

FIXTURES = Path(__file__).parent.parent / "fixtures" / "odcs"


def load(name: str) -> tuple[Dataset, ...]:
    return load_fixture("odcs", name)


def row(column: Column) -> tuple[Any, ...]:
    return column_row(column, nested=True)


HEADER = "apiVersion: v3.2.0\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"


def parse_body(body: str, path: str = "contracts/shop.odcs.yaml"):
    return parse_contract((HEADER + textwrap.dedent(body)).encode(), path)


def one_column(prop: str) -> Column:
    contract = parse_body(f"schema:\n  - name: t\n    properties:\n      - {{name: c, {prop}}}\n")
    return contract.datasets[0].columns[0]


# -- the exact model ----------------------------------------------------------


def test_orders_base_exact_model() -> None:
    (orders,) = load("orders.base.yaml")
    assert orders.id == "orders"
    assert orders.format == "odcs"
    assert orders.path == "odcs/orders.base.yaml"
    assert orders.line == 16
    assert orders.version == "1.2.0"
    assert orders.stable_id == "orders_obj"
    assert orders.enforced is True
    assert [row(c) for c in orders.columns] == [
        ("order_id", "BIGINT", 22, 0, True, True, 0, None, "orders_order_id", (), ()),
        ("customer_id", "BIGINT", 30, 1, True, False, None, None, "orders_customer_id", (), ()),
        (
            "status",
            "STRING",
            36,
            2,
            True,
            False,
            None,
            ("placed", "shipped", "delivered", "cancelled"),
            "orders_status",
            (),
            (),
        ),
        ("order_total", "DECIMAL(10,2)", 46, 3, True, False, None, None, "orders_order_total", (), ()),
        ("currency", "VARCHAR(3)", 51, 4, True, False, None, None, "orders_currency", (), ()),
        ("created_at", "TIMESTAMP", 56, 5, True, False, None, None, "orders_created_at", (), ()),
        ("note", "STRING", 61, 6, False, False, None, None, "orders_note", (), ()),
        (
            "shipping_address",
            "struct",
            66,
            7,
            False,
            False,
            None,
            None,
            "orders_shipping_address",
            (),
            (
                ("street", "string", 70, 0, False, False, None, None,
                 "orders_shipping_address_street", (), ()),
                ("city", "string", 73, 1, False, False, None, None,
                 "orders_shipping_address_city", (), ()),
                ("postal_code", "string", 76, 2, False, False, None, None,
                 "orders_shipping_address_postal_code", (), ()),
            ),
        ),
    ]  # fmt: skip
    (check,) = orders.checks
    assert (check.kind, check.line, check.columns) == ("row_count", 80, ())
    assert check.spec == {"metric": "rowCount", "mustBeGreaterThan": 0}


def test_shop_exact_model() -> None:
    customers, orders, order_items, payments = load("shop.yaml")
    # ``physicalName`` wins over ``name``: it is the table consumers read.
    assert [d.id for d in (customers, orders, order_items, payments)] == [
        "dim_customers",
        "orders",
        "order_items",
        "payments",
    ]
    assert [d.stable_id for d in (customers, orders, order_items, payments)] == [
        "customers_obj",
        "orders_obj",
        "order_items_obj",
        "payments_obj",
    ]
    assert {d.version for d in (customers, orders, order_items, payments)} == {"0.4.1"}
    assert [d.line for d in (customers, orders, order_items, payments)] == [14, 47, 68, 105]
    assert [row(c) for c in customers.columns] == [
        ("customer_id", "bigint", 19, 0, True, False, 0, None, "customers_customer_id", (), ()),
        ("email", "varchar(254)", 27, 1, True, True, None, None, "customers_email", (), ()),
        ("segment", "string", 36, 2, False, False, None, ("consumer", "business"),
         "customers_segment", ("invalid_values",), ()),
        ("signed_up_on", "date", 44, 3, False, False, None, None, "customers_signed_up_on", (), ()),
    ]  # fmt: skip
    assert [row(c) for c in orders.columns] == [
        ("order_id", "BIGINT", 51, 0, True, False, 0, None, None, (), ()),
        ("customer_id", "BIGINT", 56, 1, False, False, None, None, None, (), ()),
        ("ordered_at", "timestamp", 59, 2, True, False, None, None, None, (), ()),
        ("tags", "array<string>", 64, 3, False, False, None, None, None, (), ()),
    ]
    # primaryKeyPosition orders the key, not the declaration order.
    assert [row(c) for c in order_items.columns] == [
        ("line_number", "int", 72, 0, True, False, 1, None, None, (), ()),
        ("order_id", "BIGINT", 79, 1, True, False, 0, None, None, (), ()),
        ("quantity", "smallint", 85, 2, False, False, None, None, None, ("sql",), ()),
        ("unit_price", "DECIMAL(12,4)", 93, 3, False, False, None, None, None, (), ()),
        ("discounts", "array<struct>", 96, 4, False, False, None, None, None, (), (
            ("code", "string", 101, 0, False, False, None, None, None, (), ()),
            ("amount", "double", 103, 1, False, False, None, None, None, (), ()),
        )),
    ]  # fmt: skip
    assert [row(c) for c in payments.columns] == [
        ("payment_id", "VARCHAR(36)", 109, 0, True, True, None, None, None, (), ()),
        ("order_id", "BIGINT", 114, 1, False, False, None, None, None, (), ()),
        # v3.0's ``rule: validValues`` spelling gives an enum too.
        ("method", "string", 118, 2, False, False, None, ("card", "paypal", "invoice"), None,
         ("invalid_values",), ()),
        ("captured_at", "timestamp_ntz", 123, 3, False, False, None, None, None, (), ()),
        # An object without members keeps its physicalType.
        ("metadata", "JSON", 127, 4, False, False, None, None, None, (), ()),
    ]  # fmt: skip
    text, duplicates = payments.checks
    assert (text.kind, text.line) == ("text", 131)
    assert (duplicates.kind, duplicates.columns) == ("duplicate_values", ("order_id", "payment_id"))


def test_variants_differ_from_base_by_one_semantic_change() -> None:
    def columns(name: str) -> dict[str, Column]:
        (orders,) = load(name)
        return {c.name: c for c in orders.columns}

    base = columns("orders.base.yaml")
    assert "note" not in columns("orders.column_removed.yaml")
    assert columns("orders.type_narrowed.yaml")["customer_id"].data_type == "INT"
    renamed = columns("orders.column_renamed.yaml")
    assert "note" not in renamed
    assert renamed["order_note"].stable_id == base["note"].stable_id == "orders_note"
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
    assert load("orders.version_bumped.yaml")[0].version == "2.0.0"
    assert load("orders.version_not_bumped.yaml")[0].version == "1.3.0"
    nested = columns("orders.nested_field_removed.yaml")["shipping_address"]
    assert [f.name for f in nested.fields] == ["street", "city"]


# -- types and semantics ------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ("logicalType: string", "string"),
        ("logicalType: string, logicalTypeOptions: {maxLength: 40}", "varchar(40)"),
        ("logicalType: date", "date"),
        ("logicalType: timestamp", "timestamp"),
        ("logicalType: timestamp, logicalTypeOptions: {timezone: false}", "timestamp_ntz"),
        ("logicalType: time", "time"),
        ("logicalType: number", "double"),
        ("logicalType: integer", "bigint"),
        ("logicalType: integer, logicalTypeOptions: {format: i32}", "int"),
        ("logicalType: integer, logicalTypeOptions: {format: u64}", "decimal(20,0)"),
        ("logicalType: boolean", "boolean"),
        ("logicalType: object", "struct"),
        ("logicalType: array", "array"),
        ("physicalType: 'NUMBER(38,0)'", "NUMBER(38,0)"),
        ("logicalType: string, physicalType: VARCHAR(10)", "VARCHAR(10)"),
        ("description: no type", None),
    ],
)
def test_type_mapping(prop: str, expected: str | None) -> None:
    contract = parse_body(f"schema:\n  - name: t\n    properties:\n      - {{name: c, {prop}}}\n")
    assert contract.datasets[0].columns[0].data_type == expected


def test_arrays_and_maps() -> None:
    contract = parse_body(
        """\
        schema:
          - name: t
            properties:
              - name: codes
                logicalType: array
                items:
                  logicalType: integer
                  physicalType: INT
              - name: by_day
                logicalType: map
                map:
                  key: {logicalType: date}
                  value:
                    logicalType: object
                    properties:
                      - name: total
                        logicalType: number
              - name: scores
                logicalType: map
                physicalType: MAP<STRING, ARRAY<DOUBLE>>
                map:
                  key: {logicalType: string}
                  value: {logicalType: array, items: {logicalType: number}}
        """
    )
    codes, by_day, scores = contract.datasets[0].columns
    assert (codes.data_type, codes.fields) == ("array<INT>", ())
    assert by_day.data_type == "map<date,struct>"
    assert [(f.name, f.data_type) for f in by_day.fields] == [("total", "double")]
    assert scores.data_type == "MAP<STRING, ARRAY<DOUBLE>>"


def test_object_with_members_uses_logical_struct_even_with_physical_type() -> None:
    column = (
        parse_body(
            """\
        schema:
          - name: t
            properties:
              - name: address
                logicalType: object
                physicalType: STRUCT<street STRING>
                properties:
                  - name: street
                    logicalType: string
        """
        )
        .datasets[0]
        .columns[0]
    )
    assert column.data_type == "struct"
    assert [f.name for f in column.fields] == ["street"]


def test_physical_names_and_primary_key_without_positions() -> None:
    contract = parse_body(
        """\
        schema:
          - name: Orders
            properties:
              - name: orderId
                physicalName: order_id
                primaryKey: true
              - name: tenant
                primaryKey: true
                primaryKeyPosition: -1
              - name: region
                primaryKeyPosition: 3
        """
    )
    (dataset,) = contract.datasets
    assert dataset.id == "Orders"
    assert [(c.name, c.primary_key_position) for c in dataset.columns] == [
        ("order_id", 0),
        ("tenant", 1),
        ("region", None),  # a position without primaryKey: true is not a key
    ]


def test_enum_entries_are_value_objects() -> None:
    column = one_column("enum: [{value: 1}, {value: 2}, {value: x}]")
    assert column.enum == ("1", "2", "x")
    # v3.2's schema (RFC 0033) wants objects; plain values are refused with a line.
    with pytest.raises(ContractError, match=r"enum\[\d\] must be object.*\[ODCS v3\.2\.0 schema\]"):
        one_column("enum: [1, 2, x]")


def test_no_schema_is_an_empty_contract() -> None:
    contract = parse_contract(HEADER.encode(), "c.yaml")
    assert (contract.format, contract.datasets) == ("odcs", ())


# -- refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("schema: {orders: {}}\n", 6, "'schema' must be a list, found a mapping"),
        ("schema:\n  - orders\n", 7, "schema object #1 must be a mapping, found a string"),
        ("schema:\n  - physicalName: x\n", 7, "schema object #1 has no 'name'"),
        ("schema:\n  - name: 5\n", 7, "schema object #1 'name' must be a string, found a number"),
        (
            "schema:\n  - name: a\n    physicalName: t\n  - name: b\n    physicalName: T\n",
            9,
            "dataset 'T' is declared twice (as 't')",
        ),
        ("schema:\n  - name: t\n    id: 5\n", 8, "schema object 't': 'id' must be a string"),
        (
            "schema:\n  - name: t\n    properties: {a: 1}\n",
            8,
            "schema object 't': 'properties' must be a list, found a mapping",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - a\n",
            9,
            "schema object 't': property #1 must be a mapping, found a string",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - logicalType: string\n",
            9,
            "schema object 't': property #1 has no 'name'",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: id\n      - name: ID\n",
            10,
            "schema object 't': column 'ID' is declared twice (as 'id')",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: id\n        physicalType: 5\n",
            10,
            "property 'id': 'physicalType' must be a string, found a number",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: id\n        logicalType: uuid\n",
            10,
            "property 'id': unknown ODCS logicalType 'uuid'",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: id\n        required: 'true'\n",
            10,
            "property 'id': 'required' must be true or false, found a string",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: id\n        id: [1]\n",
            10,
            "property 'id': 'id' must be a string, found a list",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        primaryKey: true\n"
            "        primaryKeyPosition: 1\n      - name: b\n        primaryKey: true\n"
            "        primaryKeyPosition: 1\n",
            9,
            "schema object 't': two properties share a 'primaryKeyPosition'",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        primaryKey: true\n"
            "        primaryKeyPosition: first\n",
            11,
            "property 'a': 'primaryKeyPosition' must be a whole number, found a string",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        logicalType: string\n"
            "        logicalTypeOptions: [maxLength]\n",
            11,
            "property 'a': 'logicalTypeOptions' must be a mapping, found a list",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        logicalType: string\n"
            "        logicalTypeOptions:\n          maxLength: '40'\n",
            12,
            "property 'a': 'maxLength' must be a whole number, found a string",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        enum:\n"
            "          - label: A\n",
            11,
            "property 'a': an 'enum' entry needs a 'value'",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        logicalType: array\n"
            "        items: string\n",
            11,
            "property 'a': 'items' must be a mapping, found a string",
        ),
        (
            "schema:\n  - name: t\n    properties:\n      - name: a\n        logicalType: object\n"
            "        properties:\n          - name: x\n          - name: X\n",
            13,
            "property 'a': column 'X' is declared twice (as 'x')",
        ),
    ],
)
def test_refusals_name_the_file_and_line(body: str, line: int, message: str) -> None:
    path = "contracts/shop.odcs.yaml"
    with pytest.raises(ContractError) as caught:
        parse_contract((HEADER + body).encode(), path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: "), text
    assert message in text
    assert "\n" not in text


def test_odcs_v2_is_refused_clearly() -> None:
    text = "apiVersion: v2.2.2\nkind: DataContract\ndataset:\n  - table: orders\n"
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), "old.yaml")
    assert str(caught.value) == (
        "old.yaml:1: ODCS apiVersion 'v2.2.2' is not supported; the gate reads ODCS v3 "
        "(apiVersion: v3.x)"
    )


def test_version_must_be_scalar() -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(b"kind: DataContract\napiVersion: v3.0.0\nversion: [1]\n", "c.yaml")
    assert str(caught.value) == "c.yaml:3: 'version' must be a string, found a list"


def test_api_version_must_be_a_string() -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(b"kind: DataContract\napiVersion: 3\n", "c.yaml")
    assert str(caught.value).startswith("c.yaml:2: 'apiVersion' must be a string")


# -- detection ----------------------------------------------------------------


def test_detection() -> None:
    assert odcs.detect({"apiVersion": "v3.0.2", "kind": "DataContract"})
    assert not odcs.detect({"apiVersion": "v3.0.2"})
    assert not odcs.detect({"kind": "DataContract"})
    assert not odcs.detect({"kind": "DataProduct", "apiVersion": "v1.0.0"})
    assert not odcs.detect({"dataset": "orders"})
    assert not odcs.detect("kind: DataContract")


def test_absurd_nesting_fails_closed_with_a_line() -> None:
    props = "{name: a, logicalType: object, properties: [" * 70 + "{name: z}" + "]}" * 70
    text = f"{HEADER}schema:\n  - name: t\n    properties: [{props}]\n"
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), "deep.yaml")
    assert str(caught.value) == (
        "deep.yaml:8: nested fields and element types go deeper than 64 levels"
    )
