"""Repositories of contracts and samples that smoke tests run the CLI on.

Each test module wraps them in its own fixture. Shared by the end-to-end tests (tests/e2e/: ``python -m gate`` as a real process,
a JVM each) and their in-process twins (tests/smoke/test_smoke_cli.py: ``main()``
on the shared session), so both run on the same repository.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.gitrepo import GitRepo

# -- a shop: one contract with a sample, one without (tests/e2e/test_cli_smoke.py) ----------

C = "soda/contracts"
ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
    checks:
      - missing:
  - name: qty
    data_type: int
"""
GOOD = "order_id,qty\n1,2\n2,3\n"
BAD = "order_id,qty\n1,2\n,12a\n"


def make_shop(tmp_path: Path) -> GitRepo:
    """The repository of the ``shop`` fixtures: on ``main``, a ``feature`` branch checked out."""
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.write(f"{C}/orders.sample.csv", GOOD)
    repo.write(f"{C}/items.yaml", "dataset: lake/shop/items\ncolumns:\n  - name: sku\n")
    repo.commit("base")
    repo.branch("feature")
    return repo


# -- hostile samples (issue #8; tests/e2e/test_smoke_security.py) -----------------------------

SECRET = "TOPSECRET-4242-beside-the-checkout"
#: Hadoop expands ``{x,/..}`` to ``x`` and ``/..``: twice, that climbs from
#: ``repo/contracts`` to the folder that holds the checkout.
GLOB_DIR = "contracts/{x,/..}/{x,/..}"
CONTRACT = "dataset: {name}\ncolumns:\n  - name: id\n    data_type: int\n"


def parquet(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [value]}), path)


def make_glob_attack(tmp_path: Path) -> GitRepo:
    """A checkout at tmp/repo whose committed folder names are Hadoop globs.

    Beside the checkout lie the files the globs reach: a Parquet file and a
    Parquet folder holding the secret. Inside, under the literal folder
    names, harmless samples with the same names.
    """
    parquet(tmp_path / "orders.sample.parquet", SECRET)
    parquet(tmp_path / "items.sample.parquet" / "part-00000.parquet", SECRET)
    repo = GitRepo(tmp_path / "repo")
    repo.write(f"{GLOB_DIR}/orders.yaml", CONTRACT.format(name="orders"))
    repo.write(f"{GLOB_DIR}/items.yaml", CONTRACT.format(name="items"))
    parquet(repo.path / GLOB_DIR / "orders.sample.parquet", "harmless-file")
    parquet(repo.path / GLOB_DIR / "items.sample.parquet" / "part-00000.parquet", "harmless-dir")
    repo.commit("samples under folders named like globs")
    return repo


REGEX_CONTRACT = """\
dataset: {name}
columns:
  - name: w
    checks:
      - invalid:
          valid_regex_sql: '{regex}'
"""
