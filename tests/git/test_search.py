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


def test_many_needles_find_what_fixed_strings_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From 64 needles on they are searched as tries (-E): the same files as -F,
    for needles that are prefixes of one another, hold regex characters, differ
    only in case or sit next to word characters."""
    needles = [
        *(f"shop.orders_{i}" for i in range(40)),
        "a", "ab", "abc", "a.b", "a.b.c", "x+y", "(p)", "[q]", "r|s", "t*", "u?", "{v}",
        "^w", "x$", "back\\slash", "dé", "lake/shop/Orders", "under_score", "-dash",
        "sp ace", "tab\there", "é", "ü.x", "a{2}", "q.*", "z\\",
    ]  # fmt: skip
    assert len(needles) >= 64
    texts = [
        "select * from shop.orders_7\n", "shop.orders_7x\n", "xshop.orders_39\n",
        "a.b.cd\n", "a.bc\n", "zab\n", "x+y\n", "xxy\n", "f(p)\n", "fp\n", "[q]\n", "q\n",
        "r|s\n", "rs\n", "t*\n", "tt\n", "u?\n", "{v}\n", "^w\n", "x$\n", "back\\slash\n",
        "dÉ\n", "DÉ\n", "LAKE/SHOP/ORDERS\n", "under_scores\n", "-dash\n", "x-dash\n",
        "sp ace\n", "tab\there\n", "é\n", "üax\n", "ü.x\n", "aa\n", "q.*\n", "qx\n",
        "z\\\n", "nothing here\n", "two\nlines a.b\n", "A.B.C\n", "A\n", "b_a\n",
    ]  # fmt: skip
    g = GitRepo(tmp_path / "grep")
    for i, text in enumerate(texts):
        g.write(f"m/{i:02d}.sql", text)
    g.commit("files")
    from gate.git import search

    def both(head: str | None, ignore_case: bool, words: bool) -> tuple[list[str], list[str]]:
        with open_repo(g.path) as repo:
            as_trie = repo.files_containing(head, ["m/*.sql"], needles, ignore_case, words)
            monkeypatch.setattr(search, "_TRIE_FROM", 10**9)
            fixed = repo.files_containing(head, ["m/*.sql"], needles, ignore_case, words)
            monkeypatch.undo()
        return as_trie, fixed

    for ignore_case in (False, True):
        for words in (False, True):
            for head in ("HEAD", None):
                as_trie, fixed = both(head, ignore_case, words)
                assert as_trie == fixed, (ignore_case, words, head)
    as_trie, _fixed = both("HEAD", True, True)
    name = set(as_trie)
    assert "m/03.sql" in name  # a.b.cd: "a.b" is a word there, "a.b.c" is not
    assert "m/05.sql" not in name and "m/24.sql" not in name  # zab, under_scores
    assert "m/38.sql" in name and "m/07.sql" not in name  # A.B.C; xxy


def test_thousands_of_needles_over_thousands_of_files_are_one_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: a pull request adding 5,000 tiny contracts. Every new id is
    searched for in the contracts (is it declared elsewhere already?), and
    ``git grep -F`` tries each pattern on each line: 16 s per search there,
    63 s for the run (30 s of CPU); the trie patterns take 0.24 s. Counted, not
    timed: the 6,000 needles reach git as a few trie patterns (``-E``), in a few
    gits, never as 6,000 fixed strings each tried on every line."""
    from gate.git import search
    from tests.cost import counting

    g = GitRepo(tmp_path / "grep")
    for i in range(3000):
        g.write(f"c/{i}.yaml", f"dataset: m{i}\ncolumns:\n  - name: id\n    data_type: int\n")
    g.commit("contracts")
    needles = [f"m{i}" for i in range(3000)] + [f"lake/long/name/{i}" for i in range(3000)]

    def one_scan(gits: list) -> None:
        # 6,000 needles over 256 a trie: 24 patterns, at most _TRIE_GITS gits
        assert 1 <= len(gits) <= search._TRIE_GITS, len(gits)
        for (_git, flags, _where, _globs, patterns), _kwargs in gits:
            assert "-E" in flags and "-F" not in flags, flags
            assert len(patterns) <= len(needles) // 200, len(patterns)

    with open_repo(g.path) as repo:
        gits = counting(monkeypatch, search, "_grep")
        found = repo.files_containing("HEAD", ["c/*.yaml"], needles, ignore_case=True)
        one_scan(gits.args)
        assert len(found) == 3000
        gits.args.clear()
        found = repo.files_containing("HEAD", ["c/*.yaml"], needles, True, True)
        one_scan(gits.args)
        assert len(found) == 3000


def test_long_unlike_needles_stay_fixed_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trie pays only where needles share prefixes and fit a few gits: 300 ids of
    1,000 characters (4,000 of 600 took 55 s as 75 trie gits, 9 s with -F) are
    searched with -F, and the trie is not even built; 200 short ones are a trie."""
    from gate.git import search

    built: list[int] = []
    real = search._trie_patterns

    def counting(lines: list[str], words: bool) -> list[list[str]]:
        built.append(len(lines))
        return real(lines, words)

    monkeypatch.setattr(search, "_trie_patterns", counting)
    g = GitRepo(tmp_path / "grep")
    long_ids = [f"m{i:03d}_{'x' * 995}" for i in range(300)]
    g.write("models/a.sql", f"select * from {long_ids[7]}\n")
    g.write("models/b.sql", "select * from t_150\n")
    g.commit("models")
    with open_repo(g.path) as repo:
        assert repo.files_containing("HEAD", ["models/*.sql"], long_ids) == ["models/a.sql"]
        assert built == []
        short = [f"t_{i}" for i in range(200)]
        assert repo.files_containing("HEAD", ["models/*.sql"], short, words=True) == [
            "models/b.sql"
        ]
        assert built == [200]


def _counting_starts(repo: object) -> list[tuple[str, ...]]:
    """The ``git grep`` processes ``repo`` starts from now on, recorded."""
    git = repo._git  # type: ignore[attr-defined]
    start = git.start
    started: list[tuple[str, ...]] = []

    def counted(*args: str) -> object:
        started.append(args)
        return start(*args)

    git.start = counted
    return started


def test_no_search_starts_where_the_tree_walk_shows_no_file_to_match(tmp_path: Path) -> None:
    """A repository without one SQL file (issue #26: 18-40 ms of git's CPU at 50,000
    files per search): once the run has walked a tree, a search whose globs no
    path there (nor at the side searched, nor untracked) can match starts no git,
    at a commit or in a clean working tree, and finds what git finds otherwise."""
    g = GitRepo(tmp_path / "r")
    g.write("soda/contracts/a.yaml", "dataset: table_1\n")
    g.write("docs/sql.md", "table_1\n")
    g.write("notes/x.sql.txt", "table_1\n")
    first = g.commit("first")
    with open_repo(g.path) as repo:
        repo.named(first, ["dbt_project.yml"])  # the run's walk (the dialect's, at the base tip)
        started = _counting_starts(repo)
        for head in (first, "HEAD", None):
            assert repo.files_containing(head, ["**/*.sql", "!**/target/**"], ["table_1"]) == []
        assert started == []
        assert repo.files_containing(first, ["**/*.md"], ["table_1"]) == ["docs/sql.md"]
        assert len(started) == 1


@pytest.mark.parametrize("where", ["walked", "head", "untracked", "staged", "icase", "folder"])
def test_a_search_runs_wherever_a_file_may_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The skip above never hides a file git would search: one in the walked tree,
    one added at the side searched (a second commit, or staged in the working
    tree), an untracked one, one git matches only ignoring case
    (``GIT_ICASE_PATHSPECS``), one under a folder named like a match."""
    g = GitRepo(tmp_path / "r")
    g.write("soda/contracts/a.yaml", "dataset: table_1\n")
    if where == "walked":
        g.write("deep/down/m.sql", "select * from table_1\n")
    if where == "folder":
        g.write("m.sql/inner.sql", "select * from table_1\n")
    if where == "icase":
        g.write("models/M.SQL", "select * from table_1\n")
        monkeypatch.setenv("GIT_ICASE_PATHSPECS", "1")
    first = g.commit("first")
    head: str | None = None
    if where == "head":
        g.write("models/new.sql", "select * from table_1\n")
        head = g.commit("second")
    if where == "untracked":
        g.write("models/u.sql", "select * from table_1\n")
    if where == "staged":
        g.write("models/s.sql", "select * from table_1\n")
        g.git("add", "models/s.sql")
    with open_repo(g.path) as repo:  # no walk: the search runs, whatever it finds
        plain = repo.files_containing(head, ["**/*.sql"], ["table_1"])
    with open_repo(g.path) as repo:
        repo.named(first, ["dbt_project.yml"])
        started = _counting_starts(repo)
        assert repo.files_containing(head, ["**/*.sql"], ["table_1"]) == plain
        assert len(plain) == 1 and len(started) == 1
