"""Patterns met replaying public repositories the gate had never seen (sixth round,
docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public file showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

ODCS = (
    "apiVersion: v3.0.1\nkind: DataContract\nid: sales.turnover\nversion: 1.0.0\n"
    "status: draft\n"
    "servers:\n  - server: production\n    type: s3\n    environment: prd\n"
    "    location: {location}\n    format: parquet\n"
    "schema:\n  - name: turnover\n    physicalName: turnover\n    physicalType: table\n"
    "    properties:\n"
    "      - name: week_id\n        logicalType: string\n        required: true\n"
    "      - name: business_unit\n        logicalType: integer\n"
)

DCS = (
    "dataContractSpecification: 1.1.0\nid: stations\ninfo:\n  title: Stations\n"
    "  version: 0.1.0\n"
    "servers:\n  files:\n    type: {type}\n    {key}: {location}\n    format: parquet\n"
    "models:\n  stations:\n    type: table\n    fields:\n"
    "      station_id:\n        type: string\n        required: true\n"
)


def _pr(repo: GitRepo, path: str, before: str, after: str) -> None:
    repo.write(path, before)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, after)
    repo.commit("pr")


def _breaking(cli: Cli, repo: GitRepo) -> tuple[int, list[tuple[str, str]], str]:
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    changes = json.loads(proc.stdout)["changes"]
    found = [
        (c["rule"], c["dataset"])
        for c in changes
        if c["breaking"] and c["rule"] != "version_not_bumped"
    ]
    return proc.returncode, found, proc.stdout


# monmaya/samples, contracts/odcs/order_event.yml (an ODCS v3.0.1 contract of a
# retailer's turnover table, served from `s3://<bucket>/forecast/<table>/`): a pull
# request that moves the data to another prefix moves the table every Spark or
# Athena reader of that path queries. The gate compared only catalog, project,
# database, schema and dataset, so the move passed ("no contract changes").
def test_an_odcs_s3_location_move_is_a_relation_change(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast/turnover/"),
        ODCS.format(location="s3://acme-gold/forecast_v2/turnover/"),
    )
    code, found, out = _breaking(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "turnover")], found
    assert (
        "location 's3://acme-gold/forecast/turnover/' -> 's3://acme-gold/forecast_v2/turnover/'"
        in out
    )


def test_an_s3_location_restated_moves_nothing(cli: Cli, repo: GitRepo) -> None:
    """A trailing slash or a file glob names the same prefix: no reader moves."""
    _pr(
        repo,
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast/turnover/"),
        ODCS.format(location="' s3://acme-gold/forecast/turnover/*.parquet'"),
    )
    code, found, out = _breaking(cli, repo)
    assert (code, found) == (0, []), out


# dataheim-io/dagster-datacontract, examples/simple/datacontract.yml (3b7eedd8): a
# `local` server's `path` fixed after the example moved in the repository. A local
# path is a developer's copy of the data, not where readers find the table.
def test_a_dcs_local_path_change_moves_nothing(cli: Cli, repo: GitRepo) -> None:
    _pr(
        repo,
        "datacontract.yaml",
        DCS.format(type="local", key="path", location="./example/data/stations.parquet"),
        DCS.format(type="local", key="path", location="./examples/simple/data/stations.parquet"),
    )
    code, found, out = _breaking(cli, repo)
    assert (code, found) == (0, []), out


def test_a_dcs_location_with_its_model_placeholder_is_compared(cli: Cli, repo: GitRepo) -> None:
    """DCS fills ``{model}`` with each model's name (iwoork/datacontract-test's
    ``s3://<bucket>/data/{model}/*.json``): the folder around it moving moves every
    model's files; another placeholder (``${BUCKET}``) is filled elsewhere."""
    _pr(
        repo,
        "datacontract.yaml",
        DCS.format(type="s3", key="location", location="s3://acme/data/{model}/*.json"),
        DCS.format(type="s3", key="location", location="s3://acme/raw/{model}/*.json"),
    )
    code, found, out = _breaking(cli, repo)
    assert code == 1, out
    assert found == [("model_relation_changed", "stations")], found
    repo.write(
        "datacontract.yaml",
        DCS.format(type="s3", key="location", location="s3://${BUCKET}/raw/{model}/"),
    )
    repo.commit("bucket from the environment")
    proc = cli(repo.path, "--base", "HEAD~1", "--head", "HEAD", "--no-merge-base")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_s3_location_restated_as_a_recursive_glob_moves_nothing(cli: Cli, repo: GitRepo) -> None:
    """A prefix and the Hive-style globs over it (``**/*.parquet``, ``year=*/``: DuckDB
    reads DCS file servers that way) name one place: only the last segment was
    dropped, so ``s3://b/t/**`` against ``s3://b/t`` blocked a restatement."""
    _pr(
        repo,
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast/turnover/"),
        ODCS.format(location="s3://acme-gold/forecast/turnover/**/*.parquet"),
    )
    assert _breaking(cli, repo)[:2] == (0, [])
    repo.write(
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast/turnover/year=*/*.parquet"),
    )
    repo.commit("partitions")
    assert _breaking(cli, repo)[:2] == (0, [])
    repo.write(
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast_v2/turnover/**/*.parquet"),
    )
    repo.commit("moved")
    code, found, out = _breaking(cli, repo)
    assert (code, found) == (1, [("model_relation_changed", "turnover")]), out


def test_an_s3_location_restated_under_another_scheme_for_the_same_store_moves_nothing(
    cli: Cli, repo: GitRepo
) -> None:
    """``s3a://`` (Hadoop's, Spark's) and ``s3n://`` name the objects ``s3://`` does,
    ``gcs://`` those of ``gs://`` (DuckDB reads all of them), and a URL's scheme has no
    case: a contract restating its location for another reader moved no file."""
    _pr(
        repo,
        "contracts/turnover.odcs.yaml",
        ODCS.format(location="s3://acme-gold/forecast/turnover/"),
        ODCS.format(location="s3a://acme-gold/forecast/turnover/"),
    )
    assert _breaking(cli, repo)[:2] == (0, [])
    for location in ("S3://acme-gold/forecast/turnover/", "s3n://acme-gold/forecast/turnover"):
        repo.write("contracts/turnover.odcs.yaml", ODCS.format(location=location))
        repo.commit("restated")
        assert _breaking(cli, repo)[:2] == (0, []), location
    repo.write("contracts/turnover.odcs.yaml", ODCS.format(location="gs://acme-gold/forecast/"))
    repo.commit("another store")
    code, found, out = _breaking(cli, repo)
    assert (code, found) == (1, [("model_relation_changed", "turnover")]), out
