"""The command line end to end: real git repos, the CLI's ``main()`` in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import gate_env, run_gate
from tests.gitrepo import GitRepo

ORDERS = """\
dataset: lake/shop/orders
columns:
  - name: order_id
    data_type: bigint
  - name: customer_id
    data_type: bigint
  - name: amount
    data_type: decimal(12, 2)
  - name: note
    data_type: string
"""

CUSTOMERS = """\
dataset: lake/shop/customers
columns:
  - name: customer_id
    data_type: bigint
  - name: email
    data_type: string
"""

C = "soda/contracts"


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    """main with two contracts, then a feature branch checked out."""
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.write(f"{C}/customers.yaml", CUSTOMERS)
    repo.write("README.md", "shop\n")
    repo.commit("contracts")
    repo.branch("feature")
    return repo


def gate_json(repo: GitRepo, *args: str, **kwargs) -> tuple[int, dict]:
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *args, **kwargs)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def rules_of(report: dict) -> list[tuple[str, str | None]]:
    return [(c["rule"], c["column"]) for c in report["changes"]]


def test_no_change_passes(shop: GitRepo) -> None:
    code, report = gate_json(shop)
    assert code == 0
    assert report["changes"] == [] and report["verdict"] == "pass"
    assert report["summary"]["files_compared"] == 0


def test_breaking_change_in_working_tree_fails_with_exit_1(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml",
        ORDERS.replace(
            "    data_type: bigint\n  - name: amount", "    data_type: int\n  - name: amount"
        ),
    )
    code, report = gate_json(shop)
    assert code == 1
    change = report["changes"][0]
    # fingerprint and approvals (issue #23) are keys added later; tests/cli/test_approvals.py checks it.
    assert change.pop("fingerprint").startswith("sha256:")
    assert change.pop("approvals") is None  # no approval policy: today's behaviour
    assert change.pop("external_consumers") == []  # issue #25: no lineage: sources configured
    assert change.pop("downstream") == []  # issue #25: added later; no reader passes it on
    assert change | {"message": None} == {
        "rule": "type_narrowed",
        "severity": "error",
        "breaking": True,
        "acknowledged": False,
        "dataset": "lake/shop/orders",
        "old_dataset": None,
        "column": "customer_id",
        "path": f"{C}/orders.yaml",
        "line": 5,
        "message": None,
        "before": "BIGINT",
        "after": "INT",
        "direction": "tightened",
        "consumers": [],
    }
    assert report["summary"]["unacknowledged"] == 1
    assert report["exit_code"] == 1


def test_text_report_lists_breaking_first_and_says_what_to_do(shop: GitRepo) -> None:
    text = ORDERS.replace("  - name: note\n    data_type: string\n", "") + (
        "  - name: channel\n    data_type: int\n"
    )
    shop.write(f"{C}/orders.yaml", text)
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "column_removed lake/shop/orders.note: STRING -> (removed)" in out
    assert "column_added lake/shop/orders.channel: (none) -> INT" in out
    assert out.index("BREAKING") < out.index("ADDITIVE")
    assert "accept-breaking-change: lake/shop/orders" in out.splitlines()[-1]


def test_additive_changes_pass_and_are_reported(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml", ORDERS.replace("decimal(12, 2)", "decimal(14,2)") + "  - name: x\n"
    )
    shop.write(f"{C}/refunds.yaml", "dataset: lake/shop/refunds\ncolumns:\n  - name: id\n")
    code, report = gate_json(shop)
    assert code == 0
    assert sorted(rules_of(report)) == [
        ("column_added", "x"),
        ("model_added", None),
        ("type_widened", "amount"),
    ]


def test_dataset_level_findings_print_no_empty_before_and_after(shop: GitRepo) -> None:
    # Seen on the ODCS examples: "model_added Air_Quality: (none) -> (none)".
    shop.remove(f"{C}/customers.yaml")
    shop.write(f"{C}/refunds.yaml", "dataset: lake/shop/refunds\ncolumns:\n  - name: id\n")
    text = run_gate(shop.path, "--base", "main")
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    assert "  model_removed lake/shop/customers" in lines
    assert "  model_added lake/shop/refunds" in lines
    assert "(none)" not in text.stdout
    markdown = run_gate(shop.path, "--base", "main", "--format", "markdown").stdout
    assert "| `model_removed` | `lake/shop/customers` |  | — → removed |" in markdown
    assert "| `model_added` | `lake/shop/refunds` |  | — → added |" in markdown


def test_model_removed_and_moved_file(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    shop.move(f"{C}/orders.yaml", f"{C}/sales/orders.yml")
    code, report = gate_json(shop)
    assert code == 1
    assert rules_of(report) == [("model_removed", None)]
    assert report["changes"][0]["dataset"] == "lake/shop/customers"


def test_moved_and_edited_file_is_paired_by_dataset(shop: GitRepo) -> None:
    shop.move(f"{C}/orders.yaml", f"{C}/sales/orders.yaml")
    shop.commit("move")
    shop.write(f"{C}/sales/orders.yaml", ORDERS + "  - name: extra\n")
    code, report = gate_json(shop)
    assert code == 0
    assert rules_of(report) == [("column_added", "extra")]


def test_model_renamed_in_same_file(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", ORDERS.replace("lake/shop/orders", "lake/shop/sales"))
    code, report = gate_json(shop)
    assert code == 1
    assert rules_of(report) == [("model_renamed", None)]
    assert report["changes"][0]["before"] == "lake/shop/orders"
    # Either name acknowledges a rename.
    for token in ("shop.orders", "lake/shop/sales"):
        code, report = gate_json(shop, "--accept", token)
        assert code == 0 and report["changes"][0]["acknowledged"]


def test_acknowledgement_sources_merge(shop: GitRepo, tmp_path: Path) -> None:
    shop.remove(f"{C}/customers.yaml")
    shop.write(f"{C}/orders.yaml", ORDERS.replace("  - name: note\n    data_type: string\n", ""))
    body = tmp_path / "body.md"
    body.write_text(
        "## Why\n<!-- accept-breaking-change: shop.orders -->\n"
        "- accept-breaking-change: `shop.customers`\n"
    )
    code, report = gate_json(shop, "--pr-body-file", str(body))
    assert code == 1  # the commented-out token does not count
    assert [c["acknowledged"] for c in report["changes"]] == [False, True]
    code, report = gate_json(
        shop, "--pr-body-file", str(body), env=gate_env(ACCEPT_BREAKING_CHANGE="shop.orders")
    )
    assert code == 0
    assert report["acknowledgements"] == ["shop.customers", "shop.orders"]
    assert all(c["acknowledged"] for c in report["changes"])


def test_pr_body_from_stdin_and_acked_marks_in_text(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    proc = run_gate(
        shop.path,
        "--base",
        "main",
        "--pr-body-file",
        "-",
        stdin="accept-breaking-change: lake/shop/customers\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "[ACKED]" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("PASS")


def test_unmatched_token_is_a_warning(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    code, report = gate_json(shop, "--accept", "shop.customers,shop.custmers")
    assert code == 0
    assert report["unmatched_acknowledgements"] == [
        {"token": "shop.custmers", "source": "--accept"}
    ]
    proc = run_gate(shop.path, "--base", "main", "--accept", "shop.custmers,shop.customers")
    assert "'shop.custmers' (from --accept) names no changed dataset" in proc.stdout
    code, _ = gate_json(shop, "--accept", "shop.customers,shop.custmers", "--fail-on", "warning")
    assert code == 1


def test_merge_base_ignores_changes_made_on_main_after_branching(shop: GitRepo) -> None:
    shop.checkout("main")
    shop.write(f"{C}/payments.yaml", "dataset: lake/shop/payments\ncolumns:\n  - name: id\n")
    shop.commit("payments on main")
    shop.checkout("feature")
    code, report = gate_json(shop)
    assert code == 0 and report["changes"] == []
    # Against the tip, the feature branch looks as if it deleted payments.
    code, report = gate_json(shop, "--no-merge-base")
    assert code == 1 and rules_of(report) == [("model_removed", None)]
    assert report["base"]["merge_base"] is False


def test_head_ref_ignores_the_working_tree(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", ORDERS.replace("bigint", "string"))
    code, _ = gate_json(shop, "--head", "HEAD")
    assert code == 0
    shop.commit("break")
    code, report = gate_json(shop, "--head", "HEAD")
    assert code == 1 and report["head"]["ref"] == "HEAD"


def test_untracked_contract_counts_in_worktree_mode(shop: GitRepo) -> None:
    shop.write(f"{C}/new/returns.yml", "dataset: lake/shop/returns\ncolumns:\n  - name: id\n")
    code, report = gate_json(shop)
    assert code == 0
    assert rules_of(report) == [("model_added", None)]


def test_custom_contract_globs(shop: GitRepo) -> None:
    shop.write("elsewhere/x.yaml", "dataset: x\ncolumns:\n  - name: id\n")
    shop.write("elsewhere/deeper/y.yml", "dataset: y\ncolumns:\n  - name: id\n")
    _, report = gate_json(shop, "--contracts", "elsewhere/**/*.yaml")
    assert rules_of(report) == [("model_added", None)]
    _, report = gate_json(
        shop, "--contracts", "elsewhere/*.yaml", "--contracts", "elsewhere/**/*.yml"
    )
    assert sorted(c["dataset"] for c in report["changes"]) == ["x", "y"]
    _, report = gate_json(shop)
    assert report["changes"] == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("dataset: [unclosed\n", f"{C}/orders.yaml:2: invalid YAML"),
        ("columns: []\n", f"{C}/orders.yaml:1: 'dataset' is missing"),
        ("- a\n- b\n", f"{C}/orders.yaml:1: the top level must be a mapping"),
        ("dataset: 12\n", f"{C}/orders.yaml:1: 'dataset' must be a string"),
        (
            "dataset: d\ncolumns:\n  - data_type: int\n",
            f"{C}/orders.yaml:3: column #1 has no 'name'",
        ),
        (
            "dataset: d\ncolumns:\n  - name: Id\n  - name: id\n",
            f"{C}/orders.yaml:4: dataset 'd': column 'id' is declared twice (as 'Id')",
        ),
        ("", f"{C}/orders.yaml: empty file; expected a data contract"),
    ],
)
def test_invalid_contract_exits_2_with_one_line(shop: GitRepo, content: str, expected: str) -> None:
    shop.write(f"{C}/orders.yaml", content)
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"schema-gate: error: {expected}"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_binary_contract_exits_2(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", b"\x00\x01\x02PK")
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2 and "binary content" in proc.stderr


def test_alias_bomb_is_refused_fast(shop: GitRepo) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    shop.write(f"{C}/orders.yaml", "dataset: d\n" + "\n".join(lines) + "\n")
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2 and "alias" in proc.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--base", "-rf"], "expected one argument"),
        (["--base=--output=/tmp/x"], "starts with '-'"),
        (
            ["--base", "nope/branch"],
            "unknown ref 'nope/branch': there is no remote 'nope' (the repository has none); "
            "name the branch your change will merge into with --base, e.g. --base main",
        ),
        (["--head=-x", "--base", "main"], "starts with '-'"),
        (["--format", "yaml"], "invalid choice"),
        (
            ["--pr-body-file", "/nonexistent/body.md", "--base", "main"],
            "cannot read --pr-body-file",
        ),
        (["--dialect", "klingon", "--base", "main"], "unknown dialect"),
        (["--jobs", "0", "--base", "main"], "--jobs must be at least 1"),
        (["--dialect", "", "--base", "main"], "--dialect is empty; give a dialect name"),
        (["--dialect= ", "--base", "main"], "--dialect is empty; give a dialect name"),
    ],
)
def test_bad_invocations_exit_2_with_one_line(
    shop: GitRepo, args: list[str], expected: str
) -> None:
    proc = run_gate(shop.path, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_not_a_git_repository_exits_2(tmp_path: Path) -> None:
    proc = run_gate(tmp_path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stderr == (
        f"schema-gate: error: not a git repository: {tmp_path} "
        "(run the gate inside your repository, or pass --repo DIR)\n"
    )
    proc = run_gate(tmp_path, "--base", "main", "--repo", str(tmp_path))
    assert proc.stderr == f"schema-gate: error: not a git repository: {tmp_path}\n"


def test_markdown_report(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml",
        ORDERS.replace("  - name: note\n    data_type: string\n", "") + "  - name: a|b\n",
    )
    proc = run_gate(shop.path, "--base", "main", "--format", "markdown")
    assert proc.returncode == 1
    md = proc.stdout
    assert md.startswith("## Schema contract gate: ❌ failed")
    assert "| ❌ | `column_removed` | `lake/shop/orders` | `note` |" in md
    assert "<details><summary>Additive changes (1)</summary>" in md
    assert "`a\\|b`" in md  # a pipe in a name cannot break the table
    assert "accept-breaking-change: lake/shop/orders" in md


def test_github_annotations(shop: GitRepo) -> None:
    shop.write(
        f"{C}/orders.yaml", ORDERS.replace("decimal(12, 2)", "decimal(10,2)") + "  - name: y\n"
    )
    proc = run_gate(shop.path, "--base", "main", "--format", "github")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"::error file={C}/orders.yaml,line=7,title=type_narrowed::")
    assert any(
        line.startswith(f"::notice file={C}/orders.yaml,line=11,title=column_added::")
        for line in lines
    )
    assert lines[-1].startswith("::error::FAIL")


def test_github_format_carries_the_notes_of_the_text_report(shop: GitRepo) -> None:
    # The config file used (reviewers must read it like code) and a broken base
    # contract were printed as "note:" in text and dropped from --format github.
    shop.write(".schema-gate.yml", "rules:\n  column_added: error\n")
    shop.write(f"{C}/orders.yaml", ORDERS + "  - name: y\n")
    proc = run_gate(shop.path, "--base", "main", "--format", "github")
    assert proc.returncode == 1
    assert (
        "::notice title=schema-contract-gate::config read from .schema-gate.yml (HEAD side; "
        "changes to it are part of this PR)"
    ) in proc.stdout.splitlines()
    assert proc.stdout.splitlines()[-1].startswith("::error::FAIL")


def test_output_file_and_list_rules(shop: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = run_gate(shop.path, "--base", "main", "--format", "json", "--output", str(out))
    assert proc.returncode == 0 and json.loads(out.read_text())["exit_code"] == 0
    for args in (["rules"], ["--list-rules"]):
        proc = run_gate(shop.path, *args)
        assert proc.returncode == 0
        assert "model_removed" in proc.stdout and "type_widened" in proc.stdout
    proc = run_gate(shop.path, "rules", "model_removed")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "schema-gate: error: 'rules' takes no arguments, got 'model_removed'\n"


def test_help_teaches(shop: GitRepo) -> None:
    proc = run_gate(shop.path, "--help")
    assert proc.returncode == 0
    for needle in ("accept-breaking-change:", "exit codes:", "examples:", "--no-merge-base"):
        assert needle in proc.stdout
    usage = proc.stdout.split("\n\n")[0]
    assert usage.splitlines()[-1].strip() == "schema-gate rules"  # the subcommand, in the usage
    running = proc.stdout.split("\nrunning:\n")[1].split("\n\n")[0]
    assert "--jobs N" in running and "--debug" in running  # not under "output"
    assert "--jobs" not in proc.stdout.split("\noutput:\n")[1].split("\n\n")[0]


def test_run_from_a_subdirectory(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    proc = run_gate(shop.path / "soda", "--base", "main")
    assert proc.returncode == 1, proc.stderr


def test_duplicate_yaml_key_is_refused_with_its_line(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", "dataset: a\ncolumns: []\ndataset: b\n")
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2
    assert f"{C}/orders.yaml:3: invalid YAML: duplicate key 'dataset'" in proc.stderr


def test_default_globs_find_every_format(shop: GitRepo) -> None:
    shop.write(
        "warehouse/orders.odcs.yaml",
        "apiVersion: v3.0.2\nkind: DataContract\nid: o\n"
        "version: 1.0.0\nstatus: active\nschema:\n  - name: odcs_orders\n"
        "    properties:\n      - name: id\n        logicalType: integer\n",
    )
    shop.write(
        "models/marts/schema.yml",
        "version: 2\nmodels:\n  - name: dim_customers\n"
        "    config:\n      contract:\n        enforced: true\n    columns:\n"
        "      - name: id\n        data_type: int\n",
    )
    shop.write("contracts/pay.yml", "dataset: payments\ncolumns:\n  - name: id\n")
    _, report = gate_json(shop)
    assert sorted(c["dataset"] for c in report["changes"]) == [
        "dim_customers",
        "odcs_orders",
        "payments",
    ]
    assert {c["rule"] for c in report["changes"]} == {"model_added"}


def test_base_missing_from_a_shallow_clone_names_the_remedy(shop: GitRepo, tmp_path: Path) -> None:
    shop.write(f"{C}/orders.yaml", ORDERS + "  - name: extra\n")
    shop.commit("feature work")
    clone = GitRepo.clone(
        f"file://{shop.path}", tmp_path / "shallow", "--depth", "1", "-b", "feature"
    )
    proc = run_gate(clone.path, "--base", shop.rev("main"))
    assert proc.returncode == 2
    assert "shallow" in proc.stderr and "fetch-depth: 0" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_globs_that_match_nothing_exit_2_with_the_remedy(shop: GitRepo) -> None:
    proc = run_gate(shop.path, "--base", "main", "--contracts", "sodaa/**/*.yaml")
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: no contract file matches the globs sodaa/**/*.yaml at the base "
        "or at HEAD; set 'contracts:' in .schema-gate.yml or pass --contracts GLOB (or set "
        "'allow-empty: true' while the repository has no contract yet)\n"
    )
    shop.land(".schema-gate.yml", "allow-empty: true\n")  # from the base branch (gate/policy.py)
    code, report = gate_json(shop, "--contracts", "sodaa/**/*.yaml")
    assert code == 0
    assert (
        "no contract file matches the globs sodaa/**/*.yaml (allow-empty: true)"
        in (report["notices"])
    )
    _, report = gate_json(shop)
    assert not any("no contract file" in n for n in report["notices"])


def test_two_files_declaring_one_dataset_exit_2(shop: GitRepo) -> None:
    shop.write(f"{C}/copy.yaml", ORDERS)
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2
    assert "dataset 'lake/shop/orders' is also declared in" in proc.stderr


def test_a_copied_contract_clashes_with_the_unchanged_original(shop: GitRepo) -> None:
    shop.write(f"{C}/sales/orders_copy.yml", ORDERS)
    for args in ([], ["--head", "HEAD"]):
        if args:
            shop.commit("copy")
        proc = run_gate(shop.path, "--base", "main", *args)
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr.strip() == (
            f"schema-gate: error: {C}/sales/orders_copy.yml:1: dataset 'lake/shop/orders' "
            f"is also declared in {C}/orders.yaml"
        )
    # A dataset merely named in another contract's text is not a clash.
    shop.write(
        f"{C}/sales/orders_copy.yml",
        "dataset: lake/shop/orders_v2\n# see lake/shop/orders\ncolumns:\n  - name: id\n",
    )
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 0, proc.stderr


DATACONTRACT = """\
dataContractSpecification: 1.2.1
id: inventory-events
info:
  title: Inventory Events
  version: 0.0.1
models:
  inventory:
    type: table
    fields:
      sku:
        type: string
      available:
        type: integer
"""


@pytest.mark.parametrize("where", ["datacontract.yaml", "inventory/datacontract.yml"])
def test_datacontract_cli_default_file_name_is_a_default_glob(tmp_path: Path, where: str) -> None:
    # `datacontract init` writes datacontract.yaml; beside other contracts it was
    # silently skipped (the run passed on the Soda file alone).
    repo = GitRepo(tmp_path / "r")
    repo.write(f"{C}/orders.yaml", ORDERS)
    repo.write(where, DATACONTRACT)
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(where, DATACONTRACT.replace("type: integer", "type: string"))
    code, report = gate_json(repo)
    assert code == 1
    assert sorted((c["rule"], c["dataset"], c["path"]) for c in report["changes"]) == [
        ("type_changed", "inventory", where),
        ("version_not_bumped", "inventory", where),
    ]


ODCS_VERSIONED = """\
apiVersion: v3.0.2
kind: DataContract
id: orders-contract
name: orders
status: active
version: 1.2.0
schema:
  - name: orders
    properties:
      - name: id
        logicalType: integer
      - name: note
        logicalType: string
"""

DCS_JSON = {
    "dataContractSpecification": "1.2.1",
    "id": "inventory",
    "info": {"title": "Inventory", "version": "2.0.0"},
    "models": {"stock": {"fields": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
}


def test_version_rules_point_at_the_version_line(tmp_path: Path) -> None:
    """A breaking change without a major bump is fixed on the version line: point there."""
    repo = GitRepo(tmp_path / "r")
    repo.write("contracts/orders.odcs.yaml", ODCS_VERSIONED)
    repo.write("contracts/stock.datacontract.json", json.dumps(DCS_JSON, indent=2) + "\n")
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(
        "contracts/orders.odcs.yaml",
        ODCS_VERSIONED.replace("version: 1.2.0", "version: 1.3.0").replace(
            "      - name: note\n        logicalType: string\n", ""
        ),
    )
    bumped = json.loads(json.dumps(DCS_JSON))
    bumped["info"]["version"] = "2.1.0"
    del bumped["models"]["stock"]["fields"]["qty"]
    repo.write("contracts/stock.datacontract.json", json.dumps(bumped, indent=2) + "\n")
    proc = run_gate(repo.path, "--base", "main", "--contracts", "contracts/**", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    where = {
        c["path"]: c["line"]
        for c in json.loads(proc.stdout)["changes"]
        if c["rule"] == "version_not_bumped"
    }
    assert where == {"contracts/orders.odcs.yaml": 6, "contracts/stock.datacontract.json": 6}


def test_consumer_broken_reads_as_a_name_that_is_gone(tmp_path: Path) -> None:
    # jaffle-shop-mesh-platform with a mart reading stg_orders.tax_paid, then the
    # PR drops it: the text said "tax_paid -> (none)" and Markdown "tax_paid → —".
    from tests.consumer_projects import DBT_PROJECT

    stg = "models/staging/stg_models.yml"
    repo = GitRepo(tmp_path / "repo")
    for path, text in DBT_PROJECT.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    lines = DBT_PROJECT[stg].splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == "- name: discount_code")
    repo.write(stg, "".join(lines[:start] + lines[start + 2 :]))
    text = run_gate(repo.path, "--base", "main")
    assert text.returncode == 1, text.stderr
    assert "  consumer_broken stg_orders.discount_code: discount_code -> (gone)" in (
        text.stdout.splitlines()
    )
    markdown = run_gate(repo.path, "--base", "main", "--format", "markdown").stdout
    assert "| `consumer_broken` | `stg_orders` | `discount_code` | `discount_code` → gone |" in (
        markdown
    )


def test_an_unknown_base_says_fetch_only_when_the_remote_exists(
    shop: GitRepo, tmp_path: Path
) -> None:
    # A repository without "origin" (a local one, or a fork with "upstream"): the
    # default --base origin/main used to advise "git fetch origin main", which fails.
    proc = run_gate(shop.path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: unknown ref 'origin/main': there is no remote 'origin' "
        "(the repository has none); name the branch your change will merge into with "
        "--base, e.g. --base main\n"
    )
    clone = GitRepo.clone(str(shop.path), tmp_path / "clone", "--single-branch")
    proc = run_gate(clone.path, "--base", "upstream/main")
    assert "there is no remote 'upstream' (remotes: origin)" in proc.stderr
    proc = run_gate(clone.path, "--base", "origin/release")
    assert proc.returncode == 2
    # the clone's origin/HEAD names the branch checked out in the source: feature
    assert proc.stderr == (
        "schema-gate: error: unknown ref 'origin/release': fetch it first "
        "(git fetch origin release) or name another base with --base "
        "(the remote's default branch is origin/feature)\n"
    )


def test_a_repository_without_a_commit_says_commit_first(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "fresh")
    repo.write(f"{C}/orders.yaml", ORDERS)
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stderr.startswith("schema-gate: error: HEAD names no commit yet"), proc.stderr


def test_no_merge_base_names_the_refs_as_typed_and_the_flag(shop: GitRepo) -> None:
    shop.git("checkout", "-q", "--orphan", "elsewhere")
    shop.remove(f"{C}/customers.yaml")
    shop.commit("an unrelated root")
    proc = run_gate(shop.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: no merge base between 'main' and 'HEAD': their histories are "
        "unrelated; compare against the tip of 'main' instead (--no-merge-base)\n"
    )
    assert run_gate(shop.path, "--base", "main", "--no-merge-base").returncode == 1


def test_every_report_names_the_dialect_the_types_were_read_in(shop: GitRepo) -> None:
    # jaffle-shop-mesh-platform is a Snowflake project: read as Spark (the default)
    # its `number` columns were DECIMAL(10,0), with nothing saying why.
    shop.write(f"{C}/orders.yaml", ORDERS.replace("decimal(12, 2)", "number"))
    text = run_gate(shop.path, "--base", "main")
    assert "1 changed contract file(s) compared, data types read as spark SQL" in text.stdout
    assert "DECIMAL(12,2) -> DECIMAL(10,0)" in text.stdout
    shop.land(".schema-gate.yml", "dialect: snowflake\n")  # a PR cannot switch it (gate/policy.py)
    text = run_gate(shop.path, "--base", "main")
    assert "data types read as snowflake SQL" in text.stdout
    assert "DECIMAL(12,2) -> DECIMAL(38,0)" in text.stdout
    markdown = run_gate(shop.path, "--base", "main", "--format", "markdown", "--dialect", "duckdb")
    assert "data types read as `duckdb` SQL (`--dialect`)." in markdown.stdout
    _, report = gate_json(shop, "--dialect", "trino")
    assert report["dialect"] == "trino"


def test_a_misspelt_acknowledgement_line_is_named_in_the_report(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    body = "Retire customers.\n\naccept-breaking-changes: lake/shop/customers\n"
    proc = run_gate(shop.path, "--base", "main", "--pr-body-file", "-", stdin=body)
    assert proc.returncode == 1
    assert (
        "note: PR body line 3 mentions accept-breaking-change but acknowledges nothing: "
        "start the line with 'accept-breaking-change: <dataset>'"
    ) in proc.stdout
    fixed = body.replace("changes:", "change:")
    proc = run_gate(shop.path, "--base", "main", "--pr-body-file", "-", stdin=fixed)
    assert proc.returncode == 0 and "PR body line" not in proc.stdout


def test_a_misspelt_acknowledgement_suggests_the_dataset_meant(shop: GitRepo) -> None:
    shop.remove(f"{C}/customers.yaml")
    env = gate_env() | {"ACCEPT_BREAKING_CHANGE": "shop.custmers,nothing.like.it"}
    proc = run_gate(shop.path, "--base", "main", env=env)
    assert proc.returncode == 1
    assert (
        "  'shop.custmers' (from ACCEPT_BREAKING_CHANGE) names no changed dataset "
        "(did you mean 'lake/shop/customers'?)"
    ) in proc.stdout.splitlines()
    assert (
        "  'nothing.like.it' (from ACCEPT_BREAKING_CHANGE) names no changed dataset; "
        "check the spelling"
    ) in proc.stdout.splitlines()
    markdown = run_gate(shop.path, "--base", "main", "--format", "markdown", env=env).stdout
    assert "names no changed dataset (did you mean `lake/shop/customers`?)" in markdown
