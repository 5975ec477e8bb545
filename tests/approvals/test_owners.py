"""A contract's owners as each format names them (ODCS team, DCS info.owner, dbt meta/group)."""

from __future__ import annotations

import pytest

from gate.approvals.owners import contract_owners
from gate.model import Dataset


def owners(fmt: str, text: str, dataset_id: str = "orders") -> tuple[str, ...]:
    return contract_owners(Dataset(id=dataset_id, path="c.yaml", format=fmt), text.encode())


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        ("odcs", "team:\n  - username: ann\n  - name: Bo\n", ("ann", "Bo")),  # v3.0 list
        ("odcs", "team:\n  name: sales\n  members: [{username: ann}]\n", ("sales",)),  # v3.1
        ("dcs", "info:\n  owner: '@acme/sales'\n", ("@acme/sales",)),
        ("dbt", "models:\n  - name: orders\n    meta: {owner: '@ann'}\n", ("@ann",)),
        ("dbt", "models:\n  - name: orders\n    config: {meta: {owner: ann}}\n", ("ann",)),
        (
            "dbt",
            "groups:\n  - name: fin\n    owner: {name: Finance, email: f@x.io}\n"
            "models:\n  - name: orders\n    group: fin\n",
            ("Finance",),
        ),
        ("dbt", "models:\n  - name: other\n    meta: {owner: ann}\n", ()),
        ("soda", "dataset: orders\n", ()),
        ("dcs", "not: [valid\n", ()),  # unreadable: no owner, so approval fails closed
    ],
)
def test_owner_names(fmt: str, text: str, expected: tuple[str, ...]) -> None:
    assert owners(fmt, text) == expected
