"""The fingerprint is hashlib's SHA-256 of the canonical JSON, whichever module computes it."""

from __future__ import annotations

import hashlib

import pytest

from gate import rules
from gate.approvals.fingerprint import canonical, fingerprint
from gate.model import Change
from gate.rules import Severity


@pytest.mark.parametrize(
    ("column", "before", "after"),
    [("id", "BIGINT", "INT"), ("prénom", "STRING", None), (None, None, None)],
)
def test_the_fingerprint_is_the_sha256_of_the_canonical_json(
    column: str | None, before: str | None, after: str | None
) -> None:
    # gate.approvals.fingerprint uses CPython's built-in SHA-256 so that a run
    # need not load OpenSSL (#26): the digest must be hashlib's, byte for byte.
    change = Change.of(
        rules.TYPE_NARROWED,
        Severity.ERROR,
        "shop/orders",
        "c.yaml",
        3,
        "narrowed",
        column=column,
        before=before,
        after=after,
    )
    expected = hashlib.sha256(canonical(change).encode("utf-8")).hexdigest()
    assert fingerprint(change) == f"sha256:{expected}"
