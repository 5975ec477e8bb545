"""The README's promises: its two opening commands, and CI running them verbatim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import gate_env

ROOT = Path(__file__).resolve().parent.parent.parent


def first_code_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    assert block, "README.md has no fenced code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_two_commands_that_ci_runs_verbatim() -> None:
    commands = first_code_block()
    assert len(commands) == 2
    demo, tests = commands
    assert "examples/demo.py" in demo
    assert "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert demo in ci and tests in ci


def test_demo_shows_a_real_breaking_report() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        env=gate_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "type_narrowed lakehouse/shop/orders.customer_id: BIGINT -> INT" in proc.stdout
    assert "column_removed lakehouse/shop/orders.discount_code" in proc.stdout
    assert "type_widened lakehouse/shop/payments.amount_cents: INT -> BIGINT" in proc.stdout
    assert "(the gate exited with 1)" in proc.stdout


def test_demo_with_acknowledgement_passes() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), "--accept", "shop.orders"],
        capture_output=True,
        text=True,
        env=gate_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[ACKED]" in proc.stdout and "PASS:" in proc.stdout


def test_demo_help_explains_the_demo_instead_of_running_the_gate() -> None:
    # A first-time user's `demo.py --help` ran the gate's --help on the demo repo,
    # then reported "unexpected exit code" and exited 1.
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), "--help"],
        capture_output=True,
        text=True,
        env=gate_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "throwaway git repository" in proc.stdout
    assert "schema-gate --help" in proc.stdout
    assert "unexpected" not in proc.stdout + proc.stderr


def test_demo_passes_on_the_gates_own_error_without_blaming_the_demo() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), "--dialect", "klingon"],
        capture_output=True,
        text=True,
        env=gate_env(),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "schema-gate: error: unknown dialect 'klingon'" in proc.stderr
    assert "its error is above" in proc.stderr and "unexpected" not in proc.stderr
