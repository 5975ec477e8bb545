"""Safe git calls (``gate.git.process``) and the names ``gate.git.tree`` keeps exporting."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import gate.git
import gate.git.tree
from gate.action.fetch import Workspace
from gate.git import process
from gate.model import GitError
from tests.gitrepo import GitRepo


def test_gate_git_tree_still_exports_every_name_it_had() -> None:
    """Callers and the Action's debug trace import these from ``gate.git.tree``."""
    names = [
        "SODA_GLOBS",
        "SHALLOW_REMEDY",
        "FileChange",
        "PendingSearch",
        "Repo",
        "TooLarge",
        "first_line",
        "git_env",
        "open_repo",
    ]
    for name in names:
        assert getattr(gate.git.tree, name) is getattr(gate.git, name)
    for method in ("changed", "read_blobs", "read_file", "read_worktree", "list_files"):
        assert callable(getattr(gate.git.tree.Repo, method))
    assert callable(gate.git.tree.PendingSearch.result)


def test_first_line_skips_hints_and_prefixes() -> None:
    assert process.first_line(b"hint: try this\nfatal: bad object x\nmore\n") == "bad object x"
    assert process.first_line("error: nope") == "nope"
    assert process.first_line(b"\n  \n") == "no message from git"


def test_git_runs_non_interactive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "1")
    env = process.git_env()
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_ASKPASS"] == "" and env["GIT_PAGER"] == "cat" and env["LC_ALL"] == "C"
    assert env["GIT_OPTIONAL_LOCKS"] == "0"


def test_a_git_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"^cannot run git: ") as err:
        process.run(tmp_path / "missing", ["status"])
    assert "\n" not in str(err.value)


def test_the_actions_git_calls_go_through_process(tmp_path: Path) -> None:
    """``Workspace.git``: text answers, and a git that overruns its time is one line."""
    g = GitRepo(tmp_path / "repo")
    g.write("a.txt", "a\n")
    head = g.commit("one")
    ws = Workspace(str(g.path), log=lambda _line: None)
    assert ws.head() == head
    assert ws.has_commit(head) and not ws.has_commit("0" * 40)
    fifo = tmp_path / "never"
    os.mkfifo(fifo)  # git blocks opening it: no writer ever comes
    with pytest.raises(GitError, match=r"^git hash-object took longer than 0\.5s$"):
        ws.git("hash-object", str(fifo), timeout=0.5)
