"""The GitHub Action: ``python -m gate.action`` maps the Actions runtime onto one gate run.

What it reads (all set by the runner): ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``
(the event payload), ``GITHUB_WORKSPACE``, ``GITHUB_API_URL``, the inputs as
``INPUT_<NAME>`` (upper case, hyphens kept: ``INPUT_FAIL-ON``; the underscore
spelling is accepted too), ``ACCEPT_BREAKING_CHANGE``.
What it writes: annotations and a plain-text report to the log, the Markdown
report to ``GITHUB_STEP_SUMMARY``, ``breaking``/``unacknowledged``/
``acknowledged``/``report``/``verdict`` to ``GITHUB_OUTPUT``, the JSON report to
``.schema-gate/report.json`` in the workspace, and the CLI's exit code.

Everything from the pull request (its description, contract files, branch
names) is untrusted. None of it reaches a shell or a git option, and all log
output that could carry it is printed between ``::stop-commands::`` markers so
that a column named ``"x\\n::error::..."`` cannot forge workflow commands. The
only workflow commands are the annotations, written with escaped values.

Test knobs (environment): ``SCHEMA_GATE_API_TIMEOUT`` (seconds, default 10),
``SCHEMA_GATE_DEEPEN`` (deepening steps, default ``50,200,1000,5000``),
``SCHEMA_GATE_FETCH_TIMEOUT`` (seconds per fetch, default 600).
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import secrets
import sys
import traceback
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gate import __version__
from gate.action_git import (
    Workspace,
    ensure_base,
    ensure_merge_base,
    give_to_owner,
    is_zero_sha,
    restore_ownership,
    trust_workspace,
    validate_ref,
    validate_sha,
)
from gate.action_github_api import DEFAULT_API_URL, DEFAULT_TIMEOUT, ApiError, fetch_pr_body
from gate.model import GateError, UsageError
from gate.report import EXIT_ERROR, EXIT_OK
from gate.report.base import Report
from gate.report.github import annotations, escape_data
from gate.rules import Severity

#: Inputs declared in action.yml, in its order.
INPUTS = (
    "base",
    "contracts",
    "dialect",
    "accept",
    "fail-on",
    "config",
    "smoke-test",
    "sample-data",
    "spark-remote",
    "github-token",
    "pr-body",
)
#: Outputs declared in action.yml.
OUTPUTS = ("breaking", "unacknowledged", "acknowledged", "report", "verdict")
PR_EVENTS = ("pull_request", "pull_request_target")
#: Where the JSON report goes, relative to the workspace (host steps see the same path).
REPORT_DIR = ".schema-gate"
REPORT_PATH = f"{REPORT_DIR}/report.json"
#: GitHub shows 10 annotations of each kind (error, warning, notice) per step.
ANNOTATION_LIMIT = 10
#: A step summary may hold 1 MiB; keep a margin for the truncation note.
SUMMARY_LIMIT = 1024 * 1024 - 4096
API_TIMEOUT_ENV = "SCHEMA_GATE_API_TIMEOUT"
_LEVEL = re.compile(r"::(error|warning|notice)[ :]")
#: Branch names shown in reports as they are; others (backticks, "<", ...) are not shown.
_PLAIN_BRANCH = re.compile(r"[A-Za-z0-9._/-]{1,100}\Z")


class Skip(Exception):
    """Nothing to compare on this event: exit 0 with a notice."""


# inputs


def get_input(env: Mapping[str, str], name: str) -> str:
    """``INPUT_FAIL-ON`` as the runner names it, or ``INPUT_FAIL_ON`` as people type it."""
    upper = name.replace(" ", "_").upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        value = env.get(key, "").strip()
        if value:
            return value
    return ""


def _split(text: str) -> tuple[str, ...]:
    """A list input: one item per line or comma-separated, blanks ignored."""
    return tuple(part.strip() for part in re.split(r"[\n,]", text) if part.strip())


def _bool(text: str, name: str) -> bool:
    if text in ("", "false", "False", "FALSE"):
        return False
    if text in ("true", "True", "TRUE"):
        return True
    raise UsageError(f"input {name} must be true or false, not {text!r}")


@dataclass(frozen=True)
class Inputs:
    base: str = ""
    contracts: tuple[str, ...] = ()
    dialect: str = ""
    accept: tuple[str, ...] = ()
    fail_on: Severity | None = None
    config: str = ""
    smoke_test: bool = False
    sample_data: str = ""
    spark_remote: str = ""
    github_token: str = field(default="", repr=False)
    pr_body: str = ""

    @classmethod
    def from_env(cls, env: MutableMapping[str, str]) -> Inputs:
        """Read the inputs and drop the token from the environment git and Spark inherit."""
        token = get_input(env, "github-token")
        for key in ("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN"):
            env.pop(key, None)
        fail_on = get_input(env, "fail-on")
        if fail_on not in ("", "error", "warning"):
            raise UsageError(f"input fail-on must be 'error' or 'warning', not {fail_on!r}")
        return cls(
            base=get_input(env, "base"),
            contracts=_split(get_input(env, "contracts")),
            dialect=get_input(env, "dialect"),
            accept=_split(get_input(env, "accept")),
            fail_on=Severity(fail_on) if fail_on else None,
            config=get_input(env, "config"),
            smoke_test=_bool(get_input(env, "smoke-test"), "smoke-test"),
            sample_data=get_input(env, "sample-data"),
            spark_remote=get_input(env, "spark-remote"),
            github_token=token,
            pr_body=get_input(env, "pr-body"),
        )


# the event


@dataclass(frozen=True)
class PullRequest:
    number: int
    repository: str
    base_sha: str
    base_ref: str
    head_sha: str
    body: str
    fork: bool

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], env: Mapping[str, str]) -> PullRequest:
        pull = payload.get("pull_request")
        if not isinstance(pull, dict):
            raise UsageError("the event payload has no pull_request object")
        number = payload.get("number", pull.get("number"))
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise UsageError(f"the event payload has no valid pull request number: {number!r}")
        base = pull.get("base") if isinstance(pull.get("base"), dict) else {}
        head = pull.get("head") if isinstance(pull.get("head"), dict) else {}
        base_repo = _full_name(base.get("repo")) or _full_name(payload.get("repository"))
        head_repo = _full_name(head.get("repo"))
        body = pull.get("body")
        return cls(
            number=number,
            repository=base_repo or env.get("GITHUB_REPOSITORY", ""),
            base_sha=validate_sha(base.get("sha"), "pull_request.base.sha"),
            base_ref=str(base.get("ref") or ""),
            head_sha=validate_sha(head.get("sha"), "pull_request.head.sha"),
            body=body if isinstance(body, str) else "",
            fork=bool(head_repo and base_repo and head_repo != base_repo),
        )


def _full_name(repo: object) -> str:
    if isinstance(repo, dict) and isinstance(repo.get("full_name"), str):
        return repo["full_name"]
    return ""


def load_payload(env: Mapping[str, str], required: bool) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        if required:
            raise UsageError("GITHUB_EVENT_PATH is not set: not running in GitHub Actions?")
        return {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        if not required:
            return {}
        raise UsageError(f"cannot read the event payload {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        if not required:
            return {}
        raise UsageError(f"the event payload {path} is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return payload


# the log and the files the runner reads


class Console:
    """The step log. Commands are off by default; only ``command`` turns them on briefly."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._token: str | None = None

    def _write(self, text: str) -> None:
        self._stream.write(text + "\n")
        self._stream.flush()

    def stop_commands(self) -> None:
        if self._token is None:
            self._token = secrets.token_hex(16)
            self._write(f"::stop-commands::{self._token}")

    def resume_commands(self) -> None:
        if self._token is not None:
            self._write(f"::{self._token}::")
            self._token = None

    def info(self, text: str) -> None:
        """Untrusted text is fine here: commands are stopped while it prints."""
        self.stop_commands()
        for line in text.splitlines() or [""]:
            self._write(line)

    def commands(self, lines: list[str]) -> None:
        """Workflow commands built by this module, with escaped values."""
        if not lines:
            return
        self.resume_commands()
        for line in lines:
            self._write(line)


def write_outputs(path: str, values: Mapping[str, str]) -> None:
    """Append ``name=value`` lines (a heredoc with a random delimiter for multi-line values)."""
    lines = []
    for name, value in values.items():
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}")
        else:
            lines.append(f"{name}={value}")
    with open(path, "a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def limit_summary(markdown: str, limit: int = SUMMARY_LIMIT) -> str:
    """Cut a summary that GitHub would refuse (over 1 MiB) at a line, closing what was open."""
    if len(markdown.encode("utf-8")) <= limit:
        return markdown
    cut = markdown.encode("utf-8")[:limit].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n") + 1]
    closing = "</details>\n" * max(cut.count("<details>") - cut.count("</details>"), 0)
    return (
        cut + "\n" + closing + f"\n**The report was cut here (step summaries hold 1 MiB).** "
        f"The full report is `{REPORT_PATH}` in the workspace.\n"
    )


def _code_block(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


# the run


@dataclass
class Outcome:
    exit_code: int
    verdict: str  # pass | fail | error | skipped
    outputs: dict[str, str]
    summary: str
    commands: list[str]


def budget_annotations(report: Report, own: list[str]) -> tuple[list[str], dict[str, int]]:
    """Change annotations capped so that, with ``own`` lines, each kind stays within 10."""
    used: dict[str, int] = {}
    for line in own:
        match = _LEVEL.match(line)
        if match:
            used[match.group(1)] = used.get(match.group(1), 0) + 1
    kept: list[str] = []
    dropped: dict[str, int] = {}
    for line in annotations(report):
        match = _LEVEL.match(line)
        level = match.group(1) if match else "notice"
        if used.get(level, 0) < ANNOTATION_LIMIT:
            used[level] = used.get(level, 0) + 1
            kept.append(line)
        else:
            dropped[level] = dropped.get(level, 0) + 1
    return kept, dropped


def _notices(report: Report) -> list[str]:
    return [f"::notice title=schema-contract-gate::{escape_data(n)}" for n in report.notices]


def outcome_of(report: Report, report_path: str) -> Outcome:
    from gate.report import markdown

    notices = _notices(report)
    verdict_level = "notice" if report.passed else "error"
    placeholder = f"::{verdict_level} title=schema-contract-gate::"
    kept, dropped = budget_annotations(report, [placeholder, *notices])
    message = report.verdict()
    if dropped:
        hidden = ", ".join(f"{n} {level}" for level, n in sorted(dropped.items()))
        message += (
            f" ({hidden} annotation(s) not shown: GitHub shows {ANNOTATION_LIMIT} of each kind "
            "per step; the job summary lists every change.)"
        )
    summary = markdown.render(report)
    if dropped:
        summary += (
            f"\n> Annotations: GitHub shows {ANNOTATION_LIMIT} of each kind per step, so "
            f"{sum(dropped.values())} change(s) appear only in this summary.\n"
        )
    footer = f"schema-contract-gate {__version__} · exit code {report.exit_code}"
    if report_path:
        footer += f" · JSON report: `{report_path}`"
    summary += f"\n<sub>{footer}</sub>\n"
    counts = report.summary()
    return Outcome(
        exit_code=report.exit_code,
        verdict="pass" if report.passed else "fail",
        outputs={
            "breaking": str(counts["breaking"]),
            "unacknowledged": str(counts["unacknowledged"]),
            "acknowledged": str(counts["acknowledged"]),
            "report": report_path,
            "verdict": "pass" if report.passed else "fail",
        },
        summary=summary,
        commands=[*kept, *notices, placeholder + escape_data(message)],
    )


def _write_file(path: Path, content: str) -> None:
    """Write without following a symlink the pull request may have committed there."""
    if path.is_symlink():
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)


def _write_report(workspace: str, content: str, console: Console) -> str:
    """Write the JSON report into the workspace; return its workspace-relative path.

    The folder holds a ``.gitignore`` of ``*`` so the report never shows up in
    ``git status`` or gets committed by a later step.
    """
    folder = Path(workspace, REPORT_DIR)
    try:
        if folder.is_symlink():  # the PR could commit one pointing anywhere
            raise OSError(f"{REPORT_DIR} is a symlink")
        folder.mkdir(exist_ok=True)
        _write_file(folder / ".gitignore", "# written by schema-contract-gate; never commit\n*\n")
        _write_file(folder / "report.json", content)
    except OSError as exc:
        console.info(f"could not write {REPORT_PATH}: {getattr(exc, 'strerror', None) or exc}")
        return ""
    give_to_owner(str(folder), like=workspace)
    return REPORT_PATH


class Action:
    def __init__(self, env: MutableMapping[str, str], console: Console) -> None:
        self.env = env
        self.console = console
        self.notices: list[str] = []

    def run(self) -> Outcome:
        env = self.env
        inputs = Inputs.from_env(env)
        workspace = os.path.abspath(env.get("GITHUB_WORKSPACE") or os.getcwd())
        if not os.path.isdir(workspace):
            raise UsageError(f"GITHUB_WORKSPACE is not a directory: {workspace}")
        trust_workspace([workspace, os.path.realpath(workspace)])
        event = env.get("GITHUB_EVENT_NAME", "")
        payload = load_payload(env, required=event in PR_EVENTS)
        self.console.info(f"schema-contract-gate {__version__}: event '{event or 'unknown'}'")

        pull: PullRequest | None = None
        if event in PR_EVENTS:
            pull = PullRequest.from_payload(payload, env)
            base = validate_ref(inputs.base, "input base") if inputs.base else pull.base_sha
            self.console.info(
                f"pull request #{pull.number} into '{pull.base_ref}'"
                + (" from a fork" if pull.fork else "")
                + (
                    f"; base {pull.base_sha[:12]} from the event payload"
                    if not inputs.base
                    else f"; base '{inputs.base}' from the base input"
                )
            )
        elif not inputs.base:
            raise Skip(
                f"nothing to compare on a '{event or 'unknown'}' event: it has no pull request. "
                "Set the base input (e.g. base: main) to run the gate on it."
            )
        elif is_zero_sha(inputs.base):
            raise Skip("the base input is the all-zero sha (a new branch): nothing to compare.")
        else:
            base = validate_ref(inputs.base, "input base")
            self.console.info(f"base '{base}' from the base input")

        body = self._pr_body(inputs, pull)

        from gate.git_tree import open_repo

        open_repo(workspace).close()  # clear errors for "not a repository", ownership, ...
        ws = Workspace(workspace, self.console.info)
        try:
            base = ensure_base(ws, base)
            head = ws.head()
            ensure_merge_base(ws, base, head)
            if pull is not None and event == "pull_request_target":
                self._check_target_checkout(ws, pull, head)
        finally:
            if ws.fetched:
                restore_ownership(ws)

        from gate.engine import Settings, run
        from gate.report import json as json_report
        from gate.report import text

        settings = Settings(
            repo=workspace,
            base=base,
            head="HEAD",
            contracts=inputs.contracts or None,
            dialect=inputs.dialect or None,
            fail_on=inputs.fail_on,
            config=inputs.config or None,
            accept=inputs.accept,
            accept_env=env.get("ACCEPT_BREAKING_CHANGE"),
            pr_body=body,
            smoke=inputs.smoke_test,
            sample_data=inputs.sample_data or None,
            spark_remote=inputs.spark_remote or None,
            notices=tuple(self.notices),
        )
        report = run(settings)
        if pull is not None and not inputs.base and _PLAIN_BRANCH.match(pull.base_ref):
            # "main" reads better than the sha; the sha stays in base.sha
            report = dataclasses.replace(report, base_ref=pull.base_ref)
        self.console.info("")
        self.console.info(text.render(report))
        path = _write_report(workspace, json_report.render(report), self.console)
        return outcome_of(report, path)

    def _pr_body(self, inputs: Inputs, pull: PullRequest | None) -> str | None:
        if inputs.pr_body:
            self.console.info("PR description: from the pr-body input")
            return inputs.pr_body
        if pull is None:
            return None
        if not inputs.github_token:
            self.notices.append(
                "no github-token: the PR description comes from the event payload, "
                "so re-running this job does not see later edits to it"
            )
            return pull.body
        api_url = self.env.get("GITHUB_API_URL") or DEFAULT_API_URL
        try:
            timeout = float(self.env.get(API_TIMEOUT_ENV) or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        try:
            body = fetch_pr_body(
                api_url, pull.repository, pull.number, inputs.github_token, max(timeout, 0.05)
            )
        except ApiError as exc:
            self.notices.append(
                f"could not read the current PR description from the GitHub API ({exc}); "
                "using the one in the event payload, so a re-run does not see later edits "
                "(editing the description starts a fresh run)"
            )
            return pull.body
        if body != pull.body:
            self.console.info(
                "PR description: the current one from the GitHub API "
                "(it changed since this run's event)"
            )
        else:
            self.console.info("PR description: the current one from the GitHub API")
        return body

    def _check_target_checkout(self, ws: Workspace, pull: PullRequest, head: str) -> None:
        """On pull_request_target the default checkout is the base branch: refuse to pass it."""
        if head == pull.head_sha:
            return
        if ws.has_commit(pull.head_sha) and ws.is_ancestor(pull.head_sha, head):
            return
        raise UsageError(
            f"on pull_request_target the workspace must contain the pull request's head "
            f"{pull.head_sha[:12]}, but HEAD is {head[:12]}: actions/checkout checks out the "
            "base branch there, which would compare the base with itself. Use "
            "`on: pull_request` (see docs/github-action.md)"
        )


def _error_outcome(message: str, workspace: str, console: Console) -> Outcome:
    report = json.dumps(
        {"version": 1, "verdict": "error", "message": message, "exit_code": EXIT_ERROR}, indent=2
    )
    path = _write_report(workspace, report + "\n", console) if os.path.isdir(workspace) else ""
    summary = (
        "## Schema contract gate: ⚠️ could not run\n\n"
        f"{_code_block(message)}\n\n"
        "The check fails closed: fix the problem above and re-run. "
        "See docs/github-action.md for the inputs and common causes "
        "(shallow clones, refs, contract syntax).\n"
    )
    return Outcome(
        exit_code=EXIT_ERROR,
        verdict="error",
        outputs={
            "breaking": "0",
            "unacknowledged": "0",
            "acknowledged": "0",
            "report": path,
            "verdict": "error",
        },
        summary=summary,
        commands=[f"::error title=schema-contract-gate::{escape_data(message)}"],
    )


def _skip_outcome(reason: str) -> Outcome:
    return Outcome(
        exit_code=EXIT_OK,
        verdict="skipped",
        outputs={
            "breaking": "0",
            "unacknowledged": "0",
            "acknowledged": "0",
            "report": "",
            "verdict": "skipped",
        },
        summary=f"## Schema contract gate: skipped\n\n{html.escape(reason)}\n",
        commands=[f"::notice title=schema-contract-gate skipped::{escape_data(reason)}"],
    )


def main(env: MutableMapping[str, str] | None = None, stream: IO[str] | None = None) -> int:
    env = os.environ if env is None else env
    console = Console(stream or sys.stdout)
    workspace = os.path.abspath(env.get("GITHUB_WORKSPACE") or os.getcwd())
    try:
        outcome = Action(env, console).run()
    except Skip as skip:
        outcome = _skip_outcome(str(skip))
    except GateError as exc:
        outcome = _error_outcome(str(exc), workspace, console)
    except KeyboardInterrupt:
        outcome = _error_outcome("interrupted", workspace, console)
    except Exception as exc:  # fail closed: an internal error must not pass the check
        console.info(traceback.format_exc())
        outcome = _error_outcome(
            f"internal error: {type(exc).__name__}: {exc} (please report it)", workspace, console
        )
    _publish(outcome, env, console)
    return outcome.exit_code


def _publish(outcome: Outcome, env: Mapping[str, str], console: Console) -> None:
    summary_path = env.get("GITHUB_STEP_SUMMARY", "")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as out:
                out.write(limit_summary(outcome.summary))
        except OSError as exc:
            console.info(f"could not write the job summary: {exc.strerror or exc}")
    output_path = env.get("GITHUB_OUTPUT", "")
    if output_path:
        try:
            write_outputs(output_path, outcome.outputs)
        except OSError as exc:
            console.info(f"could not write the step outputs: {exc.strerror or exc}")
    else:
        console.info(" ".join(f"{k}={v}" for k, v in outcome.outputs.items()))
    console.commands(outcome.commands)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
