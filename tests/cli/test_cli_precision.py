"""Issue #21, precision on real repositories, through the CLI: a real git repo, ``main()`` in-process.

- a dataset renamed in a moved file pairs by its columns as a *set*: dbt's
  ``include: all`` and hand edits reorder columns without changing the table;
- regular-expression patterns compare as languages (gate/diff/regex_lang.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

C = "soda/contracts"
Cli = Callable[..., CompletedProcess[str]]

COLUMNS = [
    ("order_id", "bigint"),
    ("customer_id", "bigint"),
    ("amount", "decimal(12,2)"),
    ("status", "varchar(20)"),
    ("created_at", "timestamp"),
]


def soda(dataset: str, columns: list[tuple[str, str]], described: bool = False) -> str:
    lines = [f"dataset: {dataset}", "columns:"]
    for name, data_type in columns:
        lines += [f"  - name: {name}", f"    data_type: {data_type}"]
        if described:
            lines.append(
                f"    description: The {name.replace('_', ' ')} as the warehouse stores it."
            )
    return "\n".join(lines) + "\n"


def report(cli: Cli, repo: GitRepo) -> tuple[int, list[tuple[str, str | None]], dict]:
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    return proc.returncode, [(c["rule"], c["column"]) for c in data["changes"]], data


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", soda("lake/shop/orders", COLUMNS))
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def test_moved_and_renamed_dataset_with_reordered_columns_is_a_rename(
    cli: Cli, shop: GitRepo
) -> None:
    # The file moves and is rewritten (descriptions added, columns in another
    # order), so git no longer calls it a rename: only the columns are evidence.
    shop.remove(f"{C}/orders.yaml")
    shop.write(f"{C}/sales/sales.yaml", soda("lake/shop/sales", COLUMNS[::-1], described=True))
    code, rules, data = report(cli, shop)
    assert rules == [("model_renamed", None)]
    assert data["changes"][0]["before"] == "lake/shop/orders"
    assert code == 1


def test_reordered_columns_of_a_dataset_are_no_change(cli: Cli, shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", soda("lake/shop/orders", COLUMNS[::-1]))
    code, rules, _ = report(cli, shop)
    assert (code, rules) == (0, [])


# -- patterns compared as languages ---------------------------------------------

DCS = """\
dataContractSpecification: 1.1.0
id: urn:datacontract:shop:codes
info: {title: Codes, version: 1.0.0}
models:
  codes:
    fields:
      code:
        type: string
        pattern: '{pattern}'
"""

SODA = """\
dataset: lake/shop/codes
columns:
  - name: code
    data_type: varchar
    valid_regex_sql: '{pattern}'
    checks:
      - invalid:
"""


@pytest.mark.parametrize(
    ("template", "old", "new", "expected"),
    [
        # a strict subset: producers writing 'ABC' now fail
        (DCS, "^[A-Z]{2,3}$", "^[A-Z]{2}$", [("constraint_tightened", "code")]),
        (SODA, "^[A-Z]{2,3}$", "^[A-Z]{2}$", [("constraint_tightened", "code")]),
        (DCS, "^[A-Z]{2}$", "^[A-Z]{2,3}$", [("constraint_relaxed", "code")]),
        # the same language spelt differently: nothing to say
        (DCS, "^\\d{3}$", "^[0-9]{3}$", []),
        # JSON Schema searches: '[0-9]' accepts any value holding a digit
        (DCS, "[0-9]", "^[0-9]+$", [("constraint_tightened", "code")]),
        # Soda may run on a warehouse that matches the whole value: no direction
        (SODA, "[0-9]", "^[0-9]+$", [("constraint_changed", "code")]),
        # a backreference: no automaton, as before
        (DCS, "^(a)\\1$", "^a$", [("constraint_changed", "code")]),
    ],
)
def test_changed_pattern_is_compared_as_a_language(
    cli: Cli, tmp_path: Path, template: str, old: str, new: str, expected: list
) -> None:
    repo = GitRepo(tmp_path / "codes")
    path = "contracts/codes.yaml"
    repo.write(path, template.replace("{pattern}", old))
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(path, template.replace("{pattern}", new))
    _code, rules, data = report(cli, repo)
    assert [r for r in rules if r[0].startswith("constraint")] == expected
    for change in data["changes"]:
        if change["rule"].startswith("constraint"):
            assert (change["before"], change["after"]) == (f"pattern {old}", f"pattern {new}")
