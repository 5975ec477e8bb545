"""The dbt format: properties files (``models/**/*.yml``) with model contracts.

``properties`` parses them (the walk over models and versions), with
``columns``, ``data_tests``, ``constraints``, ``settings`` (enforced, enabled,
deprecation, alias) and ``versions`` for each part of an entry; ``project``
reads ``dbt_project.yml``; ``flags`` evaluates ``enabled`` /
``contract.enforced``; ``model_config`` reads a model's own ``config()`` call.
The format registry uses this package as the format module.

The parser is imported on first use (``parse``), not with the package: every
run reads ``dbt_project.yml`` files through ``project``, but only a run that
compares a properties file needs the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gate.formats.detect import DBT_KEYS
from gate.formats.detect import dbt as detect

if TYPE_CHECKING:
    from gate.formats.dbt.properties import parse

__all__ = ["DBT_KEYS", "FORMAT", "detect", "parse"]

FORMAT = "dbt"


def __getattr__(name: str) -> Any:
    if name == "parse":
        from gate.formats.dbt.properties import parse

        return parse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
