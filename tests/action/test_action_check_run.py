"""The check run and the bounded outputs, end to end against the fake GitHub API.

With ``checks: write`` (the fake's ``checks=True``) every annotation goes on one
check run, 50 per request as the Checks API takes them (the fake answers 422
past 50, as GitHub does); without it (403) the workflow commands stay, with a
notice saying why. No API failure changes the exit code. A report too large
for a PR comment or a job summary is cut between findings, saying how many
were left out and where the full report is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.test_action import ORDERS_PATH, PR, contract, make_pr
from tests.action.test_action_comment import run_with
from tests.fake_github import FakeGitHub

WIDE = 120


def narrowed(tmp: Path, columns: int, name_length: int = 3) -> PR:
    """A PR that narrows ``columns`` columns from bigint to int: one blocking finding each."""
    names = [f"c{i:04d}".ljust(name_length, "x") for i in range(columns)]
    return make_pr(
        tmp,
        {ORDERS_PATH: contract("lake/shop/orders", [(n, "int") for n in names])},
        base_files={ORDERS_PATH: contract("lake/shop/orders", [(n, "bigint") for n in names])},
    )


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> PR:
    return narrowed(tmp_path_factory.mktemp("wide"), WIDE)


def test_120_annotations_arrive_on_one_check_run_in_3_requests(wide: PR) -> None:
    with FakeGitHub(checks=True) as api:
        run = run_with(api, wide, "ws-120", **{"check-name": "contracts"})
    assert run.code == 1, run.stdout + run.stderr
    writes = api.check_writes()
    assert [w.method for w in writes] == ["POST", "PATCH", "PATCH"]
    assert [len(w.body["output"]["annotations"]) for w in writes] == [50, 50, 20]
    [check] = api.check_runs
    assert check["name"] == "contracts" and check["head_sha"] == wide.head_sha
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    annotations = check["output"]["annotations"]
    assert len(annotations) == WIDE
    assert {a["annotation_level"] for a in annotations} == {"failure"}
    assert {a["path"] for a in annotations} == {ORDERS_PATH}
    assert len({a["start_line"] for a in annotations}) == WIDE  # each on its column's line
    assert all(a["title"] == "type_narrowed" for a in annotations)
    assert "## Schema contract gate: ❌ failed" in check["output"]["summary"]
    # the log keeps only the verdict: the annotations are on the check run
    assert not [c for c in run.commands if " file=" in c]
    assert f"{WIDE} annotation(s) on the check run 'contracts'" in run.verdict_line
    assert "not shown" not in run.verdict_line
    assert f"> Annotations: {WIDE} annotation(s) on the check run" in run.summary


def test_a_passing_run_is_a_successful_check_run_named_after_the_job(wide: PR) -> None:
    ack = "accept-breaking-change: lake/shop/orders"
    with FakeGitHub(checks=True, pull_body=ack) as api:
        run = run_with(api, wide, "ws-pass")
    assert run.code == 0, run.stdout + run.stderr
    [check] = api.check_runs
    assert check["name"] == "schema-contract-gate (schema-gate)"
    assert check["conclusion"] == "success"
    assert {a["annotation_level"] for a in check["output"]["annotations"]} == {"warning"}


def test_without_checks_write_the_workflow_commands_stay_with_one_notice(wide: PR) -> None:
    with FakeGitHub() as api:  # the token has no checks: write: 403
        run = run_with(api, wide, "ws-403")
    assert run.code == 1, run.stdout + run.stderr
    [post] = api.check_writes()
    assert post.method == "POST" and not api.check_runs
    [notice] = [n for n in run.annotations("notice") if "no check run" in n]
    assert "HTTP 403" in notice and "checks: write" in notice
    assert len(run.annotations("error")) == 10  # 9 changes + the verdict, as before
    assert "not shown" in run.verdict_line
    assert "A check run would carry every annotation" in run.summary


@pytest.mark.parametrize("fail", [{"/repos/acme/shop/check-runs": 500}, {"PATCH": 500}])
def test_an_api_500_keeps_the_failing_exit_code_and_the_annotations(
    wide: PR, fail: dict[str, int]
) -> None:
    with FakeGitHub(checks=True, fail=fail) as api:
        run = run_with(api, wide, "ws-500-" + "-".join(fail).replace("/", ""), comment="false")
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.stdout + run.stderr
    [warning] = [w for w in run.annotations("warning") if "check run" in w]
    assert "HTTP 500" in warning
    if "PATCH" in fail:
        assert "the check run has 50 of 120 annotations" in warning
    assert len(run.annotations("error")) == 10  # the workflow commands carry them


@pytest.mark.parametrize("checks", [True, False], ids=["check-run", "403"])
def test_a_comment_and_a_summary_past_their_limits_are_cut_between_findings(
    tmp_path: Path, checks: bool
) -> None:
    # 2,600 findings of ~530 bytes each: a 1.4 MB report (with a 403, its notes list
    # says why there is no check run: a list item, not a finding)
    columns = 2600
    pr = narrowed(tmp_path, columns, name_length=400)
    with FakeGitHub(checks=checks) as api:
        run = run_with(api, pr)
    assert run.code == 1, run.stdout + run.stderr
    [comment] = api.comments
    body = comment["body"]
    assert len(body.encode("utf-8")) <= 65_536
    for text, limit in ((body, 65_536), (run.summary, 1024 * 1024)):
        assert len(text.encode("utf-8")) <= limit
        assert text.count("FAIL: 2600 unacknowledged") == 1  # the verdict line is kept
        shown = text.count("| ❌ |")
        assert 0 < shown < columns
        assert f"{columns - shown} finding(s) left out" in text
        assert "`.schema-gate/report.json`" in text and "`schema-gate-report` artifact" in text
        rows = [line for line in text.splitlines() if line.startswith("| ❌")]
        assert all(row.endswith(" |") for row in rows)  # no row cut in half
    if not checks:
        assert any("no check run (HTTP 403" in n for n in run.annotations("notice"))
        return
    [check] = api.check_runs
    summary = check["output"]["summary"]
    assert len(summary.encode("utf-8")) <= 65_535 and "finding(s) left out" in summary
    assert len(check["output"]["annotations"]) == 1000  # capped, and said so
    assert "1600 annotation(s) beyond the first 1000" in summary
    assert run.report()["summary"]["breaking"] == columns  # the JSON report has them all


def test_a_cut_never_lands_inside_a_code_block_and_closes_details() -> None:
    from gate.action.bounds import bound

    fence = ["````", *[f"accept-breaking-change: d{i}" for i in range(400)], "````"]
    rows = [f"| 🟢 | `column_added` | a{i} |" for i in range(100)]
    text = "\n".join(
        [
            *["## verdict", "", "<details><summary>Additive</summary>", "", *rows, ""],
            *["</details>", "", "### How to acknowledge", "", *fence, ""],
        ]
    )
    cut = bound(text, 12_000, "a test limit")
    assert len(cut.encode()) <= 12_000
    assert "````" not in cut  # the whole block left out, not half of it
    assert cut.count("<details>") == cut.count("</details>") == 1
    assert "0 finding(s)" not in cut and "report was cut here (a test limit)" in cut
    short = bound(text, 3_000, "a test limit")
    shown = short.count("| 🟢 |")
    assert 0 < shown < 100 and f"{100 - shown} finding(s) left out" in short
    assert short.count("<details>") == short.count("</details>") == 1
