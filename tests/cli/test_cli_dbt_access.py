"""``model_access_narrowed``: a guarded dbt model that was ``access: public`` no longer is.

dbt Mesh: another project reads a model with ``ref('<project>', '<model>')``, which
dbt compiles only for ``public`` models (docs.getdbt.com, reference/resource-configs/access
and docs/mesh/govern/model-access: the default is ``protected``, "can be referenced by
... any group in the same project"; ``private`` only within its group). ``access`` is
a config: the model file's ``config(access=...)`` over the properties entry's
``config.access`` (or the model's top-level ``access``, which dbt moves into ``config``),
over ``+access`` in ``dbt_project.yml`` by folder (docs/formats/dbt.md#access). christineberger/dbt-snowflake-demo-upstream (merge 5a72374c) drops
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


# dbt-core's own precedence (read in its source, 1.7 to 1.11, and confirmed by
# ``dbt parse`` with dbt-core 1.10.23 + dbt-duckdb 1.10.1 on one-model projects):
# ``YamlReader.normalize_access_attribute`` moves a model's top-level ``access`` into
# ``config`` (both at once: refused), ``calculate_node_config`` ranks project, then
# that ``config``, then the model file's ``config()``; a version's top-level ``access``
# is set by ``patch_node_properties`` and overwritten by ``patch_node_config``.


def _versioned(model: str = "", version: str = "") -> str:
    """``orders`` with one version: ``model``/``version`` are extra lines of each entry."""
    return (
        "version: 2\nmodels:\n  - name: orders\n"
        + model
        + "    config:\n      contract:\n        enforced: true\n"
        + "    columns:\n      - name: id\n        data_type: int\n"
        + "    versions:\n      - v: 1\n"
        + version
    )


def _pr_versioned(repo: GitRepo, before: str, after: str, project: str = PROJECT) -> None:
    repo.write("dbt_project.yml", project)
    repo.write("models/marts/orders_v1.sql", "select 1 as id\n")
    repo.write("models/marts/_models.yml", before)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/marts/_models.yml", after)
    repo.commit("pr")


def test_dropping_the_top_level_key_under_a_private_model_file_is_no_change(
    cli: Cli, repo: GitRepo
) -> None:
    """The review's case: ``access: public`` in the entry and ``config(access='private')``
    in the model file is ``private`` to dbt (the file's ``config()`` is applied last), so
    the pull request that drops the top-level key changes nothing."""
    private = "{{ config(access='private') }}\nselect 1 as id\n"
    _pr(repo, _entry(access="public"), _entry(), sql=(private, private))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


def test_the_model_file_config_beats_config_access_too(cli: Cli, repo: GitRepo) -> None:
    """``config.access: public`` kept, the model file's ``config(access='public')`` turned
    ``private``: dbt resolves ``private``, a break."""
    _pr(
        repo,
        _entry(config_access="public"),
        _entry(config_access="public"),
        sql=(
            "{{ config(access='public') }}\nselect 1 as id\n",
            "{{ config(access='private') }}\nselect 1 as id\n",
        ),
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def test_a_top_level_access_beats_the_folder(cli: Cli, repo: GitRepo) -> None:
    """``+access: private`` on the folder, ``access: public`` on the entry: public (the
    entry's ``config`` is applied after ``dbt_project.yml``); dropping the key narrows."""
    folder = PROJECT + "models:\n  shop:\n    marts:\n      +access: private\n"
    _pr(repo, _entry(access="public"), _entry(), project=(folder, folder))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def test_top_level_and_config_access_together_are_refused(cli: Cli, repo: GitRepo) -> None:
    """dbt refuses the entry ("found access dictionary in 'config' dictionary and as
    top-level key"); the gate used to read ``config.access`` and carry on."""
    both = _entry(access="public", config_access="public")
    _pr(repo, _entry(config_access="public"), both)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/_models.yml:4" in proc.stderr
    assert "'access' is both a top-level key and in 'config'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_versions_top_level_access_does_not_hide_a_narrowing(cli: Cli, repo: GitRepo) -> None:
    """Version ``access: private`` (ignored by dbt) under a public model: dbt says public,
    so the model's ``access: public`` dropped is a break the gate used to miss."""
    _pr_versioned(
        repo,
        _versioned(model="    access: public\n", version="        access: private\n"),
        _versioned(version="        access: private\n"),
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders.v1: public -> protected" in proc.stdout


def test_dropping_a_versions_top_level_access_is_no_change(cli: Cli, repo: GitRepo) -> None:
    """A version's ``access: public`` never made it public to dbt (``protected`` before
    and after): the gate used to report ``public -> protected``."""
    _pr_versioned(repo, _versioned(version="        access: public\n"), _versioned())
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


def test_a_versions_config_access_beats_its_models(cli: Cli, repo: GitRepo) -> None:
    """``config: {access: private}`` on the version over the model's ``access: public``
    (dbt deep-merges the version's ``config`` over the model's)."""
    _pr_versioned(
        repo,
        _versioned(model="    access: public\n"),
        _versioned(
            model="    access: public\n", version="        config:\n          access: private\n"
        ),
    )
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders.v1: public -> private" in proc.stdout


def test_a_version_files_config_beats_the_versions_config_access(cli: Cli, repo: GitRepo) -> None:
    """``orders_v1.sql`` gains ``config(access='private')`` under the version's
    ``config: {access: public}``: dbt resolves ``private`` (the file's ``config()`` last)."""
    public = _versioned(version="        config:\n          access: public\n")
    _pr_versioned(repo, public, public)
    repo.write("models/marts/orders_v1.sql", "{{ config(access='private') }}\nselect 1 as id\n")
    repo.commit("pr: the model file")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders.v1: public -> private" in proc.stdout
