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
