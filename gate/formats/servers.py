"""DCS and ODCS ``servers:``: where a contract's tables live, read leniently.

Both formats name a table's container on its server with the same keys (the
DCS 1.x and ODCS v3 server schemas): ``catalog`` (Databricks, Trino, Athena),
``project`` and ``dataset`` (BigQuery), ``database`` and ``schema`` (Postgres,
Snowflake, Redshift, SQL Server, DuckDB, Glue...), and, for files, the
``location`` (S3, GCS, Azure, SFTP: a URL or prefix) that readers open. A
``local`` server's ``path`` is not read: it is a developer's copy of the data
(an example moved in the repository), not where readers find the table. The
table itself is the dataset's id (a DCS model key, an ODCS ``physicalName``).
DCS keys its servers by name; ODCS lists them, each named by ``server``.

Servers are read leniently: the published schemas still judge them (a break is
a warning, gate/formats/compared.py), and an entry that is not a mapping is left
out rather than refusing the contract. A location value that is not a plain name
(a list, a mapping, a boolean) is kept as its text, so that a name rewritten as
one is still compared. Only a move of a server present on both sides is ever
reported (``gate.diff.datasets``).
"""

from __future__ import annotations

import json
from typing import Any

from gate.model import Server
from gate.yaml_load import YMap

#: The keys that name where a table lives, outermost first.
LOCATION_KEYS = ("catalog", "project", "database", "schema", "dataset", "location")


def _name(value: Any) -> str | None:
    """A plain name (numbers as their text), trimmed; anything else is no name."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    return text or None


def _text(value: Any) -> str:
    """A value that is no plain name (a list, a mapping, a boolean) as stable text,
    braces written as parentheses so that it reads as no placeholder."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return text.replace("{", "(").replace("}", ")")


def _location(value: Any) -> str | None:
    """A location part: a plain name, else, when present, its text. Leaving out a
    value that is no name hid a move: ``database: prod`` -> ``[analytics]`` was
    never compared (a part written on one side only is no move)."""
    if value is None:
        return None
    return (
        _name(value)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool)
        else _text(value)
    )


def _server(name: str, entry: Any, line: int | None) -> Server | None:
    if not isinstance(entry, dict):
        return None
    location = tuple(
        (key, value) for key in LOCATION_KEYS if (value := _location(entry.get(key))) is not None
    )
    return Server(name=name, type=_name(entry.get("type")), location=location, line=line)


def _line(mapping: Any, key: Any, default: int | None) -> int | None:
    key_line = getattr(mapping, "key_line", None)
    return key_line(key) if key_line is not None else default


def dcs(root: YMap) -> tuple[Server, ...]:
    """DCS ``servers``: a map of server name -> server."""
    servers = root.get("servers")
    if not isinstance(servers, dict):
        return ()
    out = []
    for key, entry in servers.items():
        name = _name(key)
        server = _server(name, entry, _line(servers, key, None)) if name else None
        if server is not None:
            out.append(server)
    return tuple(out)


def odcs(root: YMap) -> tuple[Server, ...]:
    """ODCS ``servers``: a list of servers, each named by ``server``."""
    servers = root.get("servers")
    if not isinstance(servers, list):
        return ()
    out = []
    for entry in servers:
        name = _name(entry.get("server")) if isinstance(entry, dict) else None
        server = _server(name, entry, getattr(entry, "line", None)) if name else None
        if server is not None:
            out.append(server)
    return tuple(out)
