"""Reading one external source's bytes: a file in the repository or an https URL.

Bounded in size and time, never through a shell. The locations come from the
base side's config (``gate.lineage.settings``), yet what they serve is still
untrusted: a manifest is as big as another team makes it, a server can stall.

- **A path** is read at the base commit, through git, like every base-side
  file. When the base commit does not hold it (a CI artifact downloaded next to
  the checkout, untracked), it is read from the working tree, inside the
  repository, unless the pull request's HEAD commit holds a file there: that
  file is the pull request's own, and a pull request does not choose the
  evidence its severity is graded on.
- **A URL** must be ``https://``; ``http://`` only to ``127.0.0.1``,
  ``localhost`` or ``[::1]`` (a sidecar, and the tests). Redirects are followed
  only to URLs that pass the same rule, and from a remote host never to this
  machine. A malformed URL or a garbled answer is a ``SourceError``.
- **Size**: at most ``MAX_SOURCE_BYTES``; a bigger answer is refused, not cut.
- **Time**: every source of a run shares one deadline (``timeout_seconds``).

:func:`read_bounded` is the one bounded HTTP reader of the lineage sources: the
manifests and exports here (:func:`fetch_url`) and the lineage API
(``gate.lineage.marquez``). Each caller passes its redirect policy (manifests:
:func:`refuse_remote_to_local`; the API: the same origin only) and words the
failures in its own messages.
"""

from __future__ import annotations

import functools
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gate.git import Repo
from gate.git.paths import TooLarge, relpath
from gate.model import GateError

# urllib.request, urllib.error and http.client (with ssl, email: ~15-30 ms of
# imports) are imported when a URL is fetched: most runs read a manifest or an
# export from a path, or nothing.

#: Bytes of one external source (a large dbt project's manifest is ~30 MB).
MAX_SOURCE_BYTES = 64 * 1024 * 1024

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
_CHUNK = 1 << 16


class SourceError(Exception):
    """A source that could not be read; the message says why, in one line."""


@dataclass
class Deadline:
    """The time every external source of one run shares."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise SourceError("timed out (lineage.timeout_seconds)")
        return left


def is_url(location: str) -> bool:
    return "://" in location


def url_problem(url: str) -> str | None:
    """What keeps the gate from fetching ``url``, or ``None``: one rule for every
    lineage source (a manifest URL, the lineage API), each caller wording it.

    ``"invalid"``: it does not parse (a bad port, a bracket); ``"credentials"``: it
    carries a user or password, which every warning naming the source would print;
    ``"scheme"``: not https, nor http to this machine.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return "invalid"
    if parts.username is not None or parts.password is not None:
        return "credentials"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host in LOCAL_HOSTS:
        return None
    return "scheme"


def check_url(url: str) -> str:
    """``url`` if the gate may fetch it, else ``SourceError`` saying why."""
    problem = url_problem(url)
    if problem == "invalid":
        raise SourceError(f"not a valid URL: {url}")
    if problem == "credentials":
        raise SourceError("credentials in a lineage source URL are refused (they would be printed)")
    if problem == "scheme":
        raise SourceError(
            "only https:// URLs are fetched (http:// only from 127.0.0.1 or localhost)"
        )
    return url


class HttpFailure(Exception):
    """Why :func:`read_bounded` got no body; each caller words it for its own messages.

    ``kind`` is one of: ``"status"`` (an HTTP error status, ``cause`` is the
    ``HTTPError``, its body still readable), ``"url"`` (a ``URLError``:
    refused, unresolved, a timeout while connecting), ``"timeout"``,
    ``"os"`` (a reset, a socket error), ``"protocol"`` (an
    ``http.client.HTTPException``: a bad status line, a cut-off body),
    ``"value"`` (a URL ``http.client`` refuses), ``"declared"`` (a
    ``Content-Length`` over the bound, in ``size``) and ``"over"`` (more bytes
    arrived than the bound).
    """

    def __init__(self, kind: str, cause: BaseException | None = None, size: int = 0) -> None:
        super().__init__(kind)
        self.kind = kind
        self.cause = cause
        self.size = size


#: A redirect policy: called with (from, to) before a redirect is followed; it
#: raises the caller's own error to refuse it, which reaches the caller as is.
RedirectPolicy = Callable[[str, str], None]


def refuse_remote_to_local(came_from_url: str, newurl: str) -> None:
    """The manifests' policy: only to a URL the gate may fetch, and from a remote
    host never to this machine (a remote host is someone else's: it does not
    point the gate at this machine)."""
    check_url(newurl)
    came_from = (urllib.parse.urlsplit(came_from_url).hostname or "").lower()
    going_to = (urllib.parse.urlsplit(newurl).hostname or "").lower()
    if going_to in LOCAL_HOSTS and came_from not in LOCAL_HOSTS:
        raise SourceError(f"redirected from {came_from} to this machine ({going_to}); refused")


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the port defaulted from the scheme."""
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


@functools.cache
def _redirects_class() -> type:
    """The redirect handler class, built on first use (``urllib.request`` is imported then)."""
    import urllib.request

    class _Redirects(urllib.request.HTTPRedirectHandler):
        """Follow a redirect only when the caller's policy lets it (by default the manifests')."""

        def __init__(self, policy: RedirectPolicy = refuse_remote_to_local) -> None:
            self.policy = policy

        def redirect_request(
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            self.policy(req.full_url, newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return _Redirects


def __getattr__(name: str) -> Any:
    """``_Redirects`` stays importable from here, built on first use."""
    if name == "_Redirects":
        return _redirects_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_bounded(
    url: str,
    deadline: Deadline,
    max_bytes: int,
    redirects: RedirectPolicy,
    *,
    env_proxies: bool = True,
) -> bytes:
    """The body of a GET of ``url``: at most ``max_bytes``, before ``deadline``.

    The one bounded HTTP reader of the lineage sources. Its callers differ in
    their redirect policy (``redirects``) and in their wording, so every
    failure is an :class:`HttpFailure` for the caller to word; what the policy
    or the deadline raise passes through unchanged. ``env_proxies``: whether
    the ``*_proxy`` environment variables apply.
    """
    import http.client
    import urllib.error
    import urllib.request

    handlers: list[Any] = [] if env_proxies else [urllib.request.ProxyHandler({})]
    opener = urllib.request.build_opener(*handlers, _redirects_class()(redirects))
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with opener.open(request, timeout=deadline.left()) as response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise HttpFailure("declared", size=int(declared))
            chunks: list[bytes] = []
            size = 0
            while True:
                deadline.left()
                # read1: what has arrived; read(n) would wait for n bytes of a slow drip
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise HttpFailure("over", size=size)
                chunks.append(chunk)
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise HttpFailure("status", exc) from None
    except urllib.error.URLError as exc:
        raise HttpFailure("url", exc) from None
    except TimeoutError as exc:
        raise HttpFailure("timeout", exc) from None
    except OSError as exc:
        raise HttpFailure("os", exc) from None
    except http.client.HTTPException as exc:
        raise HttpFailure("protocol", exc) from None
    except ValueError as exc:
        raise HttpFailure("value", exc) from None


def fetch_url(url: str, deadline: Deadline, max_bytes: int = MAX_SOURCE_BYTES) -> bytes:
    """The body of ``url``, bounded in size and time (a manifest, an export)."""
    check_url(url)
    try:
        return read_bounded(url, deadline, max_bytes, refuse_remote_to_local)
    except HttpFailure as failure:
        raise SourceError(_manifest_words(failure, max_bytes)) from None


def _manifest_words(failure: HttpFailure, max_bytes: int) -> str:
    import urllib.error  # imported by read_bounded already

    cause = failure.cause
    if failure.kind == "declared":
        return f"{failure.size:,} bytes is over the {max_bytes:,}-byte bound"
    if failure.kind == "over":
        return f"more than {max_bytes:,} bytes"
    if isinstance(cause, urllib.error.HTTPError):
        return f"HTTP {cause.code} {cause.reason}"
    if isinstance(cause, urllib.error.URLError):
        return f"unreachable: {cause.reason}"
    if failure.kind == "timeout":
        return "timed out (lineage.timeout_seconds)"
    if failure.kind == "protocol":  # a bad status line, a cut-off body
        return f"not an HTTP answer ({type(cause).__name__})"
    if failure.kind == "value":  # a URL http.client refuses (a space, a control character)
        return f"not a valid URL: {cause}"
    return f"unreachable: {cause}"


def read_path(
    repo: Repo,
    base_commit: str,
    head_commit: str | None,
    path: str,
    max_bytes: int = MAX_SOURCE_BYTES,
) -> bytes:
    """A source file at the base commit, else an untracked one in the working tree."""
    try:
        rel = relpath(path)
        found, over = repo.read_files_within(base_commit, [rel], max_bytes)
        if rel in over:
            raise SourceError(f"{over[rel]:,} bytes is over the {max_bytes:,}-byte bound")
        if rel in found:
            return found[rel]
        # Compared without --head, the working tree's own commit holds the PR's
        # files: one committed there is no artifact either.
        pr_commit = head_commit if head_commit is not None else repo.resolve("HEAD")
        if repo.existing(pr_commit, [rel]):
            raise SourceError(
                "not on the base branch, and this pull request adds it; a pull request "
                "does not supply the evidence it is judged on"
            )
        if not repo.safe_path(rel).is_file():
            raise SourceError("no such file at the base commit or in the working tree")
        return repo.read_worktree(rel, max_bytes)
    except TooLarge as exc:
        raise SourceError(f"{exc.size:,} bytes is over the {exc.limit:,}-byte bound") from None
    except GateError as exc:  # a path that leaves the repository, a git failure
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"unreadable: {exc.strerror or exc}") from None
