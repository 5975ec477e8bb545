"""A stateful stand-in for the GitHub REST endpoints the Action calls, on 127.0.0.1.

It keeps a pull request's body and its conversation comments and answers like
GitHub does (as documented at docs.github.com/rest, API version 2022-11-28):

- ``GET  /repos/{o}/{r}/pulls/{n}``: the pull request (its ``body``);
- ``GET  /repos/{o}/{r}/issues/{n}/comments?per_page=&page=``: a page of
  comments, oldest first, with a ``Link`` header (``rel="next"``/``"last"``)
  when there are more; ``page_size`` caps ``per_page`` so pagination shows
  with a few hundred comments;
- ``POST /repos/{o}/{r}/issues/{n}/comments``: 201 and the new comment, posted
  as ``github-actions[bot]`` (``user.type`` "Bot");
- ``PATCH /repos/{o}/{r}/issues/comments/{id}``: 200 and the updated comment;
- ``GET  /repos/{o}/{r}/pulls/{n}/reviews?per_page=&page=``: a page of
  ``reviews`` (oldest first), paginated like the comments;
- ``GET  /orgs/{org}/teams/{slug}/memberships/{user}``: ``{"state": "active"}``
  for a member of ``teams``, else 404; with ``teams=None`` (the workflow's
  ``GITHUB_TOKEN``, which cannot read members) 403 for every team.
- ``GET/POST /repos/{o}/{r}/pulls/{n}/requested_reviewers``: who is asked for a
  review (``requested_users``, ``requested_teams``); a POST adds ``reviewers``
  and ``team_reviewers`` and answers 201, or 422 "Reviews may only be requested
  from collaborators" when a login is not in ``collaborators`` (``None``:
  everyone is one) or is the author (``author``);
- ``GET /repos/{o}/{r}/git/matching-refs/{prefix}``: the ``refs`` (full ref ->
  commit sha) that start with ``refs/<prefix>``, as ``[{ref, object: {sha}}]``
  (an empty list when none does, as GitHub answers);
- ``POST /repos/{o}/{r}/check-runs`` and ``PATCH /repos/{o}/{r}/check-runs/{id}``:
  only with ``checks=True`` (the token's ``checks: write``), else 403 "Resource
  not accessible by integration" as GitHub answers; the Checks API's limits
  are enforced: more than 50 annotations in one request, a missing ``name``,
  ``head_sha``, ``output.title`` or ``output.summary``, or a summary or text
  over 65,535 characters is a 422; annotations of each PATCH are appended.

``fail`` maps a method (``"GET"``, ``"POST"``, ``"PATCH"``) or a path prefix to a
status to answer instead, with GitHub's error shape (``{"message": ...}``): 403
"Resource not accessible by integration" is what a fork's read-only token gets.
Every request is recorded (method, path, headers, JSON body).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.local_http import LocalHTTPServer

REASONS = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    500: "Internal Server Error",
    502: "Server Error",
    503: "Service Unavailable",
}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeGitHub:
    repository: str = "acme/shop"
    number: int = 1
    pull_body: str | None = "Drops the note column."
    page_size: int = 100
    comments: list[dict[str, Any]] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)
    checks: bool = False
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    #: "org/slug" -> member logins; None: the token cannot read team members.
    teams: dict[str, set[str]] | None = None
    author: str = "dev"
    collaborators: set[str] | None = None
    requested_users: list[str] = field(default_factory=list)
    requested_teams: list[str] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)
    _next_id: int = 1000
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # test helpers

    def add_comment(
        self, body: str, login: str = "someone", kind: str = "User", association: str = "NONE"
    ) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            comment = {
                "id": self._next_id,
                "node_id": f"IC_{self._next_id}",
                "html_url": f"https://github.com/{self.repository}/pull/{self.number}"
                f"#issuecomment-{self._next_id}",
                "body": body,
                "user": {"login": login, "type": kind},
                "author_association": association,
            }
            self.comments.append(comment)
        return comment

    def add_review(
        self, login: str, state: str, commit_id: str, kind: str = "User"
    ) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            review = {
                "id": self._next_id,
                "user": {"login": login, "type": kind},
                "state": state,
                "commit_id": commit_id,
                "submitted_at": f"2026-01-01T00:00:{len(self.reviews):02d}Z",
            }
            self.reviews.append(review)
        return review

    def ours(self) -> list[dict[str, Any]]:
        """Comments carrying the action's marker."""
        return [c for c in self.comments if "<!-- schema-contract-gate:" in c["body"]]

    def writes(self) -> list[Seen]:
        """Writes to the pull request's comments (the check run's are ``check_writes``)."""
        return [
            r
            for r in self.requests
            if r.method in ("POST", "PATCH") and "/check-runs" not in r.path
        ]

    def check_writes(self) -> list[Seen]:
        return [r for r in self.requests if "/check-runs" in r.path]

    def _check_run(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if not self.checks:
            return 403, {"message": REASONS[403]}, {}
        if not isinstance(body, dict):
            return 422, {"message": "Validation Failed"}, {}
        output = body.get("output") or {}
        annotations = output.get("annotations") or []
        if len(annotations) > 50:
            return 422, {"message": "Validation Failed: only 50 annotations per request"}, {}
        if output and not (
            isinstance(output.get("title"), str) and isinstance(output.get("summary"), str)
        ):
            return 422, {"message": "Validation Failed: output needs a title and summary"}, {}
        for key in ("summary", "text"):
            if len(output.get(key) or "") > 65_535:
                return 422, {"message": f"Validation Failed: {key} is too long"}, {}
        for item in annotations:
            if not all(
                k in item for k in ("path", "start_line", "end_line", "annotation_level", "message")
            ) or item["annotation_level"] not in ("notice", "warning", "failure"):
                return 422, {"message": "Validation Failed: annotation"}, {}
        with self._lock:
            if method == "POST":
                if not (body.get("name") and body.get("head_sha")):
                    return 422, {"message": "Validation Failed"}, {}
                self._next_id += 1
                run = {
                    "id": self._next_id,
                    "html_url": f"https://github.com/{self.repository}/runs/{self._next_id}",
                    **{k: v for k, v in body.items() if k != "output"},
                    "output": {**output, "annotations": list(annotations)},
                }
                self.check_runs.append(run)
                return 201, run, {}
            match = re.fullmatch(rf"/repos/{self.repository}/check-runs/(\d+)", path)
            for run in self.check_runs:
                if match and run["id"] == int(match.group(1)):
                    run["output"] = {
                        **run["output"],
                        **output,
                        "annotations": run["output"]["annotations"] + list(annotations),
                    }
                    return 200, run, {}
        return 404, {"message": "Not Found"}, {}

    # serving

    def answer(self, method: str, url: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        parsed = urlsplit(url)
        path = parsed.path
        for key, status in self.fail.items():
            if key == method or path.startswith(key):
                return status, {"message": REASONS.get(status, "error")}, {}
        repo = f"/repos/{self.repository}"
        if path.startswith(f"{repo}/check-runs") and method in ("POST", "PATCH"):
            return self._check_run(method, path, body)
        if method == "GET" and path == f"{repo}/pulls/{self.number}":
            return 200, {"number": self.number, "body": self.pull_body, "state": "open"}, {}
        if method == "GET" and path == f"{repo}/pulls/{self.number}/reviews":
            return self._page(parsed.query, self.reviews, "pulls", "reviews")
        if method == "GET" and path.startswith(f"{repo}/git/matching-refs/"):
            prefix = "refs/" + unquote(path[len(f"{repo}/git/matching-refs/") :])
            return (
                200,
                [
                    {"ref": ref, "object": {"sha": sha, "type": "commit"}}
                    for ref, sha in sorted(self.refs.items())
                    if ref.startswith(prefix)
                ],
                {},
            )
        if path == f"{repo}/pulls/{self.number}/requested_reviewers":
            return self._requested(method, body)
        member = re.fullmatch(r"/orgs/([^/]+)/teams/([^/]+)/memberships/([^/]+)", path)
        if member and method == "GET":
            if self.teams is None:
                return 403, {"message": REASONS[403]}, {}
            org, slug, login = member.groups()
            if login in self.teams.get(f"{org}/{slug}", set()):
                return 200, {"state": "active", "role": "member"}, {}
            return 404, {"message": "Not Found"}, {}
        if path == f"{repo}/issues/{self.number}/comments":
            if method == "GET":
                return self._page(parsed.query)
            if method == "POST" and isinstance(body, dict) and isinstance(body.get("body"), str):
                return 201, self.add_comment(body["body"], "github-actions[bot]", "Bot"), {}
            return 422, {"message": "Validation Failed"}, {}
        match = re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)
        if match and method == "PATCH":
            for comment in self.comments:
                if comment["id"] == int(match.group(1)):
                    comment["body"] = body["body"]
                    return 200, comment, {}
        return 404, {"message": "Not Found"}, {}

    def _requested(self, method: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if method == "POST":
            if not isinstance(body, dict):
                return 422, {"message": "Validation Failed"}, {}
            users = body.get("reviewers") or []
            teams = body.get("team_reviewers") or []
            for login in users:
                if login.lower() == self.author.lower() or (
                    self.collaborators is not None
                    and login.lower() not in {c.lower() for c in self.collaborators}
                ):
                    return 422, {"message": "Reviews may only be requested from collaborators."}, {}
            self.requested_users += [u for u in users if u not in self.requested_users]
            self.requested_teams += [t for t in teams if t not in self.requested_teams]
            return 201, {"number": self.number}, {}
        if method != "GET":
            return 404, {"message": "Not Found"}, {}
        return (
            200,
            {
                "users": [{"login": u, "type": "User"} for u in self.requested_users],
                "teams": [{"slug": t, "name": t} for t in self.requested_teams],
            },
            {},
        )

    def _page(
        self,
        query: str,
        everything: list[dict[str, Any]] | None = None,
        kind: str = "issues",
        what: str = "comments",
    ) -> tuple[int, Any, dict[str, str]]:
        everything = self.comments if everything is None else everything
        params = parse_qs(query)
        per_page = min(int(params.get("per_page", ["30"])[0]), 100, self.page_size)
        page = int(params.get("page", ["1"])[0])
        items = everything[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(everything) // per_page))
        headers = {}
        if page < last:
            base = f"{self.url}/repos/{self.repository}/{kind}/{self.number}/{what}"
            headers["Link"] = (
                f'<{base}?per_page={per_page}&page={page + 1}>; rel="next", '
                f'<{base}?per_page={per_page}&page={last}>; rel="last"'
            )
        return 200, items, headers

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                fake.requests.append(
                    Seen(self.command, self.path, dict(self.headers.items()), body)
                )
                status, data, headers = fake.answer(self.command, self.path, body)
                out = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(out)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PATCH = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = LocalHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
