"""An OpenLineage export's lines decoded by msgspec read as ``json.loads`` read them.

``gate.lineage.openlineage`` decodes each JSON Lines line with msgspec and falls
back to ``json.loads`` for what msgspec refuses; these tests hold each line's value,
and each refused line's error and message (what the warning quotes), to
``json.loads``. Measured beside them, not committed: the same reads and warnings
before and after on 620 public OpenLineage files (the spec's and the integrations'
test events, Marquez's) and 2,000 exports mixing their events with truncated and
malformed lines (docs/impact.md).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.lineage.openlineage import _line_decoder, read_events_with_warnings

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def _outcome(loads, line: str) -> object:
    try:
        return ("value", loads(line))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return ("too deep",)


@settings(max_examples=300, deadline=None)
@given(_json, st.integers(min_value=0, max_value=60))
def test_a_line_reads_as_json_loads_reads_it_whole_or_cut(value: object, cut: int) -> None:
    line = json.dumps(value)
    loads = _line_decoder()
    assert _outcome(loads, line) == _outcome(json.loads, line)
    assert _outcome(loads, line[:cut]) == _outcome(json.loads, line[:cut])


@pytest.mark.parametrize(
    "line",
    [
        '{"job": NaN}',  # Python's json.dumps writes these; msgspec refuses them
        '{"x": -Infinity}',
        '{"name": "\\ud800"}',  # a lone surrogate
        "{",
        '{"a": 1} trailing',
        "[" * 100_000,
        "12345678901234567890123456789012345678901234567890",
    ],
)
def test_lines_msgspec_refuses_read_as_json_loads_reads_them(line: str) -> None:
    got, want = _outcome(_line_decoder(), line), _outcome(json.loads, line)
    if got[0] == "value" and isinstance(got[1], dict) and "job" in got[1]:
        assert math.isnan(got[1]["job"]) and math.isnan(want[1]["job"])
    else:
        assert got == want


def test_a_bad_line_is_still_a_warning_naming_it() -> None:
    event = {"job": {"namespace": "spark", "name": "daily"}, "inputs": [], "outputs": []}
    text = "\n".join([json.dumps(event), '{"job": ', json.dumps(event)])
    result = read_events_with_warnings(text, "events.jsonl")
    assert result.warnings == ("events.jsonl:2: not a JSON object (Expecting value); line skipped",)
