"""Hostile pull requests, round five: the newest readers (repeated dbt keys, dbt
projects renamed and moved, files-server moves, Jinja access, struck-out
acknowledgements). Each test commits the attack to a real git repository and
runs the CLI in-process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]


def _project(name: str) -> str:
    return f"name: {name}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"


def _public(name: str = "orders", columns: tuple[str, ...] = ("id", "amount")) -> str:
    cols = "".join(f"      - name: {c}\n        data_type: int\n" for c in columns)
    return (
        f"version: 2\nmodels:\n  - name: {name}\n    access: public\n"
        "    config:\n      contract:\n        enforced: true\n    columns:\n" + cols
    )


def _rules(proc: CompletedProcess[str]) -> list[tuple[str, str | None, str | None]]:
    report = json.loads(proc.stdout)
    return sorted((c["rule"], c["before"], c["after"]) for c in report["changes"])


def test_renaming_a_project_breaks_the_cross_project_refs_of_its_public_models(
    cli: Cli, repo: GitRepo
) -> None:
    """A public model is read from other projects as ``ref('shop', 'orders')``; a PR
    renaming the project in place (``name: shop`` -> ``shop2``) leaves every such ref
    unresolved. The rename was followed for every model ("the same project"), so
    "no contract changes", exit 0, while ``web`` no longer compiles. A public model
    keeps its base project: ``model_renamed``, as for a model moved to another
    project. Protected models (no other project may read them) still follow."""
    repo.write("shop/dbt_project.yml", _project("shop"))
    repo.write("shop/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("shop/models/_m.yml", _public())
    repo.write("shop/models/items.sql", "select 1 as id\n")
    repo.write("shop/models/_items.yml", _public("items", ("id",)).replace("public", "protected"))
    repo.write("web/dbt_project.yml", _project("web"))
    repo.write("web/models/report.sql", "select id, amount from {{ ref('shop', 'orders') }}\n")
    repo.commit("base")
    repo.branch("feature")
    repo.write("shop/dbt_project.yml", _project("shop2"))
    repo.write("shop/models/_m.yml", _public() + "# renamed\n")
    repo.write("shop/models/_items.yml", (repo.path / "shop/models/_items.yml").read_text() + "#\n")
    repo.commit("pr: shop becomes shop2")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _rules(proc) == [("model_renamed", "shop.orders", "shop2.orders")]


def test_two_projects_swapping_names_compare_what_each_ref_now_reads(
    cli: Cli, repo: GitRepo
) -> None:
    """``alpha`` and ``beta`` swap names (each folder's ``dbt_project.yml``): read as
    two renames in place, each folder's models paired with themselves, so "no
    contract changes", while ``ref('alpha', 'orders')`` now reads beta's table,
    which has no ``amount``. Public models keep their project: the column is gone."""
    repo.write("a/dbt_project.yml", _project("alpha"))
    repo.write("a/models/orders.sql", "select 1 as id, 2 as amount\n")
    repo.write("a/models/_m.yml", _public())
    repo.write("b/dbt_project.yml", _project("beta"))
    repo.write("b/models/orders.sql", "select 1 as id\n")
    repo.write("b/models/_m.yml", _public(columns=("id",)))
    repo.commit("base")
    repo.branch("feature")
    repo.write("a/dbt_project.yml", _project("beta"))
    repo.write("b/dbt_project.yml", _project("alpha"))
    repo.write("a/models/_m.yml", _public() + "#\n")
    repo.write("b/models/_m.yml", _public(columns=("id",)) + "#\n")
    repo.commit("pr: swap")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("column_removed", "INT", None) in _rules(proc)


DCS = (
    "dataContractSpecification: 1.1.0\nid: stations\ninfo:\n  title: Stations\n"
    "  version: 0.1.0\nservers:\n  prod:\n{server}"
    "models:\n  stations:\n    type: table\n    fields:\n"
    "      station_id:\n        type: string\n"
)


def _postgres(database: str) -> str:
    return DCS.format(
        server=f"    type: postgres\n    host: h\n    port: 5432\n    schema: public\n"
        f"    database: '{database}'\n"
    )


def _files(location: str, kind: str = "s3") -> str:
    return DCS.format(server=f"    type: {kind}\n    location: '{location}'\n")


def _moved(cli: Cli, repo: GitRepo, before: str, after: str) -> int:
    """1 if a PR turning ``before`` into ``after`` moves the table, else 0."""
    path = "stations.datacontract.yaml"
    repo.write(path, before)
    repo.commit("before")
    repo.write(path, after)
    repo.commit("after")
    proc = cli(
        repo.path, "--base", "HEAD~1", "--head", "HEAD", "--no-merge-base", "--format", "json"
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return int(
        any(c["rule"] == "model_relation_changed" for c in json.loads(proc.stdout)["changes"])
    )


def test_a_server_move_cannot_hide_behind_a_placeholder_or_a_file_pattern(
    cli: Cli, repo: GitRepo
) -> None:
    """A value with ``$``, ``{}`` or ``<>`` was skipped whole ("filled in elsewhere"),
    and a files location was compared only up to its last folder: a PR moving the
    table passed ("no contract changes", exit 0) by adding a placeholder to the new
    value (``prod`` -> ``staging_${X}``, a new bucket with ``/${env}/``), by changing
    the text between unchanged placeholders, or by changing a file name that sits
    beside a ``?`` or ``*`` (``orders_*.parquet`` -> ``sales_*.parquet``, a query
    string). A placeholder is filled the same way on both sides: the literal text
    around it still tells two places apart."""
    moves = [
        (_postgres("prod"), _postgres("staging_${X}")),
        (_postgres("prod"), _postgres("stag<x>")),
        (_files("s3://acme/stations/"), _files("s3://other/${env}/stations/")),
        (_files("s3://${b}/stations/"), _files("s3://${b}/archive/")),
        (_files("s3://b/data/orders_*.parquet"), _files("s3://b/data/sales_*.parquet")),
        (_files("s3://b/data/stations.parquet?v=1"), _files("s3://b/data/other.parquet?v=1")),
        (
            _files("https://h.example/data/stations.csv?raw=1", "https"),
            _files("https://h.example/data/other.csv?raw=1", "https"),
        ),
    ]
    assert [_moved(cli, repo, a, b) for a, b in moves] == [1] * len(moves)
    same = [
        (_postgres("${DB_NAME}"), _postgres("{{ database }}")),  # unknown either way
        (_files("s3://${B}/t/"), _files("s3://{{ b }}/t")),
        (_files("s3://b/t/"), _files("s3a://b/t/year=*/*.parquet")),
        (_files("s3://b/data/{model}/"), _files("s3://b/data/stations/*.json")),
    ]
    assert [_moved(cli, repo, a, b) for a, b in same] == [0] * len(same)


_ENFORCED_PUBLIC = (
    "version: 2\nmodels:\n  - name: orders\n    access: public\n    config:\n"
    "      contract:\n        enforced: true\n    columns:\n      - name: id\n        data_type: int\n"
)


@pytest.mark.parametrize(
    "call",
    [
        "{{ config(enabled=false) }}\n{{ config(enabled=true) if target.name == 'x' else '' }}",
        "{{ config(enabled=false) }}\n{{ false and config(enabled=true) }}",
        '{{ config(enabled=false) }}\n{% set s = "{{ config(enabled=true) }}" %}',
        "{{ config(enabled=false) }}\n{% set d = {'x': config(enabled=true)} if false else {} %}",
        "{{ config(access='private') }}\n{{ config(access='public') if false }}",
        "{{ config(contract={'enforced': false}) }}\n{{ true or config(contract={'enforced': true}) }}",
        "{{ config(enabled=false, meta={'note': \"see config(enabled=true)\"}) }}",
        "{{ config(enabled=false, meta=config(enabled=true)) }}",
    ],
    ids=["if-expression", "and", "string", "dict-if", "access", "or", "in-a-string", "nested"],
)
def test_a_config_call_beside_a_condition_in_its_tag_is_not_taken_as_run(
    cli: Cli, repo: GitRepo, call: str
) -> None:
    """Round four made a call under ``{% if %}`` unevaluable; a condition inside the
    tag itself still read as run: ``{{ config(enabled=true) if target.name == 'x' }}``,
    ``{{ false and config(...) }}``, a call inside a string (``{% set s = "{{ config(
    ...) }}" %}``, a ``meta`` text) or inside another call's arguments. The gate took
    the last such call as the model's word (enabled, public, enforced), dbt never ran
    it (or ran it first): the model disabled, narrowed or unenforced passed, exit 0."""
    repo.write("dbt_project.yml", _project("shop"))
    repo.write("models/orders.sql", "select 1 as id\n")
    repo.write("models/_m.yml", _ENFORCED_PUBLIC)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/orders.sql", call + "\nselect 1 as id\n")
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BREAKING" in proc.stdout


@pytest.mark.parametrize(
    "call",
    [
        "{{ config({'contract': {'enforced': false}}) }}",
        "{{ config({'enabled': false}) }}",
        "{% do config.set('contract', {'enforced': false}) %}",
        "{% do config.set('enabled', false) %}",
        "{% do config.set('access', 'private') %}",
    ],
    ids=[
        "positional-unenforced",
        "positional-disabled",
        "set-unenforced",
        "set-disabled",
        "set-private",
    ],
)
def test_a_config_given_as_a_dict_or_by_config_set_is_read(
    cli: Cli, repo: GitRepo, call: str
) -> None:
    """dbt's ``config()`` takes one positional dict as its keywords, and ``config.set(name,
    value)`` is ``config({name: value})`` (dbt-core's ``Config.__call__``/``Config.set``).
    The gate read keywords only: a model unenforced, disabled or made private that way
    passed, exit 0."""
    repo.write("dbt_project.yml", _project("shop"))
    repo.write("models/orders.sql", "select 1 as id\n")
    repo.write("models/_m.yml", _ENFORCED_PUBLIC)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/orders.sql", call + "\nselect 1 as id\n")
    repo.commit("pr")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BREAKING" in proc.stdout


def test_an_acknowledgement_after_an_unclosed_strike_tag_is_shown_struck(
    cli: Cli, repo: GitRepo, tmp_path
) -> None:
    """``<s>`` and ``<strike>`` are HTML formatting elements: left open when their
    paragraph (or heading) ends, the browser, and GitHub's HTML5 sanitizer, reopen
    them around every later paragraph until their end tag, so the acknowledgement
    below is shown crossed out. The gate closed them with the paragraph and counted
    it: exit 0. ``<del>`` is no formatting element: it ends with its paragraph."""
    _access_pr(repo)
    body = tmp_path / "body.md"
    for struck in (
        "<s>we first thought\n\naccept-breaking-change: orders\n",
        "# <strike>Plan\n\n- accept-breaking-change: orders\n",
    ):
        body.write_text(struck)
        proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body))
        assert proc.returncode == 1, struck + proc.stdout + proc.stderr
    for shown in (
        "<s>old\n\nstill old</s>\n\naccept-breaking-change: orders\n",
        "<del>old\n\naccept-breaking-change: orders\n",
    ):
        body.write_text(shown)
        proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body))
        assert proc.returncode == 0, shown + proc.stdout + proc.stderr


def _access_pr(repo: GitRepo) -> None:
    """A public model made protected: one breaking change on ``orders``."""
    repo.write("dbt_project.yml", _project("shop"))
    repo.write("models/orders.sql", "select 1 as id\n")
    repo.write("models/_m.yml", _ENFORCED_PUBLIC)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/_m.yml", _ENFORCED_PUBLIC.replace("    access: public\n", ""))
    repo.commit("pr")
