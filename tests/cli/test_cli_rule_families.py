"""The issue-10 rule families end to end: a real git repo, the CLI in-process.

A changed check or constraint reads as ``old -> new`` on one line in the text
and Markdown reports; Soda v4 column attributes are part of the type; the
``perspective`` config key decides whose breakage fails the run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_gate
from tests.gitrepo import GitRepo

C = "soda/contracts"

ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
    checks:
      - missing:
          threshold:
            must_be_less_than: 10
  - name: code
    data_type: varchar
    character_maximum_length: 10
  - name: amount
    data_type: decimal
    numeric_precision: 12
    numeric_scale: 2
    valid_min: 0
checks:
  - row_count:
      threshold:
        must_be_greater_than: 0
"""


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def gate(repo: GitRepo, *args: str) -> tuple[int, str]:
    proc = run_gate(repo.path, "--base", "main", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, proc.stdout


def test_changed_check_and_constraint_read_old_to_new_on_one_line(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml",
        ORDERS.replace("must_be_less_than: 10", "must_be_less_than: 5").replace(
            "valid_min: 0", "valid_min: 1"
        ),
    )
    code, text = gate(shop)
    assert code == 1  # a raised minimum is constraint_tightened: an error
    lines = text.splitlines()
    assert (
        "  check_changed lake/shop/orders.order_id: missing (must_be_less_than 10) -> "
        "missing (must_be_less_than 5)" in lines
    )
    assert "  constraint_tightened lake/shop/orders.amount: minimum 0 -> minimum 1" in lines
    code, markdown = gate(shop, "--format", "markdown")
    row = next(line for line in markdown.splitlines() if "`check_changed`" in line)
    assert "`missing (must_be_less_than 10)` → `missing (must_be_less_than 5)`" in row
    code, raw = gate(shop, "--format", "json")
    changed = next(c for c in json.loads(raw)["changes"] if c["rule"] == "check_changed")
    assert (changed["severity"], changed["direction"]) == ("warning", "tightened")


def test_renamed_and_scheduled_check_is_no_change(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml",
        ORDERS.replace(
            "      - missing:\n", "      - missing:\n          name: Few missing ids\n"
        ).replace("  - row_count:\n", "  - row_count:\n      qualifier: daily\n"),
    )
    code, text = gate(shop)
    assert code == 0
    assert "check_" not in text


def test_soda_v4_length_attribute_is_part_of_the_type(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml",
        ORDERS.replace("character_maximum_length: 10", "character_maximum_length: 5").replace(
            "numeric_precision: 12", "numeric_precision: 14"
        ),
    )
    code, text = gate(shop)
    assert code == 1
    assert "  type_narrowed lake/shop/orders.code: VARCHAR(10) -> VARCHAR(5)" in text.splitlines()
    assert "type_widened lake/shop/orders.amount" in text


@pytest.mark.parametrize(
    ("perspective", "expected"), [("both", 1), ("consumer", 0), ("producer", 1)]
)
def test_perspective_decides_whose_breakage_fails(
    shop: GitRepo, perspective: str, expected: int
) -> None:
    # A narrower type breaks producers only.
    shop.write(f"{C}/orders.yaml", ORDERS.replace("length: 10", "length: 5"))
    shop.land(".schema-gate.yml", f"perspective: {perspective}\n")  # merged (gate/policy.py)
    code, text = gate(shop)
    assert code == expected, text
    assert "type_narrowed lake/shop/orders.code" in text  # reported from every side
