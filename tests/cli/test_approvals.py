"""Approval by owners (issue #23), end to end in real git repositories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import run_main
from tests.gitrepo import GitRepo

C = "soda/contracts"

ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: amount
    data_type: decimal(12, 2)
"""


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def report(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    from tests.conftest import gate_env

    proc = run_main(
        repo.path, "--base", "main", "--format", "json", *args, env={**gate_env(), **(env or {})}
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def narrow(repo: GitRepo, contract: str = ORDERS) -> None:
    repo.write(f"{C}/orders.yaml", contract.replace("bigint", "int"))


# -- step 1: fingerprints -------------------------------------------------------------


def test_each_change_carries_the_sha256_of_its_canonical_json(shop: GitRepo) -> None:
    narrow(shop)
    _, out = report(shop)
    change = out["changes"][0]
    canonical = json.dumps(
        {
            "after": "INT",
            "before": "BIGINT",
            "column": "order_id",
            "dataset": "lake/shop/orders",
            "rule": "type_narrowed",
        },
        separators=(",", ":"),
    )
    assert change["fingerprint"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_the_fingerprint_ignores_lines_and_messages_but_not_what_breaks(shop: GitRepo) -> None:
    narrow(shop)
    first = report(shop)[1]["changes"][0]["fingerprint"]
    # The same break, moved down two lines by a comment: same fingerprint.
    narrow(shop, "# owned by shop\n\n" + ORDERS)
    moved = report(shop)[1]["changes"][0]
    assert moved["line"] != 4 and moved["fingerprint"] == first
    # Narrowed to another type: another break, another fingerprint.
    shop.write(f"{C}/orders.yaml", ORDERS.replace("bigint", "smallint"))
    assert report(shop)[1]["changes"][0]["fingerprint"] != first
