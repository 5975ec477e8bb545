"""dbt values the gate must read exactly as dbt-core 1.10 reads them (the sixth round's
precision items, docs/precision.md "Items decided after the sixth round").

Each behaviour was checked with ``dbt parse`` (dbt-core 1.10.23, dbt-duckdb 1.10.1) on a
one-model project before the gate was made to agree with it.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.cli.test_cli_dbt_access import PROJECT, _entry, _pr
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

SQL = "select 1 as id\n"


# 1. ``access`` with spaces around it. dbt refuses ``config(access='public ')``,
# ``access: 'public '``, ``config: {access: 'public '}`` and ``+access: 'public '``
# ("Node model.shop.orders has an invalid value (public ) for the access field";
# ``+access``: mashumaro's InvalidFieldValue for ``ModelConfig.access``).


def test_a_model_files_access_with_a_trailing_space_is_refused(cli: Cli, repo: GitRepo) -> None:
    spaced = "\n{{ config(access='public ') }}\nselect 1 as id\n"
    _pr(repo, _entry(access="public"), _entry(), sql=(SQL, spaced))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/orders.sql:2" in proc.stderr
    assert "'public ' (spaces around the value count)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_properties_access_with_a_space_is_refused_and_shown(cli: Cli, repo: GitRepo) -> None:
    _pr(repo, _entry(access="public"), _entry(access="' public'"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/_models.yml:4" in proc.stderr
    assert "' public' (spaces around the value count)" in proc.stderr


def test_the_pr_that_fixes_a_spaced_access_at_the_base_passes(cli: Cli, repo: GitRepo) -> None:
    """The base reads leniently (``access_value``): ``'public '`` there is public, so
    the pull request that writes ``'public'`` changes nothing and is not refused."""
    spaced = "{{ config(access='public ') }}\nselect 1 as id\n"
    fixed = "{{ config(access='public') }}\nselect 1 as id\n"
    _pr(repo, _entry(), _entry(), sql=(spaced, fixed))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "model_access_narrowed" not in proc.stdout


# 3. Jinja in ``dbt_project.yml``'s ``+access``/``+enabled``/``+contract``: constants
# folded (``"{{ 'public' }}"``), an expression reported where it changes, as the same
# Jinja in a properties entry or a model file is (``dbt_config_unevaluable``).


def _folder(setting: str) -> str:
    return PROJECT + f"models:\n  shop:\n    marts:\n      {setting}\n"


PLAIN = _entry().replace("    config:\n      contract:\n        enforced: true\n", "")
ENFORCED = "+contract: {enforced: true}\n      "
TARGET = "\"{{ 'public' if target.name == 'prod' else 'protected' }}\""


def test_a_folders_access_made_jinja_is_reported(cli: Cli, repo: GitRepo) -> None:
    project = (_folder(ENFORCED + "+access: public"), _folder(ENFORCED + f"+access: {TARGET}"))
    _pr(repo, PLAIN, PLAIN, project=project)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable orders" in proc.stdout
    assert "access is now '{{ 'public' if target.name == 'prod'" in proc.stdout
    assert "(dbt_project.yml:9)" in proc.stdout


def test_an_unchanged_jinja_access_on_both_sides_is_no_finding(cli: Cli, repo: GitRepo) -> None:
    """The same expression at the base and HEAD (a line added above it): nothing new."""
    after = _folder(ENFORCED + f"+access: {TARGET}").replace("models:", "# moved\nmodels:")
    _pr(repo, PLAIN, PLAIN, project=(_folder(ENFORCED + f"+access: {TARGET}"), after))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable" not in proc.stdout


def test_a_folders_enabled_made_jinja_is_reported(cli: Cli, repo: GitRepo) -> None:
    project = (
        _folder(ENFORCED + "+enabled: true"),
        _folder(ENFORCED + "+enabled: \"{{ target.name == 'prod' }}\""),
    )
    _pr(repo, PLAIN, PLAIN, project=project)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "enabled is now '{{ target.name == 'prod' }}'" in proc.stdout


def test_the_entrys_own_access_hides_the_folders_jinja(cli: Cli, repo: GitRepo) -> None:
    """``config.access: public`` in the entry beats any ``+access``: nothing to evaluate."""
    public = _entry(config_access="public")
    _pr(repo, public, public, project=(_folder("+access: public"), _folder(f"+access: {TARGET}")))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "dbt_config_unevaluable" not in proc.stdout


def test_a_constant_jinja_access_is_folded(cli: Cli, repo: GitRepo) -> None:
    project = (
        _folder(ENFORCED + "+access: public"),
        _folder(ENFORCED + "+access: \"{{ 'protected' }}\""),
    )
    _pr(repo, PLAIN, PLAIN, project=project)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> protected" in proc.stdout
    assert "dbt_config_unevaluable" not in proc.stdout


# 2. A refused value the pull request did not introduce. ``dbt parse`` fails on both
# sides of ``{{ config(access='Public') }}`` (InvalidAccessTypeError); a pull request
# that only touches the model's properties entry is not refused for it: the model file
# is read as the base is read, compared, and a warning names the file and line.

CAPITAL = "-- orders\n{{ config(access='Public') }}\nselect 1 as id\n"
WIDER = _entry(access="public").replace("data_type: int", "data_type: bigint")


def test_an_inherited_bad_access_in_a_model_file_is_a_warning(cli: Cli, repo: GitRepo) -> None:
    _pr(repo, _entry(access="public"), WIDER, sql=(CAPITAL, CAPITAL))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models/marts/orders.sql:2" in proc.stdout + proc.stderr
    assert "did not introduce it" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_inherited_bad_access_still_compares(cli: Cli, repo: GitRepo) -> None:
    """Read as the base reads it (``'Public'`` as public): a narrowing still breaks."""
    narrowed = CAPITAL.replace("select", "{{ config(access='private') }}\nselect")
    _pr(repo, _entry(), _entry(), sql=(CAPITAL, narrowed))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_access_narrowed orders: public -> private" in proc.stdout


def test_a_bad_access_the_pr_writes_is_still_refused(cli: Cli, repo: GitRepo) -> None:
    """``'Public'`` at the base, ``'PUBLIC'`` at HEAD: a value this pull request wrote."""
    _pr(repo, _entry(), WIDER, sql=(CAPITAL, CAPITAL.replace("Public", "PUBLIC")))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/orders.sql:2" in proc.stderr
    assert "'PUBLIC' is not one of private, protected, public" in proc.stderr


def test_an_inherited_bad_access_in_a_properties_file_is_a_warning(cli: Cli, repo: GitRepo) -> None:
    """``access: Public`` on both sides of a properties file the pull request edits
    elsewhere: both sides are unreadable, neither is compared, the run is not refused."""
    _pr(repo, _entry(access="Public"), WIDER.replace("access: public", "access: Public"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "models/marts/_models.yml:4 is unreadable" in out
    assert "its base version is refused the same way" in out


def test_a_bad_access_a_pr_adds_to_a_properties_file_is_still_refused(
    cli: Cli, repo: GitRepo
) -> None:
    _pr(repo, _entry(access="Public"), _entry(access="PUBLIC"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "models/marts/_models.yml:4" in proc.stderr and "'PUBLIC'" in proc.stderr


def test_a_deleted_entry_of_a_model_with_an_inherited_bad_access(cli: Cli, repo: GitRepo) -> None:
    """The entry goes, the model file (``'Public'`` on both sides) stays: the verdict is
    the one a plain model file gets (``model_removed``), not a refusal of the file that
    ``still_built`` reads."""
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/marts/orders.sql", CAPITAL)
    repo.write("models/marts/_models.yml", _entry())
    repo.commit("base")
    repo.branch("feature")
    repo.remove("models/marts/_models.yml")
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model_removed orders" in proc.stdout
