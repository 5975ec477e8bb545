"""What changed (``git diff --raw -M``), listings, and symlinks followed inside the tree.

Real repositories, no mocked git (moved from tests/test_git_tree.py).
"""

from __future__ import annotations

import os

import pytest

from gate.git import SODA_GLOBS, FileChange, Repo, open_repo
from gate.model import UsageError
from tests.cost import git_calls
from tests.git.helpers import C, by_path, contract
from tests.gitrepo import GitRepo

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


@pytest.mark.parametrize("on_main", ["shared", "deleted", "none", "retyped"])
def test_a_base_that_moved_on_is_asked_about_links_without_a_second_walk(
    g: GitRepo, on_main: str
) -> None:
    """The run walks the base tip's tree (started before the imports); whether the
    merge base holds a symlink (a contract whose link is unchanged but whose
    target changed) comes from that walk and one ``git diff`` of the two commits,
    not a second ``ls-tree`` (#26): the same changes as the merge base's own walk,
    whether main kept the link, deleted it, never had one, or made it a file."""
    g.write(f"{C}/shared/base.yaml", contract("base"))
    if on_main != "none":
        g.symlink(f"{C}/linked.yaml", "shared/base.yaml")
    g.commit("base")
    g.branch("pr")
    g.checkout("pr")
    g.write(f"{C}/shared/base.yaml", contract("base", "id", "extra"))
    head = g.commit("the target changes")
    g.checkout("main")
    if on_main == "deleted":
        g.remove(f"{C}/linked.yaml")
    elif on_main == "retyped":
        g.remove(f"{C}/linked.yaml")
        g.write(f"{C}/linked.yaml", contract("linked"))
    else:
        g.write("README.md", "moved on\n")
    tip = g.commit("main moves on")
    with open_repo(g.path) as repo:
        merge_base = repo.merge_base("main", head)
        alone = repo.changed(merge_base, head, SODA_GLOBS)
    with open_repo(g.path) as repo:
        calls = git_calls(repo)
        repo.named(tip, ["dbt_project.yml"])
        assert repo.changed(merge_base, head, SODA_GLOBS) == alone
    assert [c[0] for c in calls].count("ls-tree") == 1
    linked = f"{C}/linked.yaml" in {c.new_path for c in alone}
    assert linked == (on_main != "none")


def test_has_files_answers_what_list_files_lists(g: GitRepo) -> None:
    """``has_files`` (a pull request that changes no contract asks whether any is
    there at all, #26: at 50,000 files listing them all took ~0.1 s of git's CPU)
    answers ``bool(list_files(...))`` from git's first match: with contracts,
    without, only a submodule where a contract would be, only an untracked one, only
    one deleted from disk; and it refuses a link out of the repository as before."""
    globs = [f"{C}/**/*.yaml"]
    none = ["nothing/**/*.yaml"]
    only_sub = ["sub/**/*.yaml"]
    g.git("update-index", "--add", "--cacheinfo", f"160000,{g.head()},sub/x/m.yaml")
    g.git("commit", "-q", "-m", "a submodule named like a contract")  # not add -A: it drops it
    with_sub = g.head()
    assert "160000" in g.git("ls-tree", "-r", with_sub)

    def agree(head: str | None, *selections: list[str]) -> list[bool]:
        with open_repo(g.path) as fresh:  # a run asks once, from its own state
            answers = [fresh.has_files(head, sel) for sel in selections]
        with open_repo(g.path) as fresh:
            assert answers == [bool(fresh.list_files(head, sel)) for sel in selections]
        return answers

    assert agree(with_sub, globs, none, only_sub) == [True, False, False]
    assert agree(None, globs, none, only_sub) == [True, False, False]  # not on disk
    (g.path / "sub/x/m.yaml").mkdir(parents=True)  # an uninitialised submodule's folder
    assert agree(None, only_sub) == [True]  # the index lists it, and it is there
    g.write("new/u.yaml", contract("u"))
    assert agree(None, ["new/**/*.yaml"]) == [True]
    g.remove(f"{C}/orders.yaml")
    assert agree(None, globs) == [False]
    g.git("checkout", "--", f"{C}/orders.yaml")
    g.symlink(f"{C}/out.yaml", "/etc/passwd")
    escaped = g.commit("a link out")
    with open_repo(g.path) as fresh, pytest.raises(UsageError, match="outside the repository"):
        fresh.has_files(escaped, globs)
    assert agree(escaped, none) == [False]


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


def test_listing_at_a_commit_of_a_sha256_repository(tmp_path: os.PathLike[str]) -> None:
    # The listing diffs against the empty tree, whose id depends on the hash:
    # computed from the commit id's length, it must name the SHA-256 empty tree too.
    path = os.path.join(tmp_path, "s256")
    GitRepo(tmp_path).git("init", "-q", "--object-format=sha256", "-b", "main", path)
    g = GitRepo(path, init=False)
    g.git("config", "user.name", "Gate Test")
    g.git("config", "user.email", "gate@example.com")
    g.write(f"{C}/orders.yaml", contract("orders"))
    g.write("models/schema.yml", contract("m"))
    head = g.commit("sha256")
    assert len(head) == 64
    with open_repo(path) as repo:
        assert set(repo.list_files(head, SODA_GLOBS)) == {f"{C}/orders.yaml"}
        assert set(repo.list_files(head, "models/*.yml")) == {"models/schema.yml"}


def test_folder_links_are_the_symlinks_that_lead_to_a_folder(g: GitRepo, repo: Repo) -> None:
    """``folder_links``: a link to a folder inside the tree counts; one to a file, one
    leading nowhere or outside does not; an exclusion takes its own out. At a
    commit from the tree walk, in the working tree from disk (untracked too)."""
    g.write("shared/models/a.sql", "select 1\n")
    g.write("shared/one.sql", "select 1\n")
    g.write("shop/keep.txt", "x\n")
    os.symlink("../shared/models", g.path / "shop/models")
    os.symlink("../shared/one.sql", g.path / "shop/one.sql")
    os.symlink("../nowhere", g.path / "shop/dangling")
    os.symlink("/etc", g.path / "shop/outside")
    os.symlink("../shared", g.path / "shop/legacy")
    commit = g.commit("links")
    assert repo.folder_links(commit) == ["shop/legacy", "shop/models"]
    assert repo.folder_links(commit, ["!shop/legacy"]) == ["shop/models"]
    assert repo.folder_links(None) == ["shop/legacy", "shop/models", "shop/outside"]
    os.symlink("../shared", g.path / "shop/untracked")
    g.write("shop/keep.txt", "edited\n")  # a dirty tree lists the index
    assert open_repo(g.path).folder_links(None, ["!shop/legacy"]) == [
        "shop/models",
        "shop/outside",
        "shop/untracked",
    ]
