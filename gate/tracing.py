"""The engine's trace hook: each step of a run, what it read, and its time.

``Settings.trace`` takes a ``Trace``; the engine calls it once a step ends,
with the step's name, a one-line summary, the seconds it took and detail
lines (the files it read). Without one (the default) nothing is measured or
described. ``gate.action.debug`` installs one that prints ``::debug::`` lines
for GitHub's "Re-run with debug logging".

The step names are the ones the debug output has always shown (they name the
functions the steps were once found by), so the documented log stays the same.
Git reads are traced by ``traced_repo``: a ``Repo`` whose reads report to the
hook, handed to every reader of the run in place of the plain one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from gate.git import FileChange, PendingSearch, Repo

T = TypeVar("T")

#: Step names, as the debug output shows them.
CONFIG = "gate.engine.load_config"
PARSE = "gate.engine.parse_many"
DIFF = "gate.engine.diff_datasets"
CONSUMERS = "gate.engine.scan_consumers"
LINEAGE = "gate.lineage.downstream"
SMOKE = "gate.engine._smoke"


class Trace(Protocol):
    """Called once per step: its name, a one-line summary, its seconds, detail lines."""

    def __call__(
        self, step: str, summary: str, seconds: float, details: Sequence[str] = ()
    ) -> None: ...


def timed(
    trace: Trace | None,
    step: str,
    call: Callable[[], T],
    describe: Callable[[T], Sequence[str]],
) -> T:
    """``call()``, reported to ``trace`` as ``step`` with ``describe(result)``.

    ``describe`` gives the summary first, then detail lines. A description that
    fails must not fail the run: the step is reported as not described.
    """
    if trace is None:
        return call()
    start = time.monotonic()
    result = call()
    seconds = time.monotonic() - start
    try:
        lines = list(describe(result))
    except Exception as exc:  # the trace is a view of the run, never a part of it
        lines = [f"(not described: {type(exc).__name__})"]
    trace(step, lines[0] if lines else "", seconds, lines[1:])
    return result


def changed_files(
    result: Sequence[FileChange], base: str, head: str | None, globs: Iterable[str]
) -> list[str]:
    lines = [
        f"{len(result)} changed contract file(s) between {base[:12]} and {head or 'the worktree'}"
        f" for {', '.join(globs)}"
    ]
    lines += [f"{c.status} {c.old_path or '-'} -> {c.new_path or '-'}" for c in result]
    return lines


def parsed_files(
    result: Sequence[object], items: Sequence[tuple[bytes, str, str, object]]
) -> list[str]:
    from gate.model import ContractError

    errors = sum(isinstance(r, ContractError) for r in result)
    lines = [f"parsed {len(items)} contract file(s): {len(result) - errors} read, {errors} not"]
    lines += [f"read {path} ({side}, {len(data)} bytes)" for data, path, side, _p in items]
    return lines


class _TracedSearch:
    """A ``PendingSearch`` whose ``result()`` reports to the hook."""

    def __init__(self, search: PendingSearch, trace: Trace) -> None:
        self._search = search
        self._trace = trace

    def result(self) -> list[str]:
        return timed(
            self._trace,
            "PendingSearch.result",
            self._search.result,
            lambda r: [f"git grep: {len(r)} file(s) mention a searched name"],
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._search, name)


class _TracedRepo:
    """A ``Repo`` whose reads report to the hook; everything else passes through."""

    def __init__(self, repo: Repo, trace: Trace) -> None:
        self._repo = repo
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)

    def changed(self, base: str, head: str | None, globs: Sequence[str], **kw: Any) -> Any:
        return timed(
            self._trace,
            "Repo.changed",
            lambda: self._repo.changed(base, head, globs, **kw),
            lambda r: changed_files(r, base, head, globs),
        )

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        return timed(
            self._trace,
            "Repo.read_blobs",
            lambda: self._repo.read_blobs(shas),
            lambda r: [f"{len(r)} blob(s), {sum(map(len, r.values()))} bytes"],
        )

    def read_file(self, head: str | None, path: str) -> bytes | None:
        return timed(
            self._trace,
            "Repo.read_file",
            lambda: self._repo.read_file(head, path),
            lambda r: [
                f"{path} at {head or 'the worktree'}: "
                + (f"{len(r)} bytes" if r is not None else "missing")
            ],
        )

    def read_worktree(self, path: str, *args: Any, **kw: Any) -> bytes:
        return timed(
            self._trace,
            "Repo.read_worktree",
            lambda: self._repo.read_worktree(path, *args, **kw),
            lambda r: [f"{path} from the worktree: {len(r)} bytes"],
        )

    def list_files(self, head: str | None, globs: Sequence[str]) -> dict[str, str | None]:
        return timed(
            self._trace,
            "Repo.list_files",
            lambda: self._repo.list_files(head, globs),
            lambda r: [f"{len(r)} contract file(s) at head"],
        )

    def has_files(self, head: str | None, globs: Sequence[str]) -> bool:
        return timed(
            self._trace,
            "Repo.has_files",
            lambda: self._repo.has_files(head, globs),
            lambda r: ["a contract file at head" if r else "no contract file at head"],
        )

    def files_containing(self, *args: Any, **kw: Any) -> list[str]:
        return timed(
            self._trace,
            "PendingSearch.result",
            lambda: self._repo.files_containing(*args, **kw),
            lambda r: [f"git grep: {len(r)} file(s) mention a searched name"],
        )

    def start_files_containing(self, *args: Any, **kw: Any) -> Any:
        search = self._repo.start_files_containing(*args, **kw)
        return None if search is None else _TracedSearch(search, self._trace)


def traced_repo(repo: Repo, trace: Trace | None) -> Repo:
    """``repo`` itself without a hook; with one, a view of it whose reads report to it."""
    return repo if trace is None else cast("Repo", _TracedRepo(repo, trace))
