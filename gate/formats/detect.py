"""Which format a document is: the cheap tests, apart from the parsers.

Detection looks at the document, never at the file name. The tests live here,
not in each parser's module, so that a run imports only the parsers its files
need: a Soda-only pull request never imports the dbt, ODCS or DCS parser. Each
format module re-exports its test as ``detect``.
"""

from __future__ import annotations

from typing import Any

#: Top-level keys of a dbt properties file; any of them marks the file as dbt.
DBT_KEYS = frozenset(
    {
        "models",
        "sources",
        "seeds",
        "snapshots",
        "macros",
        "exposures",
        "metrics",
        "semantic_models",
        "saved_queries",
        "analyses",
        "unit_tests",
        "groups",
        "data_tests",
        "functions",
    }
)


def dcs(doc: Any) -> bool:
    """A DCS file is a mapping with a top-level ``dataContractSpecification`` key."""
    return isinstance(doc, dict) and "dataContractSpecification" in doc


def odcs(doc: Any) -> bool:
    """An ODCS contract is a mapping with ``kind: DataContract`` and an ``apiVersion``."""
    return isinstance(doc, dict) and doc.get("kind") == "DataContract" and "apiVersion" in doc


def dbt(doc: Any) -> bool:
    """A dbt properties file: any dbt top-level key, or a bare ``version: 2``."""
    if not isinstance(doc, dict) or "dataset" in doc:
        return False
    if any(key in doc for key in DBT_KEYS):
        return True
    return doc.get("version") == 2 and set(doc) == {"version"}


def soda(doc: Any) -> bool:
    """A Soda contract is a mapping with a top-level ``dataset`` key."""
    return isinstance(doc, dict) and "dataset" in doc


#: Checked in order; the first that accepts the document wins. Soda comes last
#: because its marker (``dataset``) is the most generic.
DETECTORS = (("dcs", dcs), ("odcs", odcs), ("dbt", dbt), ("soda", soda))
