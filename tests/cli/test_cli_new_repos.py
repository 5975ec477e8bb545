"""Patterns met replaying public repositories the gate had never seen (docs/precision.md).

Each test rebuilds, in a real git repo of its own, the shape one public file
showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

ODCS_HEAD = "apiVersion: v3.0.2\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"

# dativo-io/dativo-ingest's assets/markdown_kv/v1.0/*.yaml (and its test
# fixtures) declare ODCS v3.0.2 but list their columns straight under `schema`,
# each with `type` and `required`. Read as written, every column is a table
# with no columns, so a `type: string -> integer` edit passed as "no change".
COLUMNS_AS_OBJECTS = (
    ODCS_HEAD
    + "schema:\n"
    + "  - name: doc_id\n    type: string\n    required: true\n"
    + "  - name: title\n    type: {title_type}\n    required: false\n"
)


def _pr(repo: GitRepo, path: str, before: str, after: str) -> None:
    repo.write(path, before)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, after)
    repo.commit("pr")


def test_odcs_columns_written_as_schema_objects_are_refused(cli: Cli, repo: GitRepo) -> None:
    before = COLUMNS_AS_OBJECTS.format(title_type="string")
    after = COLUMNS_AS_OBJECTS.format(title_type="integer")
    _pr(repo, "contracts/docs.odcs.yaml", before, after)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith(
        "schema-gate: error: contracts/docs.odcs.yaml:7: schema[0] 'doc_id' has 'type', "
        "'required' but no 'properties': those are a column's keys"
    ), proc.stderr


@pytest.mark.parametrize(
    "obj",
    [
        # an extension key that is no column key, on an object without columns
        "  - name: orders\n    type: table\n",
        # a column key beside 'properties': an extension on a real object
        "  - name: orders\n    required: true\n    properties:\n      - name: id\n"
        "        logicalType: integer\n",
    ],
    ids=["type-table", "with-properties"],
)
def test_odcs_objects_with_extension_keys_are_still_compared(
    cli: Cli, repo: GitRepo, obj: str
) -> None:
    _pr(repo, "contracts/o.odcs.yaml", ODCS_HEAD + "schema: []\n", ODCS_HEAD + "schema:\n" + obj)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stderr
    assert "model_added orders" in proc.stdout
    assert "this is a warning" in proc.stdout


# The same shape in DCS (no public file showed it; the root cause is the one
# above): a field written as a model, `type: string` with no `fields`, was a
# model without columns and its type change passed.
DCS_FIELD_AS_MODEL = (
    "dataContractSpecification: 1.1.0\nid: c\ninfo: {{title: c, version: 1.0.0}}\n"
    "models:\n  doc_id:\n    type: {kind}\n    required: true\n"
)


def test_dcs_fields_written_as_models_are_refused(cli: Cli, repo: GitRepo) -> None:
    path = "contracts/docs.datacontract.yaml"
    _pr(repo, path, DCS_FIELD_AS_MODEL.format(kind="string"), DCS_FIELD_AS_MODEL.format(kind="int"))
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith(
        f"schema-gate: error: {path}:5: models.doc_id has 'type', 'required' but no 'fields'"
    ), proc.stderr


def test_dcs_model_without_fields_is_still_compared(cli: Cli, repo: GitRepo) -> None:
    path = "contracts/docs.datacontract.yaml"
    table = DCS_FIELD_AS_MODEL.format(kind="table")
    _pr(repo, path, table.replace("doc_id", "other"), table)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode in (0, 1), proc.stderr
    assert "doc_id" in proc.stdout
