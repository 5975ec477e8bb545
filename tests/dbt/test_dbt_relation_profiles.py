"""``model_relation_changed`` for a database set where none was, and the profile.

dbt builds a model without ``database`` into its target's database. When the
repository holds the profile (``profiles.yml``, found as dbt finds it) and its
target names one literal database that no other output contradicts, setting
that database explicitly is no move. It is read at the base: a pull request
cannot make its own move look like a restatement by editing ``profiles.yml``.
An env_var database, outputs that disagree, or no profile at all leave the
move reported, and the message says why.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.dbt.test_dbt_relation import Cli, _rewrite, found, moved, props, run, shop
from tests.gitrepo import GitRepo


def profiles(dev: str, prod: str | None = None, key: str = "dbname", kind: str = "postgres") -> str:
    outputs = f"    dev:\n      type: {kind}\n      {key}: {dev}\n      schema: public\n"
    if prod is not None:
        outputs += f"    prod:\n      type: {kind}\n      {key}: {prod}\n      schema: public\n"
    return f"shop:\n  target: dev\n  outputs:\n{outputs}"


def with_profile(repo: GitRepo, text: str, path: str = "profiles.yml", **kw: str) -> GitRepo:
    """The shop project with ``text`` as its profile, both in the base commit."""
    repo.write(path, text)
    return shop(repo, **kw)


DATABASE = {"models": "marts:\n  +database: analytics\n"}


@pytest.mark.parametrize(
    ("profile", "path"),
    [
        (profiles("analytics"), "profiles.yml"),
        (profiles("analytics", "analytics"), "profiles.yml"),
        (profiles("analytics", key="database", kind="snowflake"), "profiles.yml"),
        (profiles("analytics", "analytics", key="project", kind="bigquery"), "profiles.yml"),
        (profiles("analytics"), "ci/profiles.yml"),  # CI's --profiles-dir below the project
    ],
    ids=["postgres-dbname", "outputs-agree", "snowflake", "bigquery-project", "profiles-dir"],
)
def test_the_targets_own_database_set_explicitly_is_no_move(
    cli: Cli, repo: GitRepo, profile: str, path: str
) -> None:
    with_profile(repo, profile, path)
    _rewrite(repo, DATABASE)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_dropping_the_targets_own_database_is_no_move(cli: Cli, repo: GitRepo) -> None:
    with_profile(repo, profiles("analytics"), models="marts:\n  +database: analytics\n")
    _rewrite(repo, {"models": ""})
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_another_database_than_the_targets_is_a_move(cli: Cli, repo: GitRepo) -> None:
    with_profile(repo, profiles("analytics"))
    _rewrite(repo, {"models": "marts:\n  +database: raw\n"})
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    assert "none is the target's database 'analytics' (profiles.yml" in moved(report)[0]["message"]


def test_the_profile_is_read_at_the_base(cli: Cli, repo: GitRepo) -> None:
    """The PR moves the model to ``analytics`` and rewrites the profile to match."""
    with_profile(repo, profiles("warehouse"))
    _rewrite(repo, DATABASE)
    repo.write("profiles.yml", profiles("analytics"))
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    assert "'warehouse'" in moved(report)[0]["message"]


def test_the_profile_is_read_at_the_base_branchs_tip(cli: Cli, repo: GitRepo) -> None:
    """The base branch retargeted the profile to ``analytics`` after the PR branched:
    the PR setting ``analytics`` explicitly restates where main builds the model
    (the tip, where the dialect is read too), not the merge-base's ``warehouse``."""
    with_profile(repo, profiles("warehouse"))
    repo.checkout("main")
    repo.write("profiles.yml", profiles("analytics"))
    repo.commit("main retargets the profile")
    repo.checkout("feature")
    _rewrite(repo, DATABASE)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


@pytest.mark.parametrize(
    ("profile", "why"),
    [
        (profiles("\"{{ env_var('DBT_DB') }}\""), "which the gate does not render"),
        (profiles("analytics", "prod_db"), "outputs prod name another database"),
        (
            profiles("analytics").replace("target: dev", "target: \"{{ env_var('T') }}\""),
            "no target",
        ),
        (textwrap.dedent("other:\n  target: dev\n  outputs: {}\n"), "no profiles.yml with profile"),
    ],
    ids=["env-var", "outputs-differ", "target-templated", "other-profile"],
)
def test_an_unknown_target_database_leaves_the_move_and_says_why(
    cli: Cli, repo: GitRepo, profile: str, why: str
) -> None:
    with_profile(repo, profile)
    _rewrite(repo, DATABASE)
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    message = moved(report)[0]["message"]
    assert "none is the target's database, unknown here" in message
    assert why in message


def test_a_project_database_macro_gets_the_value_as_it_is(cli: Cli, repo: GitRepo) -> None:
    macro = (
        "{% macro generate_database_name(custom_database_name=none, node=none) -%}\n"
        "{{ custom_database_name or 'lake' }}\n{%- endmacro %}\n"
    )
    repo.write("macros/db.sql", macro)
    with_profile(repo, profiles("analytics"))
    _rewrite(repo, DATABASE)
    code, report = run(cli, repo)
    assert code == 1
    assert "generate_database_name" in moved(report)[0]["message"]


def test_props_database_restated_is_no_move(cli: Cli, repo: GitRepo) -> None:
    with_profile(repo, profiles("analytics"))
    _rewrite(repo, {"yml": props(config="database: analytics\n")})
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_two_profiles_files_that_disagree_leave_the_target_unknown(cli: Cli, repo: GitRepo) -> None:
    """``profiles.yml`` at the root targets ``analytics``, ``ci/profiles.yml`` (CI's
    ``--profiles-dir``) ``warehouse``: which one dbt reads is the job's choice, so
    setting ``analytics`` explicitly may move the table. The first file found
    decided, and passed it."""
    repo.write("ci/profiles.yml", profiles("warehouse"))
    with_profile(repo, profiles("analytics"))
    _rewrite(repo, DATABASE)
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    assert "none is the target's database, unknown here" in moved(report)[0]["message"]
