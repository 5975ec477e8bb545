"""A refused run: the contract files the gate would not compare, in each output medium.

A refused run has no ``Report`` (nothing was compared), only the list of
``ContractError``s, so it renders here rather than in the report modules; each
medium reuses its module's escaping (``escape_line``, ``escape_data``/
``annotation``, ``code``; sarif, junit and gitlab render their own refusal),
because paths and messages quote the pull request.

Every medium shows at most ``CAP`` refusals and says how many it left out: a
pull request that breaks ten thousand files must not flood the log or the PR
comment, and the first fifty are plenty to start fixing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gate.model import ContractError
from gate.report import gitlab, junit, sarif
from gate.report.base import EXIT_ERROR
from gate.report.github import annotation, escape_data
from gate.report.markdown import code
from gate.report.text import escape_line

#: Refusals shown in any one medium; the rest are counted.
CAP = 50
#: The title of a refusal's workflow annotation.
TITLE = "contract refused"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(errors: Sequence[ContractError]) -> str:
    """One line that counts the refused files (and the errors, when a file has several)."""
    files = len({e.path for e in errors})
    counted = "" if files == len(errors) else f" ({_plural(len(errors), 'error')})"
    return f"refused {_plural(files, 'contract file')}{counted}; nothing was compared"


def message(errors: Sequence[ContractError]) -> str:
    """The run's one-line verdict: the error itself when alone (as before), else the count."""
    return str(errors[0]) if len(errors) == 1 else summary(errors)


def _more(errors: Sequence[ContractError], cap: int) -> str:
    return f"... and {len(errors) - cap} more (the first {cap} are listed)"


def text_lines(errors: Sequence[ContractError], prog: str) -> list[str]:
    """stderr: ``prog: error: path:line: message`` per refusal, then the count.

    One refusal is one line, exactly as before this list existed.
    """
    lines = [f"{prog}: error: {e}" for e in errors[:CAP]]
    if len(errors) > CAP:
        lines.append(f"{prog}: {_more(errors, CAP)}")
    if len(errors) > 1:
        lines.append(f"{prog}: {summary(errors)}")
    return [escape_line(line) for line in lines]


def to_dict(errors: Sequence[ContractError]) -> dict[str, Any]:
    """The JSON error object: the Action's ``verdict: error`` object, plus the refusals."""
    return {
        "version": 1,
        "verdict": "error",
        "message": message(errors),
        "exit_code": EXIT_ERROR,
        "errors": [{"path": e.path, "line": e.line, "message": e.detail} for e in errors[:CAP]],
        "errors_total": len(errors),
    }


def annotation_lines(errors: Sequence[ContractError], limit: int = CAP) -> list[str]:
    """One ``::error file=...,line=...`` per refusal, at most ``limit``."""
    return [annotation("error", e.path, e.line, TITLE, e.detail) for e in errors[:limit]]


def github(errors: Sequence[ContractError]) -> str:
    """``--format github``: the annotations, then the verdict, as a report ends."""
    verdict = message(errors)
    if len(errors) > CAP:
        verdict += f" ({_more(errors, CAP)})"
    return "\n".join([*annotation_lines(errors), f"::error::{escape_data(verdict)}"]) + "\n"


def markdown_table(errors: Sequence[ContractError]) -> list[str]:
    """The refusals as a table of code spans (inert whatever the PR wrote), then the count."""
    lines = ["| Where | Problem |", "|---|---|"]
    for error in errors[:CAP]:
        where = f"{error.path}:{error.line}" if error.line is not None else error.path
        cells = (code(where), code(error.detail))
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if len(errors) > CAP:
        lines += ["", f"{_more(errors, CAP)}."]
    return lines


def markdown(errors: Sequence[ContractError]) -> str:
    """``--format markdown``: a heading, the count, the table and what to do."""
    lines = [
        "## Schema contract gate: ⚠️ contract files refused",
        "",
        f"The gate {summary(errors)}: fix these files and re-run (the check fails closed).",
        "",
        *markdown_table(errors),
    ]
    return "\n".join(lines) + "\n"


def render(errors: Sequence[ContractError], fmt: str, prog: str) -> str:
    """The refusal in ``fmt`` (text: the stderr lines; the CLI prints them there)."""
    if fmt == "json":
        return json.dumps(to_dict(errors), indent=2) + "\n"
    if fmt == "github":
        return github(errors)
    if fmt == "markdown":
        return markdown(errors)
    if fmt == "sarif":
        return sarif.refused(errors, message(errors), CAP)
    if fmt == "junit":
        return junit.refused(errors, message(errors), CAP)
    if fmt == "gitlab":
        return gitlab.refused(errors, CAP)
    return "\n".join(text_lines(errors, prog)) + "\n"
