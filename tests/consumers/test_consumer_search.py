"""The consumer search that starts before the diff: taken when a change breaks,
stopped when none does, and narrowed to the breaking datasets before analysis."""

from __future__ import annotations

from pathlib import Path

from gate.config import ConsumerConfig
from gate.consumers.scan import _mentions_any, scan, start_search
from gate.diff import diff_datasets
from gate.formats import parse_contract
from gate.git import open_repo
from tests.gitrepo import GitRepo

ORDERS = "dataset: shop.orders\ncolumns:\n  - name: id\n    data_type: bigint\n"
ITEMS = "dataset: shop.items\ncolumns:\n  - name: sku\n    data_type: string\n"


def repo_with_readers(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("soda/contracts/orders.yaml", ORDERS)
    repo.write("soda/contracts/items.yaml", ITEMS)
    repo.write("models/orders_report.sql", "select id from shop.orders\n")
    repo.write("models/items_report.sql", "select sku from shop.items\n")
    repo.commit("contracts and readers")
    return repo


def datasets(text: str, path: str) -> list:
    return list(parse_contract(text.encode(), path, None).datasets)


def test_a_search_nobody_needs_is_stopped(tmp_path: Path) -> None:
    repo = repo_with_readers(tmp_path)
    base = datasets(ORDERS, "soda/contracts/orders.yaml")
    head = datasets(
        ORDERS + "  - name: note\n    data_type: string\n", "soda/contracts/orders.yaml"
    )
    changes = diff_datasets(base, head)
    assert [c.rule for c in changes] == ["column_added"]  # nothing breaks
    with open_repo(str(repo.path)) as git:
        search = start_search(git, "HEAD", base, head, ConsumerConfig())
        assert search is not None
        found = scan(git, "HEAD", changes, base, head, ConsumerConfig(), "spark", search=search)
        assert found.files_read == 0 and found.found == ()
        assert search.pending._proc.returncode is not None  # git is not left running


def test_files_that_mention_only_a_non_breaking_dataset_are_not_analysed(tmp_path: Path) -> None:
    repo = repo_with_readers(tmp_path)
    base = datasets(ORDERS, "a.yaml") + datasets(ITEMS, "b.yaml")
    head = datasets(ORDERS.replace("bigint", "int"), "a.yaml") + datasets(
        ITEMS + "  - name: qty\n    data_type: int\n", "b.yaml"
    )
    changes = diff_datasets(base, head)
    assert {c.rule for c in changes} == {"type_narrowed", "column_added"}
    with open_repo(str(repo.path)) as git:
        search = start_search(git, "HEAD", base, head, ConsumerConfig())
        assert search is not None and search.needles == {"orders", "items"}
        found = scan(git, "HEAD", changes, base, head, ConsumerConfig(), "spark", search=search)
        matched = git.files_containing("HEAD", ConsumerConfig().globs, search.needles, True, True)
    # the search matched both readers; only the one of the narrowed table is analysed
    assert matched == ["models/items_report.sql", "models/orders_report.sql"]
    assert found.files_read == 1
    assert {f.path for f in found.found} == {"models/orders_report.sql"}
    assert {(f.column, f.usage) for f in found.found if f.column} == {("id", "selected")}


def test_the_narrowing_filter_keeps_whatever_git_could_have_matched() -> None:
    assert _mentions_any(b"SELECT * FROM Shop.ORDERS", {"orders"})
    assert _mentions_any(b"from orders_v2", {"orders"})  # a superset of git's -w is fine
    assert not _mentions_any(b"from items", {"orders"})
    # git searches a needle with a newline as its lines; so must the filter
    assert _mentions_any(b"select 1 from weird", {"we\nweird"})
    assert _mentions_any(b"\xff\xfe from orders", {"orders"})  # not UTF-8: still searched
