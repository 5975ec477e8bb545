"""JUnit XML for the CI systems that read test reports (GitLab ``artifacts:reports:junit``,
Jenkins ``junit``): docs/report-formats.md.

One ``<testsuite>`` per dataset, one ``<testcase>`` per finding: a ``<failure>``
when it blocks, ``<skipped>`` when it is acknowledged, a pass otherwise. A last
suite, ``schema-contract-gate``, holds the verdict as one test case, so the
report fails exactly when the exit code does (a failed smoke test, an unmatched
acknowledgement under ``--fail-on warning``) and is never empty.

The XML is written as text, never parsed. Every string goes through :func:`escape`
here, once for the medium: controls are spelled out (XML 1.0 cannot carry most of
them at all), then ``& < > " '`` become entities, in text and attributes alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gate.diff import Change
from gate.escapes import shown
from gate.model import ContractError
from gate.report.base import Report, arrow

SUITE = "schema-contract-gate"
#: What XML 1.0 cannot hold even as a reference, beyond the controls ``visible`` spells out.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
_SPECIAL = re.compile("[&<>\"']")


def escape(value: str) -> str:
    """``value`` as XML character data or an attribute value, whatever it holds."""
    spelled = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", shown(value))
    return _SPECIAL.sub(lambda m: _ENTITIES[m.group()], spelled)


def _attrs(**values: object) -> str:
    return "".join(f' {k}="{escape(str(v))}"' for k, v in values.items() if v is not None)


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


def _case(change: Change, report: Report) -> list[str]:
    head = f"    <testcase{_attrs(classname=f'{SUITE}.{change.dataset}', name=f'{change.rule} {change.target}', file=change.path, line=change.line)}"
    body = f"{_where(change.path, change.line)}: {change.message} ({arrow(change)})"
    if report.blocks(change):
        return [
            head + ">",
            f"      <failure{_attrs(type=change.rule, message=change.message)}>{escape(body)}</failure>",
            "    </testcase>",
        ]
    if change.acknowledged:
        return [
            head + ">",
            f"      <skipped{_attrs(message='acknowledged: ' + change.message)}/>",
            "    </testcase>",
        ]
    return [head + "/>"]


def _suite(
    name: str, cases: list[list[str]], failures: int, skipped: int, errors: int = 0
) -> list[str]:
    lines = [
        f"  <testsuite{_attrs(name=name, tests=len(cases), failures=failures, errors=errors, skipped=skipped)}>"
    ]
    for case in cases:
        lines += case
    lines.append("  </testsuite>")
    return lines


def _document(suites: list[list[str]], tests: int, failures: int, skipped: int, errors: int) -> str:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites{_attrs(name=SUITE, tests=tests, failures=failures, errors=errors, skipped=skipped)}>",
    ]
    for suite in suites:
        lines += suite
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def render(report: Report) -> str:
    datasets: dict[str, list[Change]] = {}
    for change in report.changes:
        datasets.setdefault(change.dataset, []).append(change)
    suites: list[list[str]] = []
    tests = failures = skipped = 0
    for dataset in sorted(datasets):
        changes = datasets[dataset]
        failed = sum(report.blocks(c) for c in changes)
        acked = sum(c.acknowledged for c in changes)
        suites.append(_suite(dataset, [_case(c, report) for c in changes], failed, acked))
        tests, failures, skipped = tests + len(changes), failures + failed, skipped + acked
    verdict = report.verdict()
    head = f"    <testcase{_attrs(classname=SUITE, name='verdict')}"
    # The report's notices (e.g. an unusable CODEOWNERS line) as the verdict's output.
    out = [f"      <system-out>{escape(chr(10).join(report.notices))}</system-out>"]
    out = out if report.notices else []
    if report.passed:
        case = [head + ">", *out, "    </testcase>"] if out else [head + "/>"]
    else:
        case = [
            head + ">",
            f"      <failure{_attrs(type='verdict', message=verdict)}>{escape(verdict)}</failure>",
            *out,
            "    </testcase>",
        ]
    suites.append(_suite(SUITE, [case], int(not report.passed), 0))
    tests, failures = tests + 1, failures + int(not report.passed)
    return _document(suites, tests, failures, skipped, 0)


def refused(errors: Sequence[ContractError], message: str, cap: int) -> str:
    """A refused run (exit 2): one ``<error>`` test case per refused file, then the verdict."""
    cases = [
        [
            f"    <testcase{_attrs(classname=SUITE, name='contract ' + e.path, file=e.path, line=e.line)}>",
            f"      <error{_attrs(type='contract refused', message=e.detail)}>{escape(str(e))}</error>",
            "    </testcase>",
        ]
        for e in errors[:cap]
    ]
    cases.append(
        [
            f"    <testcase{_attrs(classname=SUITE, name='verdict')}>",
            f"      <error{_attrs(type='contract refused', message=message)}>{escape(message)}</error>",
            "    </testcase>",
        ]
    )
    suite = _suite(SUITE, cases, 0, 0, errors=len(cases))
    return _document([suite], len(cases), 0, 0, len(cases))
