"""Each side of a run built once (``gate.side``), and the engine's trace hook (``gate.tracing``).

Real git repositories, the engine called in-process (``gate.run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from gate import engine
from gate.dbt import projects
from tests.gitrepo import GitRepo

PROJECT = 'name: shop\nversion: "1.0"\nconfig-version: 2\nprofile: shop\n'
PROPS = """\
version: 2
models:
  - name: orders
    config: {contract: {enforced: true}}
    columns:
      - name: id
        data_type: int
      - name: note
        data_type: string
"""


def _dbt_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("shop/dbt_project.yml", PROJECT)
    repo.write("shop/models/orders.yml", PROPS)
    repo.write("shop/models/orders.sql", "select 1 as id, 'x' as note\n")
    repo.commit("base")
    repo.branch("feature")
    return repo


def _count_indexes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    built: list[str] = []
    init = projects.ProjectIndex.__init__

    def counting(self: projects.ProjectIndex, repo, commit, side, fallback=None) -> None:  # type: ignore[no-untyped-def]
        built.append(side)
        init(self, repo, commit, side, fallback)

    monkeypatch.setattr(projects.ProjectIndex, "__init__", counting)
    return built


def test_each_side_indexes_its_dbt_projects_once_even_when_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing changed: the run looks at every contract at HEAD (an empty diff
    # must not pass a misspelt glob), which once built a third index.
    repo = _dbt_repo(tmp_path)
    built = _count_indexes(monkeypatch)
    report = engine.run(engine.Settings(repo=str(repo.path), base="main", head="feature"))
    assert not report.changes
    assert sorted(built) == ["base", "head"]


def test_the_trace_hook_sees_each_step_and_changes_nothing(tmp_path: Path) -> None:
    repo = _dbt_repo(tmp_path)
    repo.write("shop/models/orders.yml", PROPS.replace("string", "int"))
    repo.commit("retype note")
    steps: list[tuple[str, str, float, tuple[str, ...]]] = []

    def trace(step: str, summary: str, seconds: float, details: Sequence[str] = ()) -> None:
        steps.append((step, summary, seconds, tuple(details)))

    settings = engine.Settings(repo=str(repo.path), base="main", head="feature")
    plain = engine.run(settings)
    traced = engine.run(engine.Settings(**{**settings.__dict__, "trace": trace}))
    assert traced.changes == plain.changes and traced.notices == plain.notices
    names = [s[0] for s in steps]
    for name in (
        "gate.engine.load_config",
        "Repo.changed",
        "gate.engine.parse_many",
        "gate.engine.diff_datasets",
        "gate.engine.scan_consumers",
    ):
        assert name in names, names
    assert all(s[2] >= 0 for s in steps)
    parsed = [s for s in steps if s[0] == "gate.engine.parse_many"]
    details = [d for s in parsed for d in s[3]]
    assert any(d.startswith("read shop/models/orders.yml (base, ") for d in details), details
    assert any(d.startswith("read shop/models/orders.yml (head, ") for d in details), details
    config = next(s for s in steps if s[0] == "gate.engine.load_config")
    assert config[1] == "config: none (defaults)"
