"""GitHub Actions workflow commands: annotations that land on the contract line.

Property values and messages are escaped as the runner expects, because dataset
and column names come from the pull request and must not inject commands: ``%``,
CR and LF are percent-encoded (so a message stays one command), and every other
control character is spelled out (so no escape sequence reaches the log viewer).
"""

from gate import rules
from gate.acks import CONSUMER_KEY
from gate.diff import Change
from gate.escapes import clip
from gate.escapes import escape_data as escape_data  # re-exported
from gate.report.base import Report
from gate.rules import Severity


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _level(change: Change, report: Report) -> str:
    if report.blocks(change):
        return "error"
    if change.acknowledged or change.severity is Severity.WARNING:
        return "warning"
    return "notice"


def annotation(level: str, path: str, line: int | None, title: str, message: str) -> str:
    """One workflow command; each PR-controlled part bounded (``gate.escapes.clip``)."""
    props = [f"file={escape_property(clip(path))}"]
    if line:
        props.append(f"line={line}")
    props.append(f"title={escape_property(clip(title))}")
    return f"::{level} {','.join(props)}::{escape_data(clip(message))}"


def _consumer_annotations(report: Report) -> list[tuple[str, str]]:
    """A notice on each consumer line of an explained change, then the unreadable files.

    A line that already carries a ``consumer_broken`` error gets no second annotation.
    """
    broken = {(c.path, c.line) for c in report.changes if c.spec is rules.CONSUMER_BROKEN}
    found: list[tuple[str, str]] = []
    for change in report.changes:
        for consumer in change.consumers:
            if (consumer.path, consumer.line) in broken:
                continue
            message = (
                f"{consumer.object} reads {change.target} ({consumer.usage}): {change.message}"
            )
            title = f"consumer of {change.rule}"
            found.append(
                ("notice", annotation("notice", consumer.path, consumer.line, title, message))
            )
    for item in report.not_analysed:
        found.append(
            (
                "notice",
                annotation("notice", item.path, item.line, "consumer not analysed", item.reason),
            )
        )
    return found


#: External readers named in a change's annotation; past that, a count.
_MAX_EXTERNAL_NAMED = 3


def blast_radius(change: Change) -> str:
    """`` (downstream: 2 path(s); outside the repository: a.b, c/d)``, or nothing.

    The annotation sits on the contract line, where a reviewer decides: what the
    change reaches past its first readers (which get notices of their own) must
    be said there, or the annotation undersells it. The text and JSON reports
    carry the paths and readers in full.
    """
    parts = []
    if change.downstream:
        parts.append(f"downstream: {len(change.downstream)} path(s)")
    if change.external:
        named = ", ".join(r.consumer for r in change.external[:_MAX_EXTERNAL_NAMED])
        extra = len(change.external) - _MAX_EXTERNAL_NAMED
        parts.append(
            f"outside the repository: {named}" + (f" and {extra} more" if extra > 0 else "")
        )
    return f" ({'; '.join(parts)})" if parts else ""


def annotations(report: Report, limit: int | None = None) -> list[str]:
    """One workflow command per change; ``limit`` caps each level (GitHub keeps 10)."""
    out: list[str] = []
    counts: dict[str, int] = {}
    found: list[tuple[str, str]] = []
    for change in report.changes:
        level = _level(change, report)
        title = change.rule + (" (ACKED)" if change.acknowledged else "")
        message = change.message + blast_radius(change)
        found.append((level, annotation(level, change.path, change.line, title, message)))
    # Readers of a breaking change matter more than additive notices: they go first.
    found = (
        [f for f in found if f[0] != "notice"]
        + _consumer_annotations(report)
        + [f for f in found if f[0] == "notice"]
    )
    found += [
        ("warning", annotation("warning", w.path, w.line, "contract warning", w.detail))
        for w in report.warnings
    ]
    for level, line in found:
        counts[level] = counts.get(level, 0) + 1
        if limit is None or counts[level] <= limit:
            out.append(line)
    for token in report.unmatched_acknowledgements:
        out.append(
            f"::warning title=unmatched acknowledgement::"
            f"{escape_data(repr(token.value))} ({token.source}) names no "
            + (
                "consumer file with a consumer_broken finding"
                if token.key == CONSUMER_KEY
                else "changed dataset"
            )
        )
    for token, candidates in report.ambiguous_acknowledgements:
        out.append(
            f"::warning title=ambiguous acknowledgement::"
            f"{escape_data(repr(token.value))} ({token.source}) matches "
            f"{escape_data(', '.join(candidates))} and acknowledges none; write the full id"
        )
    if report.smoke is not None:
        for dataset in report.smoke.datasets:
            if dataset.error:
                out.append(
                    annotation("error", dataset.path, dataset.line, "smoke test", dataset.error)
                )
            for result in dataset.results:
                smoke_level = {"failed": "error", "warned": "warning"}.get(result.status)
                if smoke_level is None:
                    continue
                counts[smoke_level] = counts.get(smoke_level, 0) + 1
                if limit is not None and counts[smoke_level] > limit:
                    continue
                title = f"smoke {result.kind}: {result.name}"
                message = f"{dataset.dataset}: {result.message}"
                out.append(
                    annotation(
                        smoke_level, dataset.path, result.line or dataset.line, title, message
                    )
                )
    return out


def render(report: Report) -> str:
    lines = annotations(report)
    # What the text report prints as "note:" (the config file used, a broken base
    # contract, an acknowledgement line that did not count): the Action shows these
    # in its job summary; a workflow of its own that runs --format github needs them here.
    lines += [f"::notice title=schema-contract-gate::{escape_data(n)}" for n in report.notices]
    lines.append(("::notice::" if report.passed else "::error::") + escape_data(report.verdict()))
    return "\n".join(lines) + "\n"
