"""``git grep -F`` searches: needles through stdin, work done while git searches.

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.git import open_repo
from tests.gitrepo import GitRepo


def test_files_containing_reads_needles_from_stdin(tmp_path: Path) -> None:
    """Needles go through ``-f -``: an option-like needle is text, thousands fit."""
    g = GitRepo(tmp_path / "grep")
    g.write("models/a.sql", "select * from --orders\n")
    g.write("models/b.sql", "select * from Table_100\n")
    g.write("models/c.sql", "select * from table_1000\n")
    g.commit("models")
    with open_repo(g.path) as repo:
        assert repo.files_containing("HEAD", ["models/*.sql"], ["--orders"]) == ["models/a.sql"]
        many = [f"table_{i}" for i in range(5000, 20000)] + ["table_100"]
        assert repo.files_containing("HEAD", ["models/*.sql"], many) == ["models/c.sql"]
        assert repo.files_containing(
            "HEAD", ["models/*.sql"], many, ignore_case=True, words=True
        ) == ["models/b.sql"]
        assert repo.files_containing(None, ["models/*.sql"], ["", "\n"]) == []
        assert repo.read_files("HEAD", ["models/b.sql", "missing.sql"]) == {
            "models/b.sql": b"select * from Table_100\n"
        }


def test_files_containing_runs_meanwhile_while_git_searches(tmp_path: Path) -> None:
    """The overlapped path answers as the plain one, with a long needle list
    (more than a pipe holds) and many matches; an error in ``meanwhile`` stops git."""
    g = GitRepo(tmp_path / "grep")
    for i in range(300):
        g.write(f"models/m{i:03d}.sql", f"select * from table_{i}\n")
    g.commit("models")
    many = [f"table_{i}" for i in range(20000)]
    calls: list[int] = []
    with open_repo(g.path) as repo:
        for head in ("HEAD", None):
            plain = repo.files_containing(head, ["models/*.sql"], many, words=True)
            overlapped = repo.files_containing(
                head, ["models/*.sql"], many, words=True, meanwhile=lambda: calls.append(1)
            )
            assert overlapped == plain == [f"models/m{i:03d}.sql" for i in range(300)]
        assert calls == [1, 1]
        with pytest.raises(ZeroDivisionError):  # the caller's own error, git stopped
            repo.files_containing("HEAD", ["models/*.sql"], many, meanwhile=lambda: 1 / 0)
