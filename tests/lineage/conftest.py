"""The manifest readers' analysis cache (gate.lineage.analysis_cache) off, whatever
the caller's environment says: the tests that count parses or pool starts would
see cache hits. tests/lineage/test_analysis_cache.py switches it on in its own
directory."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_analysis_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA_GATE_LINEAGE_CACHE", "off")
