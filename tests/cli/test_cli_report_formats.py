"""--format sarif, junit and gitlab on real scenarios: a real git repository, the CLI in-process.

The SARIF log of each scenario (a break, an acknowledged break, a break with
in-repo readers, a refused file) is validated against the SARIF 2.1.0 JSON
schema, vendored byte for byte from a package (tests/corpus/README.md).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET  # reads only the gate's own output, in tests
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import run_gate
from tests.consumer_projects import DBT_PROJECT
from tests.gitrepo import GitRepo

SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "corpus/sarif/sarif-schema-2.1.0.json").read_text()
)
ORDERS = "soda/contracts/orders.yaml"
BASE = "dataset: lake/shop/orders\ncolumns:\n  - name: id\n    data_type: bigint\n  - name: amount\n    data_type: bigint\n  - name: note\n    data_type: string\n"


def validate(log: dict) -> None:
    """The published schema (draft-04), with its formats checked (uri, uri-reference)."""
    validator = jsonschema.Draft4Validator(
        SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(ORDERS, BASE)
    repo.commit("orders")
    repo.branch("feature")
    # amount narrowed (line 6), note removed (finding on the dataset's line 1), a column added
    repo.write(
        ORDERS,
        BASE.replace("bigint\n  - name: note\n    data_type: string\n", "int\n").replace(
            "name: amount\n    data_type: bigint", "name: amount\n    data_type: int"
        )
        + "  - name: added\n    data_type: date\n",
    )
    repo.commit("break")
    return repo


def run(repo: GitRepo, fmt: str, *args: str):
    proc = run_gate(repo.path, "--base", "main", "--head", "feature", "--format", fmt, *args)
    assert "Traceback" not in proc.stderr
    return proc


def sarif(repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = run(repo, "sarif", *args)
    log = json.loads(proc.stdout)
    validate(log)
    return proc.returncode, log


def test_a_break_is_an_error_result_on_its_contract_line(shop: GitRepo) -> None:
    code, log = sarif(shop)
    assert code == 1
    run_ = log["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "schema-contract-gate" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    by_rule = {r["ruleId"]: r for r in run_["results"]}
    narrowed = by_rule["type_narrowed"]
    assert narrowed["level"] == "error"
    assert ids[narrowed["ruleIndex"]] == "type_narrowed"
    rule = driver["rules"][narrowed["ruleIndex"]]
    assert rule["defaultConfiguration"]["level"] == "error"
    assert rule["helpUri"].endswith("docs/rules.md#type_narrowed")
    where = narrowed["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": ORDERS, "uriBaseId": "SRCROOT"}
    assert where["region"]["startLine"] == 5  # the column's line
    assert by_rule["column_added"]["level"] == "note"
    assert "suppressions" not in narrowed
    assert run_["invocations"][0]["exitCode"] == 1


def test_fingerprints_survive_a_moved_line(shop: GitRepo) -> None:
    _, before = sarif(shop)
    shop.write(ORDERS, "# a comment moves every line\n" + (shop.path / ORDERS).read_text())
    shop.commit("comment")
    _, after = sarif(shop)

    def prints(log: dict) -> dict[str, tuple[str, int]]:
        return {
            r["partialFingerprints"]["schemaContractGate/v1"]: (
                r["ruleId"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"],
            )
            for r in log["runs"][0]["results"]
        }

    old, new = prints(before), prints(after)
    assert old.keys() == new.keys() and len(old) == len(before["runs"][0]["results"])
    assert all(new[k][1] == old[k][1] + 1 for k in old)


def test_an_acknowledged_break_is_a_suppressed_result_not_a_missing_one(shop: GitRepo) -> None:
    code, log = sarif(shop, "--accept", "lake/shop/orders")
    assert code == 0
    results = log["runs"][0]["results"]
    narrowed = next(r for r in results if r["ruleId"] == "type_narrowed")
    assert narrowed["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "acknowledged in the pull request: "
            "accept-breaking-change: lake/shop/orders",
        }
    ]
    assert "suppressions" not in next(r for r in results if r["ruleId"] == "column_added")


def test_readers_are_related_locations(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "dbt")
    for path, text in DBT_PROJECT.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    stg = "models/staging/stg_models.yml"
    lines = DBT_PROJECT[stg].splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == "- name: discount_code")
    repo.write(stg, "".join(lines[:start] + lines[start + 2 :]))
    repo.commit("drop discount_code")
    code, log = sarif(repo)
    assert code == 1
    results = log["runs"][0]["results"]
    removed = next(r for r in results if r["ruleId"] == "column_removed")
    related = [
        (
            r["physicalLocation"]["artifactLocation"]["uri"],
            r["physicalLocation"]["region"]["startLine"],
            r["message"]["text"],
        )
        for r in removed["relatedLocations"]
    ]
    assert related == [
        ("models/marts/customers.sql", 12, "customers reads stg_orders.discount_code (star)"),
        ("models/marts/orders.sql", 2, "orders reads stg_orders.discount_code (star)"),
        ("models/marts/orders.sql", 7, "orders reads stg_orders.discount_code (filtered)"),
    ]
    broken = next(r for r in results if r["ruleId"] == "consumer_broken")
    assert broken["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "models/marts/orders.sql"
    )
    # the model the Jinja pre-pass could not read is said, its braces doubled (SARIF §3.11.5)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(
        n["message"]["text"] == "consumer not analysed: dbt model: unterminated {{{{ at line 1"
        for n in notes
    ), notes


def test_a_refused_file_is_still_a_valid_log_with_no_results(shop: GitRepo, tmp_path: Path) -> None:
    shop.write(ORDERS, "dataset: lake/shop/orders\ncolumns: [unclosed\n")
    shop.commit("break the file")
    out = tmp_path / "gate.sarif"
    proc = run(shop, "sarif", "--output", str(out))
    assert proc.returncode == 2
    assert out.read_text() == proc.stdout
    log = json.loads(proc.stdout)
    validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    # absent, not []: an empty list would tell code scanning every open alert is fixed
    assert "results" not in log["runs"][0]
    first = invocation["toolExecutionNotifications"][0]
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ORDERS
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert proc.stderr.startswith(f"schema-gate: error: {ORDERS}:3:")


HOSTILE = "x[click](https://evil.example){0}\u202e"


def test_pr_controlled_names_cannot_forge_links_paths_or_placeholders(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    path = "soda/contracts/odd #1 %41.yaml"
    repo.write(
        path, f"dataset: '{HOSTILE}'\ncolumns:\n  - name: '{HOSTILE}'\n    data_type: bigint\n"
    )
    repo.commit("odd")
    repo.branch("feature")
    repo.write(path, f"dataset: '{HOSTILE}'\ncolumns:\n  - name: '{HOSTILE}'\n    data_type: int\n")
    repo.commit("narrow")
    code, log = sarif(repo)
    assert code == 1
    result = log["runs"][0]["results"][0]
    message = result["message"]["text"]
    assert "](" not in message.replace("\\](", "") and "[click]" not in message
    assert "{0}" not in message.replace("{{0}}", "") and "\u202e" not in message
    # a viewer following SARIF's grammar shows x[click](https://evil.example){0}\u202e, no link
    assert "x\\[click\\](https://evil.example){{0}}\\\\u202e" in message
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "soda/contracts/odd%20%231%20%2541.yaml"
    )


def test_junit_fails_each_blocking_finding_and_the_verdict(shop: GitRepo) -> None:
    proc = run(shop, "junit")
    assert proc.returncode == 1
    root = ET.fromstring(proc.stdout)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["lake/shop/orders", "schema-contract-gate"]
    orders = suites["lake/shop/orders"]
    failed = [c.get("name") for c in orders.iter("testcase") if c.find("failure") is not None]
    assert failed == [
        "type_narrowed lake/shop/orders.amount",  # report order: by column, then rule
        "column_removed lake/shop/orders.note",
    ]
    assert orders.get("failures") == "2" and orders.get("tests") == "3"
    verdict = suites["schema-contract-gate"].find("testcase")
    assert verdict.find("failure").get("message").startswith("FAIL: 2 unacknowledged")
    assert root.get("failures") == "3" and root.get("tests") == "4"

    acked = ET.fromstring(run(shop, "junit", "--accept", "lake/shop/orders").stdout)
    assert acked.get("failures") == "0" and acked.get("skipped") == "2"
    assert all(c.find("failure") is None for c in acked.iter("testcase"))


def test_junit_escapes_what_the_pr_wrote(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    name = "a\"<b>&\x1b[31m'</testcase>"
    repo.write(
        ORDERS, f"dataset: orders\ncolumns:\n  - name: {json.dumps(name)}\n    data_type: bigint\n"
    )
    repo.commit("odd")
    repo.branch("feature")
    repo.write(ORDERS, "dataset: orders\ncolumns: []\n")
    repo.commit("drop")
    proc = run(repo, "junit")
    assert proc.returncode == 1
    root = ET.fromstring(proc.stdout)  # well-formed whatever the name
    case = next(
        c for c in root.iter("testcase") if c.get("classname") == "schema-contract-gate.orders"
    )
    assert case.get("name") == "column_removed orders.a\"<b>&\\x1b[31m'</testcase>"
    assert "\x1b" not in proc.stdout


def test_junit_of_a_refused_file_is_an_error(shop: GitRepo) -> None:
    shop.write(ORDERS, "dataset: lake/shop/orders\ncolumns: [unclosed\n")
    shop.commit("break the file")
    proc = run(shop, "junit")
    assert proc.returncode == 2
    root = ET.fromstring(proc.stdout)
    errors = [c.find("error") for c in root.iter("testcase")]
    assert all(e is not None for e in errors) and len(errors) == 2
    assert errors[0].text.startswith(f"{ORDERS}:3:")


def test_gitlab_code_quality_issues(shop: GitRepo) -> None:
    proc = run(shop, "gitlab")
    assert proc.returncode == 1
    issues = json.loads(proc.stdout)
    by_check = {i["check_name"]: i for i in issues}
    assert by_check["type_narrowed"]["severity"] == "blocker"
    assert by_check["type_narrowed"]["location"] == {"path": ORDERS, "lines": {"begin": 5}}
    assert by_check["column_added"]["severity"] == "info"
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
    acked = json.loads(run(shop, "gitlab", "--accept", "lake/shop/orders").stdout)
    narrowed = next(i for i in acked if i["check_name"] == "type_narrowed")
    assert narrowed["severity"] == "info" and "ACKED" in narrowed["description"]
    assert narrowed["fingerprint"] == by_check["type_narrowed"]["fingerprint"]


def test_gitlab_of_a_refused_file_is_a_blocker_on_its_line(shop: GitRepo) -> None:
    shop.write(ORDERS, "dataset: lake/shop/orders\ncolumns: [unclosed\n")
    shop.commit("break the file")
    proc = run(shop, "gitlab")
    assert proc.returncode == 2
    [issue] = json.loads(proc.stdout)
    assert issue["severity"] == "blocker" and issue["check_name"] == "contract_refused"
    assert issue["location"] == {"path": ORDERS, "lines": {"begin": 3}}


def test_a_sarif_log_past_code_scanning_s_result_limit_is_cut_and_says_so(
    tmp_path: Path,
) -> None:
    """5,001 columns dropped and 3 added: code scanning keeps 5,000 results a run.
    The log keeps the first 5,000 (every kept one blocking), counts the 4 left
    out in the log and on stderr, and --output holds the same log."""
    columns = "".join(f"  - name: c{i}\n    data_type: bigint\n" for i in range(5_001))
    repo = GitRepo(tmp_path / "wide")
    repo.write(
        ORDERS,
        "dataset: lake/shop/orders\ncolumns:\n  - name: id\n    data_type: bigint\n" + columns,
    )
    repo.commit("wide")
    repo.branch("feature")
    added = "".join(f"  - name: n{i}\n    data_type: date\n" for i in range(3))
    repo.write(
        ORDERS, "dataset: lake/shop/orders\ncolumns:\n  - name: id\n    data_type: bigint\n" + added
    )
    repo.commit("drop them all")
    out = tmp_path / "gate.sarif"
    proc = run(repo, "sarif", "--output", str(out))
    assert proc.returncode == 1
    log = json.loads(proc.stdout)
    validate(log)
    run_ = log["runs"][0]
    assert len(run_["results"]) == 5_000
    assert {r["level"] for r in run_["results"]} == {"error"}
    assert run_["properties"]["leftOut"] == {
        "results": 4,
        "blockingResults": 1,
        "notifications": 0,
        "findings": 5_004,
    }
    assert run_["invocations"][0]["exitCode"] == 1  # the verdict counts every finding
    assert "warning: 4 of 5,004 finding(s) left out of the SARIF log (1 of them blocking)" in (
        proc.stderr
    )
    assert out.read_text() == proc.stdout
