"""Semantic versions of contracts, as DCS (`info.version`) and ODCS (`version`) carry them.

A breaking change needs a major bump; below 1.0.0 the minor acts as the major,
as semver's "anything may change" initial-development rule is applied in
practice by Cargo and most package managers. Versions that are not semantic
(``2024-06``, ``draft``) are not compared at all: the gate does not guess.
"""

from __future__ import annotations

import re

_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``1.2`` -> (1, 2, 0); pre-release and build suffixes are ignored."""
    match = _SEMVER.match(text.strip())
    if match is None:
        return None
    major, minor, patch = (int(part) if part else 0 for part in match.groups())
    return major, minor, patch


def compare_versions(old: str, new: str) -> int | None:
    """-1 when ``new`` is higher, 0 when equal, 1 when lower, None if either is not semver."""
    a, b = parse_version(old), parse_version(new)
    if a is None or b is None:
        return None
    return (a > b) - (a < b)


def is_major_bump(old: str, new: str) -> bool:
    """True when ``new`` may carry breaking changes relative to ``old``."""
    a, b = parse_version(old), parse_version(new)
    if a is None or b is None:
        return False
    if a[0] == 0 and b[0] == 0:
        return b[1] > a[1]
    return b[0] > a[0]
