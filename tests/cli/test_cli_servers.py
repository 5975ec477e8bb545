"""Where a DCS/ODCS table lives (``servers:``) and case-only renames of non-dbt ids.

A server present on both sides under one name that now keeps the table in
another catalog, project, database, schema or dataset moves the table readers
query: ``model_relation_changed``, as for a dbt model. An id changed only in
case names the same table on engines that fold case: no ``model_renamed``.
Each test builds its own real git repository; nothing public is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

DCS = (
    "dataContractSpecification: 1.1.0\nid: stations\ninfo:\n  title: Stations\n"
    "  version: 0.1.0\n"
    "servers:\n  local:\n    type: {type}\n{location}"
    "models:\n  {model}:\n    type: table\n    fields:\n"
    "      station_id:\n        type: string\n        required: true\n"
    "      city:\n        type: string\n"
)
POSTGRES = "    host: localhost\n    port: 5432\n    schema: public\n    database: {db}\n"
BIGQUERY = "    project: acme\n    dataset: {db}\n"


def _dcs(model: str, db: str, kind: str = "postgres") -> str:
    location = (BIGQUERY if kind == "bigquery" else POSTGRES).format(db=db)
    return DCS.format(type=kind, location=location, model=model)


def _pr(repo: GitRepo, path: str, before: str, after: str) -> None:
    repo.write(path, before)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, after)
    repo.commit("pr")


def _rules(cli: Cli, repo: GitRepo) -> tuple[int, list[tuple[str, str]], str]:
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    # version_not_bumped follows any break of these unversioned edits: left out.
    found = [
        (c["rule"], c["dataset"])
        for c in report["changes"]
        if c["breaking"] and c["rule"] != "version_not_bumped"
    ]
    return proc.returncode, found, proc.stdout


# kiddigital/datacontract_talk, dcdqexample.datacontract.yaml (a1df8734): the model
# key goes `netStation` -> `netstation` while the Postgres server's database goes
# `netstation` -> `exsnet`. The table moved (another database); the case-only key
# names the same table on Postgres (unquoted names fold). The block must say so.
def test_a_server_database_move_is_a_relation_change_not_a_case_rename(
    cli: Cli, repo: GitRepo
) -> None:
    _pr(
        repo,
        "stations.datacontract.yaml",
        _dcs("netStation", "netstation"),
        _dcs("netstation", "exsnet"),
    )
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert ("model_relation_changed", "netstation") in found, found
    assert not [r for r in found if r[0] == "model_renamed"], found
    change = next(c for c in json.loads(out)["changes"] if c["rule"] == "model_relation_changed")
    assert "server 'local' (postgres): database 'netstation' -> 'exsnet'" in change["message"]


def test_a_case_only_model_key_change_on_postgres_passes(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "stations.datacontract.yaml",
        _dcs("netStation", "netstation"),
        _dcs("netstation", "netstation"),
    )
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out


def test_a_case_only_model_key_change_on_bigquery_stays_a_rename(cli: Cli, repo: GitRepo) -> None:
    """BigQuery table names are case-sensitive: readers of `netStation` break."""
    _pr(
        repo,
        "stations.datacontract.yaml",
        _dcs("netStation", "raw", "bigquery"),
        _dcs("netstation", "raw", "bigquery"),
    )
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert ("model_renamed", "netstation") in found, found


def test_a_server_database_moved_in_case_only_on_postgres_passes(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "stations.datacontract.yaml",
        _dcs("stations", "NetStation"),
        _dcs("stations", "netstation"),
    )
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out


def test_a_server_dataset_moved_in_case_only_on_bigquery_is_a_move(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "stations.datacontract.yaml",
        _dcs("stations", "Raw", "bigquery"),
        _dcs("stations", "raw", "bigquery"),
    )
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "stations")], found


def test_placeholders_and_added_or_removed_servers_move_nothing(cli: Cli, repo: GitRepo) -> None:
    """A templated value is filled in elsewhere; a server added or removed, or one
    that changed its name, moves no location a reader had (the gate cannot tell)."""
    other = "servers:\n  files:\n    type: s3\n    location: s3://acme/stations/\n"
    before = _dcs("stations", "${DB_NAME}").replace("servers:\n", other)
    added = "servers:\n  added:\n    type: postgres\n    database: x\n"
    after = _dcs("stations", "'{{ database }}'").replace("servers:\n", added)
    _pr(repo, "stations.datacontract.yaml", before, after)
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out
    repo.write(
        "stations.datacontract.yaml",
        _dcs("stations", "a").replace("  local:\n", "  prod:\n"),
    )
    repo.commit("server renamed")
    repo.write(
        "stations.datacontract.yaml",
        _dcs("stations", "b").replace("  local:\n", "  production:\n"),
    )
    repo.commit("renamed again, with another database")
    proc = cli(repo.path, "--base", "HEAD~1", "--head", "HEAD", "--no-merge-base")
    assert proc.returncode == 0, proc.stdout + proc.stderr


ODCS = (
    "apiVersion: v3.0.2\nkind: DataContract\nid: rides\nversion: 1.0.0\nstatus: active\n"
    "servers:\n  - server: prod\n    type: snowflake\n    account: acme\n"
    "    database: {db}\n    schema: {schema}\n"
    "schema:\n  - name: rides\n    physicalName: {table}\n    properties:\n"
    "      - name: day\n        logicalType: date\n        required: true\n"
)


def test_an_odcs_server_schema_move_is_a_relation_change(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "rides.odcs.yaml",
        ODCS.format(db="ANALYTICS", schema="MARTS", table="RIDES"),
        ODCS.format(db="ANALYTICS", schema="SERVING", table="RIDES"),
    )
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "RIDES")], found
    assert "schema 'MARTS' -> 'SERVING'" in out


def test_an_odcs_case_only_restatement_on_snowflake_passes(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "rides.odcs.yaml",
        ODCS.format(db="ANALYTICS", schema="MARTS", table="RIDES"),
        ODCS.format(db="analytics", schema="marts", table="rides"),
    )
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out


SODA = "dataset: {name}\ncolumns:\n  - name: id\n    data_type: varchar\n  - name: total\n"


def test_a_soda_case_only_dataset_change_passes_on_a_caseless_dialect(
    cli: Cli, repo: GitRepo
) -> None:
    _pr(repo, "contracts/orders.yml", SODA.format(name="Orders"), SODA.format(name="orders"))
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out


def test_a_server_that_drops_its_type_while_its_database_moves_is_a_move(
    cli: Cli, repo: GitRepo
) -> None:
    """The server's ``type:`` deleted in the same edit that moves its database: the
    engine is unsaid at HEAD, not changed, so the base's type still tells how to
    compare (the published schema only warns about the missing type). Reading the
    unsaid engine as the run's dialect called it another engine and passed the move."""
    before = _dcs("stations", "netstation")
    after = _dcs("stations", "exsnet").replace("    type: postgres\n", "")
    _pr(repo, "stations.datacontract.yaml", before, after)
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "stations")], found


SNOWFLAKE = "    account: acme\n    schema: public\n    database: {db}\n"


def _retyped(db: str) -> str:
    return DCS.format(type="snowflake", location=SNOWFLAKE.format(db=db), model="stations")


def test_a_server_moved_to_another_engine_and_database_is_a_move(cli: Cli, repo: GitRepo) -> None:
    """postgres -> snowflake with a new database: the data moved; readers that query the
    old database (on the old engine) find nothing there."""
    _pr(repo, "stations.datacontract.yaml", _dcs("stations", "netstation"), _retyped("warehouse"))
    code, found, out = _rules(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "stations")], found
    change = next(c for c in json.loads(out)["changes"] if c["rule"] == "model_relation_changed")
    assert (
        "server 'local' (postgres -> snowflake): database 'netstation' -> 'warehouse'"
        in change["message"]
    ), change["message"]


def test_a_server_that_only_changes_its_engine_is_no_move(cli: Cli, repo: GitRepo) -> None:
    """The same database and schema restated under another type: no location changed
    (a restatement, or a migration whose location the contract keeps)."""
    _pr(repo, "stations.datacontract.yaml", _dcs("stations", "netstation"), _retyped("netstation"))
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out


def test_a_case_only_location_under_a_new_engine_that_folds_too_is_no_move(
    cli: Cli, repo: GitRepo
) -> None:
    """postgres -> snowflake, ``netstation`` -> ``NETSTATION``: both engines fold unquoted
    names, so it names the same database; a case-sensitive engine on either side keeps it."""
    _pr(repo, "stations.datacontract.yaml", _dcs("stations", "netstation"), _retyped("NETSTATION"))
    code, found, out = _rules(cli, repo)
    assert (code, found) == (0, []), out
