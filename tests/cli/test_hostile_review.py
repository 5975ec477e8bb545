"""A hostile reviewer's findings (security and precision), each a test that failed before its fix.

Real git repositories and the CLI in-process, as tests/test_policy.py does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from gate import acks
from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: note
    data_type: string
"""
WITHOUT_NOTE = ORDERS.replace("  - name: note\n    data_type: string\n", "")
WITH_EXTRA = ORDERS + "  - name: extra\n    data_type: string\n    optional: true\n"


def test_review_duplicate_alias_in_a_consumer_is_not_an_internal_error(
    tmp_path: Path, cli: Cli
) -> None:
    """A consumer with a CTE joined to itself without aliases (or two tables aliased
    ``o``) makes sqlglot's traverse_scope raise OptimizeError, which
    gate/consumers/sql.py:583-592 does not catch: "internal error", exit 2, for
    the whole run, because of one reader file (present on main too)."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", ORDERS)
    repo.write(
        "jobs/report.sql",
        "with x as (select note from orders) select * from x join x using (note)\n",
    )
    repo.commit("contract and a reader")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", WITHOUT_NOTE)
    proc = cli(repo.path, "--base", "main", "--jobs", "1")
    assert "internal error" not in proc.stderr
    assert proc.returncode == 1, proc.stderr


def test_review_lowering_max_file_bytes_cannot_hide_a_broken_consumer(
    tmp_path: Path, cli: Cli
) -> None:
    """HEAD's ``consumers.max_file_bytes: 1`` "may only lower the bound"
    (gate/engine.py:563-567, gate/config.py with_base_limits, gate/policy.py:136), but
    a lower bound un-analyses every consumer: the consumer_broken error (which a
    dataset acknowledgement does not clear) vanishes and the run passes, with no
    relaxation named."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", ORDERS)
    repo.write("jobs/report.sql", "select note from orders\n")
    repo.commit("contract and a reader")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", WITHOUT_NOTE)
    repo.write(".schema-gate.yml", "consumers:\n  max_file_bytes: 1\n")
    repo.commit("drop note, shrink the consumer bound")
    body = tmp_path / "body.md"
    body.write_text("accept-breaking-change: lake/shop/orders\n")
    proc = cli(repo.path, "--base", "main", "--pr-body-file", str(body), "--format", "json")
    report = json.loads(proc.stdout)
    assert "consumer_broken" in [c["rule"] for c in report["changes"]]
    assert proc.returncode == 1


DBT_ORDERS = """\
version: 2
models:
  - name: orders
    config:
      contract:
        enforced: true
    columns:
      - name: order_id
        data_type: int
"""
ODCS_ORDERS = """\
apiVersion: v3.1.0
kind: DataContract
id: orders
version: 1.0.0
status: active
schema:
  - name: orders
    physicalName: orders
    logicalType: object
    properties:
      - name: order_id
        logicalType: integer
        physicalType: int
"""


def test_review_dbt_and_odcs_layers_of_one_table_are_not_refused(tmp_path: Path, cli: Cli) -> None:
    """Two-layer contracts (a dbt model contract plus an ODCS contract of the same
    table, as datacontract-cli's dbt import writes): the PR that adds the ODCS layer
    exits 2 "dataset 'orders' is also declared in models/orders.yml"
    (gate/engine.py:170 _duplicates via _declared_elsewhere); so does every later PR
    that changes both files, while a PR changing one of them is compared. Seen on
    ekoepplin/dbt-bigquery-core 75600af8 (and a later edit of both layers)."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("models/orders.sql", "select 1 as order_id\n")
    repo.write("models/orders.yml", DBT_ORDERS)
    repo.commit("dbt contract")
    repo.branch("feature")
    repo.write("contracts/orders.odcs.yaml", ODCS_ORDERS)
    repo.commit("add the ODCS layer")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode != 2, proc.stderr


def test_review_unknown_column_key_of_an_unenforced_dbt_model_is_not_refused(
    tmp_path: Path, cli: Cli
) -> None:
    """``type:`` instead of ``data_type:`` in a model whose contract is explicitly
    ``enforced: false``: dbt builds it (an unknown key is at most a deprecation
    warning), the gate exits 2 "unknown key 'type' ... [dbt property-file schema]"
    (gate/formats/validate.py). Seen on ekoepplin/dbt-bigquery-core cdefba5a and
    6e9d9e08 (present on main too)."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("models/orders.sql", "select 1 as order_id\n")
    head = "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
    head += "        enforced: false\n    columns:\n      - name: order_id\n"
    repo.write("models/orders.yml", head + "        tests: [not_null]\n")
    repo.commit("dbt model, contract not enforced")
    repo.branch("feature")
    repo.write("models/orders.yml", head + "        type: integer\n        tests: [not_null]\n")
    repo.commit("a key dbt ignores")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode != 2, proc.stderr


DBT_TWO_COLUMNS = DBT_ORDERS + "      - name: note\n        data_type: string\n"


def test_review_moving_model_paths_away_removes_the_models(tmp_path: Path, cli: Cli) -> None:
    """``model-paths: ['src']`` in dbt_project.yml: dbt no longer builds models/orders.sql
    nor reads models/orders.yml, so the model is gone. main reports model_removed
    (and the reader's consumer_broken); since the 'readers' merge (38c3639) it
    PASSES: gate/engine.py:383 _still_declared finds models/orders.yml itself, read
    without a project through the default glob ``models/**/*.yml``, as a second copy
    still declaring 'orders', and gate/base_copies.py drops the removal."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("models/orders.sql", "select 1 as order_id, 'x' as note\n")
    repo.write("models/orders.yml", DBT_TWO_COLUMNS)
    repo.commit("dbt contract")
    repo.branch("feature")
    repo.write(
        "dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: ['src']\n"
    )
    repo.commit("models move to src (that holds none)")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    report = json.loads(proc.stdout)
    assert "model_removed" in [c["rule"] for c in report["changes"]]
    assert proc.returncode == 1


def test_review_deleting_dbt_project_yml_is_not_silent(tmp_path: Path, cli: Cli) -> None:
    """Same root cause as the model-paths test: with dbt_project.yml deleted, main
    fails (1 breaking change); the integration PASSES, "no contract changes"."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("models/orders.sql", "select 1 as order_id, 'x' as note\n")
    repo.write("models/orders.yml", DBT_TWO_COLUMNS)
    repo.commit("dbt contract")
    repo.branch("feature")
    repo.remove("dbt_project.yml")
    repo.commit("no more dbt project")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 1, proc.stdout


def test_review_acknowledgement_inside_rp_is_hidden() -> None:
    """``<rp>`` is on GitHub's sanitizer allowlist (html-pipeline: ruby, rt, rp) and
    browsers do not display its content (ruby fallback parentheses), so the PR
    description shows nothing, yet the line acknowledges: gate/rendered_lines.py:62
    (_UNSEEN) has no ``rp``."""
    assert acks.parse_pr_body("<rp>accept-breaking-change: orders</rp>\n") == []
    assert acks.parse_pr_body("<ruby><rp>accept-breaking-change: orders</rp></ruby>\n") == []
