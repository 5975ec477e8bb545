"""The ``lineage:`` section of the config: where consumers outside the repository are read.

    lineage:
      dbt_manifests: [other/target/manifest.json, https://ci.example/finance/manifest.json]
      openlineage_events: [lineage/events.jsonl]
      openlineage_api: https://marquez.example/api/v1
      datasets: {lake/shop/orders: [postgres://db:5432/shop.public.orders]}
      usage_aware_severity: false
      timeout_seconds: 10

Read from the base side only (``gate.lineage.sources``): a pull request could
otherwise add a URL for the gate to fetch, or remove a source so that a
removal nobody else is known to read is graded a warning. A pull request's own
change to the section is named in a notice and applies once merged.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gate.formats.common import describe
from gate.model import ContractError
from gate.yaml_load import YMap

_KEYS = (
    "dbt_manifests",
    "openlineage_events",
    "openlineage_api",
    "datasets",
    "usage_aware_severity",
    "timeout_seconds",
)

#: Seconds all external sources of a run share, unless the config says otherwise.
DEFAULT_TIMEOUT = 10
#: No run waits longer than this on other systems, whatever the config says.
MAX_TIMEOUT = 120


@dataclass(frozen=True)
class LineageConfig:
    """Where external consumers are read, and what a lack of readers may do."""

    dbt_manifests: tuple[str, ...] = ()
    openlineage_events: tuple[str, ...] = ()
    openlineage_api: str | None = None
    #: Contract dataset id -> the names external sources use for it.
    datasets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    usage_aware_severity: bool = False
    timeout_seconds: int = DEFAULT_TIMEOUT

    @property
    def sources(self) -> tuple[str, ...]:
        """Every configured source, as reports name them."""
        api = (self.openlineage_api,) if self.openlineage_api else ()
        return (*self.dbt_manifests, *self.openlineage_events, *api)

    @property
    def active(self) -> bool:
        return bool(self.sources) or self.usage_aware_severity


def _closest(word: str) -> str:
    close = difflib.get_close_matches(word.replace("-", "_").lower(), _KEYS, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _strings(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ContractError(
            path, f"'{what}' must be a list of strings, found {describe(value)}", line
        )
    return tuple(v.strip() for v in value)


def parse_lineage(value: Any, path: str, line: int | None) -> LineageConfig:
    """Validate ``lineage:``; every mistake is a one-line error naming the key and its line."""
    if value is None:
        return LineageConfig()
    if not isinstance(value, dict):
        raise ContractError(path, f"'lineage' must be a mapping, found {describe(value)}", line)
    key_line: Callable[[Any], int | None] = (
        value.key_line if isinstance(value, YMap) else (lambda _key: line)
    )
    unknown = sorted(str(k) for k in value if str(k).replace("-", "_") not in _KEYS)
    if unknown:
        raise ContractError(
            path,
            f"unknown lineage key '{unknown[0]}'{_closest(unknown[0])}; "
            f"known keys: {', '.join(_KEYS)}",
            key_line(unknown[0]),
        )
    raw = {str(k).replace("-", "_"): (k, v) for k, v in value.items()}

    def get(name: str) -> tuple[Any, int | None]:
        key, got = raw.get(name, (name, None))
        return got, key_line(key)

    manifests, where = get("dbt_manifests")
    dbt = () if manifests is None else _strings(manifests, path, "lineage.dbt_manifests", where)
    events, where = get("openlineage_events")
    ol = () if events is None else _strings(events, path, "lineage.openlineage_events", where)
    api, where = get("openlineage_api")
    if api is not None and (not isinstance(api, str) or not api.strip()):
        raise ContractError(
            path, f"'lineage.openlineage_api' must be a URL, found {describe(api)}", where
        )
    mapping, where = get("datasets")
    datasets: dict[str, tuple[str, ...]] = {}
    if mapping is not None:
        if not isinstance(mapping, dict):
            raise ContractError(
                path,
                "'lineage.datasets' must map contract dataset ids to external names, "
                f"found {describe(mapping)}",
                where,
            )
        for dataset, names in mapping.items():
            at = mapping.key_line(dataset) if isinstance(mapping, YMap) else where
            datasets[str(dataset)] = _strings(names, path, f"lineage.datasets.{dataset}", at)
    usage, where = get("usage_aware_severity")
    if usage is None:
        usage = False
    if not isinstance(usage, bool):
        raise ContractError(
            path,
            f"'lineage.usage_aware_severity' must be true or false, found {describe(usage)}",
            where,
        )
    timeout, where = get("timeout_seconds")
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT:
        raise ContractError(
            path,
            f"'lineage.timeout_seconds' must be a whole number of seconds from 1 to "
            f"{MAX_TIMEOUT}, found {describe(timeout)}",
            where,
        )
    return LineageConfig(
        dbt_manifests=dbt,
        openlineage_events=ol,
        openlineage_api=api.strip() if isinstance(api, str) else None,
        datasets=datasets,
        usage_aware_severity=usage,
        timeout_seconds=timeout,
    )


def changed_notice(base: LineageConfig, head: LineageConfig, file: str | None) -> list[str]:
    """A notice when the pull request edits ``lineage:``: the base's applies until merged."""
    if base == head:
        return []
    return [
        f"this PR changes lineage: in {file or 'the config'}; the base branch's lineage "
        "settings apply until it is merged"
    ]
