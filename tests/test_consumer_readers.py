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

from tests.gitrepo import GitRepo

Cli = Callable[..., subprocess.CompletedProcess[str]]

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
