"""ODCS ``items`` of an ``array`` property: the element type is part of the column's type.

bitol-io/open-data-contract-standard's own example
(docs/examples/schema/all-schema-types.odcs.yaml) writes an array as
``logicalType: array`` + ``physicalType: array`` + ``items: {logicalType, physicalType}``;
the JSON schema says ``items`` applies "only ... when ``logicalType: array``". A bare
``physicalType: array`` names the container, not the element: it used to win over the
element type, so ``array<int> -> array<string>`` passed silently.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

HEAD = (
    "apiVersion: v3.0.2\nkind: DataContract\nid: shop\nversion: 1.0.0\nstatus: active\n"
    "schema:\n  - name: orders\n    properties:\n"
    "      - name: order_id\n        logicalType: string\n"
    "      - name: tags\n        logicalType: array\n        physicalType: {physical}\n"
)


def _items(logical: str, physical: str | None = None, indent: int = 8) -> str:
    pad = " " * indent
    out = f"{pad}items:\n{pad}  logicalType: {logical}\n"
    if physical is not None:
        out += f"{pad}  physicalType: {physical}\n"
    return out


def _pr(repo: GitRepo, before: str, after: str) -> None:
    repo.write("contracts/shop.odcs.yaml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/shop.odcs.yaml", after)
    repo.commit("pr")


def test_an_array_whose_items_change_type_is_a_type_change(cli: Cli, repo: GitRepo) -> None:
    before = HEAD.format(physical="array") + _items("integer", "int")
    after = HEAD.format(physical="array") + _items("string", "string")
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "type_changed orders.tags" in proc.stdout
    assert "ARRAY<INT> -> ARRAY<STRING>" in proc.stdout


def test_an_array_whose_items_widen_is_a_widening(cli: Cli, repo: GitRepo) -> None:
    """``items`` with only a logical type: integer(i32) -> integer (bigint) widens."""
    before = (
        HEAD.format(physical="array")
        + _items("integer")
        + "          logicalTypeOptions:\n            format: i32\n"
    )
    after = HEAD.format(physical="array") + _items("integer")
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "type_widened orders.tags" in proc.stdout


def test_an_array_of_objects_losing_a_member_is_a_removed_field(cli: Cli, repo: GitRepo) -> None:
    obj = (
        "        items:\n          logicalType: object\n          physicalType: object\n"
        "          properties:\n"
        "            - name: id\n              logicalType: string\n"
        "{zip}"
    )
    zip_ = "            - name: zip\n              logicalType: string\n"
    before = HEAD.format(physical="array") + obj.format(zip=zip_)
    after = HEAD.format(physical="array") + obj.format(zip="")
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed orders.tags.zip" in proc.stdout


def test_an_unchanged_array_with_items_is_no_change(cli: Cli, repo: GitRepo) -> None:
    """The official example's shape, restated (its description changes): nothing to report."""
    text = HEAD.format(physical="array") + _items("string", "string")
    _pr(repo, text, text.replace("name: order_id\n", "name: order_id\n        description: x\n"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "orders.tags" not in proc.stdout


def test_a_physical_array_type_with_its_element_still_wins(cli: Cli, repo: GitRepo) -> None:
    """``physicalType: ARRAY<INT>`` names the element itself: it is the type, as before
    (a logical ``items`` that disagrees with it does not override the SQL type)."""
    before = HEAD.format(physical="ARRAY<INT>") + _items("string")
    after = HEAD.format(physical="ARRAY<INT>") + _items("integer")
    _pr(repo, before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "orders.tags" not in proc.stdout
