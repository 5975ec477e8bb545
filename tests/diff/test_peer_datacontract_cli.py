"""datacontract-cli 1.2.8's graded ``breaking`` pairs, replayed against the gate.

Source: the PyPI sdist ``datacontract-cli==1.2.8`` (MIT licence),
``tests/test_breaking.py`` (``test_change_direction`` and the single-change
``test_*_direction`` cases) and ``tests/test_breaking_odcs_3_2.py``
(``test_enum_compatibility``). Their files are not copied: every pair below is
our own ODCS contract written to reproduce the scenario of the case with the
same id, and ``dcc`` is the direction set that test asserts.

datacontract-cli grades each change by direction: TIGHTENS (breaks producers),
LOOSENS (breaks consumers), BOTH, UNDETERMINED; UNTESTED/INFO changes are
left out of its sets. The gate's equivalent is the ``direction`` of every
finding at warning or above (info findings are additive, like UNTESTED); the
``version_*`` rules are left out because datacontract-cli has no such rule.
Every case where the two disagree is listed, with the reason, in the
"datacontract-cli" section of docs/rules.md; a test pins that list.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gate.diff import diff_datasets
from gate.formats import parse_contract
from gate.rules import Severity

T, L, B, U = "tightened", "loosened", "both", "undetermined"
DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md"


def contract(schema: list[dict[str, Any]] | None = None, **top: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v3.2.0",
        "kind": "DataContract",
        "id": "orders",
        "version": "1.0.0",
        "status": "active",
        "schema": schema
        or [{"name": "orders", "properties": [{"name": "id", "logicalType": "integer"}]}],
        **top,
    }


def orders(**changes: Any) -> list[dict[str, Any]]:
    # ``None`` means "absent" (datacontract-cli's models); YAML null would break the schema.
    prop = {"name": "id", "logicalType": "integer", **changes}
    return [{"name": "orders", "properties": [{k: v for k, v in prop.items() if v is not None}]}]


def quality(**rule: Any) -> list[dict[str, Any]]:
    return orders(quality=[{"name": "q", "type": "library", "metric": "nullValues", **rule}])


def with_customers(*relationship: dict[str, Any]) -> list[dict[str, Any]]:
    schema = orders(relationships=list(relationship)) if relationship else orders()
    return [*schema, {"name": "customers", "properties": [{"name": "id"}, {"name": "account_id"}]}]


def keyed(*names: str) -> list[dict[str, Any]]:
    props = [{"name": n, "primaryKey": n in names} for n in ("a", "b", "c")]
    return [{"name": "orders", "properties": props}]


def freshness(value: int, unit: str = "h", element: str | None = "orders.created_at") -> list:
    entry = {"property": "freshness", "value": value, "unit": unit}
    return [{**entry, "element": element}] if element else [entry]


def directions(v1: dict[str, Any], v2: dict[str, Any]) -> set[str]:
    old = parse_contract(yaml.safe_dump(v1).encode(), "orders.odcs.yaml").datasets
    new = parse_contract(yaml.safe_dump(v2).encode(), "orders.odcs.yaml").datasets
    return {
        change.direction or B
        for change in diff_datasets(old, new)
        if change.severity.at_least(Severity.WARNING) and not change.rule.startswith("version_")
    }


# (id, v1, v2, datacontract-cli's directions, the gate's directions)
CASES: list[tuple[str, dict, dict, set[str], set[str]]] = [
    ("rename-column", contract(), contract(orders(physicalName="order_id")), {B}, {B}),
    ("spell-out-name", contract(), contract(orders(physicalName="id")), set(), set()),
    (
        "rename-dotted-table",
        contract([{"name": "sales.orders"}]),
        contract([{"name": "sales.orders", "physicalName": "orders"}]),
        {B},
        {B},
    ),
    (
        "min-items",
        contract(
            orders(
                logicalType="array",
                items={"logicalType": "string"},
                logicalTypeOptions={"minItems": 1},
            )
        ),
        contract(
            orders(
                logicalType="array",
                items={"logicalType": "string"},
                logicalTypeOptions={"minItems": 2},
            )
        ),
        {T},
        {T},
    ),
    (
        "relationship-added",
        contract(with_customers()),
        contract(with_customers({"to": "customers.id"})),
        {T},
        set(),
    ),
    (
        "relationship-removed",
        contract(with_customers({"to": "customers.id"})),
        contract(with_customers()),
        {L},
        {L},
    ),
    (
        "relationship-retargeted",
        contract(with_customers({"id": "fk", "to": "customers.id"})),
        contract(with_customers({"id": "fk", "to": "customers.account_id"})),
        {B},
        {B},
    ),
    (
        "freshness-shorter",
        contract(slaProperties=freshness(24)),
        contract(slaProperties=freshness(1)),
        {T},
        set(),
    ),
    (
        "freshness-same-duration",
        contract(slaProperties=freshness(24)),
        contract(slaProperties=freshness(1, "d")),
        set(),
        set(),
    ),
    (
        "freshness-longer",
        contract(slaProperties=freshness(1, "d")),
        contract(slaProperties=freshness(48)),
        {L},
        set(),
    ),
    (
        "freshness-other-column",
        contract(slaProperties=freshness(1)),
        contract(slaProperties=freshness(1, element="orders.updated_at")),
        {B},
        set(),
    ),
    (
        "retention",
        contract(
            slaProperties=[
                {"property": "retention", "value": "P2Y", "element": "orders.created_at"}
            ]
        ),
        contract(
            slaProperties=[
                {"property": "retention", "value": "P1Y", "element": "orders.created_at"}
            ]
        ),
        set(),
        set(),
    ),
    ("freshness-added", contract(), contract(slaProperties=freshness(1)), {T}, set()),
    (
        "freshness-added-unchecked",
        contract(),
        contract(slaProperties=freshness(1, element=None)),
        set(),
        set(),
    ),
    (
        "freshness-shorter-unchecked",
        contract(slaProperties=freshness(24, element=None)),
        contract(slaProperties=freshness(1, element=None)),
        set(),
        set(),
    ),
    (
        "freshness-element-resolved",
        contract(slaProperties=freshness(24, element="other.created_at")),
        contract(slaProperties=freshness(24)),
        {T},
        set(),
    ),
    (
        "untested-service-level",
        contract(slaProperties=[{"property": "latency", "value": "1s"}]),
        contract(slaProperties=[{"property": "latency", "value": "5s"}]),
        set(),
        set(),
    ),
    (
        "between-wider",
        contract(quality(mustBeBetween=[0, 10])),
        contract(quality(mustBeBetween=[0, 20])),
        {L},
        {L},
    ),
    (
        "between-shifted",
        contract(quality(mustBeBetween=[0, 10])),
        contract(quality(mustBeBetween=[5, 20])),
        {B},
        {B},
    ),
    (
        "not-between-wider",
        contract(quality(mustNotBeBetween=[0, 10])),
        contract(quality(mustNotBeBetween=[0, 20])),
        {T},
        {T},
    ),
    (
        "less-than-lowered",
        contract(quality(mustBeLessThan=10)),
        contract(quality(mustBeLessThan=5)),
        {T},
        {T},
    ),
    (
        "greater-than-lowered",
        contract(quality(mustBeGreaterThan=10)),
        contract(quality(mustBeGreaterThan=5)),
        {L},
        {L},
    ),
    (
        "threshold-replaced-by-wider",
        contract(quality(mustBe=0)),
        contract(quality(mustBeLessThan=10)),
        {L},
        {L},
    ),
    (
        "threshold-replaced-and-described",
        contract(orders(quality=[{"name": "q", "metric": "nullValues", "mustBe": 0}])),
        contract(
            orders(
                quality=[
                    {
                        "name": "q",
                        "metric": "nullValues",
                        "mustBeLessThan": 10,
                        "description": "Few",
                    }
                ]
            )
        ),
        {L},
        {L},
    ),
    (
        "threshold-replaced-by-overlapping",
        contract(quality(mustBeBetween=[0, 10])),
        contract(quality(mustBeLessThan=10)),
        {B},
        {B},
    ),
    (
        "threshold-replaced-by-narrower-complement",
        contract(quality(mustNotBe=0)),
        contract(quality(mustNotBeBetween=[0, 10])),
        {T},
        {T},
    ),
    ("must-be-moved", contract(quality(mustBe=0)), contract(quality(mustBe=5)), {B}, {B}),
    (
        "threshold-in-other-unit",
        contract(quality(mustBeLessThan=10)),
        contract(quality(mustBeLessThan=5, unit="percent")),
        {U},
        {U},
    ),
    (
        "valid-value-added",
        contract(quality(metric="invalidValues", arguments={"validValues": ["a", "b"]}, mustBe=0)),
        contract(
            quality(metric="invalidValues", arguments={"validValues": ["a", "b", "c"]}, mustBe=0)
        ),
        {L},
        {L},
    ),
    (
        "valid-value-added-to-percent-limit",
        contract(
            quality(
                metric="invalidValues",
                arguments={"validValues": ["a", "b"]},
                mustBeLessThan=5,
                unit="percent",
            )
        ),
        contract(
            quality(
                metric="invalidValues",
                arguments={"validValues": ["a", "b", "c"]},
                mustBeLessThan=5,
                unit="percent",
            )
        ),
        {L},
        {L},
    ),
    (
        "rule-named",
        contract(orders(quality=[{"metric": "nullValues", "mustBe": 0}])),
        contract(orders(quality=[{"name": "no_nulls", "metric": "nullValues", "mustBe": 0}])),
        set(),
        set(),
    ),
    (
        "rule-renamed",
        contract(orders(quality=[{"name": "a", "metric": "nullValues", "mustBe": 0}])),
        contract(orders(quality=[{"name": "b", "metric": "nullValues", "mustBe": 0}])),
        set(),
        set(),
    ),
    (
        "rule-paired-by-id",
        contract(orders(quality=[{"id": "q1", "name": "a", "metric": "nullValues", "mustBe": 0}])),
        contract(orders(quality=[{"id": "q1", "name": "b", "metric": "nullValues", "mustBe": 1}])),
        {B},
        {B},
    ),
    (
        "first-of-two-nameless-rules-removed",
        contract(
            orders(
                quality=[
                    {"metric": "nullValues", "mustBe": 0},
                    {"metric": "duplicateValues", "mustBe": 0},
                ]
            )
        ),
        contract(orders(quality=[{"metric": "duplicateValues", "mustBeLessThan": 5}])),
        {L},
        {L},
    ),
    (
        "nameless-rules-reordered",
        contract(
            [
                {
                    "name": "orders",
                    "quality": [
                        {"metric": "rowCount", "mustBeGreaterThan": 1000, "severity": "warning"},
                        {"metric": "rowCount", "mustBeGreaterThan": 0},
                    ],
                }
            ]
        ),
        contract(
            [
                {
                    "name": "orders",
                    "quality": [
                        {"metric": "rowCount", "mustBeGreaterThan": 0},
                        {"metric": "rowCount", "mustBeGreaterThan": 1000, "severity": "warning"},
                    ],
                }
            ]
        ),
        set(),
        set(),
    ),
    (
        "unit-rows-declared",
        contract(quality(mustBeLessThan=10)),
        contract(quality(mustBeLessThan=10, unit="rows")),
        set(),
        set(),
    ),
    (
        "unit-percent-respelled",
        contract(quality(mustBeLessThan=5, unit="percent")),
        contract(quality(mustBeLessThan=5, unit="%")),
        set(),
        set(),
    ),
    (
        "valid-value-removed",
        contract(quality(metric="invalidValues", arguments={"validValues": ["a", "b"]}, mustBe=0)),
        contract(quality(metric="invalidValues", arguments={"validValues": ["a"]}, mustBe=0)),
        {T},
        {T},
    ),
    (
        "missing-value-marker-added",
        contract(
            quality(metric="missingValues", arguments={"missingValues": ["", "N/A"]}, mustBe=0)
        ),
        contract(
            quality(metric="missingValues", arguments={"missingValues": ["", "N/A", "-"]}, mustBe=0)
        ),
        {T},
        {T},
    ),
    (
        "null-values-to-missing-values",
        contract(quality(metric="nullValues", mustBe=0)),
        contract(quality(metric="missingValues", arguments={"missingValues": ["N/A"]}, mustBe=0)),
        {T},
        {T},
    ),
    (
        "duplicate-key-widened",
        contract(
            [
                {
                    "name": "orders",
                    "quality": [
                        {
                            "name": "q",
                            "metric": "duplicateValues",
                            "arguments": {"properties": ["a"]},
                            "mustBe": 0,
                        }
                    ],
                }
            ]
        ),
        contract(
            [
                {
                    "name": "orders",
                    "quality": [
                        {
                            "name": "q",
                            "metric": "duplicateValues",
                            "arguments": {"properties": ["a", "b"]},
                            "mustBe": 0,
                        }
                    ],
                }
            ]
        ),
        {L},
        {L},
    ),
    (
        "query-changed",
        contract(quality(type="sql", metric=None, query="SELECT COUNT(*) FROM orders", mustBe=0)),
        contract(
            quality(
                type="sql", metric=None, query="SELECT COUNT(*) FROM orders WHERE 1 = 1", mustBe=0
            )
        ),
        {U},
        {U},
    ),
    (
        "schedule-and-method-changed",
        contract(
            quality(mustBe=0, method="reconciliation", schedule="0 * * * *", scheduler="cron")
        ),
        contract(quality(mustBe=0, method="other", schedule="0 0 * * *", scheduler="cron")),
        set(),
        set(),
    ),
    ("rule-added", contract(), contract(quality(mustBe=0)), {T}, set()),
    ("rule-removed", contract(quality(mustBe=0)), contract(), {L}, {L}),
    (
        "text-rule",
        contract(),
        contract(orders(quality=[{"type": "text", "description": "Nice"}])),
        set(),
        set(),
    ),
    (
        "rule-alias-replaced-by-metric",
        contract(orders(quality=[{"rule": "nullValues", "mustBe": 0}])),
        contract(orders(quality=[{"metric": "nullValues", "mustBe": 0}])),
        {T},
        set(),
    ),
    (
        "rule-made-warning",
        contract(quality(mustBe=0)),
        contract(quality(mustBe=0, severity="warning")),
        {L},
        {L},
    ),
    (
        "minimum-made-exclusive",
        contract(orders(logicalTypeOptions={"minimum": 0})),
        contract(orders(logicalTypeOptions={"exclusiveMinimum": 0})),
        {T},
        {T},
    ),
    (
        "maximum-replaced-by-higher-exclusive",
        contract(orders(logicalTypeOptions={"maximum": 10})),
        contract(orders(logicalTypeOptions={"exclusiveMaximum": 20})),
        {L},
        {L},
    ),
    (
        "timestamp-minimum-raised",
        contract(
            orders(logicalType="timestamp", logicalTypeOptions={"minimum": "2024-01-01T00:00:00Z"})
        ),
        contract(
            orders(logicalType="timestamp", logicalTypeOptions={"minimum": "2025-01-01T00:00:00Z"})
        ),
        {T},
        {T},
    ),
    (
        "same-row-count-threshold",
        contract(quality(mustBeGreaterThan=5)),
        contract(quality(mustBeGreaterOrEqualTo=6)),
        set(),
        set(),
    ),
    (
        "valid-value-added-to-exact-count",
        contract(quality(metric="invalidValues", arguments={"validValues": ["a", "b"]}, mustBe=5)),
        contract(
            quality(metric="invalidValues", arguments={"validValues": ["a", "b", "c"]}, mustBe=5)
        ),
        {B},
        {L},
    ),
    (
        "unrunnable-rule",
        contract(),
        contract(quality(metric="rowCount", mustBeGreaterThan=0)),
        set(),
        set(),
    ),
    (
        "same-integer-bound",
        contract(orders(logicalTypeOptions={"minimum": 0})),
        contract(orders(logicalTypeOptions={"exclusiveMinimum": -1})),
        set(),
        set(),
    ),
    (
        "same-date-bound",
        contract(orders(logicalType="date", logicalTypeOptions={"maximum": "2025-01-01"})),
        contract(orders(logicalType="date", logicalTypeOptions={"exclusiveMaximum": "2025-01-02"})),
        set(),
        set(),
    ),
    ("warning-rule", contract(), contract(quality(mustBe=5, severity="warning")), set(), set()),
    (
        "warning-rule-threshold",
        contract(quality(mustBeLessThan=10, severity="warning")),
        contract(quality(mustBeLessThan=5, severity="warning")),
        set(),
        {T},
    ),
    (
        "warning-rule-made-blocking",
        contract(quality(mustBeLessThan=10, severity="warning")),
        contract(quality(mustBeLessThan=5)),
        {T},
        {T},
    ),
    ("key-added", contract(keyed()), contract(keyed("a")), {T}, {B}),
    ("key-widened", contract(keyed("a", "b")), contract(keyed("a", "b", "c")), {B}, {B}),
    ("key-made-composite", contract(keyed("a")), contract(keyed("a", "b")), {B}, {B}),
    # The single-change cases of test_required_direction, test_type_direction,
    # test_uniqueness_direction, test_single_primary_key_direction and
    # test_validation_constraint_direction, written as contract pairs.
    ("required-added", contract(orders(required=False)), contract(orders(required=True)), {T}, {T}),
    ("required-removed", contract(orders(required=True)), contract(orders()), {L}, {L}),
    ("type-added", contract(orders(logicalType=None)), contract(orders()), {T}, set()),
    ("type-removed", contract(orders()), contract(orders(logicalType=None)), {L}, {L}),
    ("type-updated", contract(orders(logicalType="string")), contract(orders()), {B}, {B}),
    ("unique-added", contract(orders(unique=False)), contract(orders(unique=True)), {T}, set()),
    (
        "unique-items-removed",
        contract(orders(logicalType="array", logicalTypeOptions={"uniqueItems": True})),
        contract(orders(logicalType="array")),
        {L},
        {L},
    ),
    (
        "primary-key-removed",
        contract(orders(primaryKey=True)),
        contract(orders(primaryKey=False)),
        {L},
        {B, L},
    ),
    (
        "min-length-raised",
        contract(orders(logicalType="string", logicalTypeOptions={"minLength": 5})),
        contract(orders(logicalType="string", logicalTypeOptions={"minLength": 10})),
        {T},
        {T},
    ),
    (
        "max-length-raised",
        contract(orders(logicalType="string", logicalTypeOptions={"maxLength": 5})),
        contract(orders(logicalType="string", logicalTypeOptions={"maxLength": 10})),
        {L},
        set(),
    ),
    (
        "date-minimum-raised",
        contract(orders(logicalType="date", logicalTypeOptions={"minimum": "2024-01-01"})),
        contract(orders(logicalType="date", logicalTypeOptions={"minimum": "2024-02-01"})),
        {T},
        {T},
    ),
    (
        "date-maximum-lowered",
        contract(orders(logicalType="date", logicalTypeOptions={"maximum": "2024-02-01"})),
        contract(orders(logicalType="date", logicalTypeOptions={"maximum": "2024-01-01"})),
        {T},
        {T},
    ),
    (
        "minimum-unreadable",
        contract(orders(logicalType="date", logicalTypeOptions={"minimum": "not-a-date"})),
        contract(orders(logicalType="date", logicalTypeOptions={"minimum": "2024-01-01"})),
        {U},
        {U},
    ),
    (
        "pattern-respelled",
        contract(orders(logicalType="string", logicalTypeOptions={"pattern": "^[0-9]+$"})),
        contract(orders(logicalType="string", logicalTypeOptions={"pattern": "^\\d+$"})),
        {U},
        set(),  # one language spelt twice (ECMA-262 \d is [0-9]): nothing changed
    ),
    (
        "pattern-added",
        contract(orders(logicalType="string")),
        contract(orders(logicalType="string", logicalTypeOptions={"pattern": "^A"})),
        {T},
        {T},
    ),
]


def _enum_props(entries: list[dict[str, Any]] | None, nested: bool) -> list[dict[str, Any]]:
    prop: dict[str, Any] = {"name": "status", "logicalType": "string"}
    if entries is not None:
        prop["enum"] = entries
    if nested:
        prop = {
            "name": "attributes",
            "logicalType": "map",
            "map": {
                "key": {"logicalType": "string"},
                "value": {"logicalType": "object", "properties": [prop]},
            },
        }
    return [{"name": "orders", "properties": [prop]}]


# test_breaking_odcs_3_2.py::test_enum_compatibility, flat and nested in a map value.
ENUMS = [
    ("enum-value-removed", [{"value": "a"}, {"value": "b"}], [{"value": "a"}], {T}, {T}),
    ("enum-value-added", [{"value": "a"}], [{"value": "a"}, {"value": "b"}], {L}, {L}),
    ("enum-declared", None, [{"value": "a"}], {T}, {T}),
    ("enum-removed", [{"value": "a"}], None, {L}, {L}),
    (
        "enum-value-replaced-same-id",
        [{"id": "one", "value": "a"}],
        [{"id": "one", "value": "b"}],
        {B},
        {T, L},
    ),
    (
        "enum-id-renamed",
        [{"id": "one", "value": "a"}],
        [{"id": "renamed", "value": "a"}],
        set(),
        set(),
    ),
    (
        "enum-label-changed",
        [{"value": "a", "label": "Old"}],
        [{"value": "a", "label": "New"}],
        set(),
        set(),
    ),
]
for _nested in (False, True):
    for _id, _old, _new, _dcc, _ours in ENUMS:
        CASES.append(
            (
                f"{_id}{'-nested' if _nested else ''}",
                contract(_enum_props(_old, _nested)),
                contract(_enum_props(_new, _nested)),
                _dcc,
                _ours,
            )
        )


def _vector(options: dict[str, Any]) -> dict[str, Any]:
    prop = {"name": "embedding", "logicalType": "vector", "logicalTypeOptions": options}
    return contract([{"name": "orders", "properties": [prop]}])


# test_breaking_odcs_3_2.py::test_vector_shape_compatibility
CASES += [
    ("vector-dimensions", _vector({"dimensions": 3}), _vector({"dimensions": 4}), {B}, {B}),
    (
        "vector-default-element-spelled",
        _vector({"dimensions": 3}),
        _vector({"dimensions": 3, "elementType": "float32"}),
        set(),
        set(),
    ),
    (
        "vector-element-added",
        _vector({"dimensions": 3}),
        _vector({"dimensions": 3, "elementType": "float64"}),
        {B},
        {B},
    ),
    (
        "vector-element-removed",
        _vector({"dimensions": 3, "elementType": "float64"}),
        _vector({"dimensions": 3}),
        {B},
        {B},
    ),
    (
        "vector-default-element-dropped",
        _vector({"dimensions": 3, "elementType": "float32"}),
        _vector({"dimensions": 3}),
        set(),
        set(),
    ),
    (
        "vector-model-changed",
        _vector({"dimensions": 3}),
        _vector({"dimensions": 3, "embeddingModel": "updated"}),
        set(),
        set(),
    ),
]


@pytest.mark.parametrize(
    ("v1", "v2", "dcc", "ours"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_change_direction(v1: dict, v2: dict, dcc: set[str], ours: set[str]) -> None:
    assert directions(v1, v2) == ours


def _documented_disagreements() -> set[str]:
    """Case ids in the disagreement table of docs/rules.md."""
    text = DOCS.read_text()
    section = text.split("### Where the gate disagrees with datacontract-cli", 1)[1]
    section = section.split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([a-z0-9-]+)`", section, re.MULTILINE)}


def test_every_disagreement_is_explained_in_the_docs() -> None:
    disagreeing = {case[0] for case in CASES if case[3] != case[4]}
    # A nested enum case disagrees exactly as its flat twin: one row covers both.
    disagreeing = {d.removesuffix("-nested") for d in disagreeing}
    assert disagreeing == _documented_disagreements()


def test_the_docs_state_the_agreement_count() -> None:
    agree = sum(case[3] == case[4] for case in CASES)
    assert f"{agree} of {len(CASES)} pairs agree" in " ".join(DOCS.read_text().split())
