"""The acknowledgements a run was given: the PR body, the flags, the environment.

``gate.acks`` parses and applies them; this module gathers them from their
three places, and names the PR body lines that look like one but are not.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate import acks


def breaking_tokens(
    pr_body: str | None, accept: Sequence[str], accept_env: str | None
) -> list[acks.Token]:
    """``accept-breaking-change`` tokens: PR body, ``--accept``, ``ACCEPT_BREAKING_CHANGE``."""
    tokens = acks.parse_pr_body(pr_body or "")
    tokens += acks.parse_list(",".join(accept), "--accept")
    tokens += acks.parse_list(accept_env, "ACCEPT_BREAKING_CHANGE")
    return tokens


def consumer_tokens(
    pr_body: str | None, accept: Sequence[str], accept_env: str | None
) -> list[acks.Token]:
    """``accept-consumer-break`` tokens: PR body, the flag, ``ACCEPT_CONSUMER_BREAK``."""
    key = acks.CONSUMER_KEY
    tokens = acks.parse_pr_body(pr_body or "", key)
    tokens += acks.parse_list(",".join(accept), "--accept-consumer-break", key)
    tokens += acks.parse_list(accept_env, "ACCEPT_CONSUMER_BREAK", key)
    return tokens


def near_miss_notices(pr_body: str | None) -> list[str]:
    """A notice for each PR body line that mentions a key but acknowledges nothing."""
    notices = []
    for number in acks.near_misses(pr_body or ""):
        notices.append(
            f"PR body line {number} mentions accept-breaking-change but acknowledges nothing: "
            "start the line with 'accept-breaking-change: <dataset>' (a list bullet is fine; "
            "a quote, a checkbox, raw HTML or another spelling of the key is not)"
        )
    for number in acks.near_misses(pr_body or "", acks.CONSUMER_KEY):
        notices.append(
            f"PR body line {number} mentions accept-consumer-break but clears nothing: "
            "start the line with 'accept-consumer-break: <path of the consumer file>'"
        )
    return notices
