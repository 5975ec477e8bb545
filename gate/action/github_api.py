"""The one GitHub REST call the Action makes: the *current* body of a pull request.

A re-run of a workflow replays the event payload of the first run, so an author
who adds ``accept-breaking-change:`` to the description and presses "Re-run"
would otherwise be judged on the old text. The call is best effort: forks get
read-only (or no) tokens and runners may have no network, so every failure is
an ``ApiError`` with a short reason the Action turns into a notice, and the
payload body is used instead.

Safety: the owner/repo and number are validated before they reach the URL; the
token travels only in an ``Authorization`` header that is not forwarded on
redirects (``add_unredirected_header``) and never appears in a message.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request

from gate import __version__

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_TIMEOUT = 10.0
API_VERSION = "2022-11-28"
#: A PR body is at most 65,536 characters; anything far larger is not an answer.
_MAX_RESPONSE = 4 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}\Z")


class ApiError(Exception):
    """The body could not be fetched; ``str(exc)`` is a reason safe to print."""


def pr_url(api_url: str, repository: str, number: int) -> str:
    """``{api}/repos/{owner}/{repo}/pulls/{number}``, refusing anything odd."""
    parsed = urllib.parse.urlsplit(api_url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ApiError(f"GITHUB_API_URL is not an http(s) URL: {api_url!r}")
    owner, _, name = repository.partition("/")
    if not (_NAME.match(owner) and _NAME.match(name)) or name in (".", ".."):
        raise ApiError(f"not a repository name: {repository!r}")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ApiError(f"not a pull request number: {number!r}")
    return f"{api_url.rstrip('/')}/repos/{owner}/{name}/pulls/{number}"


def fetch_pr_body(
    api_url: str, repository: str, number: int, token: str, timeout: float = DEFAULT_TIMEOUT
) -> str:
    """The pull request's description as it is now (``""`` when it is empty)."""
    url = pr_url(api_url, repository, number)
    request = urllib.request.Request(url, method="GET")
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", API_VERSION)
    request.add_header("User-Agent", f"schema-contract-gate/{__version__}")
    if token:
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = response.read(_MAX_RESPONSE + 1)
    except urllib.error.HTTPError as err:
        raise ApiError(f"HTTP {err.code} {err.reason}".strip()) from None
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, TimeoutError):
            raise ApiError(f"no answer within {timeout:g}s") from None
        raise ApiError(f"cannot reach the API: {reason}") from None
    except TimeoutError:
        raise ApiError(f"no answer within {timeout:g}s") from None
    except (OSError, ValueError) as err:  # connection reset, bad status line, ...
        raise ApiError(f"request failed: {type(err).__name__}") from None
    if len(data) > _MAX_RESPONSE:
        raise ApiError("the answer is too large")
    try:
        pull = json.loads(data)
    except ValueError:
        raise ApiError("the answer is not JSON") from None
    if not isinstance(pull, dict) or "body" not in pull:
        raise ApiError("the answer is not a pull request")
    body = pull["body"]
    if body is None:
        return ""
    if not isinstance(body, str):
        raise ApiError("the pull request body is not text")
    return body
