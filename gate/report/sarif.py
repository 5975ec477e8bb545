"""SARIF 2.1.0 for code scanning (``github/codeql-action/upload-sarif``): docs/report-formats.md.

One run: the catalogue as the driver's rules (so code scanning can tell "ran and
found nothing" from "rule unknown" and close fixed alerts), one result per
finding on its contract line, its in-repo readers as related locations, and an
acknowledged finding as a suppressed result (shown as dismissed, never hidden).

Escaping happens here, once for the medium: the JSON encoder quotes strings;
every message text goes through :func:`text` (controls spelled out, SARIF's
placeholder braces doubled, embedded-link brackets escaped, so a name from the
pull request cannot forge a link); every path through :func:`uri` (percent-encoded,
so it stays a relative reference and cannot become ``https:`` or ``file:``).

The log stays inside what GitHub code scanning accepts (:func:`bounded`): at
most ``MAX_RESULTS`` results, ``MAX_BYTES`` bytes and ``MAX_NOTIFICATIONS``
notifications. Past a bound the first findings in report order are kept
(blocking first), and the log says what was left out: ``properties.leftOut``
of the run and a warning notification; the command says it on stderr too.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import quote

from gate import __version__, rules
from gate.acks import CONSUMER_KEY, KEY
from gate.diff import Change
from gate.escapes import shown
from gate.model import ContractError
from gate.report.base import EXIT_ERROR, Report, visible
from gate.report.fingerprints import numbered
from gate.rules import Rule, Severity

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: The project's home (pyproject.toml ``[project.urls] Repository``; a test keeps them equal).
REPOSITORY = "https://github.com/your-org/schema-contract-gate"
TOOL = "schema-contract-gate"
#: Where relative paths start: the repository root (upload-sarif resolves it to the checkout).
SRCROOT = "SRCROOT"
#: The partialFingerprints key: versioned, so a change of recipe is a new key, not a silent drift.
FINGERPRINT = "schemaContractGate/v1"
#: Readers listed per result: code scanning keeps at most 100 locations of a result;
#: past that, ``properties.consumers`` counts them all (the JSON report lists every one).
MAX_RELATED = 100

# GitHub code scanning's limits ("SARIF support for code scanning"; "SARIF results
# exceed one or more limits"; "SARIF file is too large", docs.github.com):
# a run of more than 25,000 results is rejected and only the top 5,000 are kept,
# "prioritized by severity"; a file over 10 MB gzip-compressed is rejected
# ("413: Payload Too Large"); 1,000 locations a result (100 kept) and 20 tags a
# rule (10 kept); 25,000 rules a run (the catalogue is far under).

#: Results kept: what code scanning keeps of a run. The gate, not GitHub, picks
#: which ones: the first in report order, so every blocking finding before the rest.
MAX_RESULTS = 5_000
#: The file's size gzip-compressed (what code scanning limits), in decimal megabytes
#: (the smaller reading of "10 MB"), measured at zlib's level 6, upload-sarif's.
MAX_BYTES = 10_000_000
#: The results' size uncompressed, written compactly: no GitHub limit, a bound on
#: this process's memory and time (each result is bounded, but 5,000 of them with
#: PR-chosen names are not small).
MAX_RAW_BYTES = 100_000_000
#: Notifications kept (each is at most a few KB): the results keep most of the room.
MAX_NOTIFICATIONS = 1_000
#: The leftOut note's room, before the log is measured without it.
_NOTE_ROOM = 4_096

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_ESCAPES = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]", "{": "{{", "}": "}}"})


def text(value: str) -> str:
    """A plain-text SARIF message from ``value`` (which may quote the pull request).

    SARIF 2.1.0 §3.11.5: ``{`` and ``}`` are written ``{{`` and ``}}`` (a bare
    ``{0}`` is a placeholder a viewer replaces). §3.11.6: ``[text](target)`` is
    an embedded link; with every bracket (and backslash) escaped no link can form.
    """
    return shown(value).translate(_ESCAPES)


def uri(path: str) -> str:
    """A repository path as a relative URI reference (spaces, ``%``, ``#``, ``:`` encoded)."""
    return quote(path, safe="/")


def help_uri(rule: Rule) -> str:
    """The rule's entry in docs/rules.md (additive rules share one table, one anchor)."""
    anchor = "additive-info" if rule.severity is Severity.INFO else rule.id
    return f"{REPOSITORY}/blob/main/docs/rules.md#{anchor}"


def level(severity: Severity) -> str:
    return _LEVEL.get(severity, "none")


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.id,
        "shortDescription": {"text": rule.purpose},
        "helpUri": help_uri(rule),
        "help": {"text": f"{rule.purpose} See {help_uri(rule)}"},
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": {
            "tags": ["data-contract", rule.level],
            "breaks": rule.breaks,
            **({"deprecated": True} if rule.deprecated else {}),
        },
    }


def _driver() -> dict[str, Any]:
    return {
        "name": TOOL,
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": REPOSITORY,
        "rules": [_rule(r) for r in rules.all_rules()],
    }


def _location(path: str, line: int | None, message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(path), "uriBaseId": SRCROOT}}
    # Code scanning wants a region; a finding without a line points at the file's first.
    physical["region"] = {"startLine": line if line and line > 0 else 1}
    out: dict[str, Any] = {"physicalLocation": physical}
    if message is not None:
        out["message"] = {"text": text(message)}
    return out


def _justification(change: Change) -> str:
    if change.spec.acknowledgeable:
        return f"acknowledged in the pull request: {KEY}: {change.dataset}"
    return f"vouched for in the pull request: {CONSUMER_KEY}: {change.path}"


def _first(items: list[str], total: int) -> list[str]:
    """``items`` (the first ``MAX_RELATED``), and a last one counting the rest if any."""
    if total > len(items):
        items.append(f"... and {total - len(items):,} more (the JSON report lists every one)")
    return items


def _result(change: Change, index: int, fingerprint: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": change.rule,
        "ruleIndex": index,
        "level": level(change.severity),
        "message": {"text": text(f"{change.target}: {change.message}")},
        "locations": [_location(change.path, change.line)],
        "partialFingerprints": {FINGERPRINT: fingerprint},
        "properties": {
            "dataset": shown(change.dataset),
            "column": shown(change.column) if change.column is not None else None,
            "direction": change.direction,
            "acknowledged": change.acknowledged,
        },
    }
    if change.consumers:
        result["relatedLocations"] = [
            {
                "id": i,
                **_location(c.path, c.line, f"{c.object} reads {change.target} ({c.usage})"),
            }
            for i, c in enumerate(change.consumers[:MAX_RELATED], start=1)
        ]
        result["properties"]["consumers"] = len(change.consumers)
    if change.downstream:
        # Not related locations: those are the readers (the "Who reads this" list).
        result["properties"]["downstream"] = _first(
            [shown(f"{p.arrow()}: {p.ending()}") for p in change.downstream[:MAX_RELATED]],
            len(change.downstream),
        )
    if change.external:
        # Not locations: their code is in another repository, so they are named.
        result["properties"]["externalConsumers"] = _first(
            [shown(f"{r.consumer} ({r.source})") for r in change.external[:MAX_RELATED]],
            len(change.external),
        )
    if change.acknowledged:
        result["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": text(_justification(change)),
            }
        ]
    return result


def _notification(
    message: str, lvl: str, path: str | None = None, line: int | None = None
) -> dict[str, Any]:
    note: dict[str, Any] = {"level": lvl, "message": {"text": text(message)}}
    if path:
        note["locations"] = [_location(path, line)]
    return note


def _notifications(report: Report) -> list[dict[str, Any]]:
    """What is no finding but must not go unsaid: unmatched tokens, warnings, unread files."""
    notes: list[dict[str, Any]] = []
    for token in report.unmatched_acknowledgements:
        what = (
            "consumer file with a consumer_broken finding"
            if token.key == CONSUMER_KEY
            else "changed dataset"
        )
        notes.append(
            _notification(f"{token.key}: {token.value} ({token.source}) names no {what}", "warning")
        )
    for token, candidates in report.ambiguous_acknowledgements:
        notes.append(
            _notification(
                f"{token.key}: {token.value} ({token.source}) matches {', '.join(candidates)} "
                "and acknowledges none; write the full id",
                "warning",
            )
        )
    notes += [
        _notification(f"contract warning: {w.detail}", "warning", w.path, w.line)
        for w in report.warnings
    ]
    notes += [
        _notification(f"consumer not analysed: {n.reason}", "note", n.path, n.line)
        for n in report.not_analysed
    ]
    if report.smoke is not None and report.smoke.failed:
        notes.append(_notification("the smoke test failed (see the text or JSON report)", "error"))
    notes += [_notification(n, "note") for n in report.notices]
    return notes


def _log(run: dict[str, Any]) -> str:
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


@dataclass(frozen=True)
class _Verdict:
    """What the run says of the whole report, computed once (each is a pass over it)."""

    exit_code: int
    passed: bool
    message: str

    @classmethod
    def of(cls, report: Report) -> _Verdict:
        return cls(report.exit_code, report.passed, visible(report.verdict()))


def _run(
    report: Report,
    results: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    verdict: _Verdict | None = None,
) -> dict[str, Any]:
    said = verdict or _Verdict.of(report)
    return {
        "tool": {"driver": _driver()},
        "invocations": [
            {
                "executionSuccessful": True,
                "exitCode": said.exit_code,
                "toolExecutionNotifications": notes,
                "properties": {"verdict": "pass" if said.passed else "fail"},
            }
        ],
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The repository root."}}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {
            "base": {"ref": visible(report.base_ref), "sha": report.base_sha},
            "head": {"ref": visible(report.head_label), "sha": report.head_sha or None},
            "message": said.message,
        },
    }


def to_dict_run(report: Report) -> dict[str, Any]:
    """The whole run, unbounded (every finding and notification): see :func:`bounded`."""
    index = {rule.id: i for i, rule in enumerate(rules.all_rules())}
    results = [_result(c, index[c.rule], fp) for c, fp in numbered(report.changes)]
    return _run(report, results, _notifications(report))


@dataclass(frozen=True)
class Rendered:
    """The log, and what was left out of it (``None``: nothing), for stderr."""

    text: str
    cut: str | None = None


def _in_log(result: dict[str, Any]) -> int:
    """Bytes ``result`` takes in the log: its lines indented 8 deeper, a newline and a comma."""
    alone = json.dumps(result, indent=2)
    return len(alone) + 8 * (alone.count("\n") + 1) + 2


def packed(text: str) -> int:
    """``text``'s size gzip-compressed: deflate at level 6 and gzip's 18 bytes of frame."""
    return len(zlib.compress(text.encode("utf-8"), 6)) + 18


def bounded(
    report: Report,
    max_results: int = MAX_RESULTS,
    max_bytes: int = MAX_BYTES,
    max_notifications: int = MAX_NOTIFICATIONS,
    max_raw_bytes: int = MAX_RAW_BYTES,
) -> Rendered:
    """The log within code scanning's limits: a prefix of the findings, and a note if cut.

    Findings are in report order (blocking, then acknowledged, then the rest by
    severity), so a cut keeps the blocking ones. Fingerprints are numbered over
    every finding, so a kept result's is the same as in an uncut log. Results
    are built only while they fit (``max_results``; ``max_raw_bytes`` written
    compactly, a bound on memory): 100,000 findings cost what 5,000 do. Then the
    log is measured gzip-compressed and, if over ``max_bytes``, cut further to
    the prefix that fits.
    """
    changes = report.changes
    verdict = _Verdict.of(report)
    index = {rule.id: i for i, rule in enumerate(rules.all_rules())}
    notes = _notifications(report)
    kept_notes = notes[:max_notifications]
    results: list[dict[str, Any]] = []
    raw = 0
    for change, fp in islice(numbered(changes), max_results):
        result = _result(change, index[change.rule], fp)
        raw += len(json.dumps(result))  # the C encoder: indent=2 would take the slow one
        if raw > max_raw_bytes:
            break
        results.append(result)
    if len(results) == len(changes) and len(kept_notes) == len(notes):
        text = _log(_run(report, results, kept_notes, verdict))
        if packed(text) <= max_bytes:  # the common case: one render, nothing left out
            return Rendered(text)
    keep = len(results)
    sizes: list[int] | None = None
    while True:
        text, cut = _cut(report, verdict, results[:keep], changes, kept_notes, len(notes))
        size = packed(text)
        if size <= max_bytes or keep == 0:
            return Rendered(text, cut)
        # Keep the prefix whose share of the raw bytes is the share that fits, less 5%.
        if sizes is None:
            sizes = [_in_log(r) for r in results]
        skeleton = len(_log(_run(report, [], kept_notes, verdict))) + _NOTE_ROOM
        target = (max_bytes / size) * len(text) * 0.95 - skeleton
        fits, used = 0, 0
        while fits < keep and used + sizes[fits] <= target:
            used += sizes[fits]
            fits += 1
        keep = min(fits, keep - 1)


def _cut(
    report: Report,
    verdict: _Verdict,
    results: list[dict[str, Any]],
    changes: Sequence[Change],
    notes: list[dict[str, Any]],
    total_notes: int,
) -> tuple[str, str]:
    """The log with ``results`` and ``notes`` only, saying what is left out, and why."""
    left = changes[len(results) :]
    blocking = sum(1 for c in left if report.blocks(c))
    notes_left = total_notes - len(notes)
    cut = (
        f"{len(left):,} of {len(changes):,} finding(s) left out of the SARIF log "
        f"({blocking:,} of them blocking)"
    )
    if notes_left:
        cut += f" and {notes_left:,} of {total_notes:,} notification(s)"
    cut += (
        f": GitHub code scanning keeps at most {MAX_RESULTS:,} results a run and refuses "
        f"files over 10 MB gzip-compressed; this log keeps the first {len(results):,} "
        "finding(s), blocking ones first. The text and JSON reports list every finding; "
        "code scanning may show one left out as fixed."
    )
    run = _run(report, results, [*notes, _notification(cut, "warning")], verdict)
    run["properties"]["leftOut"] = {
        "results": len(left),
        "blockingResults": blocking,
        "notifications": notes_left,
        "findings": len(changes),
    }
    return _log(run), cut


def render(report: Report) -> str:
    return bounded(report).text


def refused(errors: Sequence[ContractError], message: str, cap: int) -> str:
    """A refused run (exit 2): still a valid log, its refusals as error notifications.

    No ``results`` at all (SARIF §3.14.23: absent is null, "the tool did not
    begin its analysis"), not an empty list, which would tell code scanning
    that every open alert is fixed; ``executionSuccessful: false`` says so too.
    """
    notes = [_notification(e.detail, "error", e.path, e.line) for e in errors[:cap]]
    notes.append(_notification(message, "error"))
    run = {
        "tool": {"driver": _driver()},
        "invocations": [
            {
                "executionSuccessful": False,
                "exitCode": EXIT_ERROR,
                "toolExecutionNotifications": notes,
                "properties": {"verdict": "error", "errors_total": len(errors)},
            }
        ],
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The repository root."}}},
    }
    return _log(run)
