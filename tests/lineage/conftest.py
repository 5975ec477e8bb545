"""The suite's shared cache directory ($SCHEMA_GATE_CACHE, tests/conftest.py) would
carry manifest readers' analyses from test to test (gate.lineage.analysis_cache):
the tests that count parses or pool starts would see cache hits. Off here, but in
tests/lineage/test_analysis_cache.py, which switches it on in its own directory."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_analysis_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", "off")
