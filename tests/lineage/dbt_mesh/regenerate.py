"""Regenerate the dbt Mesh manifests of this folder with dbt itself.

Usage (in a scratch virtualenv, never the project's):

    python -m venv /tmp/dbtvenv
    /tmp/dbtvenv/bin/pip install dbt-core==1.10.23 dbt-duckdb==1.10.1 dbt-loom==0.9.6
    /tmp/dbtvenv/bin/python tests/lineage/dbt_mesh/regenerate.py

It copies ``projects/`` to a temporary folder, runs ``dbt compile`` in
``jaffle_platform`` and then in ``jaffle_finance`` (whose cross-project
``ref('jaffle_platform', 'stg_orders')`` dbt-loom resolves from the platform's
manifest, as dbt Cloud does for dbt Mesh), and ``dbt parse`` in
``jaffle_finance`` for a manifest without compiled SQL. Each manifest is
written here without its ``macros`` and ``docs`` maps (dbt-duckdb's ~480
macros are 95% of the bytes; the gate reads neither), everything else as dbt
wrote it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DBT = Path(sys.executable).with_name("dbt")


def _dbt(command: str, project: Path, work: Path) -> dict:
    env = dict(
        os.environ, MESH_DUCKDB=str(work / "mesh.duckdb"), DBT_SEND_ANONYMOUS_USAGE_STATS="false"
    )
    subprocess.run(
        [str(DBT), command, "--profiles-dir", str(work)], cwd=project, env=env, check=True
    )
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    for key in ("macros", "docs"):
        manifest[key] = {}
    return manifest


def _write(name: str, manifest: dict) -> None:
    (HERE / name).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        shutil.copytree(HERE / "projects", work, dirs_exist_ok=True)
        _write("jaffle_platform.manifest.json", _dbt("compile", work / "jaffle_platform", work))
        _write("jaffle_finance.manifest.json", _dbt("compile", work / "jaffle_finance", work))
        shutil.rmtree(work / "jaffle_finance" / "target")
        _write("jaffle_finance.parsed.manifest.json", _dbt("parse", work / "jaffle_finance", work))


if __name__ == "__main__":
    main()
