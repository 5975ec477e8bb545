"""benchmarks/restore_clones.py over real git repositories: the clones the replay needs.

The script runs as its user runs it (a subprocess, its own ``main``), on a bare
mirror laid out as the ``fetch`` tool lays it out (``<owner>+<name>/repo``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import GitRepo, git_env

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "restore_clones.py"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env={**git_env(), "LC_ALL": "C"},
        timeout=120,
    )


def baseline(folder: Path, stem: str, repo: str, clone: str, shas: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    commits = [{"sha": sha, "exit": 0, "rules": []} for sha in shas]
    body = {"repo": repo, "clone": clone, "gate_args": [], "commits": commits}
    (folder / f"{stem}.json").write_text(json.dumps(body), encoding="utf-8")


def upstream(path: Path) -> tuple[GitRepo, list[str]]:
    """A repository with three commits: a root and two that the replay can diff."""
    repo = GitRepo(path)
    shas = []
    for i in range(3):
        repo.write("models/schema.yml", f"version: 2\nmodels: [{{name: m{i}}}]\n")
        shas.append(repo.commit(f"c{i}"))
    return repo, shas


def test_clones_each_baseline_from_its_mirror_and_finds_every_commit(tmp_path: Path) -> None:
    repo, shas = upstream(tmp_path / "up")
    mirrors = tmp_path / "mirrors"
    repo.git("clone", "-q", "--bare", str(repo.path), str(mirrors / "acme+shop" / "repo"))
    baseline(tmp_path / "b", "shop", "acme/shop", "replay/acme+shop", shas[1:])

    proc = run("--baselines", tmp_path / "b", "--mirrors", mirrors, "--clones", tmp_path / "f")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    clone = tmp_path / "f" / "replay" / "acme+shop"
    assert (clone / ".git").is_dir()
    assert not (clone / "models").exists()  # no work tree: the gate reads objects
    assert "all 2 commits present" in proc.stdout
    for sha in shas[1:]:
        GitRepo(clone, init=False).git("cat-file", "-e", f"{sha}^{{commit}}")

    again = run("--baselines", tmp_path / "b", "--mirrors", mirrors, "--clones", tmp_path / "f")
    assert again.returncode == 0 and "kept" in again.stdout


def test_names_commits_the_snapshot_lacks_and_a_root_commit(tmp_path: Path) -> None:
    repo, shas = upstream(tmp_path / "up")
    mirrors = tmp_path / "mirrors"
    repo.git("clone", "-q", "--bare", str(repo.path), str(mirrors / "acme+shop" / "repo"))
    gone = "0123456789abcdef0123456789abcdef01234567"
    baseline(tmp_path / "b", "shop", "acme/shop", "acme+shop", [shas[0], shas[2], gone])

    proc = run("--baselines", tmp_path / "b", "--mirrors", mirrors, "--clones", tmp_path / "f")

    assert proc.returncode == 1
    line = next(x for x in proc.stdout.splitlines() if x.startswith("- acme/shop"))
    assert "2 of 3 commits missing" in line
    assert shas[0][:12] in line and gone[:12] in line and shas[2][:12] not in line


def test_a_repository_without_mirror_is_named_with_its_fetch(tmp_path: Path) -> None:
    baseline(tmp_path / "b", "x", "acme/absent", "scout-absent", ["a" * 40])

    proc = run(
        "--baselines", tmp_path / "b", "--mirrors", tmp_path / "m", "--clones", tmp_path / "f"
    )

    assert proc.returncode == 1
    assert "- acme/absent: no mirror (fetch github:acme/absent)" in proc.stdout
    assert not (tmp_path / "f" / "scout-absent").exists()
    listed = run("--baselines", tmp_path / "b", "--list-fetches")
    assert listed.returncode == 0 and listed.stdout.split() == ["github:acme/absent"]


def test_a_clone_git_refuses_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    repo, shas = upstream(tmp_path / "up")
    mirrors = tmp_path / "mirrors"
    repo.git("clone", "-q", "--bare", str(repo.path), str(mirrors / "acme+shop" / "repo"))
    baseline(tmp_path / "b", "shop", "acme/shop", "shop", shas[1:])
    (tmp_path / "f" / "shop").mkdir(parents=True)
    (tmp_path / "f" / "shop" / "notes.txt").write_text("not a clone\n", encoding="utf-8")

    proc = run("--baselines", tmp_path / "b", "--mirrors", mirrors, "--clones", tmp_path / "f")

    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "- acme/shop: " in proc.stdout and "not an empty directory" in proc.stdout
