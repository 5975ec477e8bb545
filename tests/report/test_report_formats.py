"""The sarif, junit and gitlab renderers on Report values: escaping, links, identities."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET  # reads only the gate's own output, in tests
from dataclasses import replace
from pathlib import Path

import jsonschema

from gate import rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib
from gate.model import Change, Consumer
from gate.report import RENDERERS, Report, gitlab, junit, sarif
from gate.report.fingerprints import numbered

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = json.loads((ROOT / "tests/corpus/sarif/sarif-schema-2.1.0.json").read_text())


def anchors(markdown: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation but ``-``/``_`` dropped, spaces to ``-``."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, flags=re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return out


def test_every_rule_links_to_an_anchor_that_exists_in_docs_rules_md() -> None:
    present = anchors((ROOT / "docs/rules.md").read_text())
    missing = [
        (r.id, sarif.help_uri(r))
        for r in rules.all_rules()
        if sarif.help_uri(r).rsplit("#", 1)[1] not in present
    ]
    assert missing == []


def test_the_repository_link_is_the_project_s() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["urls"]["Repository"] == sarif.REPOSITORY


def change(rule: rules.Rule = rules.COLUMN_REMOVED, column: str | None = "a", **kw) -> Change:
    return Change.of(rule, rule.severity, "shop.orders", "c.yaml", 4, "gone", column=column, **kw)


def test_no_change_is_a_valid_log_with_an_empty_result_list_and_a_passing_junit() -> None:
    report = Report(changes=(), base_ref="main", base_sha="0" * 40)
    log = json.loads(RENDERERS["sarif"](report))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []  # the run happened and found nothing
    root = ET.fromstring(RENDERERS["junit"](report))
    assert root.get("tests") == "1" and root.get("failures") == "0"
    assert json.loads(RENDERERS["gitlab"](report)) == []


def test_sarif_text_escapes_links_placeholders_backslashes_and_controls() -> None:
    assert sarif.text("a[b](1) {0} \\ \n") == "a\\[b\\](1) {{0}} \\\\ \\\\n"
    assert sarif.uri("a b/c#d%e:f?.yaml") == "a%20b/c%23d%25e%3Af%3F.yaml"


def test_fingerprints_number_repeats_and_ignore_lines() -> None:
    one, two = change(rules.CHECK_CHANGED), change(rules.CHECK_CHANGED)
    prints = [fp for _, fp in numbered([one, two])]
    assert len(set(prints)) == 2
    moved = Change.of(
        rules.CHECK_CHANGED, rules.Severity.WARNING, "shop.orders", "c.yaml", 99, "x", column="a"
    )
    assert [fp for _, fp in numbered([moved])] == prints[:1]


def test_junit_escape_is_well_formed_xml_for_anything() -> None:
    nasty = "\ud800 \ufffe <&> \"' \x00 \x7f \u2028"
    doc = f'<a b="{junit.escape(nasty)}">{junit.escape(nasty)}</a>'
    root = ET.fromstring(doc)
    assert root.get("b") == root.text == "\\ud800 \\ufffe <&> \"' \\x00 \\x7f \\u2028"


def test_consumers_are_related_locations_with_ids() -> None:
    readers = (Consumer("m.sql", 3, "m", "selected"), Consumer("n.sql", None, "n", "star"))
    report = Report(changes=(replace(change(), consumers=readers),))
    log = json.loads(sarif.render(report))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    related = log["runs"][0]["results"][0]["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert related[1]["physicalLocation"]["region"] == {"startLine": 1}


def test_a_widely_read_column_lists_the_first_hundred_readers_and_counts_all() -> None:
    readers = tuple(Consumer(f"m{i}.sql", 1, f"m{i}", "selected") for i in range(250))
    log = json.loads(sarif.render(Report(changes=(replace(change(), consumers=readers),))))
    result = log["runs"][0]["results"][0]
    assert len(result["relatedLocations"]) == sarif.MAX_RELATED == 100
    assert result["properties"]["consumers"] == 250


def test_gitlab_severity_follows_the_verdict() -> None:
    warn = change(rules.TYPE_REMOVED)
    report = Report(changes=(change(), warn), fail_on=rules.Severity.ERROR)
    assert [gitlab.severity(c, report) for c in report.changes] == ["blocker", "minor"]
    strict = Report(changes=(change(), warn), fail_on=rules.Severity.WARNING)
    assert [gitlab.severity(c, strict) for c in strict.changes] == ["blocker", "blocker"]
