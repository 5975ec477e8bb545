"""Rules the test suite keeps about itself.

No wall-clock assertions: speed is measured in ``benchmarks/``. A test asserting
``time.perf_counter() - started < 3`` fails on a loaded CI machine for nothing
(3.3 s at load 26), and a failing CI lands nothing. Denial-of-service tests count
the work instead, or bound CPU seconds (``tests/cost.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
#: The shared measures may read clocks; they assert nothing.
ALLOWED = {"cost.py"}
#: Clocks that tick while the process waits: load stretches what they measure.
WALL_CLOCKS = {
    "perf_counter",
    "perf_counter_ns",
    "monotonic",
    "monotonic_ns",
    "time",
    "time_ns",
    "now",
    "utcnow",
}


def _reads_clock(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` calls a wall clock (``time.monotonic()``, ``perf_counter()``,
    ``datetime.now()``) or uses a name computed from one."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in WALL_CLOCKS and not sub.args and not sub.keywords:
                return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope``, not those of the functions defined inside it."""
    nodes: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return nodes


def wall_clock_assertions(source: str, filename: str) -> list[str]:
    """``file:line`` of each ``assert`` over wall time in ``source``: a clock read in
    the assertion, or a name assigned (in the same function) from a clock read."""
    tree = ast.parse(source, filename)
    found: list[str] = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, functions))]:
        body = list(_own_nodes(scope))
        tainted: set[str] = set()
        while True:  # names from clocks, and names from those (elapsed = now - started)
            more = {
                target.id
                for node in body
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
                and node.value is not None
                and _reads_clock(node.value, tainted)
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Name)
            }
            if more <= tainted:
                break
            tainted |= more
        found += [
            f"{filename}:{node.lineno}"
            for node in body
            if isinstance(node, ast.Assert) and _reads_clock(node.test, tainted)
        ]
    return sorted(set(found), key=lambda where: int(where.rsplit(":", 1)[1]))


def test_no_test_asserts_wall_time() -> None:
    offenders = [
        where
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ALLOWED and "corpus" not in path.relative_to(TESTS).parts
        for where in wall_clock_assertions(
            path.read_text(encoding="utf-8"), str(path.relative_to(TESTS.parent))
        )
    ]
    assert offenders == [], (
        "wall-clock assertions flake under load; count the work or bound CPU seconds "
        f"(tests/cost.py): {offenders}"
    )


def test_the_rule_sees_the_usual_shapes() -> None:
    """The check itself can fail: each shape the suite used to have is caught."""
    source = """
import time
from time import perf_counter

def a():
    started = time.perf_counter()
    work()
    assert time.perf_counter() - started < 3

def b():
    started = time.monotonic()
    work()
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed

def c():
    t0 = perf_counter()
    assert perf_counter() - t0 < 1

def d():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pass
    assert done()
    started = time.process_time()
    assert time.process_time() - started < 10
"""
    assert wall_clock_assertions(source, "t.py") == ["t.py:8", "t.py:14", "t.py:18"]
