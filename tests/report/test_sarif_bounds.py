"""The SARIF log stays inside GitHub code scanning's limits, and says what it left out.

The limits (docs.github.com, "SARIF support for code scanning", "SARIF results
exceed one or more limits", "SARIF file is too large"): 25,000 results a run
(only 5,000 kept), 10 MB gzip-compressed a file, 1,000 locations a result (100
kept), 20 tags a rule (10 kept), 25,000 rules a run.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
from dataclasses import replace
from pathlib import Path

import jsonschema

from gate import rules
from gate.lineage.external import ExternalRead
from gate.model import Change, Consumer, ContractWarning
from gate.report import Report, sarif

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = json.loads((ROOT / "tests/corpus/sarif/sarif-schema-2.1.0.json").read_text())


def finding(i: int, blocking: bool, **kw) -> Change:
    rule = rules.COLUMN_REMOVED if blocking else rules.COLUMN_ADDED
    return Change.of(
        rule, rule.severity, f"shop.t{i % 50}", f"c{i % 50}.yaml", 4, "x", column=f"c{i}", **kw
    )


def valid(text: str) -> dict:
    log = json.loads(text)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def cut_note(log: dict) -> list[str]:
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    return [
        n["message"]["text"] for n in notes if "left out of the SARIF log" in n["message"]["text"]
    ]


def test_over_25000_findings_keep_the_first_5000_blocking_first_and_say_how_many_are_left() -> None:
    # Additive ones first in the input: the report's order, not the input's, decides.
    changes = [finding(i, blocking=False) for i in range(20_001)]
    changes += [finding(i, blocking=True) for i in range(20_001, 25_001)]
    report = Report(changes=tuple(changes))
    out = sarif.bounded(report)
    log = valid(out.text)
    results = log["runs"][0]["results"]
    assert len(results) == sarif.MAX_RESULTS == 5_000
    assert all(r["level"] == "error" for r in results)  # every blocking one kept
    assert log["runs"][0]["properties"]["leftOut"] == {
        "results": 20_001,
        "blockingResults": 0,
        "notifications": 0,
        "findings": 25_001,
    }
    assert out.cut and out.cut.startswith("20,001 of 25,001 finding(s) left out")
    assert cut_note(log) == [sarif.text(out.cut)]
    assert sarif.packed(out.text) <= sarif.MAX_BYTES
    # The kept results' fingerprints are those of the uncut log (numbered over all).
    whole = sarif.to_dict_run(report)["results"][:5_000]
    assert [r["partialFingerprints"] for r in results] == [r["partialFingerprints"] for r in whole]


def incompressible(rng: random.Random, n: int) -> str:
    """``n`` random URL-safe base64 characters: gzip keeps about three quarters."""
    return base64.urlsafe_b64encode(rng.randbytes(n * 3 // 4)).decode()[:n]


def test_a_log_over_10_mb_gzip_compressed_is_cut_to_fit_blocking_first() -> None:
    """Readers with random 1,900-character paths: a few hundred findings are 20 MB
    that gzip cannot shrink under 10 MB. The log keeps a prefix that fits."""
    rng = random.Random(7)
    changes = []
    for i in range(120):
        readers = tuple(
            Consumer(incompressible(rng, 1_900) + ".sql", 1, "m", "selected") for _ in range(100)
        )
        changes.append(replace(finding(i, blocking=i % 2 == 0), consumers=readers))
    report = Report(changes=tuple(changes))
    unbounded = sarif._log(sarif.to_dict_run(report))
    assert sarif.packed(unbounded) > sarif.MAX_BYTES  # the case is over the limit
    out = sarif.bounded(report)
    assert len(gzip.compress(out.text.encode("utf-8"))) <= sarif.MAX_BYTES
    log = valid(out.text)
    results = log["runs"][0]["results"]
    left = log["runs"][0]["properties"]["leftOut"]
    assert 0 < len(results) < 120 and left["results"] == 120 - len(results)
    assert len(results) >= 60 and all(r["level"] == "error" for r in results[:60])
    assert left["blockingResults"] == 0
    assert out.cut and cut_note(log)


def test_just_under_the_size_bound_the_log_is_unchanged_and_just_over_it_is_cut() -> None:
    readers = tuple(Consumer(f"m{i}.sql", 1, f"m{i}", "selected") for i in range(5))
    report = Report(changes=tuple(replace(finding(i, True), consumers=readers) for i in range(40)))
    whole = sarif._log(sarif.to_dict_run(report))
    size = sarif.packed(whole)
    assert sarif.bounded(report, max_bytes=size) == sarif.Rendered(whole)
    assert sarif.render(report) == whole
    over = sarif.bounded(report, max_bytes=size - 1)
    assert over.cut and sarif.packed(over.text) <= size - 1
    assert len(json.loads(over.text)["runs"][0]["results"]) < 40


def test_exactly_5000_findings_are_all_kept_with_no_note() -> None:
    report = Report(changes=tuple(finding(i, blocking=i % 3 == 0) for i in range(5_000)))
    out = sarif.bounded(report)
    assert out.cut is None
    log = json.loads(out.text)
    assert len(log["runs"][0]["results"]) == 5_000
    assert "leftOut" not in log["runs"][0]["properties"] and cut_note(log) == []


def test_notifications_past_the_bound_are_counted_not_dropped() -> None:
    warnings = tuple(ContractWarning(f"c{i}.yaml", f"odd key {i}", 3) for i in range(1_500))
    report = Report(changes=(finding(0, True),), warnings=warnings)
    out = sarif.bounded(report)
    log = valid(out.text)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == sarif.MAX_NOTIFICATIONS + 1  # the kept ones and the note
    assert log["runs"][0]["properties"]["leftOut"]["notifications"] == 500
    assert len(log["runs"][0]["results"]) == 1
    assert out.cut and "500 of 1,500 notification(s)" in out.cut


def test_a_finding_with_a_thousand_external_readers_lists_a_hundred_and_counts_the_rest() -> None:
    reads = tuple(ExternalRead("dbt-mesh:other", f"other.m{i}", "shop.t0") for i in range(1_000))
    many = replace(finding(0, True), external=reads)
    result = valid(sarif.render(Report(changes=(many,))))["runs"][0]["results"][0]
    listed = result["properties"]["externalConsumers"]
    assert len(listed) == sarif.MAX_RELATED + 1
    assert listed[-1].startswith("... and 900 more")


def test_the_catalogue_fits_code_scanning_s_rule_and_tag_limits() -> None:
    driver = sarif._driver()
    assert len(driver["rules"]) <= 25_000
    assert all(len(r["properties"]["tags"]) <= 10 for r in driver["rules"])


def test_results_stop_at_the_raw_bound_and_are_counted() -> None:
    """The memory bound (``MAX_RAW_BYTES``, here 50 KB of compact JSON) stops building
    results early; the ones not built are counted like any other left out."""
    report = Report(changes=tuple(finding(i, blocking=True) for i in range(400)))
    out = sarif.bounded(report, max_raw_bytes=50_000)
    log = valid(out.text)
    kept = len(log["runs"][0]["results"])
    assert 0 < kept < 400
    assert sum(len(json.dumps(r)) for r in log["runs"][0]["results"]) <= 50_000
    assert log["runs"][0]["properties"]["leftOut"]["blockingResults"] == 400 - kept
