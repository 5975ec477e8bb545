"""The lineage: section: validated like the rest of the config (exit 2, file:line, a near miss)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.config import config_from_files
from gate.lineage.settings import LineageConfig
from tests.conftest import run_main
from tests.lineage.mesh_repo import make


def test_the_section_as_the_shared_plan_writes_it() -> None:
    config = config_from_files(
        b"lineage:\n"
        b"  dbt_manifests: [ci/finance/manifest.json, https://ci.example/m.json]\n"
        b"  openlineage_events: [lineage/events.jsonl]\n"
        b"  openlineage_api: https://marquez.example/api/v1\n"
        b"  datasets: {stg_orders: [postgres://db:5432/shop.public.orders]}\n"
        b"  usage_aware_severity: true\n"
        b"  timeout_seconds: 5\n",
        None,
    )
    assert config.lineage == LineageConfig(
        dbt_manifests=("ci/finance/manifest.json", "https://ci.example/m.json"),
        openlineage_events=("lineage/events.jsonl",),
        openlineage_api="https://marquez.example/api/v1",
        datasets={"stg_orders": ("postgres://db:5432/shop.public.orders",)},
        usage_aware_severity=True,
        timeout_seconds=5,
    )
    assert config_from_files(b"fail_on: error\n", None).lineage == LineageConfig()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "lineage:\n  dbt_manifest: [m.json]\n",
            ".schema-gate.yml:2: unknown lineage key 'dbt_manifest' (did you mean "
            "'dbt_manifests'?); known keys: dbt_manifests, openlineage_events, "
            "openlineage_api, datasets, usage_aware_severity, timeout_seconds\n",
        ),
        ("lineage: [a]\n", ".schema-gate.yml:1: 'lineage' must be a mapping, found a list\n"),
        (
            "lineage:\n  dbt_manifests: 3\n",
            ".schema-gate.yml:2: 'lineage.dbt_manifests' must be a list of strings, found a number\n",
        ),
        (
            "lineage:\n  usage_aware_severity: yes please\n",
            ".schema-gate.yml:2: 'lineage.usage_aware_severity' must be true or false, "
            "found a string\n",
        ),
        (
            "lineage:\n  timeout_seconds: 0\n",
            ".schema-gate.yml:2: 'lineage.timeout_seconds' must be a whole number of seconds "
            "from 1 to 120, found a number\n",
        ),
        (
            "lineage:\n  datasets:\n    stg_orders: {a: b}\n",
            ".schema-gate.yml:3: 'lineage.datasets.stg_orders' must be a list of strings, "
            "found a mapping\n",
        ),
        (
            "lineage:\n  openlineage_api: [x]\n",
            ".schema-gate.yml:2: 'lineage.openlineage_api' must be a URL, found a list\n",
        ),
    ],
)
def test_a_bad_lineage_section_exits_2(tmp_path: Path, text: str, expected: str) -> None:
    repo = make(tmp_path / "r", None)
    repo.write(".schema-gate.yml", text)
    repo.commit("config")
    proc = run_main(repo.path, "--base", "main", "--head", "feature")
    assert proc.returncode == 2
    assert proc.stderr == f"schema-gate: error: {expected}"


def test_pyproject_spelling() -> None:
    pyproject = (
        b'[tool.schema-gate.lineage]\ndbt-manifests = ["m.json"]\nusage-aware-severity = true\n'
    )
    config = config_from_files(None, pyproject)
    assert config.lineage.dbt_manifests == ("m.json",)
    assert config.lineage.usage_aware_severity
