"""Soda contracts (v3 and v4): the exact model, both check spellings, hostile YAML, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gate.formats import parse_contract, soda
from gate.model import Column, ContractError, Dataset
from gate.yaml_load import load_yaml
from tests.cost import cpu_seconds
from tests.format_helpers import column_row, load_fixture

FIXTURES = Path(__file__).parent.parent / "fixtures" / "soda"


def load(name: str) -> tuple[Dataset, ...]:
    return load_fixture("soda", name)


def row(column: Column) -> tuple[Any, ...]:
    return column_row(column, nested=False)


def refused(text: str | bytes, path: str = "soda/orders.yaml") -> str:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(ContractError) as caught:
        parse_contract(data, path)
    rendered = str(caught.value)
    assert "\n" not in rendered
    return rendered


# -- the exact model ----------------------------------------------------------


def test_orders_base_exact_model_v3_spelling() -> None:
    (orders,) = load("orders.base.yaml")
    assert (orders.id, orders.format, orders.line, orders.version) == ("orders", "soda", 1, None)
    assert orders.enforced is True
    assert orders.allow_extra_columns is False
    assert [row(c) for c in orders.columns] == [
        ("order_id", "bigint", 3, 0, None, False, None, None,
         ("no_missing_values", "no_duplicate_values")),
        ("customer_id", "bigint", 8, 1, None, False, None, None, ("no_missing_values",)),
        ("status", "varchar", 12, 2, None, False, None,
         ("placed", "shipped", "delivered", "cancelled"), ("no_invalid_values",)),
        ("order_total", "decimal(10,2)", 17, 3, None, False, None, None, ()),
        ("currency", "varchar(3)", 19, 4, None, False, None, None, ()),
        ("created_at", "timestamp", 21, 5, None, False, None, None, ()),
        # ``optional: true`` is the only nullability Soda states.
        ("note", "varchar", 23, 6, False, False, None, None, ()),
        ("shipping_address", "struct<street:string,city:string,postal_code:string>", 26, 7,
         None, False, None, None, ()),
    ]  # fmt: skip
    (rows_exist,) = orders.checks
    assert (rows_exist.kind, rows_exist.line, rows_exist.columns) == ("rows_exist", 29, ())
    invalid = orders.column("status").checks[0]
    assert invalid.spec == {"valid_values": ["placed", "shipped", "delivered", "cancelled"]}
    assert invalid.columns == ("status",)


def test_payments_exact_model_v4_spelling() -> None:
    (payments,) = load("payments.v4.yaml")
    assert payments.id == "shop/sales/payments"
    assert payments.allow_extra_columns is True
    assert [row(c) for c in payments.columns] == [
        ("payment_id", "varchar(36)", 3, 0, None, False, None, None, ("missing", "duplicate")),
        ("order_id", "bigint", 8, 1, None, False, None, None, ("missing",)),
        ("method", "varchar", 12, 2, None, False, None, ("card", "paypal", "invoice"),
         ("invalid",)),
        ("amount", "decimal(10,2)", 17, 3, None, False, None, None, ("invalid",)),
        ("captured_at", "timestamp", 22, 4, False, False, None, None, ()),
    ]  # fmt: skip
    schema, row_count = payments.checks
    assert (schema.kind, schema.spec) == ("schema", {"allow_extra_columns": True})
    assert (row_count.kind, row_count.line) == ("row_count", 28)
    assert row_count.spec == {"threshold": {"must_be_greater_than": 0}}


def test_variants_differ_from_base_by_one_semantic_change() -> None:
    def columns(name: str) -> dict[str, Column]:
        (orders,) = load(name)
        return {c.name: c for c in orders.columns}

    base = columns("orders.base.yaml")
    assert "note" not in columns("orders.column_removed.yaml")
    assert columns("orders.type_narrowed.yaml")["customer_id"].data_type == "int"
    renamed = columns("orders.column_renamed.yaml")
    assert "note" not in renamed and renamed["order_note"].position == base["note"].position
    # Dropping ``optional: true`` moves the column from nullable to unspecified.
    assert (base["note"].required, columns("orders.required_added.yaml")["note"].required) == (
        False,
        None,
    )
    assert columns("orders.enum_value_removed.yaml")["status"].enum == (
        "placed",
        "shipped",
        "delivered",
    )
    assert load("orders.check_removed.yaml")[0].checks == ()


def test_v3_and_v4_spellings_give_the_same_check() -> None:
    v3 = parse_contract(
        b"dataset: t\ncolumns:\n  - name: a\n    checks:\n"
        b"      - type: invalid\n        valid_values: [x, y]\n",
        "v3.yaml",
    )
    v4 = parse_contract(
        b"dataset: t\ncolumns:\n  - name: a\n    checks:\n"
        b"      - invalid:\n          valid_values: [x, y]\n",
        "v4.yaml",
    )
    (a3,) = v3.datasets[0].columns
    (a4,) = v4.datasets[0].columns
    assert a3.checks == a4.checks
    assert a3.enum == a4.enum == ("x", "y")


def test_bare_check_names_and_multi_column_checks() -> None:
    contract = parse_contract(
        b"dataset: t\ncolumns:\n  - name: a\n    checks:\n      - missing\n"
        b"checks:\n  - duplicate:\n      columns: [a, b]\n",
        "t.yaml",
    )
    (dataset,) = contract.datasets
    assert [c.kind for c in dataset.column("a").checks] == ["missing"]
    assert dataset.checks[0].columns == ("a", "b")


def test_yaml_1_1_booleans_stay_strings() -> None:
    contract = parse_contract(
        b"dataset: flags\ncolumns:\n  - name: on\n  - name: yes\n  - name: off\n  - name: no\n"
        b"  - name: status\n    checks:\n      - invalid:\n          valid_values: [yes, no, true]\n",
        "flags.yaml",
    )
    (dataset,) = contract.datasets
    assert [c.name for c in dataset.columns] == ["on", "yes", "off", "no", "status"]
    assert dataset.column("status").enum == ("yes", "no", "true")


# -- refusals -----------------------------------------------------------------


def test_duplicate_columns_case_insensitively() -> None:
    text = "dataset: t\ncolumns:\n  - name: id\n  - name: Id\n"
    assert refused(text) == (
        "soda/orders.yaml:4: dataset 't': column 'Id' is declared twice (as 'id'): names "
        "differing only in case are one column to Delta Lake, Parquet readers and most warehouses"
    )
    exact = "dataset: t\ncolumns:\n  - name: id\n  - name: id\n"
    assert refused(exact) == "soda/orders.yaml:4: dataset 't': column 'id' is declared twice"


def test_column_without_name() -> None:
    text = "dataset: t\ncolumns:\n  - name: a\n  - data_type: int\n"
    assert refused(text) == "soda/orders.yaml:4: column #2 has no 'name'"


def test_column_that_is_not_a_mapping() -> None:
    assert refused("dataset: t\ncolumns:\n  - a\n").startswith(
        "soda/orders.yaml:3: column #1 must be a mapping, found a string"
    )


def test_missing_dataset() -> None:
    assert refused("columns:\n  - name: a\n") == (
        "soda/orders.yaml:1: 'dataset' is missing: a Soda contract needs 'dataset:'"
    )


def test_non_string_dataset() -> None:
    assert refused("dataset: [orders]\n") == (
        "soda/orders.yaml:1: 'dataset' must be a string, found a list"
    )
    assert (
        refused("dataset: 12\n") == "soda/orders.yaml:1: 'dataset' must be a string, found a number"
    )
    assert refused("dataset:\n") == "soda/orders.yaml:1: 'dataset' is missing"


def test_bad_checks_and_values() -> None:
    assert refused("dataset: t\ncolumns:\n  - name: a\n    optional: 'yes'\n") == (
        "soda/orders.yaml:4: column 'a': 'optional' must be true or false, found a string"
    )
    assert refused("dataset: t\ncolumns:\n  - name: a\n    data_type: 5\n") == (
        "soda/orders.yaml:4: column 'a': 'data_type' must be a string, found a number"
    )
    assert refused("dataset: t\nchecks:\n  - missing: 3\n").startswith(
        "soda/orders.yaml:3: dataset 't': check 'missing' options must be a mapping"
    )
    assert refused("dataset: t\nchecks:\n  - {a: 1, b: 2}\n").startswith(
        "soda/orders.yaml:3: dataset 't': a check needs one key naming its type"
    )


def test_alias_bomb_is_refused_fast() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        prev = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([prev] * 9)}]")
    lines.append("dataset: orders")
    lines.append("columns: *a9")
    with cpu_seconds() as cpu:  # expanded, the bomb is 9**10 strings: no end in CPU either
        rendered = refused("\n".join(lines) + "\n")
    assert cpu.seconds < 2.0, cpu.seconds
    assert rendered == (
        "soda/orders.yaml: YAML aliases expand too far (possible alias bomb); refusing to load"
    )


def test_yaml_syntax_error_names_the_line() -> None:
    text = "dataset: orders\ncolumns:\n  - name: a\n    data_type: [int\n  - name: b\n"
    rendered = refused(text)
    assert rendered.startswith("soda/orders.yaml:5: invalid YAML: "), rendered


def test_binary_and_non_utf8_content() -> None:
    assert refused(b"\x89PNG\r\n\x1a\n\x00\x00") == (
        "soda/orders.yaml: binary content, not a YAML text file"
    )
    assert refused(b"dataset: caf\xe9\n").startswith("soda/orders.yaml: not valid UTF-8")


def test_several_documents_and_empty_files() -> None:
    assert refused("dataset: a\n---\ndataset: b\n").startswith("soda/orders.yaml:2: invalid YAML")
    assert refused("").startswith("soda/orders.yaml: empty file")
    assert refused("- dataset: a\n") == (
        "soda/orders.yaml:1: the top level must be a mapping, found a list"
    )


# -- detection ----------------------------------------------------------------


def test_detection() -> None:
    assert soda.detect({"dataset": "orders"})
    assert not soda.detect({"models": []})
    assert not soda.detect(["dataset"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dataset: d\nx: !!python/object/apply:os.system [ls]\n", "unsupported tag"),
        ("dataset: d\nx: !!set {a: null}\n", "unsupported tag"),
        ("dataset: d\n? [a]\n: 1\n", "unhashable key"),
        ("dataset: d\nx: &a [*a]\n", "alias"),
    ],
)
def test_unsafe_or_unbounded_yaml_is_refused(text: str, message: str) -> None:
    from gate.formats import parse_contract
    from gate.model import ContractError

    with pytest.raises(ContractError, match=message):
        parse_contract(text.encode(), "c.yaml")


def test_merge_keys_and_aliases_still_work() -> None:
    from gate.formats import parse_contract

    text = (
        "dataset: d\n"
        "x-defaults: &num {data_type: bigint}\n"
        "columns:\n"
        "  - {<<: *num, name: a}\n"
        "  - <<: *num\n"
        "    name: b\n"
        "    data_type: int\n"
    )
    columns = parse_contract(text.encode(), "c.yaml").datasets[0].columns
    assert [(c.name, c.data_type, c.line) for c in columns] == [("a", "bigint", 4), ("b", "int", 5)]


# -- soda-core's own key set (issue #21) ----------------------------------------
# Each contract below reproduces a pattern of a contract in soda-core's tests; the
# file that showed it is named (measured locally on soda-core's v3 branch and v4
# main; nothing of theirs is copied here).


def parsed(text: str) -> Dataset:
    (dataset,) = parse_contract(text.encode(), "soda/c.yaml").datasets
    return dataset


def test_v4_reference_data_column_expression_and_missing_format_are_soda_keys() -> None:
    # soda-tests/tests/integration/test_invalid_reference_check.py (valid_reference_data),
    # soda-tests/tests/feature/test_column_expression.py (column_expression, missing_format)
    dataset = parsed(
        "dataset: ds/db/sch/orders\n"
        "variables:\n  expr:\n    default: \"payload::json->>'code'\"\n"
        "columns:\n"
        "  - name: country\n"
        "    column_expression: '${var.expr}'\n"
        "    missing_format: {regex: '^-$', name: dash}\n"
        "    valid_reference_data: {dataset: ds/db/sch/countries, column: code}\n"
        "    checks:\n      - missing:\n      - invalid:\n"
    )
    missing, invalid = dataset.columns[0].checks
    assert missing.spec == {
        "column_expression": "${var.expr}",
        "missing_format": {"regex": "^-$", "name": "dash"},
    }
    assert invalid.spec["valid_reference_data"] == {
        "dataset": "ds/db/sch/countries",
        "column": "code",
    }
    assert invalid.spec["column_expression"] == "${var.expr}"


@pytest.mark.parametrize(
    ("top", "seen_in"),
    [
        ("failed_rows:\n  strategy: store_keys\n  keys: [id]\n", "unit/manual_soda_cloud_flow.py"),
        ("diagnostics: store_check_results\n", "unit/manual_soda_cloud_flow.py"),
        ("data_source: pg\ndataset_prefix: [db, public]\n", "unit/test_contract_parser_api.py"),
        ("check_attributes: {team: a}\n", "v4 contract_yaml.py reads it"),
        (
            "data_source: pg\ndatabase: db\nschema: public\n",
            "v3 atlan/test_atlan_contract_push_plugin.py",
        ),
    ],
)
def test_top_level_keys_soda_core_reads(top: str, seen_in: str) -> None:
    assert parsed(f"dataset: orders\n{top}columns:\n  - name: id\n").columns[0].name == "id", (
        seen_in
    )


def test_valid_values_holding_null_allow_nothing_more() -> None:
    # soda-tests/tests/integration/test_invalid_check.py: valid_values: ['1', '2', '3', null];
    # Soda counts null as missing, never invalid, so the enum is the non-null values.
    column = parsed(
        "dataset: d\ncolumns:\n  - name: id\n    valid_values: ['1', '2', null]\n"
        "    checks:\n      - invalid:\n"
    ).columns[0]
    assert column.enum == ("1", "2")
    on_check = parsed(
        "dataset: d\ncolumns:\n  - name: id\n    checks:\n"
        "      - invalid:\n          valid_values: [null, 'a']\n"
    ).columns[0]
    assert on_check.enum == ("a",)


def test_a_variable_where_a_number_is_expected_is_kept_as_text() -> None:
    # soda-tests/tests/integration/test_invalid_check.py: valid_max_length: ${var.my_int_variable}
    column = parsed(
        "dataset: d\ncolumns:\n  - name: id\n    checks:\n      - invalid:\n"
        "          valid_max_length: ${var.max_len}\n          valid_min: ${var.low}\n"
    ).columns[0]
    assert dict(column.constraints) == {"maxLength": "${var.max_len}", "minimum": "${var.low}"}
    # not a variable: still refused
    assert "must be a whole number" in refused(
        "dataset: d\ncolumns:\n  - name: id\n    valid_max_length: ten\n"
    )


PLAIN_COLUMNS = [
    "  - name: id\n    data_type: bigint\n",
    "  - name: '  padded  '\n    data_type: '  varchar(10)  '\n",
    "  - name: amount\n    data_type: ''\n",
    "  - name: amount\n    data_type:\n",
    "  - name: amount\n",
    "  - name: amount\n    data_type: decimal\n    optional: true\n",
    "  - name: amount\n    optional: false\n    description: the amount\n",
    "  - name: amount\n    description: 12\n",
]
BROKEN_PLAIN_COLUMNS = [
    "  - name: 12\n    data_type: int\n",
    "  - name: '  '\n",
    "  - name:\n    data_type: int\n",
    "  - name: amount\n    data_type: 12\n",
    "  - name: amount\n    data_type: true\n",
    "  - name: amount\n    optional: 'yes'\n",
    "  - data_type: int\n",
]


@pytest.mark.parametrize("column", PLAIN_COLUMNS)
def test_a_plain_column_reads_as_the_general_way_reads_it(column: str) -> None:
    """#26: a column of plain keys is built directly; an unknown key (which Soda
    allows and the parser ignores) sends the same column the general way."""
    from gate.formats.soda import _PLAIN_KEYS, _plain_column

    plain = soda.parse(load_yaml(f"dataset: t\ncolumns:\n{column}", "c.yaml"), "c.yaml")
    assert set(load_yaml(column, "c.yaml")[0]) <= _PLAIN_KEYS
    assert _plain_column(load_yaml(column, "c.yaml")[0], 0) is not None
    general = soda.parse(
        load_yaml(f"dataset: t\ncolumns:\n{column.rstrip()}\n    x_other: 1\n", "c.yaml"), "c.yaml"
    )
    (a,), (b,) = plain.datasets[0].columns, general.datasets[0].columns
    assert a == b
    assert (a.line, a.description) == (b.line, b.description)


@pytest.mark.parametrize("column", BROKEN_PLAIN_COLUMNS)
def test_a_plain_column_of_the_wrong_kind_is_refused_as_before(column: str) -> None:
    with pytest.raises(ContractError) as plain:
        soda.parse(load_yaml(f"dataset: t\ncolumns:\n{column}", "c.yaml"), "c.yaml")
    with pytest.raises(ContractError) as general:
        soda.parse(
            load_yaml(f"dataset: t\ncolumns:\n{column.rstrip()}\n    x_other: 1\n", "c.yaml"),
            "c.yaml",
        )
    assert (plain.value.detail, plain.value.line) == (general.value.detail, general.value.line)
