"""Watching real processes end, for the tests that kill the gate or its workers."""

from __future__ import annotations

import os
import signal
import time


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its parent does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def assert_all_end(pids: list[int], within: float = 30.0) -> None:
    """Fail if any of ``pids`` outlives ``within`` seconds; kill leftovers either way."""
    try:
        deadline = time.monotonic() + within
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(p) for p in pids), "a worker outlived the gate"
    finally:
        for pid in filter(alive, pids):
            os.kill(pid, signal.SIGKILL)
