"""The dbt format: properties files (``models/**/*.yml``) with model contracts.

``properties`` parses them (the walk over models and versions), with
``columns``, ``data_tests``, ``constraints``, ``settings`` (enforced, enabled,
deprecation, alias) and ``versions`` for each part of an entry; ``project``
reads ``dbt_project.yml``; ``flags`` evaluates ``enabled`` /
``contract.enforced``; ``model_config`` reads a model's own ``config()`` call.
The format registry uses this package as the format module.
"""

from __future__ import annotations

from gate.formats.dbt.properties import DBT_KEYS, FORMAT, detect, parse

__all__ = ["DBT_KEYS", "FORMAT", "detect", "parse"]
