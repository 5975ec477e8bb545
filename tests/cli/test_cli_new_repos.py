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
