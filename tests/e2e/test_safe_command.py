"""The documented local command cannot run PR code (issue #27, point 5).

The gate runs inside the repository it judges. ``python -m gate`` puts that
directory first on the import path, so a ``yaml.py`` committed at the root ran
on whoever typed the documented command. Each planted module here writes a
marker file when imported; the run must not create it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import gate_env
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent.parent
CONTRACT = "dataset: shop.orders\ncolumns:\n  - name: id\n    data_type: int\n"


def _planted(tmp_path: Path, modules: tuple[str, ...]) -> tuple[GitRepo, Path]:
    """A repository whose pull request commits ``modules`` at the root, each leaving a mark."""
    marker = tmp_path / "planted-code-ran"
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT)
    repo.commit("base")
    repo.branch("feature")
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for module in modules:
        repo.write(module, payload)
    repo.write("contracts/orders.yaml", CONTRACT + "  - name: note\n    data_type: string\n")
    repo.commit("a PR carrying code")
    return repo, marker


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, "--base", "main"],
        cwd=cwd,
        env=gate_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _console_script() -> Path:
    script = Path(sys.executable).parent / "schema-gate"
    if not script.exists():  # pragma: no cover - the test extras install the package
        pytest.skip("the schema-gate console script is not installed beside this Python")
    return script


def test_the_console_script_never_imports_from_the_repository(tmp_path: Path) -> None:
    repo, marker = _planted(tmp_path, ("yaml.py", "sqlglot/__init__.py", "gate/__init__.py"))
    proc = _run([str(_console_script())], repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "column_added shop.orders.note" in proc.stdout
    assert not marker.exists(), marker.read_text()


def test_python_dash_m_gate_drops_the_directory_before_importing(tmp_path: Path) -> None:
    # Kept working (scripts call it); gate/__main__.py takes the repository off
    # the path before yaml or sqlglot are imported.
    repo, marker = _planted(tmp_path, ("yaml.py", "sqlglot/__init__.py"))
    proc = _run([sys.executable, "-m", "gate"], repo.path)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P arrived in 3.11")
def test_python_dash_p_is_safe_too(tmp_path: Path) -> None:
    repo, marker = _planted(tmp_path, ("yaml.py", "sqlglot/__init__.py", "gate/__init__.py"))
    proc = _run([sys.executable, "-P", "-m", "gate"], repo.path)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()


def test_the_documentation_runs_the_safe_form() -> None:
    # Every command line in a code block of the README, the docs and the
    # examples, and the pre-commit hook's entry, runs `schema-gate` (or
    # `python -P -m gate`), never a bare `python -m gate`.
    unsafe = re.compile(r"^\s*(?:\$\s*)?python3?\s+-m\s+gate(?:\s|$)")
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += [ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "examples").rglob("*.yml"))]
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if unsafe.match(line)
    ]
    assert found == []
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "entry: schema-gate --base origin/main" in hook
