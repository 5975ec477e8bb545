"""A stable fingerprint per change: what an approval approved.

An approval given on one commit carries over later commits only while the
breaking changes it saw are the same ones. "The same" must not depend on
line numbers, messages or the order of the report, so the fingerprint is the
sha256 of a canonical JSON of the five fields that say what breaks: rule,
dataset, column, before, after (docs/json-report.md).
"""

from __future__ import annotations

import hashlib
import json

from gate.model import Change

#: The fields a fingerprint covers, in this order (documented; never reorder).
FIELDS = ("rule", "dataset", "column", "before", "after")


def canonical(change: Change) -> str:
    """The canonical JSON the fingerprint hashes: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        {name: getattr(change, name) for name in FIELDS},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def fingerprint(change: Change) -> str:
    """``sha256:<64 hex>`` of ``canonical(change)``: equal exactly when the five fields are."""
    digest = hashlib.sha256(canonical(change).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
