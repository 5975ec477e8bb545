"""Stable identities of findings, for the formats that track them across commits.

Code scanning (SARIF ``partialFingerprints``) and GitLab Code Quality
(``fingerprint``) match a finding of this run with one of an earlier run by this
value, so it is built from what the finding is about (rule, dataset, column),
never from its line: a line moves when a contract above it is edited.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from gate.diff import Change


def fingerprint(change: Change, occurrence: int = 0) -> str:
    """32 hex digits of sha256 over the rule, the dataset, the column and ``occurrence``.

    ``occurrence`` tells apart findings of one rule on one element in a run (two
    checks of a column changed), counted in report order.
    """
    key = "\0".join([change.rule, change.dataset, change.column or "", str(occurrence)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def numbered(changes: Iterable[Change]) -> Iterator[tuple[Change, str]]:
    """Each change with its fingerprint, repeated keys numbered in order."""
    seen: dict[tuple[str, str, str], int] = {}
    for change in changes:
        key = (change.rule, change.dataset, change.column or "")
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        yield change, fingerprint(change, occurrence)
