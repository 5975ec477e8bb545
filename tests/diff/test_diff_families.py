"""The issue-10 rule families on plain values and small contracts, table-driven.

Checks are identified by what they assert (gate/diff/checks.py), constraints
compare by meaning (gate/diff/constraints.py), relationships are one family
for every format (gate/diff/relationships.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.check_thresholds import order
from gate.diff import diff_datasets
from gate.formats import parse_contract
from gate.model import Check, Column, ContractError, Dataset
from gate.report.base import arrow


def ds(*columns: Column, checks: tuple[Check, ...] = (), **kw) -> Dataset:
    return Dataset(id="d", path="c.yaml", format="soda", columns=columns, checks=checks, **kw)


def col(name: str = "x", data_type: str = "int", **kw) -> Column:
    return Column(name=name, data_type=data_type, **kw)


def findings(base: Dataset, head: Dataset) -> list[tuple[str, str | None, str | None]]:
    return [(c.rule, c.direction, arrow(c)) for c in diff_datasets([base], [head])]


# -- checks -------------------------------------------------------------------


def soda_v4(threshold: dict | None = None, **options) -> Check:
    spec = dict(options)
    if threshold is not None:
        spec["threshold"] = threshold
    return Check.make("missing", spec, columns=("x",))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # Soda v4 thresholds: the same check, a new limit.
        ({"must_be_less_than": 10}, {"must_be_less_than": 5}, "tightened"),
        ({"must_be_less_than": 5}, {"must_be_less_than": 10}, "loosened"),
        ({"must_be_less_than": 5}, {"must_be_less_than": 5, "metric": "percent"}, "undetermined"),
        (
            {"must_be_between": {"greater_than_or_equal": 0, "less_than": 10}},
            {"must_be_between": {"greater_than_or_equal": 0, "less_than": 20}},
            "loosened",
        ),
        # No threshold is "no bad row"; any limit above 0 is looser.
        (None, {"must_be_less_than": 10}, "loosened"),
        # A count: < 10 and <= 9 are the same limit.
        ({"must_be_less_than": 10}, {"must_be_less_than_or_equal": 9}, None),
        # soda-core's own spelling of "outside the range" (v3 and v4 parsers).
        (
            {"must_be_not_between": {"greater_than": 0, "less_than": 10}},
            {"must_be_not_between": {"greater_than": 0, "less_than": 20}},
            "tightened",
        ),
        # A threshold given as a variable is text: its value is known only at run
        # time (soda-tests/tests/unit/check_types/features/test_variables_in_checks.py).
        ({"must_be_less_than": "${var.max}"}, {"must_be_less_than": "${var.max}"}, None),
        (
            {"must_be_less_than": "${var.max}"},
            {"must_be_less_than": "${var.limit}"},
            "undetermined",
        ),
        ({"must_be_less_than": 5}, {"must_be_less_than": "${var.max}"}, "undetermined"),
    ],
)
def test_soda_thresholds_give_one_directed_finding(old, new, expected) -> None:
    base = ds(col(checks=(soda_v4(old),)))
    head = ds(col(checks=(soda_v4(new, name="renamed"),)))
    found = [(rule, direction) for rule, direction, _ in findings(base, head)]
    assert found == ([("check_changed", expected)] if expected else [])


def test_missing_values_markers_decide_the_direction() -> None:
    base = ds(col(checks=(soda_v4(missing_values=["N/A"]),)))
    more = ds(col(checks=(soda_v4(missing_values=["N/A", "-"]),)))
    assert findings(base, more)[0][:2] == ("check_changed", "tightened")
    assert findings(more, base)[0][:2] == ("check_changed", "loosened")


def test_dbt_severity_and_error_if_are_demands_not_identity() -> None:
    def test(**config) -> Check:
        return Check.make("not_null", {"config": config} if config else {}, columns=("x",))

    base = ds(col(checks=(test(),)))
    assert findings(base, ds(col(checks=(test(severity="warn"),))))[0][:2] == (
        "check_changed",
        "loosened",
    )
    assert findings(base, ds(col(checks=(test(error_if=">10"),))))[0][:2] == (
        "check_changed",
        "loosened",
    )
    assert findings(base, ds(col(checks=(test(tags=["nightly"]),)))) == []
    # A filter changes what is measured: another assertion, direction unknown.
    assert findings(base, ds(col(checks=(test(where="amount > 0"),))))[0][:2] == (
        "check_changed",
        "undetermined",
    )


def test_a_check_of_another_kind_is_removed_and_added() -> None:
    base = ds(col(checks=(Check.make("missing", {}, columns=("x",)),)))
    head = ds(col(checks=(Check.make("duplicate", {}, columns=("x",)),)))
    assert [f[0] for f in findings(base, head)] == ["check_removed", "check_added"]


@pytest.mark.parametrize(
    ("old", "new", "whole", "expected"),
    [
        ([(0, False, 10, False)], [(0, False, 20, False)], True, "loosened"),
        ([(0, False, 10, False)], [(5, False, 20, False)], True, "both"),
        ([(5, True, None, False)], [(6, False, None, False)], True, None),
        ([(5, True, None, False)], [(6, False, None, False)], False, "tightened"),
    ],
)
def test_interval_order(old, new, whole, expected) -> None:
    from decimal import Decimal

    def conv(intervals):
        return [
            (None if lo is None else Decimal(lo), ls, None if hi is None else Decimal(hi), hs)
            for lo, ls, hi, hs in intervals
        ]

    assert order(conv(old), conv(new), whole) == expected


# -- constraints and enums ------------------------------------------------------


@pytest.mark.parametrize(
    ("data_type", "old", "new", "expected"),
    [
        ("int", (), (("minimum", 0),), ("constraint_tightened", "(none) -> minimum 0")),
        ("int", (("minimum", 0),), (), ("constraint_relaxed", "minimum 0 -> (none)")),
        ("int", (("maximum", 10),), (("maximum", 5),), ("constraint_tightened", "maximum 10 -> maximum 5")),
        ("double", (("minimum", 0),), (("exclusiveMinimum", 0),), ("constraint_tightened", "minimum 0 -> exclusiveMinimum 0")),
        ("int", (("minimum", 1),), (("exclusiveMinimum", 0),), None),
        ("timestamp", (("minimum", "2024-01-01T00:00:00Z"),), (("minimum", "2023-06-01T00:00:00+00:00"),),
         ("constraint_relaxed", "minimum 2024-01-01T00:00:00Z -> minimum 2023-06-01T00:00:00+00:00")),
        ("string", (("minLength", 2),), (("minLength", 3),), ("constraint_tightened", "minLength 2 -> minLength 3")),
        ("array<int>", (("maxItems", 3),), (("maxItems", 5),), ("constraint_relaxed", "maxItems 3 -> maxItems 5")),
        ("array<int>", (), (("uniqueItems", True),), ("constraint_tightened", "uniqueitems false -> uniqueitems true")),
        ("string", (("format", "email"),), (("format", "uri"),), ("constraint_changed", "format email -> format uri")),
        ("string", (("pattern", "^a"),), (), ("constraint_relaxed", "pattern ^a -> (none)")),
        ("int", (("minimum", 0),), (("minimum", "2024-01-01"),), ("constraint_changed", "minimum 0 -> minimum 2024-01-01")),
    ],
)  # fmt: skip
def test_constraints_compare_by_meaning(data_type, old, new, expected) -> None:
    found = findings(
        ds(col(data_type=data_type, constraints=old)), ds(col(data_type=data_type, constraints=new))
    )
    assert [(rule, arrow) for rule, _direction, arrow in found] == ([expected] if expected else [])


def test_whole_enum_declared_and_removed() -> None:
    free, listed = ds(col(data_type="string")), ds(col(data_type="string", enum=("a", "b")))
    assert findings(free, listed) == [("enum_declared", "tightened", "any value -> 'a', 'b'")]
    assert findings(listed, free) == [("enum_removed", "loosened", "'a', 'b' -> any value")]


# -- formats: relationships, constraints, Soda attributes -----------------------


def parse(text: str, path: str = "c.yaml") -> tuple[Dataset, ...]:
    return parse_contract(text.encode(), path).datasets


ODCS = """\
apiVersion: v3.1.0
kind: DataContract
id: x
version: 1.0.0
status: active
schema:
  - name: orders
    properties:
      - name: customer_id
        logicalType: integer
        relationships:
          - to: {target}
            type: foreignKey
      - name: code
        logicalType: string
        physicalType: STRING
        logicalTypeOptions:
          maxLength: 8
          pattern: '^[A-Z]+$'
"""


def test_odcs_property_relationship_and_options() -> None:
    (orders,) = parse(ODCS.format(target="customers.id"))
    assert [(r.columns, r.to) for r in orders.relationships] == [(("customer_id",), "customers.id")]
    code = orders.column("code")
    assert code is not None
    # A physicalType without a length leaves maxLength out of the type: a constraint.
    assert dict(code.constraints) == {"maxLength": 8, "pattern": "^[A-Z]+$"}
    (moved,) = parse(ODCS.format(target="accounts.id"))
    changes = diff_datasets([orders], [moved])
    assert [(c.rule, c.column, c.before, c.after) for c in changes] == [
        ("relationship_changed", "customer_id", "customers.id", "accounts.id")
    ]


def test_soda_column_level_validity_behaves_like_the_check_level_spelling() -> None:
    column_level = """\
dataset: d
columns:
  - name: status
    data_type: varchar
    character_maximum_length: 12
    valid_values: [a, b]
    missing_values: ['N/A']
    checks:
      - missing:
      - invalid:
"""
    check_level = """\
dataset: d
columns:
  - name: status
    data_type: varchar(12)
    checks:
      - missing:
          missing_values: ['N/A']
      - invalid:
          valid_values: [a, b]
"""
    (a,), (b,) = parse(column_level), parse(check_level)
    assert a.columns[0].enum == b.columns[0].enum == ("a", "b")
    assert a.columns[0].data_type == "varchar(12)"
    assert diff_datasets([a], [b]) == []


def test_soda_numeric_attributes_make_a_decimal() -> None:
    text = "dataset: d\ncolumns:\n  - name: n\n    data_type: decimal\n    numeric_precision: 10\n    numeric_scale: 2\n"
    (d,) = parse(text)
    assert d.columns[0].data_type == "decimal(10,2)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "dataset: d\ncolumns:\n  - name: n\n    data_type: varchar\n    character_maximum_length: ten\n",
            "c.yaml:5: column 'n': 'character_maximum_length' must be a whole number",
        ),
        (
            "dataContractSpecification: 1.1.0\nmodels:\n  m:\n    fields:\n      f:\n        type: string\n        pattern: 5\n",
            "c.yaml:7: field 'f': 'pattern' must be a string",
        ),
        (
            "dataContractSpecification: 1.1.0\nmodels:\n  m:\n    fields:\n      f:\n        type: int\n        minimum: [1]\n",
            "c.yaml:7: field 'f': 'minimum' must be a number or a date",
        ),
    ],
)
def test_bad_constraint_values_fail_closed_with_the_line(text: str, message: str) -> None:
    with pytest.raises(ContractError) as caught:
        parse(text)
    assert str(caught.value).startswith(message)


def test_dbt_foreign_key_spellings_compare_equal() -> None:
    template = """\
models:
  - name: orders
    config: {{contract: {{enforced: true}}}}
    columns:
      - name: customer_id
        data_type: int
        constraints:
          - type: foreign_key
            {fk}
"""
    new = parse(template.format(fk="to: ref('customers')\n            to_columns: [id]"))
    also = parse(template.format(fk='to: "ref(\\"customers\\")"\n            to_columns: [ID]'))
    assert new[0].relationships[0].to == also[0].relationships[0].to == "customers.id"
    old = parse(template.format(fk="expression: customers (id)"))
    assert old[0].relationships[0].to == "customers (id)"


def test_a_text_check_is_its_description() -> None:
    def text(description: str) -> Check:
        return Check.make("text", {"type": "text", "description": description})

    base = ds(checks=(text("Totals match the ledger."),))
    head = ds(checks=(text("Totals match the invoices."),))
    assert [f[:2] for f in findings(base, head)] == [("check_changed", "undetermined")]


_OPS = ("must_be", "must_not_be", "must_be_greater_than", "must_be_less_than_or_equal")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_OPS), st.integers(-5, 5)), min_size=1, max_size=2),
    st.lists(st.tuples(st.sampled_from(_OPS), st.integers(-5, 5)), min_size=1, max_size=2),
)
def test_threshold_directions_mirror(old: list, new: list) -> None:
    """Read backwards, tightened is loosened and both stays both; a check equals itself."""
    a = ds(col(checks=(Check.make("missing", dict(old), columns=("x",)),)))
    b = ds(col(checks=(Check.make("missing", dict(new), columns=("x",)),)))
    assert findings(a, a) == []
    forward = {f[1] for f in findings(a, b)}
    backward = {f[1] for f in findings(b, a)}
    mirror = {"tightened": "loosened", "loosened": "tightened", "both": "both"}
    assert backward == {mirror[d] for d in forward}


def test_soda_column_level_validity_reaches_the_invalid_check() -> None:
    """The smoke test evaluates the check's spec: column-level options must be in it."""
    text = (
        "dataset: d\ncolumns:\n  - name: n\n    data_type: int\n"
        "    valid_min: 0\n    valid_values: [1, 2]\n    checks:\n      - invalid:\n"
    )
    ((column,),) = [d.columns for d in parse(text)]
    (invalid,) = column.checks
    assert invalid.spec == {"valid_min": 0, "valid_values": [1, 2]}
    assert column.enum == ("1", "2") and dict(column.constraints) == {"minimum": 0}


def test_soda_v4_named_format_with_a_regex_is_a_pattern() -> None:
    def text(regex: str) -> str:
        return (
            "dataset: d\ncolumns:\n  - name: code\n    data_type: string\n    checks:\n"
            f"      - invalid:\n          valid_format:\n            name: code\n            regex: '{regex}'\n"
        )

    ((column,),) = [d.columns for d in parse(text("^[A-Z]+$"))]
    assert dict(column.constraints) == {"pattern": "^[A-Z]+$"}
    # compared as a language: '^[A-Z]{2}$' accepts a strict subset
    changes = diff_datasets(parse(text("^[A-Z]+$")), parse(text("^[A-Z]{2}$")))
    assert [(c.rule, c.before, c.after) for c in changes] == [
        ("constraint_tightened", "pattern ^[A-Z]+$", "pattern ^[A-Z]{2}$")
    ]


def test_soda_valid_length_is_an_exact_length() -> None:
    def contract(length: int) -> tuple[Dataset, ...]:
        return parse(
            f"dataset: d\ncolumns:\n  - name: c\n    data_type: string\n"
            f"    checks:\n      - invalid:\n          valid_length: {length}\n"
        )

    ((column,),) = [d.columns for d in contract(3)]
    assert dict(column.constraints) == {"maxLength": 3, "minLength": 3}
    changes = diff_datasets(contract(3), contract(4))
    assert sorted(c.rule for c in changes) == ["constraint_relaxed", "constraint_tightened"]


@pytest.mark.parametrize("odd", [".nan", ".inf", "-.inf", "'NaN'"])
def test_non_finite_bounds_and_thresholds_are_unreadable_not_a_crash(odd: str) -> None:
    def contract(value: str) -> tuple[Dataset, ...]:
        return parse(
            "dataContractSpecification: 1.2.1\nid: x\ninfo: {title: x, version: '1'}\n"
            "models:\n  m:\n    fields:\n      f:\n"
            f"        type: double\n        minimum: {value}\n"
            f"        quality:\n          - type: library\n            metric: nullValues\n"
            f"            mustBeLessThan: {value}\n"
        )

    if odd == "'NaN'":  # a string where DCS wants a number: its schema refuses it, with a line
        with pytest.raises(ContractError, match=r"minimum must be number, found a string"):
            contract(odd)
        return
    changes = diff_datasets(contract("0"), contract(odd))
    assert sorted((c.rule, c.direction) for c in changes) == [
        ("check_changed", "undetermined"),
        ("constraint_changed", "undetermined"),
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("${var.max_len}", "${var.max_len}", []),
        ("${var.max_len}", "${var.other}", ["constraint_changed"]),
        ("10", "${var.max_len}", ["constraint_changed"]),
    ],
)
def test_soda_constraint_given_as_a_variable_is_compared_as_text(old, new, expected) -> None:
    # soda-tests/tests/integration/test_invalid_check.py: valid_max_length: ${var.my_int_variable}
    def contract(value: str) -> tuple[Dataset, ...]:
        return parse(
            "dataset: d\ncolumns:\n  - name: c\n    data_type: string\n    checks:\n"
            f"      - invalid:\n          valid_max_length: {value}\n"
        )

    assert [c.rule for c in diff_datasets(contract(old), contract(new))] == expected


@pytest.mark.parametrize(
    ("kind", "old", "new", "expected"),
    [
        # a missing/invalid regex that accepts more values fails more rows
        ("missing", {"missing_regex_sql": "^-$"}, {"missing_regex_sql": "^-+$"}, "tightened"),
        ("missing", {"missing_regex_sql": "^-+$"}, {"missing_regex_sql": "^-$"}, "loosened"),
        (
            "invalid",
            {"invalid_regex_sql": "^x{2}$"},
            {"invalid_regex_sql": "^x{2,3}$"},
            "tightened",
        ),
        # v4 {name, regex}: the regex counts, the name is a label
        (
            "missing",
            {"missing_format": {"name": "dash", "regex": "^-+$"}},
            {"missing_format": {"name": "dashes", "regex": "^-$"}},
            "loosened",
        ),
        ("invalid", {}, {"invalid_regex_sql": "^x$", "valid_values": ["a"]}, "tightened"),
        # the same language spelt differently: no change
        ("invalid", {"invalid_regex_sql": "^\\d$"}, {"invalid_regex_sql": "^[0-9]$"}, None),
        # a backreference: no automaton, no direction
        ("invalid", {"invalid_regex_sql": "^(a)\\1$"}, {"invalid_regex_sql": "^a$"}, "both"),
        # v3 named formats are not regexes: another format is another check
        (
            "invalid",
            {"invalid_format": "email"},
            {"invalid_format": "phone number"},
            "undetermined",
        ),
    ],
)
def test_soda_invalid_and_missing_regexes_compare_as_languages(kind, old, new, expected) -> None:
    def check(spec: dict) -> Check:
        return Check.make(
            kind, {"valid_values": ["a"], **spec} if kind == "invalid" else spec, columns=("x",)
        )

    found = [
        (rule, direction)
        for rule, direction, _ in findings(
            ds(col(checks=(check(old),))), ds(col(checks=(check(new),)))
        )
    ]
    assert found == ([("check_changed", expected)] if expected else [])
