"""Hostile pull requests, round four: the newest readers (dbt access, the PR
description's acknowledgements, the lineage cache, early git walks). Each test
commits the attack to a real git repository and runs the CLI in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

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


@pytest.mark.parametrize(
    "sql",
    [
        "{{ config(access=var('access', 'protected')) }}\nselect 1 as id\n",
        "{{ config(**{'access': my_access()}) }}\nselect 1 as id\n",
    ],
    ids=["var", "macro in a dict"],
)
def test_a_public_models_access_turned_into_an_expression_is_a_finding(
    cli: Cli, repo: GitRepo, sql: str
) -> None:
    """``{{ config(access=var('access', 'protected')) }}`` (or a macro) in the model
    file of a public model: the gate cannot evaluate it, and read it as not said, so
    the properties' ``public`` stood: "no contract changes", exit 0, while dbt builds
    it protected. As for ``enabled`` and ``contract.enforced``, a setting that became
    an expression the gate cannot evaluate is ``dbt_config_unevaluable``, never a
    silent pass (only where the model was public: nothing else can narrow)."""
    _pr(repo, _entry(access="public"), _entry(access="public"), sql=("select 1 as id\n", sql))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable orders" in proc.stdout, proc.stdout
    assert "models/marts/orders.sql:1" in proc.stdout


def test_a_properties_access_turned_into_an_expression_is_a_finding(
    cli: Cli, repo: GitRepo
) -> None:
    _pr(repo, _entry(access="public"), _entry(access="\"{{ var('access') }}\""))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable orders" in proc.stdout
    assert "model_access_narrowed" not in proc.stdout


def test_an_expression_where_the_model_was_not_public_is_no_finding(
    cli: Cli, repo: GitRepo
) -> None:
    """protected -> an expression cannot break another project's ``ref()``."""
    _pr(repo, _entry(), _entry(access="\"{{ var('access') }}\""))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_bidi_control_in_a_name_is_spelled_out(cli: Cli, repo: GitRepo) -> None:
    """Unicode's bidi controls (``Bidi_Control``) are U+061C, U+200E/F, U+202A-E and
    U+2066-9; the arabic letter mark U+061C was printed raw, reordering what a
    reviewer reads around it in the text report, the PR comment and annotations."""
    contract = 'dataset: t\ncolumns:\n  - name: id\n  - name: "a\\u061cb"\n'
    repo.write("soda/contracts/t.yaml", contract)
    repo.commit("base")
    repo.branch("feature")
    repo.write("soda/contracts/t.yaml", "dataset: t\ncolumns:\n  - name: id\n")
    repo.commit("drop")
    for fmt in ("text", "markdown", "github"):
        proc = cli(repo.path, "--base", "main", "--format", fmt)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "\u061c" not in proc.stdout, fmt
        assert "a\\u061cb" in proc.stdout, fmt


@pytest.mark.parametrize(
    ("sql", "finding"),
    [
        (
            "{{ config(access='protected') }}\n"
            "{% raw %}{{ config(access='public') }}{% endraw %}\nselect 1 as id\n",
            "model_access_narrowed orders: public -> protected",
        ),
        (
            "{{ config(enabled=false) }}\n"
            "{%- raw -%}\n{{ config(enabled=true) }}\n{%- endraw %}\nselect 1 as id\n",
            "model_disabled orders",
        ),
    ],
    ids=["access", "enabled"],
)
def test_a_config_call_in_a_raw_block_is_text(
    cli: Cli, repo: GitRepo, sql: str, finding: str
) -> None:
    """Jinja prints ``{% raw %}...{% endraw %}`` as text: dbt runs no call in it. The
    gate read the call there, the last one, so a raw ``config(enabled=true)`` hid a
    model dbt no longer builds, and a raw ``access='public'`` a narrowing: exit 0."""
    _pr(repo, _entry(access="public"), _entry(access="public"), sql=("select 1 as id\n", sql))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert finding in proc.stdout


@pytest.mark.parametrize(
    "sql",
    [
        "{{ config(enabled=false) }}\n"
        "{% if target.name == 'ci' %}{{ config(enabled=true) }}{% endif %}\nselect 1 as id\n",
        "{{ config(access='protected') }}\n"
        "{%- for x in [] %}\n{{ config(access='public') }}\n{% endfor -%}\nselect 1 as id\n",
    ],
    ids=["enabled under if", "access under for"],
)
def test_a_config_call_under_a_condition_is_not_taken_as_run(
    cli: Cli, repo: GitRepo, sql: str
) -> None:
    """dbt runs a ``config()`` inside ``{% if %}`` or ``{% for %}`` only when the
    condition holds for its target; the gate cannot tell, and read the call as run:
    ``config(enabled=false)`` then ``{% if target.name == 'ci' %}{{ config(enabled=true)
    }}{% endif %}`` passed as enabled while production builds nothing. Such a call's
    ``enabled``, ``contract`` and ``access`` are expressions the gate cannot evaluate:
    ``dbt_config_unevaluable``, never a silent pass."""
    _pr(repo, _entry(access="public"), _entry(access="public"), sql=("select 1 as id\n", sql))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable orders" in proc.stdout
