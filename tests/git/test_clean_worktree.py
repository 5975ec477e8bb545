"""A clean working tree is compared as its HEAD commit (issue #26), with the same result.

``git diff <base>`` against the working tree lstats every tracked file for each
listing; between two commits it walks trees only. The gate takes the commit
path only when ``git diff-index`` finds no tracked file differing from HEAD, so
the listing is the same; the new side is still read from disk.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gate.git import SODA_GLOBS, open_repo, process
from tests.git.helpers import C, contract
from tests.gitrepo import GitRepo


@pytest.fixture
def diffs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """The argument lists of the ``git diff`` commands the gate starts (real git runs)."""
    seen: list[tuple[str, ...]] = []
    real = process.Git.run

    def spy(self: process.Git, *args: str, stdin: bytes | None = None):  # type: ignore[no-untyped-def]
        if args[:1] == ("diff",):
            seen.append(args)
        return real(self, *args, stdin=stdin)

    monkeypatch.setattr(process.Git, "run", spy)
    yield seen


def _committed(g: GitRepo) -> str:
    base = g.head()
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.write(f"{C}/customers.yaml", contract("customers"))
    g.move(f"{C}/orders.yaml", f"{C}/sales/orders.yaml")
    g.commit("change")
    return base


def test_a_clean_worktree_is_listed_between_commits(
    g: GitRepo, diffs: list[tuple[str, ...]]
) -> None:
    base = _committed(g)
    with open_repo(g.path) as repo:
        listed = repo.changed(base, None, SODA_GLOBS)
        committed = repo.changed(base, "HEAD", SODA_GLOBS)
    head = g.head()
    assert next(d for d in diffs if "-M" in d).count(head) == 1  # compared with HEAD's commit
    # The same files and statuses as --head HEAD, new side still read from disk.
    assert [(c.status, c.old_path, c.new_path, c.old_blob) for c in listed] == [
        (c.status, c.old_path, c.new_path, c.old_blob) for c in committed
    ]
    assert {c.new_blob for c in listed} == {None}


@pytest.mark.parametrize("edit", ["unstaged", "staged", "deleted"])
def test_a_dirty_worktree_is_still_compared_itself(
    g: GitRepo, edit: str, diffs: list[tuple[str, ...]]
) -> None:
    base = _committed(g)
    path = f"{C}/customers.yaml"
    if edit == "deleted":
        g.remove(path)
    else:
        g.write(path, contract("customers", "id", "email"))
        if edit == "staged":
            g.git("add", path)
    with open_repo(g.path) as repo:
        listed = {c.new_path or c.old_path: c.status for c in repo.changed(base, None, SODA_GLOBS)}
        if edit != "deleted":
            assert repo.read_worktree(path) == contract("customers", "id", "email").encode()
    assert g.head() not in next(d for d in diffs if "-M" in d)
    # added since the base: deleted on disk it is no change at all
    assert listed.get(path) == (None if edit == "deleted" else "A")
    assert listed[f"{C}/sales/orders.yaml"] in ("R", "A")


def test_untracked_contracts_count_on_a_clean_worktree(g: GitRepo) -> None:
    base = _committed(g)
    g.write(f"{C}/new.yaml", contract("new"))
    with open_repo(g.path) as repo:
        paths = {c.new_path for c in repo.changed(base, None, SODA_GLOBS)}
    assert f"{C}/new.yaml" in paths


def test_the_cleanliness_is_asked_once_per_run(g: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _committed(g)
    asked: list[tuple[str, ...]] = []
    real = process.Git.run

    def spy(self: process.Git, *args: str, stdin: bytes | None = None):  # type: ignore[no-untyped-def]
        if args[:1] == ("diff-index",):
            asked.append(args)
        return real(self, *args, stdin=stdin)

    monkeypatch.setattr(process.Git, "run", spy)
    with open_repo(g.path) as repo:
        for _ in range(3):
            repo.changed(base, None, SODA_GLOBS)
        repo.changed(base, "HEAD", SODA_GLOBS)
    assert len(asked) == 1
