"""Markdown cut to fit what GitHub stores, at finding boundaries, saying what was left out.

The limits, as GitHub documents them (and we count UTF-8 bytes, which is never
fewer than characters, so a body under the byte limit is under either reading):

- a PR (issue) comment body: "body is too long (maximum is 65536 characters)" is
  the REST API's 422 (docs.github.com/rest/issues/comments#create-an-issue-comment);
- a step summary: "$GITHUB_STEP_SUMMARY upload aborted, supports content up to a
  size of 1024k" (docs.github.com/actions/using-workflows/workflow-commands-for-
  github-actions#adding-a-markdown-summary: 1 MiB per step);
- a check run's ``output.summary`` and ``output.text``: "Maximum length: 65535
  characters" each (docs.github.com/rest/checks/runs#create-a-check-run,
  github/rest-api-description).

The reports put the verdict line first and the blocking findings right after it
(``gate.report.markdown``), so keeping a prefix keeps what matters. A cut lands
only between lines, never inside a table row (one finding each), a list item or
a code block: open ``<details>`` and fences are closed, and a last line says how
many findings were left out and where the full report is.
"""

from __future__ import annotations

import re

from gate.action.console import REPORT_PATH

COMMENT_BYTES = 65_536
SUMMARY_BYTES = 1024 * 1024
CHECK_RUN_BYTES = 65_535
#: Room for the closing tags and the "left out" note (itself well under 1 KiB).
_NOTE_ROOM = 2048
_FENCE = re.compile(r"(`{3,}|~{3,})")
_SEPARATOR = re.compile(r"\|(\s*:?-+:?\s*\|)+\s*\Z")

WHERE = (
    f"the full report is `{REPORT_PATH}` in the workspace, kept as the workflow's "
    "`schema-gate-report` artifact in the example workflow"
)


def size(text: str) -> int:
    """What GitHub's limits are checked against, counted conservatively: UTF-8 bytes."""
    return len(text.encode("utf-8"))


def _findings(lines: list[str]) -> int:
    """Table body rows among ``lines``: one finding each (notes and lists are not findings)."""
    count = 0
    for index, line in enumerate(lines):
        if line.startswith("|") and not _SEPARATOR.match(line):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not _SEPARATOR.match(following):  # not a header row
                count += 1
    return count


def _closes(line: str, fence: str) -> bool:
    """A closing fence: only the fence character, at least as many as the opener."""
    text = line.strip()
    return len(text) >= len(fence) and set(text) == {fence[0]}


def bound(markdown: str, limit: int, medium: str, where: str = WHERE) -> str:
    """``markdown`` if it fits in ``limit`` bytes, else a prefix cut between findings.

    ``medium`` names the limit for the note ("PR comments hold 65,536 characters").
    Linear in the text: one pass over its lines.
    """
    if size(markdown) <= limit:
        return markdown
    budget = max(limit - _NOTE_ROOM, 0)
    lines = markdown.split("\n")
    used = 0
    fence: str | None = None
    details = 0
    safe, safe_details = 0, 0  # lines kept where a cut breaks nothing, <details> open there
    for index, line in enumerate(lines):
        used += size(line) + 1
        if used > budget:
            break
        if fence is not None:
            if _closes(line, fence):
                fence = None
        else:
            opener = _FENCE.match(line.lstrip())
            if opener:
                fence = opener.group(1)
            else:
                details = max(details + line.count("<details>") - line.count("</details>"), 0)
        if fence is None:
            safe, safe_details = index + 1, details
    left_out = _findings(lines[safe:])
    what = f"{left_out} finding(s) left out" if left_out else "the rest of the report left out"
    note = f"**The report was cut here ({medium}): {what}.** {where[0].upper()}{where[1:]}."
    return "\n".join([*lines[:safe], "", *["</details>"] * safe_details, "", note, ""])
