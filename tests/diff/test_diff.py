"""The diff core on plain values: pairing, every rule, and properties."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.config import Config, Policy
from gate.diff import diff_datasets
from gate.model import Check, Column, Dataset
from gate.rules import Severity


def ds(id_: str = "shop.orders", *columns: Column, path: str = "c/o.yaml", **kw) -> Dataset:
    return Dataset(id=id_, path=path, format="soda", columns=columns, line=1, **kw)


def col(name: str, data_type: str | None = "bigint", position: int = 0, **kw) -> Column:
    return Column(name=name, data_type=data_type, position=position, line=position + 3, **kw)


def found(base, head, **kw) -> list[tuple[str, str | None]]:
    return [(c.rule, c.column) for c in diff_datasets(base, head, **kw)]


ID = col("id", "bigint", 0)
AMOUNT = col("amount", "decimal(10,2)", 1)
BASE = ds("shop.orders", ID, AMOUNT)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ([BASE], []),
        ([], [("model_removed", None)]),
        ([BASE, ds("shop.refunds", path="c/r.yaml")], [("model_added", None)]),
        ([ds("shop.orders", ID)], [("column_removed", "amount")]),
        ([ds("shop.orders", ID, AMOUNT, col("note", "string", 2))], [("column_added", "note")]),
        (
            [ds("shop.orders", ID, AMOUNT, col("note", "string", 2, required=True))],
            [("required_column_added", "note")],
        ),
        ([ds("shop.orders", col("id", "int", 0), AMOUNT)], [("type_narrowed", "id")]),
        ([ds("shop.orders", col("id", "string", 0), AMOUNT)], [("type_changed", "id")]),
        ([ds("shop.orders", col("id", "long", 0), AMOUNT)], []),
        ([ds("shop.orders", col("id", "decimal(20,0)", 0), AMOUNT)], [("type_widened", "id")]),
        ([ds("shop.orders", col("id", None, 0), AMOUNT)], [("type_removed", "id")]),
        ([ds("shop.orders", col("ID", "bigint", 0), AMOUNT)], [("column_case_changed", "ID")]),
        (
            [ds("shop.orders", col("order_id", "bigint", 0), AMOUNT)],
            [("column_renamed", "order_id")],
        ),
        (
            # Different type at the same position: no evidence of a rename.
            [ds("shop.orders", col("order_id", "string", 0), AMOUNT)],
            [("column_removed", "id"), ("column_added", "order_id")],
        ),
        ([ds("shop.sales", ID, AMOUNT)], [("model_renamed", None)]),
        ([ds("shop.orders", ID, replace(AMOUNT, required=True))], [("required_added", "amount")]),
        (
            [ds("shop.orders", ID, replace(AMOUNT, required=False))],
            [("required_removed", "amount")],
        ),
        (
            # A sole primary key is unique too.
            [ds("shop.orders", replace(ID, primary_key_position=0), AMOUNT)],
            [("unique_added", "id"), ("primary_key_changed", None)],
        ),
        ([ds("shop.orders", replace(ID, unique=True), AMOUNT)], [("unique_added", "id")]),
        (
            [ds("shop.orders", ID, AMOUNT, checks=(Check.make("row_count"),))],
            [("check_added", None)],
        ),
    ],
)
def test_rules_fire(head: list[Dataset], expected: list) -> None:
    assert found([BASE], head) == expected


def test_declaring_a_type_is_additive() -> None:
    base = [ds("d", col("x", None))]
    assert found(base, [ds("d", col("x", "int"))]) == [("type_declared", "x")]


def test_enum_values() -> None:
    base = [ds("d", col("s", "string", enum=("a", "b")))]
    assert found(base, [ds("d", col("s", "string", enum=("a",)))]) == [("enum_value_removed", "s")]
    assert found(base, [ds("d", col("s", "string", enum=("a", "b", "c")))]) == [
        ("enum_value_added", "s")
    ]


def test_check_removed_and_unique_removed() -> None:
    check = Check.make("missing", columns=("x",))
    base = [ds("d", col("x", unique=True, checks=(check,)))]
    assert found(base, [ds("d", col("x"))]) == [("unique_removed", "x"), ("check_removed", "x")]


def test_nested_fields_and_struct_types() -> None:
    address = col("address", None, fields=(col("zip", "string"), col("city", "string", 1)))
    base = [ds("d", address)]
    head = [ds("d", replace(address, fields=(col("city", "string", 1),)))]
    assert found(base, head) == [("column_removed", "address.zip")]
    base = [ds("d", col("a", "struct<zip:string,city:string>"))]
    head = [ds("d", col("a", "struct<city:string>"))]
    assert ("column_removed", "a.zip") in found(base, head)


def test_primary_key_order_matters() -> None:
    a = col("a", position=0, primary_key_position=0)
    b = col("b", position=1, primary_key_position=1)
    base = [ds("d", a, b)]
    swapped = [ds("d", replace(a, primary_key_position=1), replace(b, primary_key_position=0))]
    assert found(base, swapped) == [("primary_key_changed", None)]


def test_versions() -> None:
    base = [ds("d", ID, AMOUNT, version="1.2.0")]
    assert found(base, [ds("d", ID, version="1.3.0")]) == [
        ("column_removed", "amount"),
        ("version_not_bumped", None),
    ]
    assert found(base, [ds("d", ID, version="2.0.0")]) == [
        ("column_removed", "amount"),
        ("version_bumped", None),
    ]
    assert found(base, [ds("d", ID, AMOUNT, version="1.1.0")]) == [("version_decreased", None)]
    zero = [ds("d", ID, AMOUNT, version="0.3.1")]
    assert ("version_not_bumped", None) not in found(zero, [ds("d", ID, version="0.4.0")])
    assert ("version_not_bumped", None) in found(zero, [ds("d", ID, version="0.3.2")])


def test_dbt_enforcement() -> None:
    base = [ds("m", ID)]
    assert found(base, [ds("m", enforced=False)]) == [("contract_enforcement_removed", None)]
    # Models without an enforced contract are not contracts: no findings at all.
    assert found([ds("m", ID, enforced=False)], [ds("m", enforced=False)]) == []
    assert found([ds("m", enforced=False)], []) == []
    # Enforcement switched on: the unenforced columns were documentation, so a
    # "changed" type or a dropped column there is no break (issue #21, replayed
    # on ekoepplin/dbt-bigquery-core 75600af8: timestamp -> timestamptz).
    now_enforced = [ds("m", col("id", "timestamptz", 0))]
    documented = [ds("m", col("id", "timestamp", 0), AMOUNT, enforced=False)]
    assert found(documented, now_enforced) == [("contract_enforcement_added", None)]


def test_rename_pairing_evidence() -> None:
    moved = ds("shop.sales", ID, AMOUNT, path="c/sales.yaml")
    # Same columns in another file: a rename, not remove + add.
    assert found([BASE], [moved]) == [("model_renamed", None)]
    # Stable ids win even when the columns changed.
    a = ds("x", ID, stable_id="s1")
    b = ds("y", AMOUNT, path="c/y.yaml", stable_id="s1")
    assert found([a], [b])[0] == ("model_renamed", None)
    # Git saw the file move, it holds one dataset on each side, and the columns
    # overlap (at least half of all names shared): a rename.
    c = ds("y", ID, AMOUNT, path="c/new.yaml")
    assert found([ds("x", ID)], [c], renamed_paths={"c/o.yaml": "c/new.yaml"})[0] == (
        "model_renamed",
        None,
    )
    assert found([ds("x", ID)], [c])[0] == ("model_removed", None)
    # File similarity alone is not enough: disjoint columns are a removal plus an
    # addition (a new table that replaced an old one in the same file).
    other = ds("y", AMOUNT, path="c/new.yaml")
    assert found([ds("x", ID)], [other], renamed_paths={"c/o.yaml": "c/new.yaml"}) == [
        ("model_removed", None),
        ("model_added", None),
    ]


def test_policies_and_rule_overrides() -> None:
    head = [ds("shop.orders", ID, col("amount", "decimal(12,2)", 1), col("n", "int", 2))]
    frozen = Config(policies=(Policy(("shop.*",), {"columns": "freeze", "data_type": "freeze"}),))
    changes = diff_datasets([BASE], head, severity_of=frozen.severity_fn())
    assert {(c.rule, c.severity) for c in changes} == {
        ("type_widened", Severity.ERROR),
        ("column_added", Severity.ERROR),
    }
    other = diff_datasets(
        [replace(BASE, id="hr.people")],
        [replace(h, id="hr.people") for h in head],
        severity_of=frozen.severity_fn(),
    )
    assert {c.severity for c in other} == {Severity.INFO}
    off = Config(rules={"column_added": Severity.OFF, "type_widened": Severity.WARNING})
    changes = diff_datasets([BASE], head, severity_of=off.severity_fn())
    assert [(c.rule, c.severity) for c in changes] == [("type_widened", Severity.WARNING)]


def test_tables_freeze_blocks_new_models() -> None:
    cfg = Config(policies=(Policy(("*",), {"tables": "freeze"}),))
    changes = diff_datasets([], [BASE], severity_of=cfg.severity_fn())
    assert [(c.rule, c.severity) for c in changes] == [("model_added", Severity.ERROR)]


# --- properties -------------------------------------------------------------

TYPES = st.sampled_from(
    [
        "int",
        "bigint",
        "string",
        "varchar(10)",
        "decimal(10,2)",
        "date",
        "timestamp",
        "double",
        "array<int>",
        "struct<a:int,b:string>",
        "map<string,bigint>",
        "boolean",
        None,
    ]
)
NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)


@st.composite
def datasets(draw) -> Dataset:
    names = draw(st.lists(NAMES, min_size=0, max_size=8, unique_by=str.casefold))
    columns = tuple(
        Column(
            name=name,
            data_type=draw(TYPES),
            position=i,
            required=draw(st.sampled_from([None, True, False])),
            unique=draw(st.booleans()),
            enum=draw(st.none() | st.tuples(NAMES, NAMES)),
            checks=tuple(
                Check.make(k, columns=(name,))
                for k in draw(st.sets(st.sampled_from(["missing", "duplicate"])))
            ),
        )
        for i, name in enumerate(names)
    )
    return Dataset(
        id=draw(NAMES),
        path="c/x.yaml",
        format="soda",
        columns=columns,
        version=draw(st.sampled_from([None, "1.0.0", "0.2.0"])),
    )


@settings(max_examples=200, deadline=None)
@given(datasets())
def test_a_contract_compared_with_itself_has_no_changes(dataset: Dataset) -> None:
    assert diff_datasets([dataset], [dataset]) == []


@settings(max_examples=200, deadline=None)
@given(datasets(), datasets())
def test_every_change_names_a_known_rule_and_a_side(old: Dataset, new: Dataset) -> None:
    from gate.rules import RULES

    for change in diff_datasets([old], [replace(new, id=old.id)]):
        assert change.rule in RULES
        assert change.dataset == old.id
        assert change.path == "c/x.yaml"


@settings(max_examples=200, deadline=None)
@given(datasets())
def test_removing_a_dataset_is_one_breaking_finding(dataset: Dataset) -> None:
    changes = diff_datasets([dataset], [])
    assert [(c.rule, c.breaking) for c in changes] == [("model_removed", True)]


def test_every_rule_is_documented_in_the_catalogue_page() -> None:
    from pathlib import Path

    from gate.rules import all_rules

    page = (Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md").read_text()
    missing = [rule.id for rule in all_rules() if f"`{rule.id}`" not in page]
    assert missing == []


def test_nested_field_in_array_of_structs_keeps_its_path() -> None:
    base = [ds("d", col("items", "array<struct<sku:string,qty:int>>"))]
    head = [ds("d", col("items", "array<struct<qty:bigint>>"))]
    assert found(base, head) == [("column_removed", "items[].sku"), ("type_widened", "items")]


def test_a_huge_enum_swapped_whole_is_compared_in_linear_time() -> None:
    """Attack: an enum of 45,000 allowed values (450 KB, under every limit) replaced
    by 45,000 others. Each value was looked up in the other side's tuple: 179 s of
    CPU for the run. Set lookups now; the order of the values is kept (bounded in
    CPU seconds, which load does not inflate)."""
    from tests.cost import cpu_seconds

    old = tuple(f"v{i}" for i in range(45_000))
    new = tuple(f"w{i}" for i in range(45_000)) + old[:3]
    with cpu_seconds() as cpu:
        changes = diff_datasets(
            [ds("d", col("s", "string", enum=old))], [ds("d", col("s", "string", enum=new))]
        )
    assert cpu.seconds < 3, cpu.seconds
    removed, added = (c for c in changes if c.rule.startswith("enum_value"))
    assert removed.rule == "enum_value_removed"
    assert removed.message.startswith("column 's' no longer allows 'v3', 'v4', ")
    assert added.message.startswith("column 's' now also allows 'w0', 'w1', ")


def test_an_enum_carried_by_a_check_is_reported_once() -> None:
    old_check = Check.make("invalid", {"valid_values": ["a", "b"]}, columns=("s",))
    new_check = Check.make("invalid", {"valid_values": ["a"]}, columns=("s",))
    base = [ds("d", col("s", "string", enum=("a", "b"), checks=(old_check,)))]
    head = [ds("d", col("s", "string", enum=("a",), checks=(new_check,)))]
    assert found(base, head) == [("enum_value_removed", "s")]
    # A threshold edit in the same check is one changed check besides the enum.
    edited = Check.make("invalid", {"valid_values": ["a"], "must_be": 5}, columns=("s",))
    head = [ds("d", col("s", "string", enum=("a",), checks=(edited,)))]
    assert found(base, head) == [("enum_value_removed", "s"), ("check_changed", "s")]


def test_a_removed_column_is_anchored_at_its_surviving_neighbour() -> None:
    a, b, c = col("a", position=0), col("b", position=1), col("c", position=2)
    head_a, head_c = replace(a, line=10), replace(c, position=1, line=12)
    (change,) = diff_datasets([ds("d", a, b, c)], [ds("d", head_a, head_c)])
    assert (change.rule, change.line) == ("column_removed", 12)  # where 'b' stood
    (change,) = diff_datasets([ds("d", a, b)], [ds("d", head_a)])
    assert change.line == 10  # the last column: its previous neighbour
    (change,) = diff_datasets([ds("d", a)], [ds("d")])
    assert change.line == 1  # nothing survived: the dataset
