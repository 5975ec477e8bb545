"""The JSON report in the workspace, where later steps (upload-artifact) pick it up.

The workspace holds the pull request's files, so the report folder or file may
be a symlink (or something stranger) the PR committed: nothing here follows one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gate.action.console import REPORT_DIR, REPORT_PATH
from gate.action.git import give_to_owner


def _write_file(path: Path, content: str) -> None:
    """Write without following a symlink the pull request may have committed there."""
    if path.is_symlink():
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)


def write_report(workspace: str, content: str, log: Callable[[str], None]) -> str:
    """Write the JSON report into the workspace; return its workspace-relative path.

    The folder holds a ``.gitignore`` of ``*`` so the report never shows up in
    ``git status`` or gets committed by a later step. A failure is logged and
    gives ``""``: the verdict does not depend on the file.
    """
    folder = Path(workspace, REPORT_DIR)
    try:
        if folder.is_symlink():  # the PR could commit one pointing anywhere
            raise OSError(f"{REPORT_DIR} is a symlink")
        folder.mkdir(exist_ok=True)
        _write_file(folder / ".gitignore", "# written by schema-contract-gate; never commit\n*\n")
        _write_file(folder / "report.json", content)
    except OSError as exc:
        log(f"could not write {REPORT_PATH}: {getattr(exc, 'strerror', None) or exc}")
        return ""
    give_to_owner(str(folder), like=workspace)
    return REPORT_PATH
