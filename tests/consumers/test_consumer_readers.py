"""``consumer_broken`` only where the reader really breaks (issue #21, point 3).

Scenarios through the CLI in real git repositories:

- a dbt contract deleted while its model file (the table) stays: readers are
  listed, not broken;
- versioned models: an unpinned ``ref('m')`` reads the version dbt resolves
  (``latest_version``, else the greatest); only a pinned ``ref('m', v=2)`` reads v2;
- one finding per (change, consumer line), however many copies of a contract
  the base holds, and a notice for the duplicate;
- ``accept-consumer-break: <path>``: the narrow way to clear a misread consumer.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import gate_env
from tests.consumer_projects import DBT_PROJECT
from tests.gitrepo import GitRepo

Cli = Callable[..., subprocess.CompletedProcess[str]]

STG = "models/staging/stg_models.yml"
PROJECT = "name: shop\nversion: '1.0'\nprofile: shop\nmodel-paths: [models]\n"


def start(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


def report(cli: Cli, repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> dict:
    proc = cli(repo.path, "--base", "main", "--format", "json", *args, env=env)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    data["exit"] = proc.returncode
    return data


def broken(data: dict) -> list[tuple[str, int, str, str | None]]:
    return sorted(
        (c["path"], c["line"], c["dataset"], c["column"])
        for c in data["changes"]
        if c["rule"] == "consumer_broken"
    )


def readers(data: dict, rule: str, dataset: str, column: str | None = None) -> set[str]:
    [change] = [
        c
        for c in data["changes"]
        if (c["rule"], c["dataset"], c["column"]) == (rule, dataset, column)
    ]
    return {f"{c['path']}:{c['line']}" for c in change["consumers"]}


# -- versioned models: which version a ref reads ---------------------------------


def versioned(latest: str | None, v2_columns: str = "") -> str:
    """``orders`` with versions 1 and 2 (v2 may drop columns), all columns int."""
    latest_line = f"    latest_version: {latest}\n" if latest else ""
    return (
        "version: 2\n"
        "models:\n"
        "  - name: orders\n"
        "    config:\n"
        "      contract: {enforced: true}\n"
        f"{latest_line}"
        "    columns:\n"
        "      - name: id\n"
        "        data_type: int\n"
        "      - name: amount\n"
        "        data_type: int\n"
        "    versions:\n"
        "      - v: 1\n"
        f"      - v: 2\n{v2_columns}"
    )


DROP_AMOUNT = "        columns:\n          - include: all\n            exclude: [amount]\n"

VERSION_READERS = {
    "dbt_project.yml": PROJECT,
    "models/orders_v1.sql": "select 1 as id, 2 as amount\n",
    "models/orders_v2.sql": "select 1 as id, 2 as amount\n",
    "models/unpinned.sql": "select o.id, o.amount\nfrom {{ ref('orders') }} as o\n",
    "models/pinned_v1.sql": "select o.id, o.amount\nfrom {{ ref('orders', v=1) }} as o\n",
    "models/pinned_v2.sql": "select o.id, o.amount\nfrom {{ ref('orders', version=2) }} as o\n",
}


def test_a_prerelease_version_s_change_breaks_only_its_pinned_readers(
    tmp_path: Path, cli: Cli
) -> None:
    # latest_version: 1, so v2 is a prerelease: ref('orders') reads v1.
    repo = start(tmp_path, {**VERSION_READERS, "models/_models.yml": versioned("1")})
    repo.write("models/_models.yml", versioned("1", DROP_AMOUNT))
    repo.commit("drop amount from the prerelease v2")
    data = report(cli, repo)
    assert data["exit"] == 1
    assert readers(data, "column_removed", "orders.v2", "amount") == {"models/pinned_v2.sql:1"}
    assert broken(data) == [("models/pinned_v2.sql", 1, "orders.v2", "amount")]


def test_without_latest_version_ref_reads_the_greatest_version(tmp_path: Path, cli: Cli) -> None:
    # No latest_version: dbt resolves ref('orders') to v2, so v1's change reaches
    # only the reader that pins v=1.
    v1_drops = versioned(None).replace("      - v: 1\n", "      - v: 1\n" + DROP_AMOUNT)
    repo = start(tmp_path, {**VERSION_READERS, "models/_models.yml": versioned(None)})
    repo.write("models/_models.yml", v1_drops)
    repo.commit("drop amount from v1")
    data = report(cli, repo)
    assert readers(data, "column_removed", "orders.v1", "amount") == {"models/pinned_v1.sql:1"}
    assert broken(data) == [("models/pinned_v1.sql", 1, "orders.v1", "amount")]


def test_the_latest_version_s_change_breaks_its_unpinned_and_pinned_readers(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(tmp_path, {**VERSION_READERS, "models/_models.yml": versioned(None)})
    repo.write("models/_models.yml", versioned(None, DROP_AMOUNT))
    repo.commit("drop amount from v2, the latest")
    data = report(cli, repo)
    assert broken(data) == [
        ("models/pinned_v2.sql", 1, "orders.v2", "amount"),
        ("models/unpinned.sql", 1, "orders.v2", "amount"),
    ]


def test_unpinned_readers_follow_latest_version_as_head_sets_it(tmp_path: Path, cli: Cli) -> None:
    # The PR moves latest_version from 1 to 2 and removes v1: ref('orders')
    # reads v2 at HEAD, which it still finds, so only the v=1 pin is broken.
    base = versioned("1")
    head = base.replace("    latest_version: 1\n", "    latest_version: 2\n").replace(
        "      - v: 1\n", ""
    )
    repo = start(tmp_path, {**VERSION_READERS, "models/_models.yml": base})
    repo.write("models/_models.yml", head)
    repo.remove("models/orders_v1.sql")
    repo.commit("retire v1")
    data = report(cli, repo)
    assert readers(data, "model_removed", "orders.v1") == {"models/pinned_v1.sql:2"}
    assert broken(data) == [("models/pinned_v1.sql", 2, "orders.v1", None)]


# -- a contract deleted, its model kept -------------------------------------------

ONE_MODEL = {
    "dbt_project.yml": PROJECT,
    "models/stg_orders.sql": "select 1 as id, 2 as amount\n",
    "models/_models.yml": (
        "version: 2\n"
        "models:\n"
        "  - name: stg_orders\n"
        "    config:\n"
        "      contract: {enforced: true}\n"
        "    columns:\n"
        "      - name: id\n"
        "        data_type: int\n"
        "      - name: amount\n"
        "        data_type: int\n"
    ),
    "models/revenue.sql": "select s.id, s.amount\nfrom {{ ref('stg_orders') }} as s\n",
}


def test_a_deleted_contract_whose_model_stays_lists_its_readers(tmp_path: Path, cli: Cli) -> None:
    repo = start(tmp_path, ONE_MODEL)
    repo.remove("models/_models.yml")
    repo.commit("drop the contract, keep the model")
    data = report(cli, repo)
    assert data["exit"] == 1  # model_removed still needs acknowledging
    assert readers(data, "model_removed", "stg_orders") == {"models/revenue.sql:2"}
    assert broken(data) == []
    [removed] = [c for c in data["changes"] if c["rule"] == "model_removed"]
    assert "its model file still builds the table, so its readers still run" in removed["message"]
    assert report(cli, repo, "--accept", "stg_orders")["exit"] == 0


def test_a_model_file_disabled_with_its_contract_deleted_breaks_its_readers(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(tmp_path, ONE_MODEL)
    repo.remove("models/_models.yml")
    repo.write("models/stg_orders.sql", "{{ config(enabled=false) }}\nselect 1 as id\n")
    repo.commit("drop the contract and switch the model off")
    data = report(cli, repo)
    assert broken(data) == [("models/revenue.sql", 2, "stg_orders", None)]


def test_a_deleted_model_with_its_contract_breaks_its_readers(tmp_path: Path, cli: Cli) -> None:
    repo = start(tmp_path, ONE_MODEL)
    repo.remove("models/_models.yml")
    repo.remove("models/stg_orders.sql")
    repo.commit("drop the model")
    data = report(cli, repo)
    assert broken(data) == [("models/revenue.sql", 2, "stg_orders", None)]


# -- copies of one contract on the base side --------------------------------------

SODA_ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: id
    data_type: bigint
  - name: amount
    data_type: bigint
"""

COPIES = {
    "soda/contracts/orders.yaml": SODA_ORDERS,
    "soda/contracts/orders_copy.yaml": SODA_ORDERS,
    "queries/report.sql": "select o.amount\nfrom shop.orders as o\n",
}


def base_copy_notices(data: dict) -> list[str]:
    return [n for n in data["notices"] if "declared in 2 files at the base" in n]


def test_deleting_a_base_copy_while_another_stays_changes_nothing(tmp_path: Path, cli: Cli) -> None:
    repo = start(tmp_path, COPIES)
    repo.remove("soda/contracts/orders_copy.yaml")
    repo.commit("drop the duplicate")
    data = report(cli, repo)
    assert data["exit"] == 0, data["changes"]
    assert data["changes"] == []
    [notice] = base_copy_notices(data)
    assert "'lake/shop/orders'" in notice
    assert "soda/contracts/orders.yaml" in notice and "soda/contracts/orders_copy.yaml" in notice


def test_deleting_every_base_copy_is_one_removal_with_one_finding_per_reader(
    tmp_path: Path, cli: Cli
) -> None:
    repo = start(tmp_path, COPIES)
    repo.remove("soda/contracts/orders.yaml")
    repo.remove("soda/contracts/orders_copy.yaml")
    repo.commit("drop both")
    data = report(cli, repo)
    assert sorted(c["rule"] for c in data["changes"]) == ["consumer_broken", "model_removed"]
    assert broken(data) == [("queries/report.sql", 2, "lake/shop/orders", None)]
    assert len(base_copy_notices(data)) == 1


def test_a_column_dropped_from_the_copy_that_stays_is_one_finding(tmp_path: Path, cli: Cli) -> None:
    repo = start(tmp_path, COPIES)
    repo.remove("soda/contracts/orders_copy.yaml")
    repo.write(
        "soda/contracts/orders.yaml",
        SODA_ORDERS.replace("  - name: amount\n    data_type: bigint\n", ""),
    )
    repo.commit("drop the duplicate and amount")
    data = report(cli, repo)
    assert sorted(c["rule"] for c in data["changes"]) == ["column_removed", "consumer_broken"]
    assert broken(data) == [("queries/report.sql", 1, "lake/shop/orders", "amount")]
    assert len(base_copy_notices(data)) == 1


# -- accept-consumer-break: <path> ------------------------------------------------

ORDERS_SQL = "models/marts/orders.sql"


def dropped_discount_code(tmp_path: Path) -> GitRepo:
    """The jaffle-like project with discount_code dropped: orders.sql:7 is consumer_broken."""
    repo = start(tmp_path, DBT_PROJECT)
    text = DBT_PROJECT[STG]
    start_at = text.index("      - name: discount_code")
    repo.write(STG, text[:start_at] + text[start_at:].split("\n", 2)[2])
    repo.commit("drop discount_code")
    return repo


def test_a_pr_body_line_clears_the_named_consumer_file_only(tmp_path: Path, cli: Cli) -> None:
    repo = dropped_discount_code(tmp_path)
    body = tmp_path / "body.md"
    body.write_text(f"Refactor.\n\naccept-consumer-break: {ORDERS_SQL}\n")
    data = report(cli, repo, "--pr-body-file", str(body))
    [finding] = [c for c in data["changes"] if c["rule"] == "consumer_broken"]
    assert (finding["path"], finding["acknowledged"]) == (ORDERS_SQL, True)
    assert data["consumer_acknowledgements"] == [ORDERS_SQL]
    assert data["exit"] == 1  # column_removed itself still needs its own acknowledgement
    body.write_text(f"accept-consumer-break: {ORDERS_SQL}\naccept-breaking-change: stg_orders\n")
    data = report(cli, repo, "--pr-body-file", str(body))
    assert data["exit"] == 0
    assert data["summary"]["unacknowledged"] == 0
    # every report format shows the finding as acknowledged
    text = cli(repo.path, "--base", "main", "--pr-body-file", str(body)).stdout
    assert "consumer_broken stg_orders.discount_code: discount_code -> (gone)  [ACKED]" in text
    assert f"consumer_broken cleared by accept-consumer-break for: {ORDERS_SQL}" in text
    markdown = cli(repo.path, "--base", "main", "--format", "markdown", "--pr-body-file", str(body))
    assert "✅ ACKED" in markdown.stdout
    assert f"`consumer_broken` cleared by `accept-consumer-break` for: `{ORDERS_SQL}`" in (
        markdown.stdout
    )
    github = cli(repo.path, "--base", "main", "--format", "github", "--pr-body-file", str(body))
    assert f"file={ORDERS_SQL},line=7,title=consumer_broken (ACKED)" in github.stdout


def test_the_flag_and_the_environment_clear_it_too(tmp_path: Path, cli: Cli) -> None:
    repo = dropped_discount_code(tmp_path)
    flag = report(cli, repo, "--accept", "stg_orders", "--accept-consumer-break", ORDERS_SQL)
    assert flag["exit"] == 0
    env = gate_env(ACCEPT_CONSUMER_BREAK=ORDERS_SQL, ACCEPT_BREAKING_CHANGE="stg_orders")
    assert report(cli, repo, env=env)["exit"] == 0


def test_a_blocked_report_says_how_to_vouch_for_a_consumer(tmp_path: Path, cli: Cli) -> None:
    repo = dropped_discount_code(tmp_path)
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1
    assert "say so in the PR body: accept-consumer-break: <path>." in proc.stdout
    markdown = cli(repo.path, "--base", "main", "--format", "markdown").stdout
    assert f"```\naccept-consumer-break: {ORDERS_SQL}\n```" in markdown


def test_only_the_exact_path_counts(tmp_path: Path, cli: Cli) -> None:
    repo = dropped_discount_code(tmp_path)
    body = tmp_path / "body.md"
    body.write_text(
        "accept-breaking-change: stg_orders\n"
        "accept-consumer-break: models/marts\n"  # a folder is not the file
        "accept-consumer-break: models/marts/order.sql\n"  # a typo
        "<!-- accept-consumer-break: models/marts/orders.sql -->\n"  # a template comment
        "accept consumer break: models/marts/orders.sql\n"  # not the key
    )
    data = report(cli, repo, "--pr-body-file", str(body))
    assert data["exit"] == 1
    assert broken(data) == [(ORDERS_SQL, 7, "stg_orders", "discount_code")]
    assert data["consumer_acknowledgements"] == []
    assert data["unmatched_acknowledgements"] == []
    assert data["unmatched_consumer_acknowledgements"] == [
        {"token": "models/marts", "source": "pr-body:2"},
        {"token": "models/marts/order.sql", "source": "pr-body:3"},
    ]
    assert any("line 5 mentions accept-consumer-break" in n for n in data["notices"])
    text = cli(repo.path, "--base", "main", "--pr-body-file", str(body)).stdout
    assert (
        "'models/marts/order.sql' (from pr-body:3) names no consumer file with a "
        f"consumer_broken finding (did you mean '{ORDERS_SQL}'?)"
    ) in text
