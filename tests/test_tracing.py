"""The debug trace's view of a repository reports every tree read it makes.

``Repo.has_files`` (a PR that changes no contract asks whether any exists) was
added without a traced counterpart: the Action's debug trace went silent on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.git import Repo
from gate.tracing import traced_repo
from tests.gitrepo import GitRepo


def test_the_traced_repo_reports_has_files(repo: GitRepo) -> None:
    repo.write("soda/contracts/orders.yaml", "dataset: orders\ncolumns:\n  - name: id\n")
    repo.commit("base")
    steps: list[tuple[str, str]] = []

    def trace(step: str, summary: str, seconds: float, details: Sequence[str] = ()) -> None:
        steps.append((step, summary))

    traced = traced_repo(Repo(repo.path), trace)
    head = repo.git("rev-parse", "HEAD").strip()
    assert traced.has_files(head, ["soda/contracts/**/*.yaml"]) is True
    assert traced.has_files(head, ["dbt/**/*.yml"]) is False
    assert steps == [
        ("Repo.has_files", "a contract file at head"),
        ("Repo.has_files", "no contract file at head"),
    ]
