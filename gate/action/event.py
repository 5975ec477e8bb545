"""The event that started the run: the payload file GitHub writes at ``GITHUB_EVENT_PATH``.

Everything in the payload is untrusted (a fork writes its branch names and the
PR body); shas are validated before they go near git.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.action.bounded_json import JsonError, describe, loads
from gate.action.fetch import validate_sha
from gate.model import UsageError

PR_EVENTS = ("pull_request", "pull_request_target", "pull_request_review")


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
            raise UsageError(
                f"the event payload has no valid pull request number: {describe(number)}"
            )
        base = _object(pull.get("base"))
        head = _object(pull.get("head"))
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


def _object(value: object) -> dict[str, Any]:
    """A JSON object from the payload, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


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
        payload = loads(Path(path).read_bytes())
    except OSError as exc:
        if not required:
            return {}
        raise UsageError(f"cannot read the event payload {path}: {exc.strerror or exc}") from None
    except JsonError as exc:
        if not required:
            return {}
        raise UsageError(f"the event payload {path} {exc}") from None
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return payload
