"""The manifest decoded by msgspec (``gate.lineage.dbt_manifest``) says what ``json.loads`` said.

The reader asks ten fields of each node; these tests hold the typed decode to the
standard library's parse of the same bytes, field by field, on the manifests dbt
wrote (tests/lineage/dbt_mesh/) and on any JSON value in any of those fields
(hypothesis), and hold malformed manifests to a ``ManifestError`` (the source's
warning), never a traceback. Measured beside them, not committed: the same
``read_manifest`` results before and after on 39 public manifests (schema v2 to
v12: dbt-labs' jaffle shops, OpenLineage's dbt integration tests, datacontract-cli's
fixtures) and on 2,859 of them with fields given wrong types (docs/impact.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.lineage.dbt_manifest import Manifest, Metadata, Node, decode
from gate.lineage.dbt_mesh import ManifestError, read_manifest

MESH = Path(__file__).parent / "dbt_mesh"
FIELDS = tuple(Node.__struct_fields__)
ANY = lambda _name: True  # noqa: E731


def _loaded_view(loaded: Any) -> Any:
    """What the reader asks of a ``json.loads`` result, as ``dict.get`` answers it."""
    if not isinstance(loaded, dict):
        return ("top", loaded)
    metadata = loaded.get("metadata")
    groups = {}
    for key in ("nodes", "exposures"):
        group = loaded.get(key)
        if isinstance(group, dict):
            group = {
                k: {f: n.get(f) for f in FIELDS} if isinstance(n, dict) else ("other", n)
                for k, n in group.items()
            }
        groups[key] = group
    if isinstance(metadata, dict):
        metadata = {f: metadata.get(f) for f in Metadata.__struct_fields__}
    return ("manifest", metadata, groups)


def _decoded_view(decoded: Any) -> Any:
    """The same of ``decode``'s structs."""
    if not isinstance(decoded, Manifest):
        return ("top", decoded)
    metadata = decoded.metadata
    groups = {}
    for key in ("nodes", "exposures"):
        group = getattr(decoded, key)
        if isinstance(group, dict):
            group = {
                k: {f: getattr(n, f) for f in FIELDS} if isinstance(n, Node) else ("other", n)
                for k, n in group.items()
            }
        groups[key] = group
    if isinstance(metadata, Metadata):
        metadata = {f: getattr(metadata, f) for f in Metadata.__struct_fields__}
    return ("manifest", metadata, groups)


def _same(data: bytes) -> None:
    assert _decoded_view(decode(data)) == _loaded_view(json.loads(data))


@pytest.mark.parametrize("path", sorted(MESH.glob("*.json")), ids=lambda p: p.name)
def test_the_manifests_dbt_wrote_decode_as_the_standard_library_reads_them(path: Path) -> None:
    data = path.read_bytes()
    _same(data)
    decoded = decode(data)
    assert isinstance(decoded, Manifest) and decoded.nodes  # not vacuous
    assert any(isinstance(n, Node) and n.compiled_code for n in decoded.nodes.values()) or (
        "parsed" in path.name
    )


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_node = st.dictionaries(st.sampled_from((*FIELDS, "columns", "config")), _json, max_size=6)
_group = st.dictionaries(st.text(max_size=5), _node | _json, max_size=3) | _json


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "metadata": st.fixed_dictionaries(
                {}, optional={"project_name": _json, "adapter_type": _json}
            )
            | _json,
            "nodes": _group,
            "exposures": _group,
            "child_map": _json,
        },
    )
    | _json
)
def test_any_json_in_the_fields_read_decodes_as_the_standard_library_reads_it(
    manifest: Any,
) -> None:
    _same(json.dumps(manifest).encode())


def _manifest(**node: Any) -> bytes:
    base = {
        "unique_id": "model.finance.orders",
        "name": "orders",
        "resource_type": "model",
        "package_name": "finance",
        "depends_on": {"nodes": ["model.platform.stg_orders"]},
        "compiled_code": "select amount from stg_orders",
    }
    data = {"metadata": {"project_name": "finance"}, "nodes": {"n": {**base, **node}}}
    return json.dumps(data).encode()


def _reads(data: bytes) -> list[tuple[str, frozenset[str] | None]]:
    return [(r.consumer, r.columns) for r in read_manifest(data, "m.json", "duckdb", ANY)]


@pytest.mark.parametrize(
    ("node", "reads"),
    [
        ({}, [("finance.orders", frozenset({"amount"}))]),
        ({"compiled_code": None}, [("finance.orders", None)]),  # dbt parse: every column
        ({"compiled_code": 7}, [("finance.orders", None)]),
        ({"name": 12}, [("finance.12", frozenset({"amount"}))]),
        (
            {"name": None, "version": 2},
            [("finance.model.finance.orders.v2", frozenset({"amount"}))],
        ),
        ({"original_file_path": ["x"]}, [("finance.orders", frozenset({"amount"}))]),
        ({"resource_type": {"a": 1}}, []),  # not a reader type
        (
            {"depends_on": {"nodes": [1, None, "model.platform.stg_orders"]}},
            [("finance.orders", frozenset({"amount"}))],
        ),
        (
            {"columns": {"x": {"name": "x" * 1_000_000}}},
            [("finance.orders", frozenset({"amount"}))],
        ),
    ],
)
def test_fields_of_unexpected_types_read_as_before(node: dict[str, Any], reads: list) -> None:
    assert _reads(_manifest(**node)) == reads


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (_manifest()[:-40], "not JSON: "),  # truncated
        (b"", "not JSON: Expecting value"),
        (b"\xff\xfe\x00", "not JSON"),
        (b"[1, 2]", "no 'nodes' mapping"),
        (b'"manifest"', "no 'nodes' mapping"),
        (b"null", "no 'nodes' mapping"),
        (b'{"nodes": []}', "no 'nodes' mapping"),
        (b'{"nodes": {}, "metadata": 3}', "'metadata' is not a mapping"),
        (b'{"nodes": {}, "exposures": "x"}', "'exposures' is not a mapping"),
        (_manifest(unique_id=3), "'unique_id' is not a string"),
        (_manifest(depends_on="model.platform.stg_orders"), "'depends_on' of .* not a mapping"),
        (_manifest(depends_on={"nodes": "x"}), "'depends_on.nodes' of .* not a list"),
        # was an AttributeError traceback (a truthy package_name not a string)
        (
            json.dumps(
                {"nodes": {"n": json.loads(_manifest(package_name=7))["nodes"]["n"]}}
            ).encode(),
            "'package_name' of model.finance.orders is not a string",
        ),
        # deeper than either parser goes, in a field the reader skips
        (b'{"nodes": {}, "docs": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (
            b'{"nodes": {"n": {"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}}",
            "nested too deeply",
        ),
    ],
)
def test_a_malformed_manifest_is_a_manifest_error(data: bytes, why: str) -> None:
    with pytest.raises(ManifestError, match=why):
        read_manifest(data, "m.json", "duckdb", ANY)


@pytest.mark.parametrize(
    "data",
    [
        b'{"nodes": {}, "docs": {"x": NaN, "y": -Infinity}}',  # Python's json.dumps writes these
        b"\xef\xbb\xbf" + _manifest(),  # a byte order mark
        _manifest().decode().encode("utf-16"),
        _manifest(description="\ud800 lone surrogate"),
    ],
    ids=["nan", "bom", "utf-16", "surrogate"],
)
def test_json_msgspec_refuses_but_the_standard_library_reads_is_still_read(data: bytes) -> None:
    _same(data)
    read_manifest(data, "m.json", "duckdb", ANY)  # no ManifestError, as before


def test_msgspec_is_imported_when_a_manifest_is_read_not_before() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import gate.cli, gate.lineage.sources, gate.lineage.dbt_mesh as m; "
        "print('msgspec' in sys.modules); "
        "m.read_manifest(b'{\"nodes\": {}}', 'm.json', 'duckdb', lambda _: True); "
        "print('msgspec' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]
