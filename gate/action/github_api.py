"""The GitHub REST calls the Action makes: the current PR body, and its own PR comment.

Every call is best effort: forks get read-only (or no) tokens, runners may have
no network, and the API has bad minutes. Each failure is an ``ApiError`` with a
short reason (and the HTTP status when there was one) that the caller turns
into a notice or a warning; the gate's verdict never depends on the API.

Safety:

- the owner/repo, numbers and comment ids are validated before they reach a
  URL; a pagination ``Link`` is followed only to the same API origin;
- the token travels only in an ``Authorization`` header that is not forwarded
  on redirects (``add_unredirected_header``) and never appears in a message;
- each request has a *total* deadline (connect, headers and body together): a
  server that trickles one byte a second cannot hold the job, which a socket
  timeout (per read) would allow;
- answers are size-capped and decoded by ``bounded_json`` (no nesting bombs).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gate import __version__
from gate.action.bounded_json import JsonError, describe
from gate.action.bounded_json import loads as load_json

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_TIMEOUT = 10.0
API_VERSION = "2022-11-28"
#: A page of 100 comments of at most 65,536 characters each is under 8 MiB of JSON.
MAX_RESPONSE = 16 * 1024 * 1024
#: Pages of 100 comments read when looking for the action's own comment.
MAX_PAGES = 50
#: Items a page is asked for (GitHub's most); a longer page is refused.
PER_PAGE = 100
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}\Z")
_NEXT = re.compile(r'<([^<>]+)>\s*;\s*rel="?next"?')
_CHUNK = 64 * 1024

T = TypeVar("T")
Debug = Callable[[str], None]


class ApiError(Exception):
    """A call failed; ``str(exc)`` is a reason safe to print, ``status`` the HTTP status if any."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.status = status


def within(seconds: float, work: Callable[[], T]) -> T:
    """Run ``work`` with a total deadline; past it, raise ``ApiError`` and leave it behind.

    The worker is a daemon thread: it cannot outlive the process, and its own
    socket timeout (the same number of seconds per read) ends it soon after.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, name="github-api", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ApiError(f"no answer within {seconds:g}s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _reason(err: BaseException, timeout: float) -> ApiError:
    if isinstance(err, urllib.error.HTTPError):
        return ApiError(f"HTTP {err.code} {err.reason}".strip(), status=err.code)
    if isinstance(err, urllib.error.URLError):
        if isinstance(err.reason, TimeoutError):
            return ApiError(f"no answer within {timeout:g}s")
        return ApiError(f"cannot reach the API: {err.reason}")
    if isinstance(err, TimeoutError):
        return ApiError(f"no answer within {timeout:g}s")
    return ApiError(f"request failed: {type(err).__name__}")


@dataclass(frozen=True)
class Answer:
    data: Any
    next_url: str | None = None


@dataclass
class GitHub:
    """One repository's REST API, seen through the workflow's token.

    Why one class past 200 lines: one short method per REST call the Action
    makes (PR, comments, reviews, teams, review requests, queue branches), all
    over the one ``call`` that holds the deadline, the size cap and the token.
    """

    api_url: str
    repository: str
    token: str = field(repr=False)
    timeout: float = DEFAULT_TIMEOUT
    debug: Debug | None = None
    #: ``time.monotonic()`` past which no request starts (a budget for several calls).
    deadline: float | None = None

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlsplit(self.api_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ApiError(f"GITHUB_API_URL is not an http(s) URL: {self.api_url!r}")
        owner, _, name = self.repository.partition("/")
        if not (_NAME.match(owner) and _NAME.match(name)) or name in (".", ".."):
            raise ApiError(f"not a repository name: {self.repository!r}")
        self._origin = (parsed.scheme, parsed.netloc)
        self.repo_url = f"{self.api_url.rstrip('/')}/repos/{owner}/{name}"

    # one request

    def call(self, method: str, url: str, body: Any = None) -> Answer:
        """``method url`` with a JSON body; the decoded answer and the next page's URL."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", API_VERSION)
        request.add_header("User-Agent", f"schema-contract-gate/{__version__}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        start = time.monotonic()
        timeout = self.timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - start)
            if timeout <= 0:
                raise ApiError("out of time for API calls")
        try:
            status, link, raw = within(timeout, lambda: self._send(request, timeout))
        except ApiError as err:
            self._debug(f"{method} {url}: {err} after {time.monotonic() - start:.2f}s")
            raise
        self._debug(
            f"{method} {url}: HTTP {status}, {len(raw)} bytes, {time.monotonic() - start:.2f}s"
        )
        try:
            decoded = load_json(raw) if raw.strip() else None
        except JsonError as err:
            raise ApiError(f"the answer {err}") from None
        return Answer(decoded, self._next(link))

    def _send(self, request: urllib.request.Request, timeout: float) -> tuple[int, str, bytes]:
        """The request itself (in the deadline's worker thread)."""
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        size = 0
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                while chunk := response.read1(_CHUNK):  # what one read brought, no more
                    if time.monotonic() > deadline:
                        raise ApiError(f"no answer within {timeout:g}s")
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_RESPONSE:
                        raise ApiError("the answer is too large")
                return response.status, response.headers.get("Link", ""), b"".join(chunks)
        except ApiError:
            raise
        except (OSError, ValueError, http.client.HTTPException) as err:  # reset, bad status, ...
            raise _reason(err, timeout) from None

    def _next(self, link: str) -> str | None:
        """The ``rel="next"`` page, only on the API's own origin (the token goes there too)."""
        match = _NEXT.search(link or "")
        if not match:
            return None
        url = match.group(1)
        parsed = urllib.parse.urlsplit(url)
        if (parsed.scheme, parsed.netloc) != self._origin or not url.startswith(self.repo_url):
            self._debug(f"not following a next page off the API: {url[:200]!r}")
            return None
        return url

    def _debug(self, text: str) -> None:
        if self.debug is not None:
            self.debug(text)

    # the calls

    def pull(self, number: int) -> dict[str, Any]:
        """The pull request object as it is now (``ApiError`` if the answer is not one)."""
        pull = self.call("GET", f"{self.repo_url}/pulls/{_number(number)}").data
        if not isinstance(pull, dict) or "body" not in pull:
            raise ApiError("the answer is not a pull request")
        return pull

    def pull_body(self, number: int) -> str:
        """The pull request's description as it is now (``""`` when it is empty)."""
        return body_of(self.pull(number))

    def queue_refs(self, base_branch: str) -> list[tuple[str, str]]:
        """The merge queue's branches for ``base_branch``: (full ref, commit sha) each.

        ``GET /repos/{o}/{r}/git/matching-refs/heads/gh-readonly-queue/<base>/``
        (the Git database API; ``contents: read``). The answer is not paged.
        """
        quoted = urllib.parse.quote(base_branch, safe="/")
        url = f"{self.repo_url}/git/matching-refs/heads/gh-readonly-queue/{quoted}/"
        data = self.call("GET", url).data
        if not isinstance(data, list):
            raise ApiError("the answer is not a list of refs")
        out = []
        for item in data:
            target = item.get("object") if isinstance(item, dict) else None
            ref = item.get("ref") if isinstance(item, dict) else None
            sha = target.get("sha") if isinstance(target, dict) else None
            if isinstance(ref, str) and isinstance(sha, str):
                out.append((ref, sha))
        return out

    def comments(self, number: int, max_pages: int = MAX_PAGES) -> Iterator[dict[str, Any]]:
        """The pull request's conversation comments, oldest first, page by page."""
        url: str | None = f"{self.repo_url}/issues/{_number(number)}/comments?per_page=100"
        pages = 0
        while url is not None:
            pages += 1
            if pages > max_pages:
                raise ApiError(f"more than {max_pages * 100} comments: not searched further")
            answer = self.call("GET", url)
            if not isinstance(answer.data, list):
                raise ApiError("the answer is not a list of comments")
            yield from (item for item in answer.data if isinstance(item, dict))
            url = answer.next_url

    def reviews(self, number: int, max_pages: int = MAX_PAGES) -> list[dict[str, Any]]:
        """The pull request's reviews, oldest first, every page (``ApiError`` past ``max_pages``)."""
        url: str | None = f"{self.repo_url}/pulls/{_number(number)}/reviews?per_page={PER_PAGE}"
        out: list[dict[str, Any]] = []
        pages = 0
        while url is not None:
            pages += 1
            if pages > max_pages:
                raise ApiError(
                    f"more than {max_pages} pages of reviews ({len(out):,} read): not read further"
                )
            answer = self.call("GET", url)
            if not isinstance(answer.data, list):
                raise ApiError("the answer is not a list of reviews")
            if len(answer.data) > PER_PAGE:  # not GitHub's answer: bounded memory
                raise ApiError(f"a page of {len(answer.data):,} reviews, asked {PER_PAGE}")
            out += [item for item in answer.data if isinstance(item, dict)]
            url = answer.next_url
        return out

    def team_member(self, org: str, team: str, login: str) -> bool | None:
        """Whether ``login`` is an active member of ``@org/team``; ``None``: cannot tell.

        ``GET /orgs/{org}/teams/{team}/memberships/{login}`` needs a token that
        may read the organisation's members (``members: read`` for a GitHub App,
        ``read:org`` for a personal token); the workflow's ``GITHUB_TOKEN`` has
        neither, and then the answer is 403 or 404 for everyone. So only an
        ``active`` membership is a yes; any error is "unverifiable", never a yes.
        """
        if not all(_NAME.match(part) for part in (org, team, login)):
            return None
        root = self.api_url.rstrip("/")
        try:
            data = self.call("GET", f"{root}/orgs/{org}/teams/{team}/memberships/{login}").data
        except ApiError:
            return None
        return isinstance(data, dict) and data.get("state") == "active"

    def requested_reviewers(self, number: int) -> tuple[set[str], set[str]]:
        """Who is asked for a review now: lower-cased user logins and team slugs."""
        url = f"{self.repo_url}/pulls/{_number(number)}/requested_reviewers"
        data = self.call("GET", url).data
        if not isinstance(data, dict):
            raise ApiError("the answer is not a list of requested reviewers")

        def names(key: str, field_name: str) -> set[str]:
            items = data.get(key)
            return {
                item[field_name].lower()
                for item in (items if isinstance(items, list) else [])
                if isinstance(item, dict) and isinstance(item.get(field_name), str)
            }

        return names("users", "login"), names("teams", "slug")

    def request_reviewers(self, number: int, users: list[str], teams: list[str]) -> None:
        """``POST .../requested_reviewers``: ask ``users`` (logins) and ``teams`` (slugs)."""
        for name in (*users, *teams):
            if not _NAME.match(name):
                raise ApiError(f"not a user or team name: {describe(name, 40)}")
        url = f"{self.repo_url}/pulls/{_number(number)}/requested_reviewers"
        self.call("POST", url, {"reviewers": users, "team_reviewers": teams})

    def create_comment(self, number: int, body: str) -> tuple[int, str]:
        """Post a comment on the pull request; its id and web URL."""
        url = f"{self.repo_url}/issues/{_number(number)}/comments"
        return comment_ref(self.call("POST", url, {"body": body}).data)

    def update_comment(self, comment: int, body: str) -> tuple[int, str]:
        """Replace a comment's body; its id and web URL."""
        url = f"{self.repo_url}/issues/comments/{_number(comment)}"
        return comment_ref(self.call("PATCH", url, {"body": body}).data)


def body_of(pull: dict[str, Any]) -> str:
    """A pull request object's description (``""`` when it is empty)."""
    body = pull.get("body")
    if body is None:
        return ""
    if not isinstance(body, str):
        raise ApiError("the pull request body is not text")
    return body


def _number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ApiError(f"not a valid number: {describe(value, 40)}")
    return value


def comment_ref(data: object) -> tuple[int, str]:
    """The ``id`` (validated) and ``html_url`` of a comment object from the API."""
    if not isinstance(data, dict):
        raise ApiError("the answer is not a comment")
    url = data.get("html_url")
    return _number(data.get("id")), url if isinstance(url, str) else ""
