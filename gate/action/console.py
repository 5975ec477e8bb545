"""What the runner reads back from a step: the log (with workflow commands), the
outputs file and the job summary.

Untrusted text only ever reaches the log between ``::stop-commands::`` markers,
so a column named ``"x\\n::error::..."`` cannot forge workflow commands; the
only live commands are the ones this package builds with escaped values.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import IO

#: Where the JSON report goes, relative to the workspace (host steps see the same path).
REPORT_DIR = ".schema-gate"
REPORT_PATH = f"{REPORT_DIR}/report.json"
#: A step summary may hold 1 MiB; keep a margin for the truncation note.
SUMMARY_LIMIT = 1024 * 1024 - 4096


class Console:
    """The step log. Commands are off by default; only ``command`` turns them on briefly."""

    def __init__(self, stream: IO[str], debug: bool = False) -> None:
        self._stream = stream
        self._token: str | None = None
        self.debugging = debug

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

    def debug(self, text: str) -> None:
        """A ``::debug::`` line (shown with debug logging), its value escaped like data."""
        if not self.debugging:
            return
        from gate.escapes import escape_data

        self.resume_commands()
        self._write(f"::debug::{escape_data(text)}")

    def commands(self, lines: list[str]) -> None:
        """Workflow commands built by this package, with escaped values."""
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


def limit_summary(
    markdown: str, limit: int = SUMMARY_LIMIT, where: str = "step summaries hold 1 MiB"
) -> str:
    """Cut Markdown that GitHub would refuse (a summary over 1 MiB, a comment over
    65,536 characters) between findings, saying how many were left out (``bounds.py``)."""
    from gate.action.bounds import bound

    return bound(markdown, limit, where)
