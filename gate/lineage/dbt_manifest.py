"""A dbt ``manifest.json`` decoded into the few fields ``gate.lineage.dbt_mesh`` reads.

Why msgspec: a real dbt node is ~4 KB of JSON of which the gate reads ten short
fields; ``json.loads`` builds every dict and string of the rest (columns, config,
docs, raw code: ~95% of the bytes). msgspec's typed decoder validates that rest
as JSON and skips it: on 5,000 nodes of a real manifest's shape (19.7 MB) it
took 0.030 s against 0.36-0.46 s (docs/impact.md, Cost).

Why every field is ``Any`` (or a struct in a union with every other JSON
value): a manifest of another dbt version, or one with a wrong-typed field,
must decode exactly as ``json.loads`` would have returned it, and meet the
same checks in ``dbt_mesh.read_manifest`` (a warning naming the source, never
a traceback). JSON msgspec refuses but the standard library reads (``NaN``, a
byte order mark, UTF-16, a lone surrogate) goes through ``json.loads`` and is
converted, so the two readers agree on every input
(tests/lineage/test_manifest_decode.py).

Imported when a manifest is read, not before (``--help`` does not load msgspec).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

#: Every JSON value but an object.
_Other = None | bool | int | float | str | list[Any]


class Metadata(msgspec.Struct):
    """``metadata``: the project whose nodes are the readers, and its adapter."""

    project_name: Any = None
    adapter_type: Any = None


class Node(msgspec.Struct):
    """A node (model, snapshot, analysis, test, exposure...): what makes it a reader."""

    unique_id: Any = None
    name: Any = None
    resource_type: Any = None
    package_name: Any = None
    original_file_path: Any = None
    depends_on: Any = None  # {"nodes": [...], "macros": [...]}: small, kept whole
    relation_name: Any = None
    alias: Any = None
    version: Any = None
    compiled_code: Any = None


#: ``nodes``/``exposures``: an object of nodes (a value not an object is kept, and skipped).
_Group = dict[str, Node | _Other] | _Other


class Manifest(msgspec.Struct):
    """The top level; ``None`` for a key the manifest does not have."""

    metadata: Metadata | _Other = None
    nodes: _Group = None
    exposures: _Group = None


_Top = Manifest | _Other


class DecodeError(Exception):
    """Not JSON, or nested too deeply: the message says why, in one line."""


def decode(data: bytes) -> Manifest | Any:
    """``data`` as a ``Manifest``, or the other JSON value it holds at its top.

    msgspec first; JSON it refuses is read by ``json.loads`` (and converted),
    whose error, when it refuses it too, is the one quoted (as before msgspec)."""
    try:
        return msgspec.json.decode(data, type=_Top)
    except (msgspec.DecodeError, RecursionError):
        pass  # the standard library reads more (NaN, a BOM, UTF-16) and says why not
    try:
        loaded = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"not JSON: {str(exc)[:120]}") from None
    except RecursionError:
        raise DecodeError("JSON nested too deeply") from None
    try:
        return msgspec.convert(loaded, type=_Top)
    except RecursionError:
        raise DecodeError("JSON nested too deeply") from None
    except msgspec.ValidationError as exc:  # not expected: every field takes any value
        raise DecodeError(f"not a dbt manifest.json ({str(exc)[:120]})") from None
