"""CODEOWNERS as GitHub documents it ("About code owners"), rule by rule."""

from __future__ import annotations

import pytest

from gate.approvals.codeowners import glob_segment, parse, valid_owner

#: GitHub's own example file ("Example of a CODEOWNERS file"), the lines this test needs.
EXAMPLE = """\
# This is a comment.
*       @global-owner1 @global-owner2
*.js    @js-owner
*.go docs@example.com
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


def owners(path: str, text: str = EXAMPLE) -> tuple[str, ...] | None:
    return parse(text, "CODEOWNERS").owners_of(path).owners


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", ("@global-owner1", "@global-owner2")),  # `*`: everything
        ("src/app.js", ("@js-owner",)),  # `*.js` at any depth
        ("main.go", ("docs@example.com",)),  # email owners
        ("build/logs/x.txt", ("@octocat",)),  # `**/logs` comes later and wins
        ("scripts/run.sh", ("@doctocat", "@octocat")),  # leading and trailing /
        ("deeply/nested/logs/a.txt", ("@octocat",)),  # `**/logs`: any depth
        ("apps/main/index.txt", ("@octocat",)),
        ("apps/github/index.txt", ()),  # a line with no owners unsets
        ("docs/getting-started.md", ("@doctocat",)),  # /docs/ is later than docs/*
    ],
)
def test_githubs_example_resolves_as_github_documents(path: str, expected: tuple) -> None:
    assert owners(path) == expected


def test_docs_star_matches_direct_children_only() -> None:
    text = "* @all\ndocs/* @docs\n"
    assert owners("docs/getting-started.md", text) == ("@docs",)
    assert owners("docs/build-app/troubleshooting.md", text) == ("@all",)


def test_unanchored_directory_matches_at_any_depth_and_anchored_only_at_root() -> None:
    assert owners("x/apps/a.txt", "apps/ @o\n") == ("@o",)
    assert owners("x/apps/a.txt", "/apps/ @o\n") is None
    assert owners("apps", "apps/ @o\n") is None  # a trailing / names a directory, not a file


def test_a_slash_inside_anchors_the_pattern() -> None:
    assert owners("src/models/a.sql", "models/a.sql @o\n") is None
    assert owners("models/a.sql", "models/a.sql @o\n") == ("@o",)
    assert owners("models/x/a.sql", "models/**/a.sql @o\n") == ("@o",)
    assert owners("models/a.sql", "models/**/a.sql @o\n") == ("@o",)


def test_paths_are_case_sensitive() -> None:
    assert owners("Models/a.sql", "/models/ @o\n") is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("!models/ @o", "negation"),
        ("models/[ab].sql @o", "ranges"),
        ("\\#models @o", "escaping"),
        ("models/ @o # inline comment", "'#' is not an owner"),
        ("models/ owner-without-at", "is not an owner"),
        ("models/ @a/b/c", "is not an owner"),
    ],
)
def test_what_github_does_not_support_is_an_error_with_its_line(line: str, reason: str) -> None:
    parsed = parse(f"* @all\n{line}\n", "CODEOWNERS")
    assert [e.line for e in parsed.errors] == [2]
    assert reason in parsed.errors[0].reason
    assert parsed.describe_errors()[0].startswith("CODEOWNERS:2: ")


def test_owner_kinds() -> None:
    assert valid_owner("@alice") and valid_owner("@org/data-team") and valid_owner("a@b.io")
    assert not valid_owner("@") and not valid_owner("alice") and not valid_owner("@org/")


def test_hostile_patterns_match_in_bounded_time() -> None:
    """Patterns a regex engine would backtrack on: ``*a*a*a...`` against ``aaaa...b``
    (bounded in CPU seconds, which load does not inflate: backtracking needs ages)."""
    from tests.cost import cpu_seconds

    pattern = "*a" * 200 + "*c"
    with cpu_seconds() as cpu:
        assert not glob_segment(pattern, "a" * 2000 + "b")
        deep = "/".join(["**"] * 100) + "/x"
        assert owners("/".join(["d"] * 500) + "/y", f"{deep} @o\n") is None
    assert cpu.seconds < 2.0, cpu.seconds
