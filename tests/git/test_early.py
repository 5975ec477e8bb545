"""The working tree's walks started by the command before its imports (issue #26).

``gate.git.early`` starts ``git diff-index --quiet`` and ``git ls-files --others``
as soon as the command has read its arguments; the run takes their answers
instead of asking again, only about the commit it resolved HEAD to, and a walk
it never collects is stopped and reaped.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gate.git import SODA_GLOBS, early, open_repo, process
from tests.git.helpers import C, contract
from tests.gitrepo import GitRepo

#: What a run asks git for itself when nothing was started early.
WALKS = (
    ("diff-index",),
    ("ls-files", "-z", "--others", "--exclude-standard"),
    ("ls-tree", "-r", "-z", "--full-tree"),
)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """The walks the run asks git for itself (real git runs)."""
    seen: list[tuple[str, ...]] = []
    real = process.Git.run

    def spy(self: process.Git, *args: str, stdin: bytes | None = None):  # type: ignore[no-untyped-def]
        if any(args[: len(walk)] == walk and len(args) <= 5 for walk in WALKS):
            seen.append(args)
        return real(self, *args, stdin=stdin)

    monkeypatch.setattr(process.Git, "run", spy)
    yield seen
    early.discard()


def test_a_worktree_run_takes_both_walks_from_the_command(
    g: GitRepo, cli: Callable[..., subprocess.CompletedProcess[str]], asked: list[tuple[str, ...]]
) -> None:
    base = g.head()
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))  # tracked, edited
    g.write(f"{C}/new.yaml", contract("new"))  # untracked
    result = cli(g.path, "--base", base, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"column": "amount"' in result.stdout  # the edit is seen
    assert '"dataset": "new"' in result.stdout  # the untracked contract too
    assert asked == []  # neither walk was asked again
    assert early.take_top(str(g.path)) is None  # nothing left behind


def test_a_head_run_takes_the_base_tip_walk_only(
    g: GitRepo, cli: Callable[..., subprocess.CompletedProcess[str]], asked: list[tuple[str, ...]]
) -> None:
    base = g.head()
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.commit("amount")
    g.write(f"{C}/new.yaml", contract("new"))  # untracked: not part of a --head run
    result = cli(g.path, "--base", base, "--head", "HEAD", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"column": "amount"' in result.stdout
    assert '"dataset": "new"' not in result.stdout
    assert asked == []  # the dialect's tree walk came from the command
    assert early.take_top(str(g.path)) is None


def test_with_dialect_given_no_tree_walk_is_started(
    g: GitRepo, monkeypatch: pytest.MonkeyPatch, asked: list[tuple[str, ...]]
) -> None:
    seen: list[str | None] = []
    real = early.start

    def spy(where: str, *, worktree: bool, base: str | None) -> None:
        seen.append(base)
        real(where, worktree=worktree, base=base)

    monkeypatch.setattr(early, "start", spy)
    from gate.cli import main

    monkeypatch.chdir(g.path)
    main(["--base", "main", "--head", "HEAD", "--dialect", "spark", "--format", "json"])
    main(["--base", "main", "--head", "HEAD", "--format", "json"])
    assert seen == [None, "main"]


def test_a_base_tip_walk_about_another_commit_is_asked_again(
    g: GitRepo, asked: list[tuple[str, ...]]
) -> None:
    g.branch("feature")
    early.start(str(g.path), worktree=False, base="main")
    g.write("dbt_project.yml", "name: p\nprofile: p\n")
    tip = g.commit("main moves before the run resolves it")
    with open_repo(g.path) as repo:
        assert "dbt_project.yml" in repo.named(tip, ["dbt_project.yml"])
    assert [a[0] for a in asked] == ["ls-tree"]


def test_an_answer_about_another_commit_is_asked_again(
    g: GitRepo, asked: list[tuple[str, ...]]
) -> None:
    base = g.head()
    early.start(str(g.path), worktree=True, base=None)  # about ``base``
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.commit("HEAD moves before the run resolves it")
    with open_repo(g.path) as repo:
        changes = repo.changed(base, None, SODA_GLOBS)
    assert [c.new_path for c in changes] == [f"{C}/orders.yaml"]
    assert [a[0] for a in asked if a[0] != "ls-tree"] == ["diff-index"]  # ls-files: taken


def test_a_failed_run_leaves_no_walk_behind(
    g: GitRepo, cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    result = cli(g.path, "--base", "nope")
    assert result.returncode == 2
    assert "unknown ref 'nope'" in result.stderr
    assert early.take_top(str(g.path)) is None


def test_discard_stops_and_reaps_the_walks(g: GitRepo) -> None:
    early.start(str(g.path), worktree=True, base="main")
    started = early._started
    assert started is not None and started.top == str(g.path)
    walks = [started.clean, started.untracked, started.tree]
    procs = [w.proc for w in walks if w is not None]
    assert len(procs) == 3
    early.discard()
    assert all(p is not None and p.returncode is not None for p in procs)
    assert all(w is not None and w.out.closed for w in walks)
    assert early.take_top(str(g.path)) is None


def test_outside_a_repository_the_run_words_the_error(tmp_path: Path) -> None:
    early.start(str(tmp_path), worktree=True, base=None)
    assert early._started is None


def test_no_commit_yet_is_left_to_the_run(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "empty")
    early.start(str(repo.path), worktree=True, base=None)
    assert early._started is None


def _trace(path: Path) -> list[tuple[str, str, float]]:
    """(walk, event, seconds) from a GIT_TRACE2_EVENT file, one row per start and exit."""
    import datetime
    import json

    sids: dict[str, str] = {}
    rows: list[tuple[str, str, float]] = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["event"] not in ("start", "exit"):
            continue
        if event["event"] == "start":
            argv = [a for a in event["argv"][1:] if not a.startswith(("-c", "core."))]
            sids[event["sid"]] = argv[0]
        when = datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
        rows.append((sids[event["sid"]], event["event"], when.timestamp()))
    return rows


def test_the_walks_run_one_after_another_in_order_of_need(
    g: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Side by side, the three gits (and diff-index's preload threads) took both
    cores from the imports they were meant to overlap; one after another, each
    single-threaded, they keep to one (issue #26, N = 50,000)."""
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    early.start(str(g.path), worktree=True, base="main")
    started = early._started
    assert started is not None
    assert started.clean is not None and "core.preloadIndex=false" in started.clean.args
    assert early.take_untracked(str(g.path)) == b""
    early.discard()
    rows = [r for r in _trace(trace) if r[0] != "rev-parse"]
    assert [(walk, event) for walk, event, _ in rows] == [
        ("ls-tree", "start"),
        ("ls-tree", "exit"),
        ("diff-index", "start"),
        ("diff-index", "exit"),
        ("ls-files", "start"),
        ("ls-files", "exit"),
    ]


def _walk_threads() -> list[str]:
    """The walks' threads alive now. Counted by name, not by ``active_count()``:
    an xdist worker that ran a Spark test keeps py4j's threads for the session."""
    import threading

    return [t.name for t in threading.enumerate() if t.name == "gate-early"]


def test_a_taken_answer_leaves_no_thread_behind(g: GitRepo) -> None:
    """The run forks its workers only while it has no other thread (gate/workers.py):
    the walks' thread is gone once the run took an answer."""
    early.start(str(g.path), worktree=True, base="main")
    assert early.take_clean(str(g.path), g.head()) is True
    assert _walk_threads() == []
    early.discard()


def test_discard_before_the_walks_end_starts_no_more(g: GitRepo) -> None:
    early.start(str(g.path), worktree=True, base="main")
    started = early._started
    assert started is not None
    early.discard()
    assert _walk_threads() == []
    walks = [started.tree, started.clean, started.untracked]
    assert all(w is not None and w.out.closed for w in walks)
    assert all(w is not None and (w.proc is None or w.proc.returncode is not None) for w in walks)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_chain_that_fails_leaves_the_run_to_ask_itself(
    g: GitRepo, monkeypatch: pytest.MonkeyPatch, asked: list[tuple[str, ...]]
) -> None:
    """An unexpected error in the walks' thread must not leave the run waiting for
    a walk that never starts: the run asks git itself, as without the walks."""
    real = subprocess.Popen
    calls: list[int] = []

    def popen(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("unexpected")
        return real(*args, **kwargs)

    monkeypatch.setattr(early.subprocess, "Popen", popen)
    early.start(str(g.path), worktree=True, base="main")
    assert early.take_untracked(str(g.path)) is None
    early.discard()
