"""Approval by owners (issue #23), end to end in real git repositories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import run_main
from tests.gitrepo import GitRepo

C = "soda/contracts"

ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: amount
    data_type: decimal(12, 2)
"""


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def report(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    from tests.conftest import gate_env

    proc = run_main(
        repo.path, "--base", "main", "--format", "json", *args, env={**gate_env(), **(env or {})}
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def narrow(repo: GitRepo, contract: str = ORDERS) -> None:
    repo.write(f"{C}/orders.yaml", contract.replace("bigint", "int"))


# -- step 1: fingerprints -------------------------------------------------------------


def test_each_change_carries_the_sha256_of_its_canonical_json(shop: GitRepo) -> None:
    narrow(shop)
    _, out = report(shop)
    change = out["changes"][0]
    canonical = json.dumps(
        {
            "after": "INT",
            "before": "BIGINT",
            "column": "order_id",
            "dataset": "lake/shop/orders",
            "rule": "type_narrowed",
        },
        separators=(",", ":"),
    )
    assert change["fingerprint"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_the_fingerprint_ignores_lines_and_messages_but_not_what_breaks(shop: GitRepo) -> None:
    narrow(shop)
    first = report(shop)[1]["changes"][0]["fingerprint"]
    # The same break, moved down two lines by a comment: same fingerprint.
    narrow(shop, "# owned by shop\n\n" + ORDERS)
    moved = report(shop)[1]["changes"][0]
    assert moved["line"] != 4 and moved["fingerprint"] == first
    # Narrowed to another type: another break, another fingerprint.
    shop.write(f"{C}/orders.yaml", ORDERS.replace("bigint", "smallint"))
    assert report(shop)[1]["changes"][0]["fingerprint"] != first


# -- steps 2 to 4: CODEOWNERS, the policy, --approved-by -----------------------------

READER = "select order_id, amount from shop.orders\n"
POLICY = """\
approvals:
  rules:
    - datasets: ["lake/shop/*"]
      approval: {approval}
      acknowledge: {acknowledge}
"""


@pytest.fixture
def owned(tmp_path: Path) -> GitRepo:
    """main: a contract, a reader of it owned by @bob, and an approval policy."""
    repo = GitRepo(tmp_path / "owned")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.write("reports/revenue.sql", READER)
    repo.write(".github/CODEOWNERS", "* @alice\n/reports/ @bob @acme/finance\n")
    repo.write(".schema-gate.yml", POLICY.format(approval="consumers", acknowledge="approval"))
    repo.commit("contracts")
    repo.branch("feature")
    narrow(repo)
    repo.commit("narrow order_id")
    return repo


def run(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    return report(repo, "--head", "feature", *args, env=env)


def test_without_a_policy_the_description_alone_acknowledges_as_before(shop: GitRepo) -> None:
    narrow(shop)
    shop.commit("narrow")
    code, out = report(shop, "--head", "feature", "--accept", "lake/shop/orders")
    assert code == 0 and out["changes"][0]["approvals"] is None
    assert out["changes"][0]["acknowledged"] is True


def test_the_code_owners_of_the_reader_must_approve(owned: GitRepo) -> None:
    code, out = run(owned)
    assert code == 1
    approvals = out["changes"][0]["approvals"]
    assert approvals["required"] == [
        {
            "why": "code owners of reports/revenue.sql (.github/CODEOWNERS:2)",
            "owners": ["@bob", "@acme/finance"],
            "error": None,
        }
    ]
    assert approvals["received"] == [] and approvals["missing"] == approvals["required"]


def test_a_code_owner_approval_clears_the_break(owned: GitRepo) -> None:
    code, out = run(owned, "--approved-by", "Bob")  # handles compare case-insensitively
    assert code == 0, out["message"]
    change = out["changes"][0]
    assert change["acknowledged"] is True and change["approvals"]["received"] == ["@bob"]
    # The environment variable does the same for other CI systems, teams included.
    code, out = run(owned, env={"APPROVED_BY": "@acme/finance"})
    assert code == 0


def test_someone_else_approving_does_not_clear_it(owned: GitRepo) -> None:
    code, out = run(owned, "--approved-by", "alice,carol")
    assert code == 1 and out["changes"][0]["approvals"]["received"] == []


def test_acknowledge_approval_ignores_the_description_line(owned: GitRepo) -> None:
    code, out = run(owned, "--accept", "lake/shop/orders")
    assert code == 1 and out["changes"][0]["acknowledged"] is False


def test_acknowledge_either_takes_the_description_or_an_approval(owned: GitRepo) -> None:
    owned.checkout("main")
    owned.write(".schema-gate.yml", POLICY.format(approval="consumers", acknowledge="either"))
    owned.commit("either")
    owned.checkout("feature")
    owned.git("merge", "-q", "--no-edit", "main")
    assert run(owned, "--accept", "lake/shop/orders")[0] == 0
    assert run(owned, "--approved-by", "bob")[0] == 0
    assert run(owned)[0] == 1


def test_a_pr_that_names_its_author_in_codeowners_gets_no_say(owned: GitRepo) -> None:
    owned.write(".github/CODEOWNERS", "* @mallory\n")
    owned.write(".schema-gate.yml", "approvals: {}\n")  # and tries to drop the policy
    owned.commit("make me the owner")
    code, out = run(owned, "--approved-by", "mallory")
    assert code == 1
    assert out["changes"][0]["approvals"]["missing"][0]["owners"] == ["@bob", "@acme/finance"]
    notices = " ".join(out["notices"])
    assert "changes approvals:" in notices and "changes .github/CODEOWNERS" in notices


def test_an_unparseable_codeowners_line_keeps_the_break_blocking(owned: GitRepo) -> None:
    owned.checkout("main")
    owned.write(".github/CODEOWNERS", "* @alice\n!/reports/ @bob\n/reports/ @bob\n")
    owned.commit("negation")
    owned.checkout("feature")
    owned.git("merge", "-q", "--no-edit", "main")
    code, out = run(owned, "--approved-by", "bob")
    assert code == 1
    (missing,) = out["changes"][0]["approvals"]["missing"]
    assert ".github/CODEOWNERS:2: negation (!) does not work in CODEOWNERS" in missing["error"]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github", "sarif", "junit"])
def test_an_unparseable_codeowners_line_is_also_a_top_level_notice(
    owned: GitRepo, fmt: str
) -> None:
    owned.checkout("main")
    owned.write(".github/CODEOWNERS", "* @alice\n/reports/[a-z]* @bob\n/reports/ @bob\n")
    owned.commit("a range")
    owned.checkout("feature")
    owned.git("merge", "-q", "--no-edit", "main")
    args = ("--base", "main", "--head", "feature", "--approved-by", "bob", "--format", fmt)
    proc = run_main(owned.path, *args)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the break stays blocking
    where = ".github/CODEOWNERS:2: character ranges ([ ]) does not work in CODEOWNERS"
    assert "CODEOWNERS line not usable" in proc.stdout
    assert ".github/CODEOWNERS:2" in proc.stdout.split("CODEOWNERS line not usable", 1)[1]
    if fmt == "json":
        out = json.loads(proc.stdout)
        [notice] = [n for n in out["notices"] if n.startswith("CODEOWNERS")]
        assert notice.endswith(where)
        assert where in out["changes"][0]["approvals"]["missing"][0]["error"]  # and per change


def test_codeowners_lookup_order_first_found_wins(owned: GitRepo) -> None:
    owned.checkout("main")
    owned.write("CODEOWNERS", "* @zed\n")  # .github/CODEOWNERS comes first
    owned.write("docs/CODEOWNERS", "* @zed\n")
    owned.commit("more files")
    owned.checkout("feature")
    owned.git("merge", "-q", "--no-edit", "main")
    assert run(owned, "--approved-by", "zed")[0] == 1
    assert run(owned, "--approved-by", "bob")[0] == 0


def test_text_and_markdown_say_who_must_approve_and_who_is_missing(owned: GitRepo) -> None:
    proc = run_main(owned.path, "--base", "main", "--head", "feature", "--approved-by", "carol")
    assert proc.returncode == 1
    assert "missing code owners of reports/revenue.sql" in proc.stdout
    assert "one of @bob, @acme/finance" in proc.stdout
    proc = run_main(owned.path, "--base", "main", "--head", "feature", "--format", "markdown")
    assert "**Approval by owners**" in proc.stdout and "@bob" in proc.stdout


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("approvals: {rules: [{datasets: ['*'], approval: maybe}]}", "'approval' must be one of"),
        (
            "approvals: {rules: [{datasets: ['*'], acknowledge: approval}]}",
            "'acknowledge: approval' needs an 'approval' other than none",
        ),
        ("approvals: {rules: [{approval: owners}]}", "needs 'datasets'"),
        ("approvals: {rules: [{datasets: ['*'], approvers: ['@a/b/c']}]}", "is not @user"),
        ("approvals: {reviewers: []}", "unknown approvals key 'reviewers'"),
    ],
)
def test_a_bad_approvals_section_is_refused_with_its_file(
    shop: GitRepo, section: str, message: str
) -> None:
    shop.write(".schema-gate.yml", section + "\n")
    proc = run_main(shop.path, "--base", "main")
    assert proc.returncode == 2 and ".schema-gate.yml" in proc.stderr and message in proc.stderr


ODCS = """\
apiVersion: v3.0.2
kind: DataContract
id: orders
version: 1.0.0
status: active
team:
  - username: sales-lead
    role: owner
schema:
  - name: orders
    physicalName: orders
    properties:
      - name: order_id
        logicalType: integer
        physicalType: bigint
"""


@pytest.mark.parametrize(
    ("mapping", "approver", "code"),
    [
        ("{sales-lead: ['@dana']}", "dana", 0),  # mapped through approvals.owners
        ("{sales-lead: ['@dana']}", "erin", 1),
        ("{}", "dana", 1),  # an owner name that maps to nobody: fail closed
    ],
)
def test_the_contracts_own_owners_approve(
    tmp_path: Path, mapping: str, approver: str, code: int
) -> None:
    repo = GitRepo(tmp_path / "odcs")
    repo.write("contracts/orders.odcs.yaml", ODCS)
    repo.write(
        ".schema-gate.yml",
        f"contracts: ['contracts/*.yaml']\napprovals:\n  owners: {mapping}\n"
        "  rules:\n    - datasets: ['*']\n      approval: owners\n      acknowledge: approval\n",
    )
    repo.commit("odcs")
    repo.branch("feature")
    repo.write(
        "contracts/orders.odcs.yaml", ODCS.replace("physicalType: bigint", "physicalType: int")
    )
    repo.commit("narrow")
    got, out = report(repo, "--head", "feature", "--approved-by", approver)
    assert got == code, out["changes"]
    if mapping == "{}":
        assert "maps to no GitHub handle" in out["changes"][0]["approvals"]["missing"][0]["error"]


def test_consumer_broken_is_never_cleared_by_approval(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "broken")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.write("reports/revenue.sql", READER)
    repo.write("CODEOWNERS", "* @bob\n")
    repo.write(
        ".schema-gate.yml",
        POLICY.format(approval="any-of", acknowledge="approval").replace(
            "      acknowledge", "      approvers: ['@bob']\n      acknowledge"
        ),
    )
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(
        f"{C}/orders.yaml", ORDERS.replace("  - name: amount\n    data_type: decimal(12, 2)\n", "")
    )
    repo.commit("drop amount")
    code, out = report(repo, "--head", "feature", "--approved-by", "bob")
    broken = [c for c in out["changes"] if c["rule"] == "consumer_broken"]
    assert broken and code == 1
    assert "never by approval" in broken[0]["approvals"]["note"]
    assert all(c["acknowledged"] for c in out["changes"] if c["rule"] == "column_removed")


# -- dbt group owners declared in another properties file --------------------------

DBT_MODEL = """\
version: 2
models:
  - name: orders
    config:
      contract: {enforced: true}
      group: finance
    columns:
      - name: order_id
        data_type: bigint
"""
DBT_GROUPS = """\
version: 2
groups:
  - name: finance
    owner:
      name: Finance Team
      email: finance@example.com
"""
DBT_POLICY = """\
approvals:
  owners:
    Finance Team: ["@acme/finance"]
  rules:
    - datasets: ["*"]
      approval: owners
      acknowledge: approval
"""


@pytest.fixture
def dbt_shop(tmp_path: Path) -> GitRepo:
    """A dbt project whose ``finance`` group is declared in models/groups.yml only."""
    repo = GitRepo(tmp_path / "dbt")
    repo.write("dbt_project.yml", "name: shop\n")
    repo.write("models/groups.yml", DBT_GROUPS)
    repo.write("models/marts/orders.yml", DBT_MODEL)
    repo.write(".schema-gate.yml", DBT_POLICY)
    repo.commit("dbt")
    repo.branch("feature")
    repo.write("models/marts/orders.yml", DBT_MODEL.replace("bigint", "int"))
    repo.commit("narrow")
    return repo


def test_a_dbt_group_declared_in_another_file_names_the_owners(dbt_shop: GitRepo) -> None:
    code, out = run(dbt_shop)
    assert code == 1
    (required,) = out["changes"][0]["approvals"]["required"]
    assert required == {
        "why": "contract owners: Finance Team",
        "owners": ["@acme/finance"],
        "error": None,
    }
    assert run(dbt_shop, "--approved-by", "@acme/finance")[0] == 0


def test_a_pr_cannot_move_the_group_to_its_author(dbt_shop: GitRepo) -> None:
    dbt_shop.write("models/groups.yml", DBT_GROUPS.replace("Finance Team", "'@mallory'"))
    dbt_shop.commit("make me the owner")
    assert run(dbt_shop, "--approved-by", "mallory")[0] == 1
    assert run(dbt_shop, "--approved-by", "@acme/finance")[0] == 0  # the base's group


def test_a_group_declared_twice_has_no_owner_and_blocks(dbt_shop: GitRepo) -> None:
    dbt_shop.checkout("main")
    dbt_shop.write("models/more_groups.yml", DBT_GROUPS.replace("Finance Team", "Other"))
    dbt_shop.commit("a second finance group")
    dbt_shop.checkout("feature")
    dbt_shop.git("merge", "-q", "--no-edit", "main")
    code, out = run(dbt_shop, "--approved-by", "@acme/finance")
    assert code == 1
    assert out["changes"][0]["approvals"]["missing"][0]["error"] == "the contract names no owner"


def test_a_branch_older_than_the_codeowners_is_judged_by_the_current_ones(owned: GitRepo) -> None:
    """Like the approvals: policy, CODEOWNERS is the base branch's as it is now.
    Attack: @bob owned the reports when the PR branched and has since been
    replaced by @acme/finance alone on main; read at the merge-base, @bob's
    approval (an accomplice's) still cleared the break."""
    owned.checkout("main")
    owned.write(".github/CODEOWNERS", "* @alice\n/reports/ @acme/finance\n")
    owned.commit("bob leaves the reports")
    owned.checkout("feature")  # not merged: the PR still branches before it
    code, out = run(owned, "--approved-by", "bob")
    assert code == 1
    assert out["changes"][0]["approvals"]["missing"][0]["owners"] == ["@acme/finance"]
    assert run(owned, "--approved-by", "@acme/finance")[0] == 0


def test_a_branch_older_than_the_contract_owner_is_judged_by_the_current_one(
    dbt_shop: GitRepo,
) -> None:
    """Like CODEOWNERS, a contract's owner is the base branch's as it is now.
    Attack: Finance Team owned the model's group when the PR branched; main has
    since handed the group to Audit Team. Read where the PR branched, Finance
    Team's approval (an accomplice's) still cleared the break."""
    dbt_shop.checkout("main")
    dbt_shop.write("models/groups.yml", DBT_GROUPS.replace("Finance Team", "Audit Team"))
    dbt_shop.write(
        ".schema-gate.yml",
        DBT_POLICY.replace("owners:\n", 'owners:\n    Audit Team: ["@acme/audit"]\n', 1),
    )
    dbt_shop.commit("audit owns the finance group now")
    dbt_shop.checkout("feature")  # not merged: the PR still branches before it
    assert run(dbt_shop, "--approved-by", "@acme/finance")[0] == 1
    assert run(dbt_shop, "--approved-by", "@acme/audit")[0] == 0
