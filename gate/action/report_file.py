"""The JSON report in the workspace, where later steps (upload-artifact) pick it up.

The workspace holds the pull request's files (and whatever earlier steps left),
so the report folder or file may be a symlink, a FIFO or a device: nothing here
follows, waits on or writes into one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from gate.action.console import REPORT_DIR, REPORT_PATH
from gate.action.fetch import give_to_owner


def _write_file(path: Path, content: str) -> None:
    """Write a regular file, never through a symlink and never into a FIFO or device.

    A symlink (the PR may commit one) is replaced. Anything else that is not a
    regular file (a FIFO an earlier step left there would block ``open`` until
    someone reads it) is refused. ``O_NONBLOCK`` covers the race between the
    check and the ``open``: a FIFO without a reader then fails at once, one
    with a reader fails the ``fstat`` check.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        path.unlink()
    elif info is not None and not stat.S_ISREG(info.st_mode):
        raise OSError(f"{path.name} is not a regular file")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
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
