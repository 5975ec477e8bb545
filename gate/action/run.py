"""One run of the Action: map the Actions runtime onto one gate run and publish the result.

What it reads (all set by the runner): ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``
(the event payload), ``GITHUB_WORKSPACE``, ``GITHUB_API_URL``, the inputs as
``INPUT_<NAME>`` (upper case, hyphens kept: ``INPUT_FAIL-ON``; the underscore
spelling is accepted too), ``ACCEPT_BREAKING_CHANGE``, ``ACCEPT_CONSUMER_BREAK``.
What it writes: annotations and a plain-text report to the log, the Markdown
report to ``GITHUB_STEP_SUMMARY``, ``breaking``/``unacknowledged``/
``acknowledged``/``report``/``verdict`` to ``GITHUB_OUTPUT``, the JSON report to
``.schema-gate/report.json`` in the workspace, and the CLI's exit code.

Everything from the pull request (its description, contract files, branch
names) is untrusted. None of it reaches a shell or a git option, and all log
output that could carry it is printed with workflow commands stopped
(see ``console.py``).

Test knobs (environment): ``SCHEMA_GATE_API_TIMEOUT`` (total seconds per API request, default 10),
``SCHEMA_GATE_DEEPEN`` (deepening steps, default ``50,200,1000,5000``),
``SCHEMA_GATE_FETCH_TIMEOUT`` (seconds per fetch, default 600).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping, MutableMapping
from functools import partial
from typing import IO, TYPE_CHECKING, Any

from gate import __version__
from gate.action import check_run, debug
from gate.action.comment import Posted, has_news, sync
from gate.action.console import Console, limit_summary, write_outputs
from gate.action.debug import stage
from gate.action.event import PR_EVENTS, PullRequest, load_payload
from gate.action.fetch import (
    Workspace,
    ensure_base,
    ensure_merge_base,
    is_zero_sha,
    restore_ownership,
    trust_workspace,
    validate_ref,
)
from gate.action.github_api import DEFAULT_API_URL, DEFAULT_TIMEOUT, ApiError, GitHub
from gate.action.inputs import Inputs
from gate.action.merge_queue import (
    MergeGroup,
    QueuedPull,
    check_checkout,
    group_pulls,
    other_members,
)
from gate.action.outcome import (
    Outcome,
    error_outcome,
    error_report,
    outcome_of,
    refused_outcome,
    refused_report,
    skip_outcome,
    with_comment,
)
from gate.action.report_file import write_report
from gate.model import ContractErrors, GateError, UsageError

if TYPE_CHECKING:
    from gate.report.base import Report

API_TIMEOUT_ENV = "SCHEMA_GATE_API_TIMEOUT"
#: Branch names shown in reports as they are; others (backticks, "<", ...) are not shown.
_PLAIN_BRANCH = re.compile(r"[A-Za-z0-9._/-]{1,100}\Z")


class Skip(Exception):
    """Nothing to compare on this event: exit 0 with a notice."""


class Action:
    """One run of the Action: inputs and event -> Settings -> the gate -> outputs.

    Why one class of ~330 lines: the steps share what the run has learned so
    far (inputs, the pull request or queue entry, notices, the judged report,
    whether the API answers) and each step may end the run with an outcome;
    the work of each step lives in its own module (event, merge_queue, fetch,
    github_api, reviews, check_run, comment, bounds), and the methods here only
    order them.
    """

    def __init__(self, env: MutableMapping[str, str], console: Console) -> None:
        self.env = env
        self.console = console
        self.notices: list[str] = []
        self.inputs: Inputs | None = None
        self.pull: PullRequest | None = None
        self.group: MergeGroup | None = None
        #: A merge group's pull requests as read through the API (their reviews count).
        self.queued: list[QueuedPull] = []
        self.report: Report | None = None  # the judged report, for the check run
        self.api_down = ""  # why the API is not tried again this run (it did not answer)
        self.rebuild: Callable[[str], Outcome] | None = None  # the outcome with one more notice
        self.trace = console.debug if console.debugging else None

    def run(self) -> Outcome:
        env = self.env
        with stage(self.trace, "inputs and event payload"):
            inputs = self.inputs = Inputs.from_env(env)
            workspace = os.path.abspath(env.get("GITHUB_WORKSPACE") or os.getcwd())
            if not os.path.isdir(workspace):
                raise UsageError(f"GITHUB_WORKSPACE is not a directory: {workspace}")
            trust_workspace([workspace, os.path.realpath(workspace)])
            event = env.get("GITHUB_EVENT_NAME", "")
            payload = load_payload(env, required=event in (*PR_EVENTS, MergeGroup.EVENT))
        self.console.debug(f"event payload: {env.get('GITHUB_EVENT_PATH') or 'none'}")
        self.console.debug(f"inputs: {inputs!r}")  # the token field is repr=False
        self.console.info(f"schema-contract-gate {__version__}: event '{event or 'unknown'}'")

        pull: PullRequest | None = None
        if event in PR_EVENTS:
            pull = self.pull = PullRequest.from_payload(payload, env)
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
        elif event == MergeGroup.EVENT:  # the queue judges its pull request (merge_queue.py)
            group = self.group = MergeGroup.from_payload(payload, env)
            base = validate_ref(inputs.base, "input base") if inputs.base else group.base_sha
            self.console.info(
                f"merge queue: pull request #{group.numbers[0]} into '{group.base_branch}'; "
                f"base {base[:12]}, head {group.head_sha[:12]}"
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

        with stage(self.trace, "PR description"):
            body = self._pr_body(inputs, pull)

        from gate.git import open_repo

        with stage(self.trace, "git: base commit and merge-base"):
            open_repo(workspace).close()  # clear errors for "not a repository", ownership, ...
            ws = Workspace(workspace, self.console.info)
            try:
                base = ensure_base(ws, base)
                head = ws.head()
                ensure_merge_base(ws, base, head)
                if pull is not None and event == "pull_request_target":
                    self._check_target_checkout(ws, pull, head)
                if self.group is not None:
                    check_checkout(head, self.group, lambda sha: ws.is_ancestor(sha, head))
                    if self.queued:  # not with the pr-body input
                        body = self._batched(inputs, self.group, ws, base, head, body or "")
            finally:
                if ws.fetched:
                    self.console.debug(f"files handed back: {restore_ownership(ws)}")

        from gate.cli import freeze_imports
        from gate.engine import Settings, run
        from gate.report import json_report as json_report
        from gate.report import text

        freeze_imports()  # as the command does (tune_gc)

        if inputs.smoke_test and importlib.util.find_spec("pyspark") is None:
            # The default action's image is the slim one: the Spark extra would
            # tell a local user to pip install, but here the fix is another action.
            raise UsageError(
                "smoke-test: true needs Java and PySpark, which this action's slim image "
                "does not have: use the smoke action instead "
                "(uses: <owner>/schema-contract-gate/smoke@<same ref>, same inputs)"
            )
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
            accept_consumer_break=inputs.accept_consumer_break,
            accept_consumer_break_env=env.get("ACCEPT_CONSUMER_BREAK"),
            pr_body=body,
            smoke=inputs.smoke_test,
            sample_data=inputs.sample_data or None,
            spark_remote=inputs.spark_remote or None,
            notices=tuple(self.notices),
            trace=debug.tracer(self.trace) if self.trace is not None else None,
        )
        settings = dataclasses.replace(
            settings, reviews=self._reviews(inputs, pull, payload, settings)
        )
        with stage(self.trace, "gate run"):
            report = run(settings)
        if inputs.request_reviews:
            with stage(self.trace, "request reviews"):
                report = self._request_reviews(inputs, pull, event, payload, report)
        target = pull.base_ref if pull else self.group.base_branch if self.group else ""
        if target and not inputs.base and _PLAIN_BRANCH.match(target):
            # "main" reads better than the sha; the sha stays in base.sha
            report = dataclasses.replace(report, base_ref=target)
        self.console.info("")
        self.console.info(text.render(report))
        with stage(self.trace, "JSON report"):
            path = write_report(workspace, json_report.render(report), self.console.info)
        from gate.report import markdown

        with stage(self.trace, "PR comment"):
            posted = self.post_comment(markdown.render(report), has_news(report))
        self.report = report
        self.rebuild = lambda note: outcome_of(  # the check run's fallback notice, budgeted
            dataclasses.replace(report, notices=(*report.notices, note)), path, posted
        )
        return outcome_of(report, path, posted)

    def post_comment(self, markdown: str, news: bool) -> Posted | None:
        """The sticky PR comment (``None``: not a PR, ``comment: false`` or no token)."""
        inputs, pull = self.inputs, self.pull
        if inputs is None or pull is None:
            return None
        if not inputs.comment:
            self.console.info("PR comment: off (comment: false)")
            return None
        if not inputs.github_token:
            self.console.info(
                "PR comment: none without a github-token (the job summary has the report)"
            )
            return None
        try:
            api = self._api(inputs, pull)
        except ApiError as exc:
            posted = Posted(
                "failed",
                f"could not post the PR comment ({exc}); the job summary has the report",
                annotation="warning",
            )
        else:
            posted = sync(api, pull.number, self.env, markdown, news, head_sha=pull.head_sha)
        self.console.info(posted.log + (f": {posted.url}" if posted.url else ""))
        return posted

    def _pr_body(self, inputs: Inputs, pull: PullRequest | None) -> str | None:
        if inputs.pr_body:
            self.console.info("PR description: from the pr-body input")
            return inputs.pr_body
        if self.group is not None:
            group = self.group
            self.queued = group_pulls(
                group, inputs.github_token, lambda: self._api(inputs, group), self.console.info
            )
            return "\n\n".join(p.body for p in self.queued)
        if pull is None:
            return None
        if not inputs.github_token:
            self.notices.append(
                "no github-token: the PR description comes from the event payload, "
                "so re-running this job does not see later edits to it"
            )
            return pull.body
        try:
            body = self._api(inputs, pull).pull_body(pull.number)
        except ApiError as exc:
            self.api_down = "" if exc.status else str(exc)  # no answer: no check run either
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

    def _batched(
        self, inputs: Inputs, group: MergeGroup, ws: Workspace, base: str, head: str, body: str
    ) -> str:
        """The descriptions of every pull request batched into this group (merge_queue.py)."""
        try:
            refs = self._api(inputs, group).queue_refs(group.base_branch)
        except ApiError as exc:
            raise UsageError(
                f"merge queue: could not list the queue's branches through the GitHub API "
                f"({exc}); they say which pull requests this group holds, so the gate fails "
                "closed (the token needs contents: read)"
            ) from None

        # Reachable from the group's head and not from its base: listed once, since
        # the API may name thousands of queue branches (two gits each were minutes).
        listed = ws.git("rev-list", "--end-of-options", head, f"^{base}", "--")
        group_commits = frozenset(listed.stdout.split()) if listed.returncode == 0 else None

        def in_group(sha: str) -> bool:
            if group_commits is not None:
                return sha in group_commits
            return ws.is_ancestor(sha, head) and not ws.is_ancestor(sha, base)

        others = other_members(group, refs, in_group)
        if not others:
            return body
        self.console.info(
            "merge queue: the group also holds pull request "
            + ", ".join(f"#{n}" for n in others)
            + " (from the queue's branches)"
        )
        more = group_pulls(
            group,
            inputs.github_token,
            lambda: self._api(inputs, group),
            self.console.info,
            numbers=others,
        )
        self.queued = [*more, *self.queued]
        return "\n\n".join(p.body for p in self.queued)

    def _reviews(
        self, inputs: Inputs, pull: PullRequest | None, payload: dict[str, Any], settings: Any
    ) -> Any:
        """The PR's reviews as approvals (gate.action.reviews); ``None`` without a PR or token."""
        if self.queued and inputs.github_token:
            return self._group_reviews(inputs, settings)
        if pull is None or not inputs.github_token:
            return None
        from gate.action.reviews import ReviewSource, author_of

        try:
            api = self._api(inputs, pull)
        except ApiError:
            return None
        return ReviewSource(
            api, pull.number, author_of(payload), pull.head_sha, partial(fingerprints_at, settings)
        )

    def _group_reviews(self, inputs: Inputs, settings: Any) -> Any:
        """A merge group's reviews: every pull request's, no author approving (reviews.py)."""
        from gate.action.reviews import group_reviews

        assert self.group is not None
        try:
            api = self._api(inputs, self.group)
        except ApiError:
            return None
        return group_reviews(api, self.queued, partial(fingerprints_at, settings))

    def _request_reviews(
        self,
        inputs: Inputs,
        pull: PullRequest | None,
        event: str,
        payload: dict[str, Any],
        report: Report,
    ) -> Report:
        """``request-reviews: true``: ask the missing approvers (gate.action.request_reviews)."""
        from gate.action.request_reviews import ask

        def api() -> GitHub:
            assert pull is not None
            return self._api(inputs, pull)

        log, notices = ask(api, pull, event, inputs.github_token, payload, report)
        self.console.info(log)
        return (
            dataclasses.replace(report, notices=(*report.notices, *notices)) if notices else report
        )

    def _api(self, inputs: Inputs, pull: PullRequest | MergeGroup) -> GitHub:
        """The REST API for the pull request's repository (``ApiError`` if it cannot be)."""
        try:
            timeout = float(self.env.get(API_TIMEOUT_ENV) or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        return GitHub(
            api_url=self.env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            repository=pull.repository,
            token=inputs.github_token,
            timeout=max(timeout, 0.05),
            debug=self.trace,
        )

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


def fingerprints_at(settings: Any, commit: str) -> frozenset[str] | None:
    """The fingerprints of the breaking changes the gate finds at ``commit`` (same base)."""
    from gate.approvals.fingerprint import fingerprint
    from gate.engine import run
    from gate.rules import Severity

    try:
        again = run(
            dataclasses.replace(
                settings,
                head=commit,
                pr_body=None,
                accept=(),
                accept_env=None,
                approved_by=(),
                reviews=None,
                smoke=False,
                trace=None,
                notices=(),
            )
        )
    except GateError:
        return None
    return frozenset(
        fingerprint(c) for c in again.changes if c.severity in (Severity.ERROR, Severity.WARNING)
    )


def _failed(message: str, workspace: str, console: Console) -> Outcome:
    """Fail closed: the error goes to the log, the summary, an annotation and the JSON report."""
    path = ""
    if os.path.isdir(workspace):
        path = write_report(workspace, error_report(message), console.info)
    return error_outcome(message, path)


def _refused(exc: ContractErrors, workspace: str, console: Console) -> Outcome:
    """Fail closed on every refused contract file: log, annotations, summary, JSON report."""
    from gate.report import refused

    console.info("\n".join(refused.text_lines(exc.errors, "schema-contract-gate")))
    path = ""
    if os.path.isdir(workspace):
        path = write_report(workspace, refused_report(exc.errors), console.info)
    return refused_outcome(exc.errors, path)


def main(env: MutableMapping[str, str] | None = None, stream: IO[str] | None = None) -> int:
    env = os.environ if env is None else env
    console = Console(stream or sys.stdout, debug=debug.enabled(env))
    started = time.monotonic()
    if console.debugging:
        debug.watch_git(console.debug)
    workspace = os.path.abspath(env.get("GITHUB_WORKSPACE") or os.getcwd())
    action = Action(env, console)
    try:
        outcome = action.run()
    except Skip as skip:
        outcome = skip_outcome(str(skip))
    except GateError as exc:
        if isinstance(exc, ContractErrors):
            outcome = _refused(exc, workspace, console)
        else:
            outcome = _failed(str(exc), workspace, console)
        # a contract the PR broke is news for reviewers; so is a stale "passed" comment
        outcome = with_comment(outcome, action.post_comment(outcome.summary, news=True))
    except KeyboardInterrupt:
        outcome = _failed("interrupted", workspace, console)
    except Exception as exc:  # fail closed: an internal error must not pass the check
        console.info(traceback.format_exc())
        outcome = _failed(
            f"internal error: {type(exc).__name__}: {exc} (please report it)", workspace, console
        )
    outcome = _check_run(action, outcome, env)
    _publish(outcome, env, console)
    console.debug(f"total: {time.monotonic() - started:.3f}s, exit code {outcome.exit_code}")
    return outcome.exit_code


def _check_run(action: Action, outcome: Outcome, env: Mapping[str, str]) -> Outcome:
    """The check run (``check_run.py``); whatever happens there, the exit code stays."""
    inputs, pull = action.inputs, action.pull
    try:
        published = check_run.attach(
            outcome,
            env,
            token=inputs.github_token if inputs else "",
            given_name=inputs.check_name if inputs else "",
            head_sha=pull.head_sha if pull else env.get("GITHUB_SHA", ""),
            repository=pull.repository if pull else env.get("GITHUB_REPOSITORY", ""),
            report=action.report,
            rebuild=action.rebuild,
            log=action.console.info,
            api_down=action.api_down,
        )
    except Exception as exc:  # fail closed: the verdict and exit code are the gate's
        action.console.info(f"check run: internal error {type(exc).__name__}: {exc}")
        return outcome
    return dataclasses.replace(published, exit_code=outcome.exit_code, verdict=outcome.verdict)


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
