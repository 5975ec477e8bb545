"""The import layers docs/architecture.md draws, checked: no module imports one above it.

Every ``import gate...`` in gate/ (at module level, inside functions, and under
``TYPE_CHECKING``) is an edge; each module sits in the first layer whose prefix
matches it, most specific prefix first. An edge may stay in its layer or go
down, never up. A new module that fits no layer fails here until the page and
this table say where it goes.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "gate"

#: Top to bottom, as docs/architecture.md draws them.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("faces", ("gate.__main__", "gate.cli", "gate.action")),
    ("engine", ("gate.engine", "gate.tracing")),
    (
        "run steps",
        (
            "gate.side",
            "gate.side_config",
            "gate.changed_files",
            "gate.contract_files",
            "gate.read_sides",
            "gate.duplicates",
            "gate.ack_tokens",
            "gate.approvals.step",  # the run's approval step (issue #23)
        ),
    ),
    ("smoke", ("gate.smoke",)),
    ("outputs", ("gate.report",)),
    (
        "sources",
        (
            "gate.git",
            "gate.dbt",
            "gate.repo_dialect",
            "gate.consumers",
            "gate.lineage",  # downstream and external consumers (issue #25)
            "gate.policy",
            "gate.config",
            "gate.approvals.policy",  # the approvals: config section
            "gate.approvals.sides",  # CODEOWNERS and the policy read from the base side
            "gate.approvals.decide",  # who must approve each break, and whether they did
            "gate.workers",
        ),
    ),
    ("formats", ("gate.formats", "gate.yaml_load", "gate.approvals.owners")),
    (
        "core",
        (
            "gate.acks",
            "gate.approvals",  # fingerprints, CODEOWNERS, who must approve (issue #23)
            "gate.base_copies",
            "gate.declarations",
            "gate.diff",
            "gate.rendered_lines",
            "gate.smoke.result",  # the smoke test's findings: data the reports render
        ),
    ),
    (
        "vocabulary",
        (
            "gate.model",
            "gate.lattice",
            "gate.check_thresholds",
            "gate.versioning",
            "gate.limits",
            "gate.rules",
            "gate.escapes",
            "gate._renamed",
            "gate._dataclass_code",  # the command's table of dataclass code (issue #26)
        ),
    ),
)


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(ROOT.rglob("*.py"))}


@functools.cache
def syntax(module: str) -> ast.Module:
    """``module``'s syntax tree, parsed once per test process (three tests walk each)."""
    return ast.parse(MODULES[module].read_text())


def layer(module: str) -> int:
    best = (-1, -1)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                best = max(best, (len(prefix), -rank))
    if best[0] < 0:
        raise LookupError(f"{module} is in no layer of tests/test_layers.py")
    return -best[1]


def imports(module: str) -> set[str]:
    """The gate modules ``module`` imports (``from gate import x`` counts as gate.x)."""
    out: set[str] = set()
    for node in ast.walk(syntax(module)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in [node.module, *(f"{node.module}.{a.name}" for a in node.names)]:
                if name in MODULES and name != "gate":
                    out.add(name)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in MODULES and a.name != "gate")
    out.discard(module)
    return out


@pytest.mark.parametrize("module", [m for m in MODULES if m != "gate"])
def test_no_module_imports_one_above_it(module: str) -> None:
    upward = sorted(
        f"{target} ({LAYERS[layer(target)][0]})"
        for target in imports(module)
        if layer(target) < layer(module)
    )
    assert upward == [], f"{module} ({LAYERS[layer(module)][0]}) imports upward: {upward}"


def test_the_package_root_only_reaches_the_engine_lazily() -> None:
    """``import gate`` stays cheap: Settings/run come from the engine on first use."""
    tree = syntax("gate")
    top_level = {
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gate")
    } | {
        f"{node.module}.{a.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "gate"
        for a in node.names
    }
    assert top_level <= {"gate", "gate._renamed"}


def test_every_class_over_200_lines_says_why_at_its_top() -> None:
    """A room holds one job: a long class is usually two, unless its docstring says why not."""
    unexplained = []
    for module in MODULES:
        for node in ast.walk(syntax(module)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > 200 and "Why" not in (ast.get_docstring(node) or ""):
                    unexplained.append(f"{module}.{node.name} ({size} lines)")
    assert unexplained == []
