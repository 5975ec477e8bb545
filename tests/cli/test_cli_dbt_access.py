"""``model_access_narrowed``: a guarded dbt model that was ``access: public`` no longer is.

dbt Mesh: another project reads a model with ``ref('<project>', '<model>')``, which
dbt compiles only for ``public`` models (docs.getdbt.com, reference/resource-configs/access
and docs/mesh/govern/model-access: the default is ``protected``, "can be referenced by
... any group in the same project"; ``private`` only within its group). ``access`` is
a config: the model file's ``config(access=...)`` over the properties entry's
``config.access`` (or v1.9's top-level ``access``), over ``+access`` in ``dbt_project.yml``
by folder. christineberger/dbt-snowflake-demo-upstream (merge 5a72374c) drops
``access: public`` from entries whose folder ``marts: {+access: public}`` keeps public:
no narrowing there.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def _entry(access: str = "", config_access: str = "") -> str:
    out = "version: 2\nmodels:\n  - name: orders\n"
    if access:
        out += f"    access: {access}\n"
    out += "    config:\n      contract:\n        enforced: true\n"
    if config_access:
        out += f"      access: {config_access}\n"
    return out + "    columns:\n      - name: id\n        data_type: int\n"


def _pr(
    repo: GitRepo,
    before: str,
    after: str,
    project: tuple[str, str] = (PROJECT, PROJECT),
    sql: tuple[str, str] = ("select 1 as id\n", "select 1 as id\n"),
) -> None:
    repo.write("dbt_project.yml", project[0])
    repo.write("models/marts/orders.sql", sql[0])
    repo.write("models/marts/_models.yml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("dbt_project.yml", project[1])
    repo.write("models/marts/orders.sql", sql[1])
    repo.write("models/marts/_models.yml", after)
    repo.commit("pr")


def test_dropping_a_top_level_access_public_narrows_to_protected(cli: Cli, repo: GitRepo) -> None:
    _pr(repo, _entry(access="public"), _entry())
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> protected" in proc.stdout
    assert "ref('shop', 'orders')" in proc.stdout


def test_config_access_public_to_private_is_narrowed(cli: Cli, repo: GitRepo) -> None:
    _pr(repo, _entry(config_access="public"), _entry(config_access="private"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def test_the_break_is_acknowledged_by_the_model_name(cli: Cli, repo: GitRepo, tmp_path) -> None:
    _pr(repo, _entry(access="public"), _entry())
    body = tmp_path / "body.md"
    body.write_text("accept-breaking-change: orders\n")
    proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" in proc.stdout


def test_the_folder_keeps_it_public(cli: Cli, repo: GitRepo) -> None:
    """christineberger's shape: the entry's ``access: public`` goes, the folder's stays."""
    folder = PROJECT + "models:\n  shop:\n    marts:\n      +access: public\n"
    _pr(repo, _entry(access="public"), _entry(), project=(folder, folder))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


def test_the_folder_narrowed_in_dbt_project_yml(cli: Cli, repo: GitRepo) -> None:
    """Only ``dbt_project.yml`` changes: its models are compared again."""
    public = PROJECT + "models:\n  shop:\n    marts:\n      +access: public\n"
    protected = public.replace("public", "protected")
    repo.write("dbt_project.yml", public)
    repo.write("models/marts/orders.sql", "select 1 as id\n")
    repo.write("models/marts/_models.yml", _entry())
    repo.commit("base")
    repo.branch("feature")
    repo.write("dbt_project.yml", protected)
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> protected" in proc.stdout


def test_the_model_file_config_narrows(cli: Cli, repo: GitRepo) -> None:
    """``{{ config(access='protected') }}`` in the model file beats the properties entry."""
    _pr(
        repo,
        _entry(access="public"),
        _entry(access="public"),
        sql=("select 1 as id\n", "{{ config(access='protected') }}\nselect 1 as id\n"),
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> protected" in proc.stdout


def test_widening_or_protected_to_private_is_not_reported(cli: Cli, repo: GitRepo) -> None:
    """protected -> private breaks only readers in the same project, whose own ``dbt
    parse`` in this pull request refuses the ref; private -> public widens."""
    _pr(repo, _entry(config_access="protected"), _entry(config_access="private"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


def test_making_a_model_public_is_no_break(cli: Cli, repo: GitRepo) -> None:
    _pr(repo, _entry(), _entry(access="public"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


def test_an_access_the_gate_cannot_evaluate_is_not_guessed(cli: Cli, repo: GitRepo) -> None:
    """``access: "{{ var('access') }}"``: unknown, so no finding either way."""
    _pr(repo, _entry(access="public"), _entry(access="\"{{ var('access') }}\""))
    proc = cli(repo.path, "--base", "main")
    assert "model_access_narrowed" not in proc.stdout, proc.stdout + proc.stderr
