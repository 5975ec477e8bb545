"""Measures of work for the denial-of-service tests, which load cannot inflate.

The project's rule: no wall-clock assertions in tests (speed is measured in
``benchmarks/``). On a loaded CI machine wall time grows with the load, and a
test asserting ``elapsed < 3`` fails there for nothing (3.3 s at load 26). What
a regression changes, and load does not, is the work done: calls made, gits
started, patterns compiled (:func:`counting`), or, where only a duration can
tell, the CPU time of this process and its children (:func:`cpu_seconds`),
which a busy machine delays but does not multiply.

``tests/test_suite_rules.py`` keeps wall-clock assertions out of the suite.
"""

from __future__ import annotations

import functools
import resource
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest


def _cpu() -> float:
    """User and system seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@dataclass
class Cpu:
    """The CPU seconds a ``with cpu_seconds() as cpu:`` block used (``cpu.seconds``)."""

    seconds: float = 0.0


@contextmanager
def cpu_seconds() -> Iterator[Cpu]:
    """CPU time (user + system, this process and the children it waited for) of
    the block. Bound it generously: it is a guard against a quadratic or
    exponential path, which overshoots any sane bound by orders of magnitude."""
    measured = Cpu()
    began = _cpu()
    try:
        yield measured
    finally:
        measured.seconds = _cpu() - began


@dataclass
class Calls:
    """The arguments of every call a :func:`counting` wrapper saw."""

    args: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.args)


def counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> Calls:
    """Wrap ``owner.name`` (the real function, still called) so that its calls are
    recorded; the test then asserts how much work was asked for."""
    real: Callable[..., Any] = getattr(owner, name)
    calls = Calls()

    @functools.wraps(real)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.args.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def git_calls(repo: Any) -> list[tuple[str, ...]]:
    """The argument lists of every ``git`` the opened ``repo`` runs from now on.

    ``repo`` is a ``gate.git`` repository (``open_repo``); a test asserts which gits a
    step starts, e.g. one ``ls-tree`` walk per commit, not how long they take."""
    calls: list[tuple[str, ...]] = []
    git = repo._changes._git
    out = git.out

    def counted(*args: str, stdin: bytes | None = None) -> bytes:
        calls.append(args)
        return out(*args, stdin=stdin)

    git.out = counted
    return calls
