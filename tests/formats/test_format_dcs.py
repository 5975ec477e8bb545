"""Data Contract Specification parser: the exact model, every refusal with its line, detection."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from gate.formats import dcs, parse_contract
from gate.model import Column, ContractError, Dataset
from tests.format_helpers import column_row, load_fixture

FIXTURES = Path(__file__).parent.parent / "fixtures" / "dcs"


def load(name: str) -> tuple[Dataset, ...]:
    return load_fixture("dcs", name)


def row(column: Column) -> tuple[Any, ...]:
    return column_row(column, nested=True)


def parse_text(text: str, path: str = "contracts/shop.yaml"):
    return parse_contract(textwrap.dedent(text).encode(), path)


# -- the exact model ----------------------------------------------------------

ORDERS_BASE = [
    ("order_id", "bigint", 18, 0, True, True, 0, None, None, (), ()),
    ("customer_id", "bigint", 23, 1, True, False, None, None, None, (), ()),
    (
        "status",
        "string",
        28,
        2,
        True,
        False,
        None,
        ("placed", "shipped", "delivered", "cancelled"),
        None,
        (),
        (),
    ),
    ("order_total", "decimal(10,2)", 36, 3, True, False, None, None, None, (), ()),
    ("currency", "varchar(3)", 42, 4, True, False, None, None, None, (), ()),
    ("created_at", "timestamp", 46, 5, True, False, None, None, None, (), ()),
    ("note", "string", 49, 6, False, False, None, None, None, (), ()),
    (
        "shipping_address",
        "struct",
        52,
        7,
        False,
        False,
        None,
        None,
        None,
        (),
        (
            ("street", "string", 55, 0, False, False, None, None, None, (), ()),
            ("city", "string", 57, 1, False, False, None, None, None, (), ()),
            ("postal_code", "string", 59, 2, False, False, None, None, None, (), ()),
        ),
    ),
]


def test_orders_base_exact_model() -> None:
    (orders,) = load("orders.base.yaml")
    assert orders.id == "orders"
    assert orders.format == "dcs"
    assert orders.path == "dcs/orders.base.yaml"
    assert orders.line == 14
    assert orders.version == "1.2.0"
    assert orders.enforced is True
    assert orders.stable_id is None
    assert orders.allow_extra_columns is False
    assert [row(c) for c in orders.columns] == ORDERS_BASE
    (check,) = orders.checks
    assert check.kind == "sql"
    assert check.line == 62
    assert check.columns == ()
    assert check.spec == {
        "type": "sql",
        "query": "SELECT COUNT(*) FROM orders",
        "mustBeGreaterThan": 0,
    }
    # The description is documentation, not part of what is checked.
    assert "description" not in check.key
    assert orders.column("note").description == "Free text the customer left at checkout."


def test_shop_exact_model() -> None:
    customers, orders, order_items, payments = load("shop.yaml")
    assert [d.id for d in (customers, orders, order_items, payments)] == [
        "customers",
        "orders",
        "order_items",
        "payments",
    ]
    assert {d.version for d in (customers, orders, order_items, payments)} == {"0.4.1"}
    assert [d.line for d in (customers, orders, order_items, payments)] == [13, 43, 59, 92]
    assert [row(c) for c in customers.columns] == [
        # ``$ref`` to a definition: the type comes from it, the field's own keys win.
        ("customer_id", "bigint", 16, 0, True, False, 0, None, None, (), ()),
        ("email", "varchar(254)", 20, 1, True, True, None, None, None, (), ()),
        (
            "segment",
            "string",
            26,
            2,
            False,
            False,
            None,
            ("consumer", "business"),
            None,
            ("custom",),
            (),
        ),
        ("signed_up_on", "date", 35, 3, False, False, None, None, None, (), ()),
        ("preferences", "map<string,boolean>", 37, 4, False, False, None, None, None, (), ()),
    ]
    assert [row(c) for c in orders.columns] == [
        ("order_id", "bigint", 46, 0, True, False, 0, None, None, (), ()),
        ("customer_id", "bigint", 50, 1, False, False, None, None, None, (), ()),
        ("ordered_at", "timestamp", 52, 2, True, False, None, None, None, (), ()),
        ("tags", "array<string>", 55, 3, False, False, None, None, None, (), ()),
    ]
    # Model-level ``primaryKey`` list gives a composite key in its own order.
    assert [row(c) for c in order_items.columns] == [
        ("order_id", "bigint", 63, 0, True, False, 0, None, None, (), ()),
        ("line_number", "int", 66, 1, True, False, 1, None, None, (), ()),
        ("sku", "string", 69, 2, False, False, None, None, None, (), ()),
        ("quantity", "int", 72, 3, True, False, None, None, None, ("sql",), ()),
        ("unit_price", "decimal(12,4)", 79, 4, False, False, None, None, None, (), ()),
        (
            "discounts",
            "array<struct>",
            83,
            5,
            False,
            False,
            None,
            None,
            None,
            (),
            (
                ("code", "string", 88, 0, False, False, None, None, None, (), ()),
                ("amount", "double", 90, 1, False, False, None, None, None, (), ()),
            ),
        ),
    ]
    assert order_items.column("quantity").checks[0].columns == ("quantity",)
    assert [row(c) for c in payments.columns] == [
        ("payment_id", "string", 96, 0, True, True, None, None, None, (), ()),
        ("order_id", "bigint", 100, 1, True, False, None, None, None, (), ()),
        (
            "method",
            "string",
            103,
            2,
            False,
            False,
            None,
            # An ``invalidValues`` quality check lists the allowed values: an enum.
            ("card", "paypal", "invoice"),
            None,
            ("invalid_values",),
            (),
        ),
        ("amount", "decimal(10,2)", 111, 3, False, False, None, None, None, (), ()),
        ("captured_at", "timestamp_ntz", 115, 4, False, False, None, None, None, (), ()),
        ("raw_response", "binary", 117, 5, False, False, None, None, None, (), ()),
    ]
    assert payments.allow_extra_columns is True
    text, duplicates = payments.checks
    assert (text.kind, text.line) == ("text", 120)
    assert "Every captured payment" in text.key  # a text check is its description
    assert (duplicates.kind, duplicates.columns) == ("duplicate_values", ("order_id", "payment_id"))


# -- the semantic variants ----------------------------------------------------


def columns_of(name: str) -> dict[str, Column]:
    (orders,) = load(name)
    return {c.name: c for c in orders.columns}


def test_variants_differ_from_base_by_one_semantic_change() -> None:
    base = columns_of("orders.base.yaml")
    assert "note" not in columns_of("orders.column_removed.yaml")
    assert columns_of("orders.type_narrowed.yaml")["customer_id"].data_type == "int"
    renamed = columns_of("orders.column_renamed.yaml")
    assert "note" not in renamed and renamed["order_note"].position == base["note"].position
    assert base["note"].required is False
    assert columns_of("orders.required_added.yaml")["note"].required is True
    assert columns_of("orders.enum_value_removed.yaml")["status"].enum == (
        "placed",
        "shipped",
        "delivered",
    )
    changed = columns_of("orders.primary_key_changed.yaml")
    assert (
        changed["customer_id"].primary_key_position,
        changed["order_id"].primary_key_position,
    ) == (
        0,
        1,
    )
    (no_check,) = load("orders.check_removed.yaml")
    assert no_check.checks == ()
    (bumped,) = load("orders.version_bumped.yaml")
    (not_bumped,) = load("orders.version_not_bumped.yaml")
    assert (bumped.version, not_bumped.version) == ("2.0.0", "1.3.0")
    nested = columns_of("orders.nested_field_removed.yaml")["shipping_address"]
    assert [f.name for f in nested.fields] == ["street", "city"]


# -- type mapping -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("{type: string}", "string"),
        ("{type: text, maxLength: 50}", "varchar(50)"),
        ("{type: varchar}", "string"),
        ("{type: number}", "decimal(38,0)"),
        ("{type: decimal, precision: 10, scale: 2}", "decimal(10,2)"),
        ("{type: numeric, precision: 5}", "decimal(5,0)"),
        ("{type: int}", "int"),
        ("{type: integer}", "int"),
        ("{type: long}", "bigint"),
        ("{type: bigint}", "bigint"),
        ("{type: float}", "float"),
        ("{type: double}", "double"),
        ("{type: boolean}", "boolean"),
        ("{type: timestamp}", "timestamp"),
        ("{type: timestamp_tz}", "timestamp"),
        ("{type: timestamp_ntz}", "timestamp_ntz"),
        ("{type: date}", "date"),
        ("{type: time}", "time"),
        ("{type: bytes}", "binary"),
        ("{type: record, fields: {a: {type: int}}}", "struct"),
        ("{fields: {a: {type: int}}}", "struct"),
        ("{type: array, items: {type: int}}", "array<int>"),
        ("{type: array, items: {type: array, items: {type: long}}}", "array<array<bigint>>"),
        ("{type: array}", "array"),
        ("{type: map, values: {type: double}}", "map<string,double>"),
        (
            "{type: map, keys: {type: int}, values: {type: object, fields: {a: {type: int}}}}",
            "map<int,struct>",
        ),
        ("{type: variant}", "variant"),
        ("{type: json}", "json"),
        ("{type: 'null'}", "null"),
        ("{description: no type}", None),
        ("{$ref: 'https://example.com/definitions/id.yaml'}", None),
    ],
)
def test_type_mapping(field: str, expected: str | None) -> None:
    contract = parse_text(
        f"""\
        dataContractSpecification: 1.2.1
        id: shop
        info:
          title: Shop
          version: 1.0.0
        models:
          t:
            fields:
              c: {field}
        """
    )
    assert contract.datasets[0].columns[0].data_type == expected


def test_map_and_array_element_members_are_nested_fields() -> None:
    contract = parse_text(
        """\
        dataContractSpecification: 1.1.0
        id: shop
        info:
          title: Shop
          version: 1.0.0
        models:
          t:
            fields:
              by_country:
                type: map
                values:
                  type: object
                  fields:
                    total: {type: long}
        """
    )
    (column,) = contract.datasets[0].columns
    assert [(f.name, f.data_type) for f in column.fields] == [("total", "bigint")]


def test_required_and_unique_follow_the_spec_defaults() -> None:
    contract = parse_text(
        """\
        dataContractSpecification: 1.1.0
        id: shop
        info:
          title: Shop
          version: 1.0.0
        models:
          t:
            fields:
              a: {type: int}
              b: {type: int, required: false, unique: false}
              c: {type: int, required: true, unique: true}
        """
    )
    assert [(c.required, c.unique) for c in contract.datasets[0].columns] == [
        (False, False),
        (False, False),
        (True, True),
    ]


def test_legacy_primary_flag_and_definitions_chain() -> None:
    contract = parse_text(
        """\
        dataContractSpecification: 0.9.3
        id: legacy
        info: {title: Legacy, version: '3'}
        models:
          t:
            fields:
              id:
                $ref: '#/definitions/id'
                primary: true
        definitions:
          id:
            $ref: '#/definitions/base_id'
            type: long
            description: A key.
          base_id:
            type: long
            required: true
        """
    )
    (dataset,) = contract.datasets
    assert dataset.version == "3"
    (column,) = dataset.columns
    assert (column.data_type, column.required, column.primary_key_position) == ("bigint", True, 0)


def test_no_models_is_an_empty_contract() -> None:
    contract = parse_text(
        "dataContractSpecification: 1.1.0\nid: x\ninfo: {title: X, version: 1.0.0}\n"
    )
    assert contract.format == "dcs"
    assert contract.datasets == ()


# -- refusals -----------------------------------------------------------------

HEADER = "dataContractSpecification: 1.1.0\nid: shop\n"


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("models: [orders]\n", 3, "'models' must be a mapping, found a list"),
        ("models:\n  orders: 3\n", 4, "model 'orders' must be a mapping, found a number"),
        ("models:\n  orders:\n", 4, "model 'orders' must be a mapping, found nothing"),
        ("models:\n  1: {}\n", 4, "model names must be non-empty strings"),
        (
            "models:\n  orders: {}\n  Orders: {}\n",
            5,
            "dataset 'Orders' is declared twice (as 'orders')",
        ),
        (
            "models:\n  orders:\n    fields: [id]\n",
            5,
            "model 'orders': 'fields' must be a mapping, found a list",
        ),
        (
            "models:\n  orders:\n    fields:\n      id: string\n",
            6,
            "field 'id' must be a mapping, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n",
            6,
            "field 'id' must be a mapping, found nothing",
        ),
        (
            "models:\n  orders:\n    fields:\n      true: {type: int}\n",
            6,
            "model 'orders': field names must be non-empty strings",
        ),
        (
            "models:\n  orders:\n    fields:\n      id: {type: int}\n      ID: {type: int}\n",
            7,
            "model 'orders': column 'ID' is declared twice (as 'id')",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: 3\n",
            7,
            "field 'id': 'type' must be a string, found a number",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: strng\n",
            7,
            "field 'id': unknown DCS type 'strng'",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: int\n        required: 'yes'\n",
            8,
            "field 'id': 'required' must be true or false, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: int\n        unique: yes\n",
            8,
            "field 'id': 'unique' must be true or false, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: string\n        maxLength: ten\n",
            8,
            "field 'id': 'maxLength' must be a whole number, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: decimal\n        precision: 10.5\n",
            8,
            "field 'id': 'precision' must be a whole number, found a number",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        $ref: '#/definitions/nope'\n",
            7,
            "field 'id': '$ref' '#/definitions/nope' points nowhere",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        $ref: '#/definitions/a'\n"
            "definitions:\n  a:\n    $ref: '#/definitions/a'\n",
            10,
            "'$ref' chain too deep or circular",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: string\n"
            "        fields:\n          a: {type: int}\n",
            8,
            "field 'id': 'fields' is only allowed on object, record or struct, not 'string'",
        ),
        (
            "models:\n  orders:\n    fields:\n      tags:\n        type: array\n        items: int\n",
            8,
            "field 'tags' 'items' must be a mapping, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      s:\n        type: string\n        enum: [{a: 1}]\n",
            8,
            "field 's': 'enum' must hold plain values, found a mapping",
        ),
        (
            "models:\n  orders:\n    primaryKey: [id, nope]\n    fields:\n      id: {type: int}\n",
            5,
            "model 'orders': 'primaryKey' names unknown field 'nope'",
        ),
        (
            "models:\n  orders:\n    primaryKey: [id]\n    fields:\n      id: {type: int}\n"
            "      b: {type: int, primaryKey: true}\n",
            5,
            "model 'orders': field 'b' is marked primaryKey but is not in the model's 'primaryKey' list",
        ),
        (
            "models:\n  orders:\n    fields:\n      id: {type: int}\n    quality:\n      - sql\n",
            8,
            "model 'orders': quality entry #1 must be a mapping, found a string",
        ),
        (
            "models:\n  orders:\n    fields:\n      id:\n        type: int\n        quality: sql\n",
            8,
            "field 'id': 'quality' must be a list, found a string",
        ),
        ("info: [1.0.0]\n", 3, "'info' must be a mapping, found a list"),
        ("info:\n  version: [1]\n", 4, "'info.version' must be a string, found a list"),
        ("definitions: [a]\n", 3, "'definitions' must be a mapping, found a list"),
    ],
)
def test_refusals_name_the_file_and_line(body: str, line: int, message: str) -> None:
    path = "contracts/shop.yaml"
    with pytest.raises(ContractError) as caught:
        parse_contract((HEADER + body).encode(), path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: "), text
    assert message in text
    assert "\n" not in text


def test_specification_marker_must_be_a_version() -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(b"dataContractSpecification: [1]\n", "c.yaml")
    assert str(caught.value).startswith("c.yaml:1: 'dataContractSpecification' must be a version")


# -- detection ----------------------------------------------------------------


def test_detection() -> None:
    assert dcs.detect({"dataContractSpecification": "1.1.0"})
    assert not dcs.detect({"dataset": "orders"})
    assert not dcs.detect({"apiVersion": "v3.1.0", "kind": "DataContract"})
    assert not dcs.detect(["dataContractSpecification"])
    # A DCS file with a 'dataset'-like key is still DCS: it is checked before Soda,
    # so the DCS schema (not Soda's key set) judges it, and the DCS schema allows
    # extension keys (issue #21: accepted, where this used to be a refusal).
    contract = parse_text(
        "dataContractSpecification: 1.1.0\nid: x\ninfo: {title: X, version: '1'}\ndataset: x\n"
    )
    assert (contract.format, contract.datasets, contract.warnings) == ("dcs", (), ())


def test_absurd_nesting_fails_closed_with_a_line() -> None:
    nested = "{type: object, fields: {a: " * 70 + "{type: int}" + "}}" * 70
    text = f"dataContractSpecification: 1.1.0\nmodels:\n  t:\n    fields:\n      c: {nested}\n"
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), "deep.yaml")
    assert str(caught.value) == (
        "deep.yaml:5: nested fields and element types go deeper than 64 levels"
    )


# -- physical types (review2) -------------------------------------------------
# A field's ``config.snowflakeType`` (and the other engines') is its physical
# column type there: datacontract-cli's SQL exports use it before ``type``
# (``sql_type_converter.convert_to_snowflake``); its Snowflake fixture declares
# ``type: timestamp`` with ``snowflakeType: TIMESTAMP_LTZ``. The gate ignored
# it, so narrowing it passed silently.

PHYSICAL = """\
    dataContractSpecification: 1.1.0
    id: orders
    info: {{title: Orders, version: 1.0.0}}
    models:
      orders:
        fields:
          amount:
            type: decimal
            config:
              snowflakeType: {amount}
              avroType: bytes
          processed_at:
            type: timestamp
            config: {{snowflakeType: {ts}, bigqueryType: TIMESTAMP}}
    """


def physical(amount: str = "NUMBER(38,2)", ts: str = "TIMESTAMP_LTZ") -> Dataset:
    return parse_text(PHYSICAL.format(amount=amount, ts=ts)).datasets[0]


def test_config_physical_types_are_read_per_engine() -> None:
    amount, processed = physical().columns
    assert amount.physical_types == (("snowflake", "NUMBER(38,2)"),)  # avroType is no SQL
    assert processed.physical_types == (("bigquery", "TIMESTAMP"), ("snowflake", "TIMESTAMP_LTZ"))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"amount": "NUMBER(10,2)"}, [("type_narrowed", "amount", "DECIMAL(38,2)")]),
        ({"amount": "NUMBER(38, 2)"}, []),  # spelling only
        ({"amount": "NUMBER(38,4)"}, [("type_narrowed", "amount", "DECIMAL(38,2)")]),
        ({"amount": "VARCHAR"}, [("type_changed", "amount", "DECIMAL(38,2)")]),
        ({"ts": "TIMESTAMP_NTZ"}, [("type_changed", "processed_at", "TIMESTAMPLTZ")]),
        ({"amount": "NUMBER(38,4)", "ts": "timestamp_ltz"}, [("type_narrowed", "amount", "DECIMAL(38,2)")]),
    ],
)  # fmt: skip
def test_a_changed_physical_type_is_compared_in_its_engines_dialect(
    change: dict[str, str], expected: list[tuple[str, str, str]]
) -> None:
    from gate.diff import diff_datasets

    changes = diff_datasets([physical()], [physical(**change)], dialect="spark")
    changes = [c for c in changes if c.rule.startswith("type_")]  # not version_not_bumped
    assert [(c.rule, c.column, c.before) for c in changes] == expected
    for c in changes:
        assert "snowflake type" in c.message


def test_a_physical_type_declared_or_dropped() -> None:
    from gate.diff import diff_datasets

    without = parse_text(
        PHYSICAL.format(amount="NUMBER(38,2)", ts="X").replace(
            "config: {snowflakeType: X, bigqueryType: TIMESTAMP}", "description: none"
        )
    ).datasets[0]
    dropped = diff_datasets([physical()], [without], dialect="spark")
    dropped = [c for c in dropped if c.rule.startswith("type_")]
    assert [(c.rule, c.severity.value, c.before) for c in dropped] == [
        ("type_removed", "warning", "TIMESTAMP"),
        ("type_removed", "warning", "TIMESTAMPLTZ"),
    ]
    declared = diff_datasets([without], [physical()], dialect="spark")
    declared = [c for c in declared if c.rule.startswith("type_")]
    assert [(c.rule, c.after) for c in declared] == [
        ("type_declared", "TIMESTAMP"),
        ("type_declared", "TIMESTAMPLTZ"),
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("config: [a]", "field 'amount': 'config'"),
        ("config: {snowflakeType: 5}", "field 'amount': 'config.snowflakeType'"),
    ],
)
def test_a_malformed_config_fails_closed_with_its_line(config: str, message: str) -> None:
    text = PHYSICAL.format(amount="X", ts="TIMESTAMP").replace(
        "config:\n              snowflakeType: X\n              avroType: bytes", config
    )
    with pytest.raises(ContractError) as caught:
        parse_text(text)
    assert message in str(caught.value)
    assert caught.value.line == 9
