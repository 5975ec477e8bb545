"""Hostile pull requests, round four: the newest readers (dbt access, the PR
description's acknowledgements, the lineage cache, early git walks). Each test
commits the attack to a real git repository and runs the CLI in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.cli.test_cli_dbt_access import PROJECT, _entry, _pr
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def test_a_constant_jinja_access_is_folded_not_unknown(cli: Cli, repo: GitRepo) -> None:
    """``access: "{{ 'protected' }}"`` is as constant as ``"{{ false }}"``: dbt renders
    the properties file and dbt_project.yml configs, then reads ``protected``. It read
    as *unknown* (no finding), so a PR narrowing a public model by wrapping the new
    value in Jinja passed: "no contract changes", exit 0."""
    _pr(repo, _entry(access="public"), _entry(access="\"{{ 'protected' }}\""))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> protected" in proc.stdout


def test_a_constant_jinja_folder_access_is_folded(cli: Cli, repo: GitRepo) -> None:
    """The same through ``+access`` of a folder in ``dbt_project.yml``."""
    public = PROJECT + "models:\n  shop:\n    marts:\n      +access: public\n"
    private = PROJECT + "models:\n  shop:\n    marts:\n      +access: '{{- \"private\" -}}'\n"
    _pr(repo, _entry(), _entry(), project=(public, private))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def test_an_acknowledgement_shown_struck_out_acknowledges_nothing(
    cli: Cli, repo: GitRepo, tmp_path
) -> None:
    """GitHub renders ``<del>``, ``<s>`` and ``<strike>`` crossed out: a reviewer reads
    the line as withdrawn. ``~~...~~`` never counted (the commonmark reader leaves it
    as text), but the HTML spellings did: the break passed, exit 0."""
    _pr(repo, _entry(access="public"), _entry())
    body = tmp_path / "body.md"
    for struck in (
        "<del>accept-breaking-change: orders</del>",
        "<s>accept-breaking-change: orders</s>",
        "accept-breaking-change: <strike>orders</strike>",
        "accept-breaking-change: <DEL>orders</DEL> other",
    ):
        body.write_text(f"Why:\n\n{struck}\n")
        proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body))
        assert proc.returncode == 1, struck + proc.stdout + proc.stderr
    body.write_text("accept-breaking-change: <ins>orders</ins>\n")  # underlined is still text
    assert cli(repo.path, "--base", "main", "--pr-body-file", str(body)).returncode == 0
