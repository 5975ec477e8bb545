"""The sticky PR comment: one per workflow and job, found again by an HTML marker.

Reviewers read the conversation, not the job summary, so the report is posted
as a comment and *updated in place* on every run (no pile of bot comments).
The rules, after bufbuild/buf-action and oasdiff/oasdiff-action:

- the comment is found by ``<!-- schema-contract-gate: WORKFLOW/JOB -->`` at
  the start of its body, so two workflows (or jobs) keep one comment each;
- only comments by a bot (the workflow token posts as ``github-actions[bot]``)
  or by a repository owner, member or collaborator count: anyone can write the
  marker into a comment of their own, and the gate must not adopt it;
- a PR that has something to report (a blocking or acknowledged break, a
  warning, a failure) gets the comment; when it becomes clean, the comment is
  updated to say so; a PR that was always clean never gets one;
- every failure is reported, never raised: a read-only token (pull requests
  from forks) gives 403 and a notice that the job summary holds the report;
  any other failure (5xx, network) a warning. The verdict never changes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate import __version__
from gate.action.console import limit_summary
from gate.action.github_api import ApiError, GitHub
from gate.rules import Severity

if TYPE_CHECKING:
    from gate.report.base import Report

#: GitHub refuses comment bodies over 65,536 characters; bytes >= characters, so this is safe.
COMMENT_LIMIT = 60_000
#: Authors whose marked comment the action adopts (besides bots).
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
#: Seconds for the whole comment step (listing pages and writing), whatever the page count.
TOTAL_SECONDS = 60.0
_SAFE_NAME = re.compile(r"[^A-Za-z0-9 ._()/-]")
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_DIGITS = re.compile(r"[0-9]{1,20}\Z")


@dataclass(frozen=True)
class Posted:
    """What the comment step did, for the log, the summary and the outputs."""

    action: str  # created | updated | none | failed
    log: str  # one line for the log
    url: str = ""
    annotation: str = ""  # "", "notice" or "warning"
    summary_note: str = ""  # Markdown appended to the job summary


def safe_name(text: str, limit: int = 100) -> str:
    """A workflow or job name fit for an HTML comment and a Markdown line.

    Workflow files are part of the pull request, so the names are untrusted:
    anything but letters, digits and ``._()/-`` and spaces becomes ``_``
    (no ``-->`` can end the marker, no ``<``, ``[`` or backtick can start markup).
    """
    return _SAFE_NAME.sub("_", text.strip())[:limit].replace("--", "-_") or "_"


def marker(env: Mapping[str, str]) -> str:
    """The HTML comment that identifies this workflow's and job's comment."""
    workflow = safe_name(env.get("GITHUB_WORKFLOW", "") or "workflow")
    job = safe_name(env.get("GITHUB_JOB", "") or "job")
    return f"<!-- schema-contract-gate: {workflow}/{job} -->"


def has_news(report: Report) -> bool:
    """Whether the report has anything a reviewer must see (else the PR is clean)."""
    if not report.passed or report.unmatched_acknowledgements:
        return True
    return any(c.severity in (Severity.ERROR, Severity.WARNING) for c in report.changes)


def run_link(env: Mapping[str, str]) -> str:
    """A Markdown link to this workflow run, built only from validated parts."""
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repository = env.get("GITHUB_REPOSITORY", "")
    run_id = env.get("GITHUB_RUN_ID", "")
    # The names are PR-controlled (a PR can edit the workflow): a code span keeps
    # even the characters safe_name leaves (``_``) from forming emphasis.
    from gate.report.markdown import code

    label = code(
        f"{safe_name(env.get('GITHUB_WORKFLOW', '') or 'workflow')} / "
        + safe_name(env.get("GITHUB_JOB", "") or "job")
    )
    owner, _, name = repository.partition("/")
    plain = re.compile(r"[A-Za-z0-9_.-]{1,100}\Z")
    if (
        re.match(r"https?://[A-Za-z0-9.:-]+\Z", server)
        and plain.match(owner)
        and plain.match(name)
        and _DIGITS.match(run_id)
    ):
        return f"[{label}]({server}/{owner}/{name}/actions/runs/{run_id})"
    return label


def body(markdown: str, env: Mapping[str, str], head_sha: str, clean_now: bool) -> str:
    """The comment: marker, the Markdown report (escaped by its renderer), a footer."""
    sha = f" at `{head_sha[:12]}`" if _SHA.match(head_sha) else ""
    parts = [marker(env)]
    if clean_now:
        parts.append(
            "**✅ No breaking changes any more.** An earlier run of this check reported "
            "some; the latest one found none (details below).\n"
        )
    parts.append(
        limit_summary(
            markdown,
            limit=COMMENT_LIMIT,
            where="PR comments hold 65,536 characters",
        ).rstrip("\n")
    )
    parts.append(
        f"\n<sub>schema-contract-gate {__version__} · {run_link(env)}{sha} · "
        "this comment is updated on every run; `comment: false` turns it off.</sub>\n"
    )
    return "\n".join(parts)


def find(api: GitHub, number: int, mark: str) -> tuple[int, str] | None:
    """The id and URL of the oldest comment carrying ``mark`` by a trusted author."""
    for comment in api.comments(number):
        text = comment.get("body")
        if not isinstance(text, str) or not text.lstrip().startswith(mark):
            continue
        user = comment.get("user")
        by_bot = isinstance(user, dict) and user.get("type") == "Bot"
        if not by_bot and comment.get("author_association") not in TRUSTED_ASSOCIATIONS:
            continue
        found = comment.get("id")
        if isinstance(found, int) and not isinstance(found, bool) and found > 0:
            url = comment.get("html_url")
            return found, url if isinstance(url, str) else ""
    return None


def _failed(exc: ApiError, doing: str) -> Posted:
    if exc.status == 403:
        return Posted(
            "failed",
            f"could not {doing} the PR comment ({exc}): the token is read-only",
            annotation="notice",
            summary_note=(
                f"> **PR comment not posted** ({exc}): the token cannot write to this pull "
                "request, as for every pull request from a fork (or `permissions` without "
                "`pull-requests: write`). This job summary is the report.\n"
            ),
        )
    return Posted(
        "failed",
        f"could not {doing} the PR comment ({exc}); the job summary has the report",
        annotation="warning",
        summary_note=f"> **PR comment not updated** ({exc}). This job summary is the report.\n",
    )


def sync(
    api: GitHub,
    number: int,
    env: Mapping[str, str],
    markdown: str,
    news: bool,
    head_sha: str = "",
) -> Posted:
    """Create, update or leave the comment; never raises for API trouble."""
    api.deadline = time.monotonic() + TOTAL_SECONDS
    mark = marker(env)
    try:
        existing = find(api, number, mark)
    except ApiError as exc:
        return _failed(exc, "look for")
    if existing is None and not news:
        return Posted("none", "no PR comment: nothing to report and none to update")
    text = body(markdown, env, head_sha, clean_now=not news)
    try:
        if existing is None:
            new_id, url = api.create_comment(number, text)
            return Posted("created", f"PR comment {new_id} created", url=url)
        comment_id, url = existing
        _, new_url = api.update_comment(comment_id, text)
        return Posted("updated", f"PR comment {comment_id} updated", url=new_url or url)
    except ApiError as exc:
        return _failed(exc, "update" if existing else "create")
