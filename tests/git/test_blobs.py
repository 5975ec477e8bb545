"""Reading blobs and files at a side: one pipelined ``cat-file --batch``.

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gate.git import SODA_GLOBS, Repo
from gate.model import GitError, UsageError
from tests.cost import counting
from tests.git.helpers import C, contract
from tests.gitrepo import GitRepo

# reading


def test_read_blobs_returns_exact_bytes(g: GitRepo, repo: Repo) -> None:
    payloads = {
        "empty.yaml": b"",
        "crlf.yaml": b"a: 1\r\nb: 2\r\n",
        "latin1.yaml": "name: caf\xe9\n".encode("latin-1"),
        "binary.yaml": bytes(range(256)) * 3,
        "no-newline.yaml": b"x: 1",
        "newlines.yaml": b"\n\n\n",
        "big.yaml": b"k: " + b"v" * 300_000 + b"\n",
    }
    for i in range(200):
        payloads[f"n{i}.yaml"] = f"dataset: d{i}\n".encode()
    for name, data in payloads.items():
        g.write(f"{C}/{name}", data)
    head = g.commit("payloads")
    files = repo.list_files(head, SODA_GLOBS)
    shas = [files[f"{C}/{name}"] for name in payloads]
    blobs = repo.read_blobs([s for s in shas if s] * 2)  # duplicates are fine
    for name, data in payloads.items():
        assert blobs[files[f"{C}/{name}"] or ""] == data, name
    assert repo.read_blobs([]) == {}


def test_read_blobs_refuses_unknown_and_malformed_shas(g: GitRepo, repo: Repo) -> None:
    with pytest.raises(GitError, match="missing"):
        repo.read_blobs(["0123456789abcdef0123456789abcdef01234567"])
    with pytest.raises(UsageError):
        repo.read_blobs(["HEAD"])
    with pytest.raises(UsageError):
        repo.read_blobs([g.head() + "\nHEAD"])
    with pytest.raises(GitError, match="not a file's blob"):
        repo.read_blobs([g.head()])
    blob = g.rev(f"HEAD:{C}/orders.yaml")  # the reader recovers after an error
    assert repo.read_blobs([blob]) == {blob: contract("orders").encode()}


def test_an_error_mid_batch_does_not_leave_git_blocked(g: GitRepo, repo: Repo) -> None:
    for i in range(8):
        g.write(f"{C}/big{i}.yaml", f"{i}: ".encode() + b"x" * 200_000)
    head = g.commit("big")
    big = [sha for sha in repo.list_files(head, SODA_GLOBS).values() if sha]
    # No wait for git to time out: git, blocked writing answers nobody reads, must
    # end on its own once the reader gives up. Given a minute for that instead of
    # the 5 s after which the reader kills it, git is never killed (counted, not timed).
    real_wait = subprocess.Popen.wait

    def patient(self: subprocess.Popen[bytes], timeout: float | None = None) -> int:
        return real_wait(self, None if timeout is None else max(timeout, 60))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess.Popen, "wait", patient)
        kills = counting(mp, subprocess.Popen, "kill")
        with pytest.raises(GitError, match="missing"):
            repo.read_blobs(["0" * 39 + "1", *big])  # answers for the big blobs stay unread
    assert len(kills) == 0  # git saw its output closed and stopped by itself
    assert len(repo.read_blobs(big)) == len(big)


def test_the_blob_reader_restarts_after_close(g: GitRepo, repo: Repo) -> None:
    blob = g.rev(f"HEAD:{C}/orders.yaml")
    assert repo.read_blobs([blob])[blob] == contract("orders").encode()
    repo.close()
    assert repo.read_blobs([blob])[blob] == contract("orders").encode()


def test_read_file_at_a_commit_and_in_the_worktree(g: GitRepo, repo: Repo) -> None:
    g.write(".schema-gate.yml", "fail_on: breaking\n")
    head = g.commit("config")
    g.write(".schema-gate.yml", "fail_on: warning\n")
    assert repo.read_file(head, ".schema-gate.yml") == b"fail_on: breaking\n"
    assert repo.read_file("HEAD", "./.schema-gate.yml") == b"fail_on: breaking\n"
    assert repo.read_file(None, ".schema-gate.yml") == b"fail_on: warning\n"
    assert repo.read_file(head, "pyproject.toml") is None
    assert repo.read_file(None, "pyproject.toml") is None
    assert repo.read_file(head, "soda") is None  # a directory is not a file
    assert repo.read_file(None, "soda") is None
    for bad in ("../x", "/etc/passwd", "soda/../../x"):
        with pytest.raises(UsageError):
            repo.read_file(head, bad)
    with pytest.raises(UsageError):
        repo.read_file(None, "../x")
    absolute = str(g.path / ".schema-gate.yml")
    assert repo.read_file(head, absolute) == b"fail_on: breaking\n"
    assert repo.read_file(None, absolute) == b"fail_on: warning\n"
    with pytest.raises(UsageError, match="outside the repository"):
        repo.read_file(head, str(g.path.parent / "elsewhere.yml"))


def test_read_optional_reads_several_config_files_in_one_lookup(
    g: GitRepo, repo: Repo, tmp_path: Path
) -> None:
    g.write(".schema-gate.yml", "dialect: spark\n")
    commit = g.commit("config")
    for head in (commit, None):  # a commit, then the working tree
        files = repo.read_optional(head, [".schema-gate.yml", "pyproject.toml", "README.md"])
        assert files == {
            ".schema-gate.yml": b"dialect: spark\n",
            "pyproject.toml": None,
            "README.md": b"hello\n",
        }
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    g.symlink("pyproject.toml", str(secret))
    leaked = g.commit("a config that leads outside")
    for head in (leaked, None):
        with pytest.raises(UsageError, match=r"pyproject\.toml: refusing a"):
            repo.read_optional(head, [".schema-gate.yml", "pyproject.toml"])
