"""A stable fingerprint per change: what an approval approved.

An approval given on one commit carries over later commits only while the
breaking changes it saw are the same ones. "The same" must not depend on
line numbers, messages or the order of the report, so the fingerprint is the
sha256 of a canonical JSON of the five fields that say what breaks: rule,
dataset, column, before, after (docs/json-report.md).
"""

from __future__ import annotations

import json

# CPython's built-in SHA-256, the one hashlib falls back to: the same digest
# without loading OpenSSL (~4 ms of a run's start, issue #26).
try:
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # a build without them
        from hashlib import sha256  # type: ignore[assignment,no-redef,unused-ignore]

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
    digest = sha256(canonical(change).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
