"""The git source layer against real repositories (no mocked git)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.git.tree import SODA_GLOBS, FileChange, Repo, open_repo
from gate.model import GitError, UsageError
from tests.gitrepo import GitRepo

C = "soda/contracts"


def contract(name: str, *columns: str) -> str:
    cols = "".join(f"  - name: {c}\n    data_type: int\n" for c in columns or ("id",))
    return f"dataset: {name}\ncolumns:\n{cols}"


@pytest.fixture
def g(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write(f"{C}/orders.yaml", contract("orders"))
    repo.write("README.md", "hello\n")
    repo.commit("initial")
    return repo


@pytest.fixture
def repo(g: GitRepo) -> Repo:
    with open_repo(g.path) as r:
        yield r


def by_path(changes: list[FileChange]) -> dict[str, FileChange]:
    return {(c.new_path or c.old_path or ""): c for c in changes}


# opening


def test_open_repo_finds_the_top_from_a_subdirectory(g: GitRepo) -> None:
    r = open_repo(g.path / C)
    assert r.root.resolve() == g.path.resolve()


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(GitError, match=r"^not a git repository: .*plain$"):
        open_repo(plain)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        open_repo(tmp_path / "nope")


def test_bare_repository_is_refused(tmp_path: Path) -> None:
    GitRepo(tmp_path / "src").commit("x")
    GitRepo.clone(str(tmp_path / "src"), tmp_path / "bare.git", "--bare")
    with pytest.raises(GitError, match="not a git working tree"):
        open_repo(tmp_path / "bare.git")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_dubious_ownership_names_the_safe_directory_fix(
    g: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no machine-wide safe.directory
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    os.chown(g.path, 65534, 65534)
    with pytest.raises(GitError, match="dubious ownership") as err:
        open_repo(g.path / C)
    assert f"safe.directory {g.path}" in str(err.value)


# refs


def test_resolve_gives_full_commit_shas(g: GitRepo, repo: Repo) -> None:
    assert repo.resolve("HEAD") == g.head()
    assert repo.resolve("main") == g.head()
    assert repo.resolve(g.head()[:10]) == g.head()


@pytest.mark.parametrize("ref", ["-x", "--output=/tmp/pwned", "-", "--all"])
def test_refs_that_look_like_options_are_refused(repo: Repo, ref: str) -> None:
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.resolve(ref)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.changed(ref, None, SODA_GLOBS)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.changed("HEAD", ref, SODA_GLOBS)
    with pytest.raises(UsageError, match="starts with '-'"):
        repo.merge_base("main", ref)


@pytest.mark.parametrize("ref", ["", "  ", "main\nHEAD", "a\0b"])
def test_empty_or_control_character_refs_are_refused(repo: Repo, ref: str) -> None:
    with pytest.raises(UsageError):
        repo.resolve(ref)


def test_unknown_ref(repo: Repo) -> None:
    with pytest.raises(GitError, match=r"^unknown ref 'nope'$"):
        repo.resolve("nope")


def test_shell_syntax_in_a_ref_is_just_an_unknown_ref(g: GitRepo, repo: Repo) -> None:
    with pytest.raises(GitError, match="unknown ref"):
        repo.resolve("$(touch pwned)")
    with pytest.raises(GitError, match="unknown ref"):
        repo.resolve("main;touch pwned")
    assert not (g.path / "pwned").exists()


def test_a_ref_to_a_non_commit_is_refused(g: GitRepo, repo: Repo) -> None:
    for ref in (g.rev(f"HEAD:{C}/orders.yaml"), "HEAD^{tree}", "HEAD:soda"):
        with pytest.raises(GitError, match="does not name a commit"):
            repo.resolve(ref)
    with pytest.raises(GitError, match="unknown ref 'HEAD:nope'"):
        repo.resolve("HEAD:nope")


def test_resolve_follows_a_moving_head(g: GitRepo, repo: Repo) -> None:
    first = repo.resolve("HEAD")
    second = g.commit("another")
    assert first != second
    assert repo.resolve("HEAD") == second


# merge base against base tip


@pytest.fixture
def diverged(g: GitRepo) -> GitRepo:
    """main gains customers.yaml after feature branched; feature edits orders.yaml."""
    g.branch("feature")
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.commit("feature: add amount")
    g.checkout("main")
    g.write(f"{C}/customers.yaml", contract("customers"))
    g.commit("main: add customers")
    g.checkout("feature")
    return g


def test_merge_base_does_not_report_base_additions_as_removed(
    diverged: GitRepo, repo: Repo
) -> None:
    base = repo.merge_base("main", "HEAD")
    assert base == diverged.rev("main~1")
    assert repo.base_commit("main") == base
    changes = repo.changed(base, None, SODA_GLOBS)
    assert [(c.status, c.new_path) for c in changes] == [("M", f"{C}/orders.yaml")]


def test_comparing_to_the_base_tip_sees_base_additions(diverged: GitRepo, repo: Repo) -> None:
    tip = repo.base_commit("main", tip=True)
    assert tip == diverged.rev("main")
    changes = by_path(repo.changed(tip, "HEAD", SODA_GLOBS))
    assert changes[f"{C}/customers.yaml"].status == "D"
    assert changes[f"{C}/orders.yaml"].status == "M"


def test_unrelated_histories_have_no_merge_base(g: GitRepo, repo: Repo) -> None:
    g.git("checkout", "-q", "--orphan", "other")
    g.commit("unrelated root")
    with pytest.raises(GitError, match="histories are unrelated") as err:
        repo.merge_base("main", "other")
    assert "shallow" not in str(err.value)


# what changed: worktree mode


def test_worktree_mode_sees_edits_deletions_and_untracked_files(g: GitRepo, repo: Repo) -> None:
    g.write(f"{C}/customers.yaml", contract("customers"))
    g.write(f"{C}/legacy.yaml", contract("legacy"))
    base = g.commit("more")
    g.write(".gitignore", "scratch*.yaml\n")
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))  # unstaged edit
    g.remove(f"{C}/legacy.yaml")  # unstaged deletion
    g.write(f"{C}/new/payments.yml", contract("payments"))  # untracked
    g.write(f"{C}/scratch1.yaml", contract("ignored"))  # ignored
    g.write(f"{C}/customers.yaml", contract("customers", "id", "email"))
    g.git("add", f"{C}/customers.yaml")  # staged edit

    changes = by_path(repo.changed(base, None, SODA_GLOBS))
    assert set(changes) == {
        f"{C}/orders.yaml",
        f"{C}/legacy.yaml",
        f"{C}/new/payments.yml",
        f"{C}/customers.yaml",
    }
    orders = changes[f"{C}/orders.yaml"]
    assert orders == FileChange(
        "M", f"{C}/orders.yaml", f"{C}/orders.yaml", g.rev(f"{base}:{C}/orders.yaml"), None
    )
    assert changes[f"{C}/legacy.yaml"] == FileChange(
        "D", f"{C}/legacy.yaml", None, g.rev(f"{base}:{C}/legacy.yaml"), None
    )
    assert changes[f"{C}/new/payments.yml"] == FileChange(
        "A", None, f"{C}/new/payments.yml", None, None
    )
    customers = changes[f"{C}/customers.yaml"]
    assert (customers.status, customers.new_blob) == ("M", None)  # staged: still from disk
    assert (
        repo.read_worktree(f"{C}/customers.yaml") == contract("customers", "id", "email").encode()
    )
    assert repo.read_worktree(orders.new_path or "") == contract("orders", "id", "amount").encode()
    assert repo.read_blobs([orders.old_blob or ""])[orders.old_blob or ""] == (
        contract("orders").encode()
    )


def test_worktree_mode_without_changes_is_empty(g: GitRepo, repo: Repo) -> None:
    assert repo.changed("HEAD", None, SODA_GLOBS) == []
    os.utime(g.path / C / "orders.yaml", (1, 1))  # stat-dirty, same content
    assert repo.changed("HEAD", None, SODA_GLOBS) == []


def test_a_file_untracked_with_rm_cached_is_modified_not_deleted(g: GitRepo, repo: Repo) -> None:
    g.git("rm", "-q", "--cached", f"{C}/orders.yaml")
    g.write(f"{C}/orders.yaml", contract("orders", "id", "x"))
    changes = repo.changed("HEAD", None, SODA_GLOBS)
    assert changes == [
        FileChange(
            "M", f"{C}/orders.yaml", f"{C}/orders.yaml", g.rev(f"HEAD:{C}/orders.yaml"), None
        )
    ]


def test_worktree_renames_are_read_from_disk(g: GitRepo, repo: Repo) -> None:
    """Rename detection makes git print the hash of the edited file, an object
    that does not exist: the worktree side must come from disk."""
    text = contract("orders", "id", "a", "b", "c")
    g.write(f"{C}/orders.yaml", text)
    base = g.commit("bigger")
    g.branch("feature")
    g.move(f"{C}/orders.yaml", f"{C}/sales/orders.yaml")
    g.commit("move")
    g.write(f"{C}/sales/orders.yaml", text + "  - name: extra\n")
    (change,) = repo.changed(base, None, SODA_GLOBS)
    assert change == FileChange(
        "R", f"{C}/orders.yaml", f"{C}/sales/orders.yaml", g.rev(f"{base}:{C}/orders.yaml"), None
    )
    assert repo.read_worktree(change.new_path or "") == (text + "  - name: extra\n").encode()
    assert len(repo.read_blobs([change.old_blob or ""])) == 1


def test_a_staged_rename_is_seen_in_worktree_mode(g: GitRepo, repo: Repo) -> None:
    g.git("mv", f"{C}/orders.yaml", f"{C}/sales.yaml")
    (change,) = repo.changed("HEAD", None, SODA_GLOBS)
    assert change.status == "R"
    assert (change.old_path, change.new_path) == (f"{C}/orders.yaml", f"{C}/sales.yaml")
    assert change.old_blob == g.rev(f"HEAD:{C}/orders.yaml")


# what changed: --head REF mode


def test_head_ref_mode_ignores_the_working_tree(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    g.branch("feature")
    g.write(f"{C}/orders.yaml", contract("orders", "id", "amount"))
    g.write(f"{C}/more.yaml", contract("more"))
    head = g.commit("feature")
    g.write(f"{C}/dirty.yaml", contract("dirty"))
    g.remove(f"{C}/orders.yaml")
    changes = by_path(repo.changed(base, "feature", SODA_GLOBS))
    assert set(changes) == {f"{C}/orders.yaml", f"{C}/more.yaml"}
    orders = changes[f"{C}/orders.yaml"]
    assert orders.status == "M"
    assert orders.old_blob == g.rev(f"{base}:{C}/orders.yaml")
    assert orders.new_blob == g.rev(f"{head}:{C}/orders.yaml")
    assert changes[f"{C}/more.yaml"] == FileChange(
        "A", None, f"{C}/more.yaml", None, g.rev(f"{head}:{C}/more.yaml")
    )


def test_renames_are_detected_with_both_blobs(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    g.move(f"{C}/orders.yaml", f"{C}/sales/orders.yaml")
    head = g.commit("move")
    (change,) = repo.changed(base, head, SODA_GLOBS)
    blob = g.rev(f"{base}:{C}/orders.yaml")
    assert change == FileChange("R", f"{C}/orders.yaml", f"{C}/sales/orders.yaml", blob, blob)


def test_a_rename_with_edits_keeps_both_blobs(g: GitRepo, repo: Repo) -> None:
    big = contract("orders", *[f"c{i}" for i in range(20)])
    g.write(f"{C}/orders.yaml", big)
    base = g.commit("bigger")
    g.move(f"{C}/orders.yaml", f"{C}/sales.yaml")
    g.write(f"{C}/sales.yaml", big + "  - name: extra\n    data_type: int\n")
    head = g.commit("move and edit")
    (change,) = repo.changed(base, head, SODA_GLOBS)
    assert change.status == "R"
    assert change.old_blob == g.rev(f"{base}:{C}/orders.yaml")
    assert change.new_blob == g.rev(f"{head}:{C}/sales.yaml")


def test_copies_count_as_additions_even_with_copy_detection_configured(
    g: GitRepo, repo: Repo
) -> None:
    g.git("config", "diff.renames", "copies")
    base = g.head()
    g.write(f"{C}/copy.yaml", contract("orders"))
    head = g.commit("copy")
    assert repo.changed(base, head, SODA_GLOBS) == [
        FileChange("A", None, f"{C}/copy.yaml", None, g.rev(f"{head}:{C}/copy.yaml"))
    ]


def test_moving_a_contract_out_of_the_globs_is_a_deletion(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    g.move(f"{C}/orders.yaml", "archive/orders.yaml")
    head = g.commit("archive")
    (change,) = repo.changed(base, head, SODA_GLOBS)
    assert (change.status, change.old_path, change.new_path) == ("D", f"{C}/orders.yaml", None)


# globs


def test_globs_find_yaml_and_yml_at_any_depth_and_nothing_else(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    wanted = [f"{C}/a.yml", f"{C}/x/b.yaml", f"{C}/x/y/z/c.yml", f"{C}/naïve file.yaml"]
    for path in wanted:
        g.write(path, contract("t"))
    for path in [
        "soda/d.yaml",
        f"{C}/notes.md",
        f"{C}/e.yaml.bak",
        f"{C}/f.YAML",
        "other/soda/contracts/g.yaml",
        "soda/contracts.yaml",
    ]:
        g.write(path, contract("t"))
    head = g.commit("many")
    for side in (head, None):
        changes = repo.changed(base, side, SODA_GLOBS)
        assert sorted(c.new_path or "" for c in changes) == sorted(wanted)
    assert set(repo.list_files(head, SODA_GLOBS)) == {*wanted, f"{C}/orders.yaml"}


def test_custom_globs_and_exclusions(g: GitRepo, repo: Repo) -> None:
    g.write("contracts/a.yaml", contract("a"))
    g.write("contracts/archive/old.yaml", contract("old"))
    g.write("models/schema.yml", contract("m"))
    head = g.commit("custom")
    files = repo.list_files(head, ["contracts/**/*.yaml", "!contracts/archive/**", "models/*.yml"])
    assert set(files) == {"contracts/a.yaml", "models/schema.yml"}
    assert set(repo.list_files(head, "models/*.yml")) == {"models/schema.yml"}
    assert set(repo.list_files(head, ["./models//*.yml"])) == {"models/schema.yml"}


def test_globs_are_relative_to_the_root_wherever_the_repo_was_opened(g: GitRepo) -> None:
    r = open_repo(g.path / C)
    assert set(r.list_files("HEAD", SODA_GLOBS)) == {f"{C}/orders.yaml"}
    assert set(r.list_files(None, SODA_GLOBS)) == {f"{C}/orders.yaml"}


@pytest.mark.parametrize(
    "globs",
    [
        ["../x/*.yaml"],
        ["soda/../../x.yaml"],
        ["/etc/*.yaml"],
        ["C:\\x\\*.yaml"],
        [""],
        ["!soda/**"],
        [],
        ["a\0b"],
    ],
)
def test_bad_globs_are_refused_before_git_sees_them(repo: Repo, globs: list[str]) -> None:
    with pytest.raises(UsageError):
        repo.changed("HEAD", None, globs)
    with pytest.raises(UsageError):
        repo.list_files("HEAD", globs)


# list_files


def test_list_files_at_a_commit_and_in_the_worktree(g: GitRepo, repo: Repo) -> None:
    g.write(f"{C}/customers.yml", contract("customers"))
    head = g.commit("customers")
    g.write(".gitignore", "*.tmp.yaml\n")
    g.write(f"{C}/untracked.yaml", contract("u"))
    g.write(f"{C}/junk.tmp.yaml", contract("j"))
    g.remove(f"{C}/customers.yml")

    at_head = repo.list_files("HEAD", SODA_GLOBS)
    assert at_head == {
        f"{C}/orders.yaml": g.rev(f"{head}:{C}/orders.yaml"),
        f"{C}/customers.yml": g.rev(f"{head}:{C}/customers.yml"),
    }
    assert repo.list_files(None, SODA_GLOBS) == {
        f"{C}/orders.yaml": None,
        f"{C}/untracked.yaml": None,
    }


def test_list_files_in_an_empty_selection(repo: Repo) -> None:
    assert repo.list_files("HEAD", ["nothing/**/*.yaml"]) == {}
    assert repo.list_files(None, ["nothing/**/*.yaml"]) == {}


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
    started = time.monotonic()
    with pytest.raises(GitError, match="missing"):
        repo.read_blobs(["0" * 39 + "1", *big])  # answers for the big blobs stay unread
    assert time.monotonic() - started < 4  # no wait for git to time out
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


def test_worktree_paths_may_not_escape_the_repository(
    g: GitRepo, repo: Repo, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    g.symlink(f"{C}/leak.yaml", str(secret))
    g.symlink(f"{C}/leak2.yaml", "../../../secret.txt")
    g.symlink(f"{C}/git-config.yaml", "../../.git/config")
    g.symlink(f"{C}/alias.yaml", "orders.yaml")
    for bad in ("../secret.txt", str(secret), f"{C}/leak.yaml", f"{C}/leak2.yaml"):
        with pytest.raises(UsageError, match="outside the repository"):
            repo.safe_path(bad)
        with pytest.raises(UsageError, match="outside the repository"):
            repo.read_worktree(bad)
    for bad in (".git/config", f"{C}/git-config.yaml"):
        with pytest.raises(UsageError, match=r"\.git"):
            repo.read_worktree(bad)
    assert repo.read_worktree(f"{C}/alias.yaml") == contract("orders").encode()
    assert repo.safe_path(str(g.path / "README.md")) == (g.path / "README.md").resolve()
    assert repo.safe_path("data/sample.csv") == (g.path / "data/sample.csv").resolve()
    with pytest.raises(UsageError, match="cannot read"):
        repo.read_worktree("data/sample.csv")
    with pytest.raises(UsageError, match="not a regular file"):
        repo.read_worktree(C)
    os.mkfifo(g.path / C / "fifo.yaml")
    with pytest.raises(UsageError, match="not a regular file"):
        repo.read_worktree(f"{C}/fifo.yaml")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(["..", ".", "a", "b", "out", "git", ".git", ""]), max_size=8))
def test_safe_path_never_returns_a_path_outside_the_root(
    g: GitRepo, repo: Repo, tmp_path: Path, parts: list[str]
) -> None:
    if not (g.path / "out").is_symlink():
        (g.path / "a" / "b").mkdir(parents=True)
        g.symlink("out", str(tmp_path))
        g.symlink("a/git", "../.git")
    raw = "/".join(parts)
    root = g.path.resolve()
    try:
        result = repo.safe_path(raw)
    except UsageError:
        return
    assert result == root or root in result.parents
    assert ".git" not in result.relative_to(root).parts


def test_an_escaping_symlink_in_the_worktree_is_refused_when_read(
    g: GitRepo, repo: Repo, tmp_path: Path
) -> None:
    (tmp_path / "outside.yaml").write_text(contract("outside"))
    g.symlink(f"{C}/outside.yaml", str(tmp_path / "outside.yaml"))
    (change,) = repo.changed("HEAD", None, SODA_GLOBS)
    assert change == FileChange("A", None, f"{C}/outside.yaml", None, None)
    with pytest.raises(UsageError, match="outside the repository"):
        repo.read_worktree(change.new_path or "")


def test_committed_symlinks_are_followed_inside_the_tree(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    g.symlink(f"{C}/alias.yaml", "orders.yaml")
    head = g.commit("alias")
    target = g.rev(f"{head}:{C}/orders.yaml")
    assert repo.changed(base, head, SODA_GLOBS) == [
        FileChange("A", None, f"{C}/alias.yaml", None, target)
    ]
    assert repo.list_files(head, SODA_GLOBS)[f"{C}/alias.yaml"] == target
    g.write(f"{C}/shared/base.yaml", contract("base"))
    g.remove(f"{C}/orders.yaml")
    g.symlink(f"{C}/orders.yaml", "shared/base.yaml")  # a type change: file -> symlink
    typed = g.commit("type change")
    changes = by_path(repo.changed(head, typed, SODA_GLOBS))
    assert changes[f"{C}/orders.yaml"] == FileChange(
        "M", f"{C}/orders.yaml", f"{C}/orders.yaml", target, g.rev(f"{typed}:{C}/shared/base.yaml")
    )
    head = typed
    g.remove(f"{C}/alias.yaml")
    g.symlink(f"{C}/alias.yaml", "/etc/passwd")
    escaped = g.commit("escape")
    with pytest.raises(UsageError, match="outside the repository"):
        repo.changed(head, escaped, SODA_GLOBS)
    with pytest.raises(UsageError, match="outside the repository"):
        repo.read_file(escaped, f"{C}/alias.yaml")
    with pytest.raises(UsageError, match="outside the repository"):
        repo.changed(escaped, head, SODA_GLOBS)  # the base side is followed too


# shallow clones


@pytest.fixture
def origin(tmp_path: Path) -> GitRepo:
    src = GitRepo(tmp_path / "src")
    src.write(f"{C}/orders.yaml", contract("orders"))
    src.commit("one")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a"))
    src.commit("two")
    src.branch("feature")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a", "b"))
    src.commit("feature one")
    src.write(f"{C}/orders.yaml", contract("orders", "id", "a", "b", "c"))
    src.commit("feature two")
    src.checkout("main")
    src.write(f"{C}/customers.yaml", contract("customers"))
    src.commit("main three")
    GitRepo.clone(str(src.path), tmp_path / "origin.git", "--bare")
    return src


def test_a_full_clone_is_not_shallow(origin: GitRepo, tmp_path: Path) -> None:
    clone = GitRepo.clone(f"file://{tmp_path / 'origin.git'}", tmp_path / "full")
    r = open_repo(clone.path)
    assert not r.is_shallow()
    assert r.merge_base("origin/main", "origin/feature") == origin.rev("main~1")


def test_a_base_missing_from_a_shallow_clone_names_the_remedy(
    origin: GitRepo, tmp_path: Path
) -> None:
    url = f"file://{tmp_path / 'origin.git'}"
    clone = GitRepo.clone(url, tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    r = open_repo(clone.path)
    assert r.is_shallow()
    for missing in ("origin/main", origin.rev("main~1")):
        with pytest.raises(GitError, match=f"unknown ref '{missing}'") as err:
            r.resolve(missing)
        assert "shallow" in str(err.value)
        assert "fetch-depth: 0" in str(err.value)
        assert "git fetch --unshallow" in str(err.value)


def test_no_merge_base_in_a_shallow_clone_names_the_remedy(origin: GitRepo, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'origin.git'}"
    clone = GitRepo.clone(url, tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    clone.git("fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    r = open_repo(clone.path)
    with pytest.raises(GitError, match="no merge base") as err:
        r.merge_base("origin/main", "HEAD")
    assert "shallow" in str(err.value)
    assert "fetch-depth: 0" in str(err.value)
    clone.git("fetch", "-q", "--unshallow", "origin")
    assert r.merge_base("origin/main", "HEAD") == origin.rev("main~1")


# scale


def test_thousands_of_changed_files_are_listed_and_read(g: GitRepo, repo: Repo) -> None:
    base = g.head()
    n = 2000
    texts = {f"{C}/d{i % 20}/c{i}.yaml": contract(f"t{i}", "id", f"c{i}") for i in range(n)}
    for path, text in texts.items():
        g.write(path, text)
    head = g.commit("many")
    changes = repo.changed(base, head, SODA_GLOBS)
    assert len(changes) == n
    assert {c.status for c in changes} == {"A"}
    blobs = repo.read_blobs(c.new_blob or "" for c in changes)
    assert {c.new_path: blobs[c.new_blob or ""].decode() for c in changes} == texts

    g.write(f"{C}/d0/c0.yaml", "edited\n")  # worktree mode at the same scale
    worktree = by_path(repo.changed(base, None, SODA_GLOBS))
    assert len(worktree) == n
    assert worktree[f"{C}/d0/c0.yaml"].new_blob is None
    assert repo.read_worktree(f"{C}/d0/c0.yaml") == b"edited\n"


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


def test_a_full_sha_is_verified_once_and_a_branch_every_time(g: GitRepo, repo: Repo) -> None:
    first = repo.resolve("main")
    assert repo.resolve(first) == first
    second = g.commit("another")
    assert repo.resolve("main") == second  # a branch may move
    assert repo.resolve(first) == first  # a commit id names the same commit forever
    assert repo.merge_base(first, second) == first
