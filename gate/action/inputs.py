"""The action's inputs, as the runner hands them to a Docker action (``INPUT_<NAME>``).

The token is read here and removed from the environment at once, so git and
Spark (which inherit the environment) never see it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

from gate.model import UsageError
from gate.rules import Severity

#: Inputs declared in action.yml, in its order.
INPUTS = (
    "base",
    "contracts",
    "dialect",
    "accept",
    "accept-consumer-break",
    "fail-on",
    "config",
    "smoke-test",
    "sample-data",
    "spark-remote",
    "github-token",
    "pr-body",
    "comment",
    "check-name",
    "request-reviews",
)


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
    accept_consumer_break: tuple[str, ...] = ()
    fail_on: Severity | None = None
    config: str = ""
    smoke_test: bool = False
    sample_data: str = ""
    spark_remote: str = ""
    github_token: str = field(default="", repr=False)
    pr_body: str = ""
    comment: bool = True
    check_name: str = ""
    request_reviews: bool = False

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
            accept_consumer_break=_split(get_input(env, "accept-consumer-break")),
            fail_on=Severity(fail_on) if fail_on else None,
            config=get_input(env, "config"),
            smoke_test=_bool(get_input(env, "smoke-test"), "smoke-test"),
            sample_data=get_input(env, "sample-data"),
            spark_remote=get_input(env, "spark-remote"),
            github_token=token,
            pr_body=get_input(env, "pr-body"),
            comment=_bool(get_input(env, "comment") or "true", "comment"),
            check_name=get_input(env, "check-name"),
            request_reviews=_bool(get_input(env, "request-reviews"), "request-reviews"),
        )
