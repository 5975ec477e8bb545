"""``model_access_narrowed`` names the readers a dbt Mesh manifest shows: the other
projects whose ``ref('jaffle_platform', 'stg_orders')`` stops compiling."""

from __future__ import annotations

from pathlib import Path

from tests.lineage.mesh_repo import FINANCE, MODELS, PROPERTIES, make
from tests.lineage.test_cli_lineage import MANIFEST, WITH_PATH, run


def test_narrowing_a_public_model_lists_the_mesh_readers(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", WITH_PATH, {MANIFEST: FINANCE})
    repo.write(PROPERTIES, MODELS.replace("access: public", "access: protected", 1))
    repo.commit("stg_orders is protected now")
    code, report = run(repo)
    assert code == 1
    (change,) = [c for c in report["changes"] if c["rule"] == "model_access_narrowed"]
    assert (change["dataset"], change["before"], change["after"]) == (
        "stg_orders",
        "public",
        "protected",
    )
    assert "ref('jaffle_platform', 'stg_orders')" in change["message"]
    readers = {r["consumer"] for r in change["external_consumers"]}
    assert "jaffle_finance.fct_revenue" in readers, readers
    # stg_payments stays public: nothing about it.
    assert not [c for c in report["changes"] if c["dataset"] == "stg_payments"]
