"""One vocabulary of check thresholds (gate/check_thresholds.py), table by table.

Every spelling x how it parses x which metric values pass x how two order, for
the diff's reader (``intervals``) and the smoke test's (``parse``) side by
side: where both read a threshold they must pass the same values, which is
what drifted before (the diff knew ``must_not_be_between``, the smoke test
soda-core's ``must_be_not_between``; the diff read a v4 ``must_be_not_between``
mapping as the range excluded, soda-core as the passing sides).

Spellings are the ones soda-core's own parsers accept: v4
``soda_core/contracts/impl/contract_yaml.py`` (``THRESHOLD_COMPARISON_KEYS``,
``RangeYaml.get_not_between_range_error``), v3.5
``soda/contracts/soda/contracts/check.py`` (``AbstractCheck.threshold_keys``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gate import check_thresholds as ct
from gate.model import Check
from gate.smoke.checkspec import plan
from tests.gitrepo import GitRepo

# -- keys ------------------------------------------------------------------------------

#: spelling -> (comparison, smoke reads it beside the check, smoke reads it under threshold:)
KEYS: list[tuple[str, str, bool, bool]] = [
    # Soda v4 (and v3, beside the check)
    ("must_be", "==", True, True),
    ("must_not_be", "!=", True, True),
    ("must_be_greater_than", ">", True, True),
    ("must_be_greater_than_or_equal", ">=", True, True),
    ("must_be_less_than", "<", True, True),
    ("must_be_less_than_or_equal", "<=", True, True),
    ("must_be_between", "between", True, True),
    ("must_be_not_between", "not between", True, True),
    # Soda v3 only: v4 warns "not a known threshold key" and ignores them
    ("must_be_greater_than_or_equal_to", ">=", True, False),
    ("must_be_less_than_or_equal_to", "<=", True, False),
    # v3's JSON schema only; its parser refuses it, v4 does not know it
    ("must_not_be_between", "not between", False, False),
    # DCS / ODCS, lower case
    ("mustbe", "==", False, False),
    ("mustnotbe", "!=", False, False),
    ("mustbegreaterthan", ">", False, False),
    ("mustbegreaterorequalto", ">=", False, False),
    ("mustbegreaterthanorequalto", ">=", False, False),
    ("mustbelessthan", "<", False, False),
    ("mustbelessorequalto", "<=", False, False),
    ("mustbelessthanorequalto", "<=", False, False),
    ("mustbebetween", "between", False, False),
    ("mustnotbebetween", "not between", False, False),
]


def test_the_key_table_is_the_whole_vocabulary() -> None:
    assert {key for key, *_ in KEYS} == set(ct.OPS)


@pytest.mark.parametrize(("key", "op", "flat", "nested"), KEYS)
def test_every_key_has_one_comparison_and_known_readers(
    key: str, op: str, flat: bool, nested: bool
) -> None:
    assert ct.OPS[key] == op
    assert (key in ct.FLAT_KEYS, key in ct.NESTED_KEYS) == (flat, nested)
    assert (key in ct.RANGES) == (op in ("between", "not between"))


# -- parse x pass / fail ---------------------------------------------------------------

#: (threshold as written, passing values, failing values); each row is read in every
#: form the smoke test accepts for its keys, and by the diff's reader.
PASSES: list[tuple[dict[str, Any], list[float], list[float]]] = [
    ({"must_be": 3}, [3, 3.0], [2, 4, 2.5]),
    ({"must_not_be": 3}, [2, 4, 3.5], [3]),
    ({"must_be_greater_than": 3}, [4, 3.01], [3, 2]),
    ({"must_be_greater_than_or_equal": 3}, [3, 4], [2, 2.99]),
    ({"must_be_greater_than_or_equal_to": 3}, [3, 4], [2]),
    ({"must_be_less_than": 3}, [2, -1], [3, 4]),
    ({"must_be_less_than_or_equal": 3}, [2, 3], [4]),
    ({"must_be_less_than_or_equal_to": 3}, [2, 3], [3.5]),
    ({"must_be_less_than": 0.1}, [0.05, 0.09999], [0.1, 0.2]),
    ({"must_be": 0.1}, [0.1], [0.1000001]),
    # v3 lists: bounds included
    ({"must_be_between": [2, 10]}, [2, 5, 10], [1, 11]),
    ({"must_be_not_between": [2, 10]}, [1, 11], [2, 5, 10]),
    # v4 mappings
    ({"must_be_between": {"greater_than": 1, "less_than_or_equal": 3}}, [2, 3], [1, 4]),
    ({"must_be_between": {"greater_than_or_equal": 1, "less_than": 3}}, [1, 2], [0, 3]),
    # soda-core's spelling: the bounds name the passing sides
    ({"must_be_not_between": {"less_than": 1, "greater_than": 3}}, [0, 4], [1, 2, 3]),
    (
        {"must_be_not_between": {"less_than_or_equal": 1, "greater_than_or_equal": 3}},
        [1, 3, 0, 4],
        [1.5, 2, 2.5],
    ),
    # several comparisons all hold
    ({"must_be_greater_than": 1, "must_be_less_than": 4}, [2, 3], [1, 4]),
]


def _forms(threshold: dict[str, Any]) -> list[dict[str, Any]]:
    """The check specs the smoke test reads ``threshold`` from: v4 nested, v3 flat."""
    forms = []
    if all(key in ct.NESTED_KEYS for key in threshold):
        forms.append({"threshold": threshold})
    if not any(isinstance(value, dict) for value in threshold.values()):
        forms.append(dict(threshold))  # v3 writes ranges as lists, beside the check
    return forms


@pytest.mark.parametrize(("threshold", "passing", "failing"), PASSES)
def test_smoke_and_diff_pass_the_same_values(
    threshold: dict[str, Any], passing: list[float], failing: list[float]
) -> None:
    forms = _forms(threshold)
    assert forms
    for spec in forms:
        parsed = plan(Check.make("missing", spec, columns=("a",))).threshold
        assert [parsed.passes(v) for v in passing] == [True] * len(passing), spec
        assert [parsed.passes(v) for v in failing] == [False] * len(failing), spec
    diff: list[ct.Interval] | None = None
    for key, value in threshold.items():
        found = ct.intervals(ct.OPS[key], value)
        assert found is not None
        diff = found if diff is None else ct.intersect(diff, found)
    assert diff is not None
    assert [ct.contains(diff, Decimal(str(v))) for v in passing] == [True] * len(passing)
    assert [ct.contains(diff, Decimal(str(v))) for v in failing] == [False] * len(failing)


@pytest.mark.parametrize(
    ("key", "value", "passing", "failing"),
    [
        ("mustBe", 3, [3], [2]),
        ("mustNotBe", 3, [2], [3]),
        ("mustBeGreaterThan", 3, [4], [3]),
        ("mustBeGreaterOrEqualTo", 3, [3], [2]),
        ("mustBeGreaterThanOrEqualTo", 3, [3], [2]),
        ("mustBeLessThan", 3, [2], [3]),
        ("mustBeLessOrEqualTo", 3, [3], [4]),
        ("mustBeLessThanOrEqualTo", 3, [3], [4]),
        ("mustBeBetween", [1, 3], [1, 3], [0, 4]),
        ("mustNotBeBetween", [1, 3], [0, 4], [1, 3]),
        ("must_not_be_between", [1, 3], [0, 4], [1, 3]),
    ],
)
def test_data_contract_spellings_read_by_the_diff(
    key: str, value: Any, passing: list[int], failing: list[int]
) -> None:
    found = ct.intervals(ct.OPS[key.lower()], value)
    assert found is not None
    assert [ct.contains(found, Decimal(v)) for v in passing] == [True] * len(passing)
    assert [ct.contains(found, Decimal(v)) for v in failing] == [False] * len(failing)


@pytest.mark.parametrize(
    ("op", "value"),
    [
        ("<", "${var.max}"),
        ("<", True),
        ("<", ".nan"),
        ("<", float("inf")),
        ("between", [1]),
        ("between", {"greater_than": "x", "less_than": 3}),
        ("not between", "1..3"),
    ],
)
def test_the_diff_reads_nothing_it_cannot_order(op: str, value: Any) -> None:
    assert ct.intervals(op, value) is None


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        # v3's JSON schema spelling: its parser refuses it, v4 does not know it
        ({"must_not_be_between": [0, 5]}, "unsupported option 'must_not_be_between'"),
        # v3-only spellings under v4's threshold: soda-core v4 ignores them
        (
            {"threshold": {"must_be_greater_than_or_equal_to": 1}},
            "unsupported threshold option 'must_be_greater_than_or_equal_to'",
        ),
        # soda-core: "Invalid not between threshold range" (the greater bound must be above)
        (
            {"threshold": {"must_be_not_between": {"greater_than": 0, "less_than": 10}}},
            "greater bound 0 must be above its less bound 10",
        ),
        (
            {"threshold": {"must_be_not_between": {"greater_than": 3, "less_than_or_equal": 3}}},
            "greater bound 3 must be above its less bound 3",
        ),
        ({"must_be_between": [10, 2]}, "lower bound 10 is above upper bound 2"),
        ({"threshold": {"must_be_between": {"greater_than": 1}}}, "one lower and one upper"),
        ({"threshold": {"must_be_not_between": {"above": 1}}}, "bound 'above'"),
        ({"must_be_not_between": "1..3"}, "a list"),
        ({"threshold": {"must_be": True}}, "must be a number"),
        ({"threshold": {"must_be": float("nan")}}, "finite"),
        ({"must_be": 1, "must_be_between": [0, 2]}, "cannot be combined"),
        ({"threshold": {"must_be": 0, "level": "warning"}}, "unsupported threshold level"),
    ],
)
def test_smoke_refuses_what_soda_would_not_evaluate(spec: dict[str, Any], reason: str) -> None:
    with pytest.raises(ct.Unsupported, match=reason):
        plan(Check.make("missing", spec, columns=("a",)))


def test_defaults_and_text() -> None:
    none = ct.parse({}, default=ct.must_be(0))
    assert (none.text, none.default, none.passes(0), none.passes(1)) == (
        "must_be 0",
        True,
        True,
        False,
    )
    rows = ct.parse({"threshold": {"level": "warn"}}, default=ct.must_be_greater_than(0))
    assert rows.describe() == "threshold must_be_greater_than 0, level warn, default"
    outer = ct.parse(
        {"threshold": {"must_be_not_between": {"less_than": 1.0, "greater_than": 3}}},
        default=ct.must_be(0),
    )
    assert outer.text == "must_be_not_between {greater_than 3, less_than 1}"
    assert not outer.passes(float("nan"))
    assert outer.passes(float("inf")) and outer.passes(float("-inf"))


# -- order -----------------------------------------------------------------------------

#: (old, new, direction of the passing values, whole numbers?)
ORDERS: list[tuple[dict[str, Any], dict[str, Any], str | None, bool]] = [
    ({"must_be": 0}, {"must_be": 0}, None, True),
    ({"must_be": 0}, {"must_be_less_than": 5}, "loosened", True),
    ({"must_be_less_than": 10}, {"must_be_less_than": 5}, "tightened", True),
    ({"must_be_less_than": 10}, {"must_be_less_than_or_equal": 9}, None, True),
    ({"must_be_less_than": 10}, {"must_be_less_than_or_equal": 9}, "tightened", False),
    ({"must_be_greater_than": 5}, {"must_be_greater_than_or_equal": 6}, None, True),
    ({"must_be_greater_than_or_equal_to": 5}, {"must_be_greater_than": 5}, "tightened", True),
    ({"must_be_less_than_or_equal_to": 5}, {"must_be_less_than_or_equal": 5}, None, False),
    ({"must_not_be": 3}, {"must_not_be": 4}, "both", True),
    ({"must_be_between": [0, 10]}, {"must_be_between": [0, 20]}, "loosened", True),
    ({"must_be_between": [0, 10]}, {"must_be_between": [5, 20]}, "both", True),
    (
        {"must_be_between": {"greater_than_or_equal": 0, "less_than": 10}},
        {"must_be_between": [0, 9]},
        None,
        True,
    ),
    # the drifted spelling, both forms: a wider excluded range passes fewer values
    ({"must_be_not_between": [0, 5]}, {"must_be_not_between": [0, 10]}, "tightened", True),
    ({"must_be_not_between": [0, 10]}, {"must_be_not_between": [0, 5]}, "loosened", True),
    (
        {"must_be_not_between": {"less_than": 1, "greater_than": 3}},
        {"must_be_not_between": {"less_than": 1, "greater_than": 5}},
        "tightened",
        True,
    ),
    (
        {"must_be_not_between": {"less_than": 1, "greater_than": 5}},
        {"must_be_not_between": {"less_than_or_equal": 1, "greater_than": 5}},
        "loosened",
        True,
    ),
    (
        {"must_be_not_between": {"less_than": 1, "greater_than": 3}},
        {"must_be_not_between": [1, 3]},
        None,
        False,
    ),
    ({"must_be_not_between": [0, 10]}, {"must_be_between": [0, 10]}, "both", True),
]


@pytest.mark.parametrize(("old", "new", "expected", "whole"), ORDERS)
def test_two_thresholds_order_alike_for_smoke_and_diff(
    old: dict[str, Any], new: dict[str, Any], expected: str | None, whole: bool
) -> None:
    def smoke(spec: dict[str, Any]) -> ct.Threshold:
        nested = all(key in ct.NESTED_KEYS for key in spec)
        return ct.parse({"threshold": spec} if nested else spec, default=ct.must_be(0))

    def diff(spec: dict[str, Any]) -> list[ct.Interval]:
        passing: list[ct.Interval] | None = None
        for key, value in spec.items():
            found = ct.intervals(ct.OPS[key], value)
            assert found is not None
            passing = found if passing is None else ct.intersect(passing, found)
        assert passing is not None
        return passing

    assert smoke(old).order(smoke(new), whole=whole) == expected
    assert ct.order(diff(old), diff(new), whole) == expected
    reverse = {"tightened": "loosened", "loosened": "tightened"}
    assert ct.order(diff(new), diff(old), whole) == reverse.get(expected or "", expected)


@pytest.mark.parametrize(
    ("spec", "passing", "failing", "text"),
    [
        (
            {"must_be_less_than_or_equal": 10, "must_be_greater_than": 25},
            [0, 10, 26],
            [10.5, 20, 25],
            "must_be_less_than_or_equal 10 or must_be_greater_than 25",
        ),
        (
            {"must_be_greater_than_or_equal_to": 3, "must_be_less_than": 1},
            [0, 3, 4],
            [1, 2],
            "must_be_greater_than_or_equal_to 3 or must_be_less_than 1",
        ),
        # a lower bound below the upper one: both hold (an inner range)
        (
            {"must_be_greater_than": 10, "must_be_less_than_or_equal": 25},
            [11, 25],
            [10, 26],
            "must_be_greater_than 10 and must_be_less_than_or_equal 25",
        ),
        ({"must_be_greater_than_or_equal": 5, "must_be_less_than_or_equal": 5}, [5], [4, 6], None),
        ({"must_be_greater_than": 5, "must_be_less_than": 5}, [], [4, 5, 6], None),
    ],
)
def test_soda_v3_reads_a_swapped_pair_as_an_outer_range(
    spec: dict[str, Any], passing: list[float], failing: list[float], text: str | None
) -> None:
    """soda-core v3.5 ``Threshold(greater_than=1, less_than=0)`` -> ``not between 0 and 1``."""
    parsed = plan(Check.make("missing_count", spec, columns=("a",))).threshold
    assert [parsed.passes(v) for v in passing] == [True] * len(passing)
    assert [parsed.passes(v) for v in failing] == [False] * len(failing)
    assert text is None or parsed.text == text
    comparisons = [(ct.OPS[key], Decimal(str(value))) for key, value in spec.items()]
    combined = ct.combine(comparisons)
    assert [ct.contains(combined, Decimal(str(v))) for v in passing] == [True] * len(passing)
    assert [ct.contains(combined, Decimal(str(v))) for v in failing] == [False] * len(failing)


def test_a_wider_v3_outer_range_is_tighter() -> None:
    def read(high: int) -> ct.Threshold:
        spec = {"must_be_less_than": 10, "must_be_greater_than": high}
        return ct.parse(spec, default=ct.must_be(0))

    assert read(25).order(read(30), whole=True) == "tightened"
    assert read(30).order(read(25), whole=True) == "loosened"


def test_another_metric_cannot_be_ordered() -> None:
    count = ct.parse({"threshold": {"must_be_less_than": 5}}, default=ct.must_be(0))
    percent = ct.parse(
        {"threshold": {"must_be_less_than": 5, "metric": "percent"}}, default=ct.must_be(0)
    )
    assert count.order(percent, whole=True) == "undetermined"


def test_a_not_between_mapping_written_as_the_excluded_range_still_orders() -> None:
    """``{greater_than: 0, less_than: 10}`` soda-core refuses; its author means "not in (0, 10)"."""
    old = ct.intervals("not between", {"greater_than": 0, "less_than": 10})
    new = ct.intervals("not between", {"greater_than": 0, "less_than": 20})
    assert old is not None and new is not None
    assert [ct.contains(old, Decimal(v)) for v in (0, 1, 9, 10)] == [True, False, False, True]
    assert ct.order(old, new, True) == "tightened"


# -- through the CLI -------------------------------------------------------------------

CONTRACT = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
    checks:
{checks}"""


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "      - missing:\n          threshold:\n"
            "            must_be_not_between: {less_than: 1, greater_than: 3}\n",
            "      - missing:\n          threshold:\n"
            "            must_be_not_between: {less_than: 1, greater_than: 5}\n",
            "tightened",
        ),
        (
            "      - missing:\n          threshold:\n"
            "            must_be_not_between: {less_than: 1, greater_than: 5}\n",
            "      - missing:\n          threshold:\n"
            "            must_be_not_between: {less_than: 2, greater_than: 5}\n",
            "loosened",
        ),
        (
            "      - missing_count:\n          must_be_not_between: [0, 5]\n",
            "      - missing_count:\n          must_be_not_between: [0, 10]\n",
            "tightened",
        ),
        (
            "      - missing_count:\n          must_be_less_than_or_equal_to: 5\n",
            "      - missing_count:\n          must_be_less_than_or_equal_to: 9\n",
            "loosened",
        ),
        # Soda v3's outer range (a lower bound above the upper one): either side
        # passes, so moving the lower bound up passes fewer values. Read as "both
        # hold", both sides pass nothing and the change went unseen.
        (
            "      - missing_count:\n          must_be_less_than: 10\n"
            "          must_be_greater_than: 25\n",
            "      - missing_count:\n          must_be_less_than: 10\n"
            "          must_be_greater_than: 30\n",
            "tightened",
        ),
    ],
)
def test_a_changed_soda_range_is_ordered_through_the_cli(
    tmp_path: Path, cli: Any, old: str, new: str, expected: str
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("soda/contracts/orders.yaml", CONTRACT.format(checks=old))
    repo.commit("contract")
    repo.branch("feature")
    repo.write("soda/contracts/orders.yaml", CONTRACT.format(checks=new))
    repo.commit("threshold")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    changes = [(c["rule"], c["direction"]) for c in json.loads(proc.stdout)["changes"]]
    assert changes == [("check_changed", expected)]
