"""dbt exposures as readers, through the CLI on a real dbt project in a real git repo.

An exposure's ``depends_on`` (``ref()``, ``source()``, ``metric()``) names the
models a dashboard or an application reads; dbt checks them when it parses the
project. The shapes follow public projects' exposure files (dbt-labs'
dbt-project-evaluator ``integration_tests/models/marts/exposures.yml``:
refs and a ``source()``; DataRecce/jaffle-shop-expand ``models/marts/_exposures.yml``:
refs only); the files here are written for this test.
"""

from __future__ import annotations

import json
from pathlib import Path

from gate.consumers.exposures import read_exposures
from gate.consumers.names import NameIndex
from gate.model import Dataset
from tests.gitrepo import GitRepo

MODELS = """\
version: 2
models:
  - name: stg_payments
    config:
      contract: {enforced: true}
    columns:
      - name: payment_id
        data_type: int
      - name: method
        data_type: string
      - name: amount
        data_type: int
"""
EXPOSURES = """\
version: 2

exposures:
  - name: payments_dashboard
    type: dashboard
    maturity: high
    url: https://bi.example.com/payments
    owner:
      name: Finance
      email: finance@example.com
    depends_on:
      - ref('stg_payments')
      - source('ecom', 'raw_orders')
      - metric('revenue')
"""
FILES = {
    "dbt_project.yml": "name: jaffle\nversion: '1.0'\nprofile: jaffle\nmodel-paths: [models]\n",
    "models/stg_payments.sql": "select 1 as payment_id, 'card' as method, 5 as amount\n",
    "models/_models.yml": MODELS,
    ".schema-gate.yml": "lineage:\n  usage_aware_severity: true\n",
}
WITHOUT_METHOD = MODELS.replace("      - name: method\n        data_type: string\n", "")


def _repo(tmp_path: Path, extra: dict[str, str]) -> GitRepo:
    return GitRepo.with_pr_branch(tmp_path / "r", {**FILES, **extra})


def _run(cli, repo: GitRepo) -> tuple[int, dict]:
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _change(report: dict, rule: str) -> dict:
    return next(c for c in report["changes"] if c["rule"] == rule)


def test_a_column_an_exposure_may_read_stays_an_error(cli, tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"models/marts/_exposures.yml": EXPOSURES})
    repo.write("models/_models.yml", WITHOUT_METHOD)
    repo.commit("drop method")
    code, report = _run(cli, repo)
    assert code == 1
    removed = _change(report, "column_removed")
    assert removed["severity"] == "error"
    assert "graded warning" not in removed["message"]
    assert removed["consumers"] == [
        {
            "path": "models/marts/_exposures.yml",
            "line": 12,
            "object": "payments_dashboard",
            "usage": "exposure",
        }
    ]
    # the dashboard reads the model, not the column by name: nothing to fix in this PR
    assert not [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert report["consumers_not_analysed"] == []


def test_without_an_exposure_the_same_removal_is_lowered(cli, tmp_path: Path) -> None:
    """The control: the evidence is the exposure, nothing else reads ``method``. An
    exposure of a YAML file dbt does not read (outside any project) is none."""
    repo = _repo(tmp_path, {"docs/_exposures.yml": EXPOSURES})
    repo.write("models/_models.yml", WITHOUT_METHOD)
    repo.commit("drop method")
    code, report = _run(cli, repo)
    assert code == 0
    removed = _change(report, "column_removed")
    assert removed["severity"] == "warning"
    assert removed["consumers"] == []


def test_a_model_an_exposure_depends_on_breaks_it_when_it_goes(cli, tmp_path: Path) -> None:
    """dbt fails to parse an exposure whose ref() names a model that is gone."""
    repo = _repo(tmp_path, {"models/marts/_exposures.yml": EXPOSURES})
    repo.write("models/_models.yml", "version: 2\nmodels: []\n")
    repo.remove("models/stg_payments.sql")
    repo.commit("remove stg_payments")
    code, report = _run(cli, repo)
    assert code == 1
    assert _change(report, "model_removed")["severity"] == "error"
    broken = _change(report, "consumer_broken")
    assert (broken["path"], broken["line"], broken["dataset"]) == (
        "models/marts/_exposures.yml",
        12,
        "stg_payments",
    )
    assert "payments_dashboard reads dataset 'stg_payments' (exposure)" in broken["message"]


def test_an_entry_the_gate_cannot_read_keeps_the_removal_an_error(cli, tmp_path: Path) -> None:
    """Fail closed: a depends_on entry that is not ref(), source() or metric() is
    listed as not analysed, and usage-aware severity lowers nothing."""
    odd = EXPOSURES.replace("      - metric('revenue')\n", "      - stg_payments\n")
    repo = _repo(
        tmp_path, {"models/marts/_exposures.yml": odd.replace("ref('stg_payments')", "ref('x')")}
    )
    repo.write("models/_models.yml", WITHOUT_METHOD)
    repo.commit("drop method")
    code, report = _run(cli, repo)
    assert code == 1
    assert _change(report, "column_removed")["severity"] == "error"
    assert report["consumers_not_analysed"] == [
        {
            "path": "models/marts/_exposures.yml",
            "line": 14,
            "reason": "exposure 'payments_dashboard': depends_on entry is not ref(), "
            "source() or metric()",
        }
    ]


def test_exposure_entries_resolve_as_model_refs_do() -> None:
    index = NameIndex(
        [
            Dataset(id="orders.v2", path="m.yml", format="dbt", unpinned_name="orders"),
            Dataset(id="lake/ecom/raw_orders", path="s.yml", format="soda"),
        ]
    )
    text = (
        "exposures:\n"
        "  - name: app\n"
        "    depends_on:\n"
        "      - \"{{ ref('orders', v=2) }}\"\n"
        "      - ref('jaffle', 'orders')\n"
        "      - source('ecom', 'raw_orders')\n"
        "      - metric('revenue', 'x')\n"
    )
    result = read_exposures("models/e.yml", text.encode(), index)
    assert not result.not_analysed
    assert sorted({(f.dataset, f.line) for f in result.found}) == [
        ("lake/ecom/raw_orders", 6),
        ("orders.v2", 4),
        ("orders.v2", 5),
    ]
    assert {f.column for f in result.found} == {None, "*"}
    assert read_exposures("e.yml", b"exposures: [\n", index).not_analysed


def test_an_exposures_section_of_another_shape_is_not_analysed() -> None:
    """Fail closed: ``exposures:`` as a mapping, or an exposure that is not a mapping,
    names readers the gate cannot list; it was read as no exposure at all, so a
    column removal the dashboard depends on was graded a warning."""
    index = NameIndex([Dataset(id="stg_payments", path="m.yml", format="dbt")])
    shapes = {
        "a mapping": "exposures:\n  dash:\n    depends_on: [\"ref('stg_payments')\"]\n",
        "a string entry": "exposures:\n  - \"ref('stg_payments')\"\n",
        "a scalar": "exposures: ref('stg_payments')\n",
    }
    for shape, text in shapes.items():
        result = read_exposures("models/e.yml", text.encode(), index)
        assert not result.found, shape
        assert [(n.path, n.line) for n in result.not_analysed] in (
            [("models/e.yml", 1)],
            [("models/e.yml", 2)],
        ), shape
    assert read_exposures("models/e.yml", b"exposures:\n", index) == read_exposures(
        "models/e.yml", b"version: 2\n", index
    )


def test_a_yaml_file_outside_every_project_is_not_searched(cli, tmp_path: Path) -> None:
    """dbt reads exposures only inside a project, so the search looks only under the
    folders that hold a ``dbt_project.yml`` (#26: searching every YAML file of a
    10,000-contract repository cost 80-130 ms per run). A file elsewhere, even one
    too large to read, is then not listed as *not analysed*, and the removal is
    lowered as it is without it; an exposure inside the project still counts."""
    files = {
        f"analytics/{path}": text for path, text in FILES.items() if path != ".schema-gate.yml"
    }
    big = EXPOSURES + "# " + "x" * 600 + "\n"
    config = "lineage:\n  usage_aware_severity: true\nlimits:\n  consumer_bytes: 500\n"
    repo = GitRepo.with_pr_branch(
        tmp_path / "r", {**files, ".schema-gate.yml": config, "docs/_exposures.yml": big}
    )
    repo.write("analytics/models/_models.yml", WITHOUT_METHOD)
    repo.commit("drop method")
    code, report = _run(cli, repo)
    assert code == 0
    assert report["consumers_not_analysed"] == []
    assert _change(report, "column_removed")["severity"] == "warning"
    # inside the project, the same exposure keeps the removal an error
    repo.write("analytics/models/marts/_exposures.yml", EXPOSURES)
    repo.commit("an exposure in the project")
    code, report = _run(cli, repo)
    assert code == 1
    removed = _change(report, "column_removed")
    assert removed["severity"] == "error"
    assert [c["path"] for c in removed["consumers"]] == ["analytics/models/marts/_exposures.yml"]
