"""The suite's OpenLineage events, structured into the official client's generated classes.

The client reads no event back (tests/lineage/client_structure.py says how
this structures them instead). Each event must fit the classes generated from
the spec's schemas, and serialise back (``Serde.to_dict``) to what it was:
the corpus's client example event, the Spark-shaped export of
tests/lineage/data/, the events built with the client, and those
test_openlineage.py writes by hand; a facet without the spec's ``_producer``
and ``_schemaURL`` does not fit (the gate reads it all the same).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import DatasetEvent, RunEvent
from openlineage.client.generated.column_lineage_dataset import ColumnLineageDatasetFacet
from openlineage.client.generated.nominal_time_run import NominalTimeRunFacet
from openlineage.client.generated.symlinks_dataset import SymlinksDatasetFacet
from openlineage.client.serde import Serde

from tests.lineage.client_events import json_lines, spark_events
from tests.lineage.client_structure import Unstructured, structure
from tests.lineage.test_openlineage import CORPUS, DATA, event, lineage_output


def _comparable(value: Any, dropped: set[str], where: str = "$") -> Any:
    """JSON without what serialising cannot give back: schema URLs (the class's own
    version), nulls and empty containers (defaults), properties the client cannot hold."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            path = f"{where}.{key}"
            if key in ("schemaURL", "_schemaURL") or path in dropped:
                continue
            item = _comparable(item, dropped, path)
            if item not in (None, {}, []):
                out[key] = item
        return out
    if isinstance(value, list):
        return [_comparable(v, dropped, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _round_trip(data: dict[str, Any]) -> Any:
    cls = RunEvent if "run" in data else DatasetEvent
    dropped: list[str] = []
    made = structure(cls, data, "$", dropped)
    assert _comparable(Serde.to_dict(made), set()) == _comparable(data, set(dropped))
    return made


def test_the_clients_example_event_fits_its_classes() -> None:
    data = json.loads((CORPUS / "example_full_event.json").read_text())
    made = _round_trip(data)
    # its schema URLs are placeholders: the facets are found by their standard keys
    assert isinstance(made.run.facets["nominalTime"], NominalTimeRunFacet)


def test_the_spark_shaped_export_fits_the_clients_classes() -> None:
    lines = (DATA / "spark-orders.jsonl").read_text().splitlines()
    made = [_round_trip(json.loads(line)) for line in lines]
    assert [type(m).__name__ for m in made] == ["RunEvent"] * 5 + ["DatasetEvent"]
    first = made[0]
    assert isinstance(first.outputs[0].facets["columnLineage"], ColumnLineageDatasetFacet)
    assert isinstance(first.inputs[0].facets["symlinks"], SymlinksDatasetFacet)


def test_events_built_with_the_client_structure_back() -> None:
    for line in json_lines(spark_events()).decode().splitlines():
        _round_trip(json.loads(line))


def test_the_events_the_suite_writes_by_hand_fit_except_bare_facets() -> None:
    _round_trip(json.loads(event("j", [("pg", "orders")], eventType="START")))
    # test_openlineage.py's columnLineage facet has no _producer/_schemaURL, which the
    # spec requires of every facet; the gate does not (producers leave them out).
    bare = json.loads(
        event("j", [("file", "/in")], [lineage_output({"c": [("file", "/in", "c")]})])
    )
    with pytest.raises(Unstructured, match=r"outputs\[0\]\.facets\.columnLineage: a facet needs"):
        structure(RunEvent, bare)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda e: e.pop("job"), r"\$: RunEvent needs 'job'"),
        (lambda e: e.update(eventTime="2026-11-20"), r"Parsed date-time has to contain time"),
        (lambda e: e.update(eventType="DONE"), r"'DONE' is no EventType"),
        (lambda e: e["inputs"][0].update(name=7), r"inputs\[0\]\.name: a str, not int"),
        (lambda e: e["run"].update(extra=1), r"\$\.run: Run has no \['extra'\]"),
    ],
)
def test_what_does_not_fit_is_refused_naming_where(change: Any, why: str) -> None:
    data = json.loads(event("j", [("pg", "orders")]))
    change(data)
    with pytest.raises(Unstructured, match=why):
        structure(RunEvent, data)


def test_the_corpus_and_data_folders_hold_no_other_event_files() -> None:
    """A new fixture must be added to the checks above."""
    assert sorted(p.name for p in CORPUS.glob("*.json")) == ["example_full_event.json"]
    assert sorted(p.name for p in Path(DATA).glob("*.json*")) == ["spark-orders.jsonl"]
