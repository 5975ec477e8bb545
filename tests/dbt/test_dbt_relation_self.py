"""``model_relation_changed`` and the values that name the model itself.

``alias: "{{ this.name }}"`` (or ``this.identifier``, ``model.name``) renders to
the model's own name for an unversioned model, which is what dbt's default
``generate_alias_name`` uses without an alias: restating it is no move. A real
alias change still is, and so is ``+schema: "{{ target.schema }}"``: dbt's
default ``generate_schema_name`` appends a custom schema to the target's, so it
builds into ``<target>_<target>``, not the default schema.
"""

from __future__ import annotations

import pytest

from tests.dbt.test_dbt_relation import (
    Cli,
    _rewrite,
    found,
    moved,
    props,
    run,
    shop,
    two_versions,
)
from tests.gitrepo import GitRepo

SELF = ["{{ this.name }}", "{{this.identifier}}", "{{ model.name }}", "{{ this.table }}"]


@pytest.mark.parametrize("expression", SELF)
@pytest.mark.parametrize("where", ["project", "properties", "model-file"])
def test_an_alias_naming_the_model_itself_is_no_move(
    cli: Cli, repo: GitRepo, expression: str, where: str
) -> None:
    shop(repo)
    bare = expression.strip("{} ")
    after = {
        "project": {"models": f'marts:\n  +alias: "{expression}"\n'},
        "properties": {"yml": props(config=f'alias: "{expression}"\n')},
        "model-file": {"sql": f"{{{{ config(alias={bare}) }}}}\nselect 1 as id\n"},
    }[where]
    _rewrite(repo, after)
    code, report = run(cli, repo)
    assert (code, report["changes"]) == (0, [])


def test_from_the_model_itself_to_another_alias_is_a_move(cli: Cli, repo: GitRepo) -> None:
    shop(repo, models='marts:\n  +alias: "{{ this.name }}"\n')
    _rewrite(repo, {"models": "marts:\n  +alias: orders_2024\n"})
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]
    assert moved(report)[0]["after"] == "alias='orders_2024'"


def test_a_versions_model_name_is_not_its_default_alias(cli: Cli, repo: GitRepo) -> None:
    """A version's default alias is ``orders_v2``; ``{{ model.name }}`` is ``orders``."""
    versions = two_versions(repo)
    repo.write(
        "models/marts/_orders.yml",
        props() + versions + '        config:\n          alias: "{{ model.name }}"\n',
    )
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders.v2")]


def test_the_targets_schema_as_a_custom_schema_is_a_move(cli: Cli, repo: GitRepo) -> None:
    """dbt's default macro builds ``<target_schema>_<custom>``: not the default schema."""
    shop(repo)
    _rewrite(repo, {"models": 'marts:\n  +schema: "{{ target.schema }}"\n'})
    code, report = run(cli, repo)
    assert code == 1
    assert found(report) == [("model_relation_changed", "orders")]


def test_with_a_project_alias_macro_none_to_the_name_is_reported(cli: Cli, repo: GitRepo) -> None:
    """A project's own generate_alias_name gets none before and the name now: its
    input changed, so the finding stays (naming the macro)."""
    macro = (
        "{% macro generate_alias_name(custom_alias_name=none, node=none) -%}\n"
        "{{ custom_alias_name or ('x_' ~ node.name) }}\n{%- endmacro %}\n"
    )
    shop(repo)
    repo.write("macros/alias.sql", macro)
    repo.commit("macro")
    _rewrite(repo, {"models": 'marts:\n  +alias: "{{ this.name }}"\n'})
    code, report = run(cli, repo)
    assert code == 1
    assert "generate_alias_name" in moved(report)[0]["message"]
