"""The check run: the verdict, the report and *every* annotation on the pull request.

Workflow commands (``::error file=...``) reach the pull request too, but GitHub
shows at most 10 of each kind per step. A check run has no such cap: the
Checks API takes 50 annotations per request and appends those of each update
("The Checks API limits the number of annotations to a maximum of 50 per API
request. To create more than 50 annotations, you have to make multiple requests
to the Update a check run endpoint", docs.github.com/rest/checks/runs), so a
PR with 300 breaks shows 300 annotations.

Created at the end, completed at once, never ``in_progress`` first: the job's
own check already shows that the gate is running, the verdict only exists at
the end, and a run created at the start would stay "in progress" on the pull
request when the container is killed (a timeout, a cancelled run) with nothing
left to complete it. One POST carries the conclusion, the summary and the
first 50 annotations; each further 50 is a PATCH.

Permission is detected by trying: without ``checks: write`` the API answers 403
(404 for a token that cannot see the repository), and the action falls back to
today's workflow commands with one notice saying why. Any other failure (5xx,
network) is a warning and the same fallback. Nothing here changes the exit
code: the step's exit code is the gate's, so an API error can never turn a
failing verdict into a pass.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.action.bounds import CHECK_RUN_BYTES, bound
from gate.action.comment import safe_name
from gate.action.github_api import DEFAULT_API_URL, DEFAULT_TIMEOUT, ApiError, GitHub
from gate.action.outcome import Outcome
from gate.escapes import escape_data

if TYPE_CHECKING:  # the report modules load only when a run has a report
    from gate.report.base import Report

#: "a maximum of 50 per API request" (Checks API).
BATCH = 50
#: Annotations sent at most (20 requests); the rest are counted in the summary.
MAX_ANNOTATIONS = 1000
#: Seconds for all the check run's requests together.
TOTAL_SECONDS = 60.0
#: "title ... The maximum size is 255 characters"; messages are capped well under 64 KB.
TITLE_CHARS = 255
MESSAGE_CHARS = 4000
_CONCLUSION = {"pass": "success", "fail": "failure", "error": "failure", "skipped": "neutral"}
_LEVEL = {"error": "failure", "warning": "warning", "notice": "notice"}
_COMMAND = re.compile(r"::(error|warning|notice) ([^:]*)::(.*)\Z", re.S)
_ANNOTATIONS_NOTE = re.compile(r"\n> Annotations: GitHub shows [^\n]*\n")


def _unescape(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def annotation(command: str) -> dict[str, Any] | None:
    """A Checks API annotation from a workflow command with a file (``None`` without one)."""
    match = _COMMAND.match(command)
    if not match:
        return None
    props: dict[str, str] = {}
    for part in match.group(2).split(","):
        key, _, value = part.partition("=")
        props[key.strip()] = _unescape(value)
    path = props.get("file", "")
    if not path:
        return None
    line = int(props["line"]) if props.get("line", "").isdigit() else 1
    return {
        "path": path,
        "start_line": max(line, 1),
        "end_line": max(line, 1),
        "annotation_level": _LEVEL[match.group(1)],
        "title": props.get("title", "schema-contract-gate")[:TITLE_CHARS],
        "message": _unescape(match.group(3))[:MESSAGE_CHARS] or "-",
    }


def check_name(given: str, env: Mapping[str, str]) -> str:
    """The input, else ``schema-contract-gate (<job id>)``: one check run per job."""
    if given:
        return given[:200]
    return f"schema-contract-gate ({safe_name(env.get('GITHUB_JOB', '') or 'job')})"


@dataclass(frozen=True)
class Published:
    """What the check run step did: ``url`` when every annotation is on the check run."""

    url: str = ""
    annotations: int = 0
    reason: str = ""  # why the workflow commands carry the annotations instead
    level: str = ""  # "", "notice" or "warning": the annotation that says so


def publish(
    api: GitHub,
    name: str,
    head_sha: str,
    outcome: Outcome,
    commands: list[str],
    log: Callable[[str], None],
) -> Published:
    """Create the completed check run with ``commands``' annotations; never raises."""
    api.deadline = time.monotonic() + TOTAL_SECONDS
    found = [a for a in (annotation(c) for c in commands) if a is not None]
    sent = found[:MAX_ANNOTATIONS]
    summary = outcome.summary
    if len(found) > len(sent):
        summary = (
            f"> {len(found) - len(sent)} annotation(s) beyond the first {MAX_ANNOTATIONS} "
            "are not on this check run; the report below lists every finding.\n\n" + summary
        )
    output = {
        "title": _title(outcome),
        "summary": bound(summary, CHECK_RUN_BYTES, "check run summaries hold 65,535 characters"),
    }
    try:
        created = api.call(
            "POST",
            f"{api.repo_url}/check-runs",
            {
                "name": name,
                "head_sha": head_sha,
                "status": "completed",
                "conclusion": _CONCLUSION.get(outcome.verdict, "failure"),
                "output": {**output, "annotations": sent[:BATCH]},
            },
        ).data
    except ApiError as exc:
        return _refused(exc)
    run_id = created.get("id") if isinstance(created, dict) else None
    if isinstance(run_id, bool) or not isinstance(run_id, int) or run_id < 1:
        return Published(reason="the check run answer has no id", level="warning")
    url = created.get("html_url")
    url = url if isinstance(url, str) else ""
    for start in range(BATCH, len(sent), BATCH):
        try:
            api.call(
                "PATCH",
                f"{api.repo_url}/check-runs/{run_id}",
                {"output": {**output, "annotations": sent[start : start + BATCH]}},
            )
        except ApiError as exc:
            return Published(
                reason=f"the check run has {start} of {len(found)} annotations ({exc})",
                level="warning",
            )
    log(f"check run '{name}': {len(sent)} annotation(s)" + (f": {url}" if url else ""))
    return Published(url=url or "(no URL)", annotations=len(sent))


def _title(outcome: Outcome) -> str:
    verdict = {"pass": "passed", "fail": "failed", "error": "could not run"}
    return f"Schema contract gate: {verdict.get(outcome.verdict, outcome.verdict)}"


def _refused(exc: ApiError) -> Published:
    if exc.status in (403, 404):
        return Published(
            reason=(
                f"no check run ({exc}): the token lacks `checks: write` (pull requests from "
                "forks never have it), so GitHub shows at most 10 annotations of each kind; "
                "the job summary lists every finding"
            ),
            level="notice",
        )
    return Published(reason=f"could not create the check run ({exc})", level="warning")


def apply(outcome: Outcome, done: Published, name: str) -> Outcome:
    """The outcome with the change annotations moved to the check run, or the fallback notice."""
    if not done.url:
        if not done.level:
            return outcome
        line = f"::{done.level} title=schema-contract-gate check run::{escape_data(done.reason)}"
        return dataclasses.replace(outcome, commands=[line, *outcome.commands])
    kept = [c for c in outcome.commands if annotation(c) is None]
    where = f"{done.annotations} annotation(s) on the check run '{name}'"
    if kept:
        kept[-1] = re.sub(r" \(\d+ [^()]*annotation\(s\) not shown:[^()]*\)\Z", "", kept[-1])
        kept[-1] += escape_data(f" ({where})")
    summary = _ANNOTATIONS_NOTE.sub(f"\n> Annotations: {where}.\n", outcome.summary)
    return dataclasses.replace(outcome, commands=kept, summary=summary)


def attach(
    outcome: Outcome,
    env: Mapping[str, str],
    token: str,
    given_name: str,
    head_sha: str,
    repository: str,
    report: Report | None,
    rebuild: Callable[[str], Outcome] | None,
    log: Callable[[str], None],
    api_down: str = "",
) -> Outcome:
    """Publish the check run for ``outcome`` and hand back what the step log should carry.

    ``report``: the judged report (its every annotation goes on the check run);
    ``rebuild(notice)``: the outcome again with one more run notice, budgeted with
    the annotations (the fallback's "why"), for outcomes built from a report;
    ``api_down``: why not to try (an earlier request got no answer: a second
    would only wait as long again; the notice about that request says why).
    """
    name = check_name(given_name, env)
    if outcome.verdict not in ("pass", "fail"):  # the run failed after judging: not its report
        report, rebuild = None, None
    if not token or not head_sha or not repository:
        log("check run: none without a github-token; annotations as workflow commands")
        return _hint(outcome)
    if api_down:
        log(f"check run: not tried, the API did not answer this run ({api_down})")
        return _hint(outcome)
    from gate.report import github as github_report

    commands = github_report.annotations(report) if report is not None else outcome.commands
    try:
        timeout = float(env.get("SCHEMA_GATE_API_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        timeout = DEFAULT_TIMEOUT
    try:
        api = GitHub(
            api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            repository=repository,
            token=token,
            timeout=max(timeout, 0.05),
        )
        done = publish(api, name, head_sha, outcome, commands, log)
    except ApiError as exc:
        done = Published(reason=f"could not create the check run ({exc})", level="warning")
    if done.url:
        return apply(outcome, done, name)
    log(f"check run: {done.reason}")
    if done.level == "notice" and rebuild is not None:
        return _hint(rebuild(done.reason))
    return _hint(apply(outcome, done, name))


def _hint(outcome: Outcome) -> Outcome:
    """Where annotations were dropped, say what would carry them all."""
    summary = _ANNOTATIONS_NOTE.sub(
        lambda m: (
            m.group(0).rstrip("\n")
            + " A check run would carry every annotation: give the job `checks: write` "
            "(see docs/github-action.md).\n"
        ),
        outcome.summary,
    )
    return dataclasses.replace(outcome, summary=summary)
