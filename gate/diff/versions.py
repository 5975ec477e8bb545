"""The version family (``version_*``): the contract's semantic version against the
findings already emitted for the same dataset pair."""

from __future__ import annotations

from gate import rules
from gate.diff.emitter import DatasetPair
from gate.rules import Severity
from gate.versioning import compare_versions, is_major_bump


def versions(pair: DatasetPair, start: int) -> None:
    """Semantic-version rules over the findings emitted since ``start`` for this pair."""
    old, new = pair.old, pair.new
    if old.version is None or new.version is None:
        return
    order = compare_versions(old.version, new.version)
    if order is None:
        return
    if order > 0:
        pair.emit(
            rules.VERSION_DECREASED,
            f"contract version went down from {old.version} to {new.version}",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )
        return
    breaking = any(c.severity is Severity.ERROR for c in pair.out.changes[start:])
    if breaking and not is_major_bump(old.version, new.version):
        pair.emit(
            rules.VERSION_NOT_BUMPED,
            f"breaking change without a major version bump ({old.version} -> {new.version})",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )
    elif order < 0:
        pair.emit(
            rules.VERSION_BUMPED,
            f"contract version {old.version} -> {new.version}",
            before=old.version,
            after=new.version,
            line=new.version_line,
        )
