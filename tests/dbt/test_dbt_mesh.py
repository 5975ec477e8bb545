"""Two dbt projects in one repository (a dbt Mesh monorepo), end to end.

dbt keys a model by project and name (``model.<project>.<model>``), so the
``platform`` and ``finance`` projects may each have a ``stg_orders``; a
cross-project ``ref('platform', 'stg_orders')`` names one of them. The layout
follows dbt-labs' jaffle-shop-mesh split (a platform project and a finance
project that reads it); the files are written here for the gate.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

from gate import acks
from gate.consumers import jinja
from gate.consumers.names import DbtScope, NameIndex, ScopedIndex
from gate.dbt import identity as dbt_identity
from gate.diff import Change
from gate.model import Dataset
from gate.rules import Severity
from tests.conftest import run_gate
from tests.gitrepo import GitRepo


def project(name: str) -> str:
    return f'name: {name}\nversion: "1.0"\nconfig-version: 2\nprofile: {name}\n'


def props(name: str, *columns: str) -> str:
    cols = "".join(f"      - name: {c}\n        data_type: int\n" for c in columns)
    return (
        textwrap.dedent(f"""\
        version: 2
        models:
          - name: {name}
            config:
              contract: {{enforced: true}}
            columns:
        """)
        + cols
    )


def mesh(**extra: str) -> dict[str, str]:
    """platform and finance, each with an enforced ``stg_orders`` of its own."""
    files = {
        "platform/dbt_project.yml": project("platform"),
        "platform/models/stg_orders.sql": "select 1 as id, 2 as amount\n",
        "platform/models/_models.yml": props("stg_orders", "id", "amount"),
        "finance/dbt_project.yml": project("finance"),
        "finance/models/stg_orders.sql": "select 1 as id, 3 as total\n",
        "finance/models/_models.yml": props("stg_orders", "id", "total"),
    }
    files.update({k.replace("__", "/"): v for k, v in extra.items()})
    return files


def start(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    return repo


def gate(repo: GitRepo, *args: str) -> tuple[int, dict]:
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def gate_error(repo: GitRepo, *args: str) -> str:
    proc = run_gate(repo.path, "--base", "main", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0].removeprefix("schema-gate: error: ")


def rules(report: dict) -> list[tuple[str, str, str | None]]:
    return sorted((c["rule"], c["dataset"], c["column"]) for c in report["changes"])


# -- identity: one name, two projects -------------------------------------------


def test_two_projects_added_with_one_model_name_compare_cleanly(tmp_path: Path) -> None:
    repo = start(tmp_path, {"README.md": "mesh\n"})
    for path, text in mesh().items():
        repo.write(path, text)
    repo.commit("two projects")
    code, report = gate(repo)
    assert code == 0, report
    assert rules(report) == [
        ("model_added", "finance.stg_orders", None),
        ("model_added", "platform.stg_orders", None),
    ]


def test_both_models_changed_additively_pair_within_their_project(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id", "amount", "placed_at"))
    repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "currency"))
    repo.commit("one column each")
    code, report = gate(repo)
    assert code == 0, report
    assert rules(report) == [
        ("column_added", "finance.stg_orders", "currency"),
        ("column_added", "platform.stg_orders", "placed_at"),
    ]


def test_a_column_removed_in_one_project_is_that_project_s(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.commit("drop amount")
    code, report = gate(repo)
    assert code == 1
    [change] = report["changes"]
    # Only platform's file changed: the name is unambiguous in the run.
    assert (change["rule"], change["dataset"], change["column"]) == (
        "column_removed",
        "stg_orders",
        "amount",
    )
    assert change["path"] == "platform/models/_models.yml"


def test_a_column_removed_while_both_are_compared_names_the_project(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "currency"))
    repo.commit("drop amount, add currency")
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [
        ("column_added", "finance.stg_orders", "currency"),
        ("column_removed", "platform.stg_orders", "amount"),
    ]
    text = run_gate(repo.path, "--base", "main").stdout
    assert "platform.stg_orders" in text and "amount" in text


def test_a_new_model_of_another_project_s_name_is_no_clash(tmp_path: Path) -> None:
    """finance's properties file is unchanged: the clash search must not count it."""
    files = mesh()
    del files["platform/models/stg_orders.sql"], files["platform/models/_models.yml"]
    repo = start(tmp_path, files)
    repo.write("platform/models/stg_orders.sql", "select 1 as id\n")
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.commit("platform gets its own stg_orders")
    code, report = gate(repo)
    assert code == 0, report
    assert rules(report) == [("model_added", "stg_orders", None)]


def test_one_name_twice_in_one_project_still_fails_closed(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/more/_more.yml", props("stg_orders", "id"))
    repo.commit("a second stg_orders in platform")
    line = gate_error(repo)
    assert "dataset 'stg_orders' is also declared in platform/models/_models.yml" in line, line


def test_one_name_twice_in_one_project_in_two_changed_files_fails_closed(
    tmp_path: Path,
) -> None:
    repo = start(tmp_path, mesh())
    repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "currency"))
    repo.write("finance/models/more/_more.yml", props("stg_orders", "id"))
    repo.commit("finance declares stg_orders twice")
    line = gate_error(repo)
    assert "dataset 'stg_orders' is also declared in finance/models/" in line, line


# -- acknowledgements ------------------------------------------------------------


def _both_break(tmp_path: Path) -> GitRepo:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.write("finance/models/_models.yml", props("stg_orders", "id"))
    repo.commit("drop a column in each")
    return repo


def test_a_bare_name_does_not_acknowledge_both_projects(tmp_path: Path) -> None:
    repo = _both_break(tmp_path)
    code, report = gate(repo, "--accept", "stg_orders")
    assert code == 1
    assert not any(c["acknowledged"] for c in report["changes"])
    [ambiguous] = report["ambiguous_acknowledgements"]
    assert ambiguous["token"] == "stg_orders"
    assert ambiguous["candidates"] == ["finance.stg_orders", "platform.stg_orders"]


def test_qualified_tokens_acknowledge_one_project_each(tmp_path: Path) -> None:
    repo = _both_break(tmp_path)
    code, report = gate(repo, "--accept", "platform.stg_orders")
    assert code == 1
    acked = {c["dataset"] for c in report["changes"] if c["acknowledged"]}
    assert acked == {"platform.stg_orders"}
    code, report = gate(
        repo, "--accept", "platform.stg_orders", "--accept", "model.finance.stg_orders"
    )
    assert code == 0, report
    assert report["unmatched_acknowledgements"] == []


def test_the_pr_body_takes_the_qualified_token(tmp_path: Path) -> None:
    repo = _both_break(tmp_path)
    body = tmp_path / "body.md"
    body.write_text(
        "Dropping columns.\n\naccept-breaking-change: platform.stg_orders, finance.stg_orders\n"
    )
    code, report = gate(repo, "--pr-body-file", str(body))
    assert code == 0, report


def test_a_bare_name_is_ambiguous_while_both_projects_changed(tmp_path: Path) -> None:
    """Only platform's change breaks, but finance's model changed too: as for
    ``schema.table`` tokens, a short name counts only when one changed dataset fits."""
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "currency"))
    repo.commit("drop amount, add currency")
    code, report = gate(repo, "--accept", "stg_orders")
    assert code == 1
    assert [a["token"] for a in report["ambiguous_acknowledgements"]] == ["stg_orders"]
    code, report = gate(repo, "--accept", "platform.stg_orders")
    assert code == 0, report
    assert report["acknowledgements"] == ["platform.stg_orders"]


def test_the_qualified_token_works_while_the_name_is_unambiguous(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.commit("drop amount")
    for token in ("stg_orders", "platform.stg_orders", "model.platform.stg_orders"):
        code, report = gate(repo, "--accept", token)
        assert code == 0, (token, report)
    code, report = gate(repo, "--accept", "finance.stg_orders")
    assert code == 1
    assert [t["token"] for t in report["unmatched_acknowledgements"]] == ["finance.stg_orders"]


# -- consumers: refs resolve as dbt resolves them -------------------------------

READERS = {
    # finance reads its own stg_orders, and platform's through a cross-project ref
    "finance/models/revenue.sql": "select o.id, o.total\nfrom {{ ref('stg_orders') }} as o\n",
    "finance/models/platform_orders.sql": (
        "select p.id, p.amount\nfrom {{ ref('platform', 'stg_orders') }} as p\n"
    ),
    "platform/models/orders_summary.sql": (
        "select s.id, s.amount\nfrom {{ ref('stg_orders') }} as s\n"
    ),
}


def narrow_id(name: str, *columns: str) -> str:
    return props(name, *columns).replace(
        "id\n        data_type: int", "id\n        data_type: smallint", 1
    )


def consumers_of(report: dict, rule: str, dataset: str, column: str) -> set[str]:
    [change] = [
        c
        for c in report["changes"]
        if (c["rule"], c["dataset"], c["column"]) == (rule, dataset, column)
    ]
    return {c["path"] for c in change["consumers"]}


def test_a_change_in_platform_names_platform_s_readers_only(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh(**READERS))
    repo.write("platform/models/_models.yml", narrow_id("stg_orders", "id", "amount"))
    repo.commit("narrow platform's id")
    code, report = gate(repo)
    assert code == 1
    # finance's revenue.sql reads finance's own stg_orders (ref('stg_orders') in
    # finance), although finance's model is not compared in this run.
    assert consumers_of(report, "type_narrowed", "stg_orders", "id") == {
        "finance/models/platform_orders.sql",
        "platform/models/orders_summary.sql",
    }


def test_a_change_in_finance_names_finance_s_readers_only(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh(**READERS))
    repo.write("finance/models/_models.yml", narrow_id("stg_orders", "id", "total"))
    repo.commit("narrow finance's id")
    code, report = gate(repo)
    assert code == 1
    assert consumers_of(report, "type_narrowed", "stg_orders", "id") == {
        "finance/models/revenue.sql"
    }


def test_readers_follow_qualified_ids_when_both_projects_change(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh(**READERS))
    repo.write("platform/models/_models.yml", narrow_id("stg_orders", "id"))
    repo.write("finance/models/_models.yml", narrow_id("stg_orders", "id", "total"))
    repo.commit("narrow both ids, drop platform's amount")
    code, report = gate(repo)
    assert code == 1
    assert consumers_of(report, "type_narrowed", "platform.stg_orders", "id") == {
        "finance/models/platform_orders.sql",
        "platform/models/orders_summary.sql",
    }
    assert consumers_of(report, "type_narrowed", "finance.stg_orders", "id") == {
        "finance/models/revenue.sql"
    }
    broken = sorted(
        (c["dataset"], c["path"]) for c in report["changes"] if c["rule"] == "consumer_broken"
    )
    assert broken == [
        ("platform.stg_orders", "finance/models/platform_orders.sql"),
        ("platform.stg_orders", "platform/models/orders_summary.sql"),
    ]


def test_a_cross_project_reader_is_broken_by_a_removed_column(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh(**READERS))
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.commit("drop platform's amount")
    code, report = gate(repo)
    assert code == 1
    broken = [c for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert sorted((c["path"], c["line"]) for c in broken) == [
        ("finance/models/platform_orders.sql", 1),
        ("platform/models/orders_summary.sql", 1),
    ]
    text = run_gate(repo.path, "--base", "main").stdout
    assert "platform_orders reads column 'stg_orders.amount'" in text, text


def test_a_one_argument_ref_from_a_project_without_the_model_reads_the_other(
    tmp_path: Path,
) -> None:
    """dbt looks in the current project first, then in every other one."""
    files = mesh(**READERS)
    files["marketing/dbt_project.yml"] = project("marketing")
    files["marketing/models/campaigns.sql"] = "select c.amount\nfrom {{ ref('stg_orders') }} c\n"
    del files["finance/models/stg_orders.sql"], files["finance/models/_models.yml"]
    del files["finance/models/revenue.sql"]
    repo = start(tmp_path, files)
    repo.write("platform/models/_models.yml", props("stg_orders", "id"))
    repo.commit("drop platform's amount")
    code, report = gate(repo)
    assert code == 1
    assert consumers_of(report, "column_removed", "stg_orders", "amount") == {
        "finance/models/platform_orders.sql",
        "marketing/models/campaigns.sql",
        "platform/models/orders_summary.sql",
    }


# -- config: policies and consumer names by either id ----------------------------


def test_a_policy_names_a_model_bare_or_by_project(tmp_path: Path) -> None:
    for pattern, frozen in (
        ("stg_orders", {"finance.stg_orders", "platform.stg_orders"}),
        ("platform.*", {"platform.stg_orders"}),
        ("model.*", set()),
    ):
        repo = start(
            tmp_path / pattern,
            mesh(
                **{
                    ".schema-gate.yml": (
                        f'policies:\n  - datasets: ["{pattern}"]\n'
                        "    schema_contract: {columns: freeze}\n"
                    )
                }
            ),
        )
        repo.write("platform/models/_models.yml", props("stg_orders", "id", "amount", "a"))
        repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "b"))
        repo.commit("a column each")
        code, report = gate(repo)
        errors = {c["dataset"] for c in report["changes"] if c["severity"] == "error"}
        assert errors == frozen, pattern
        assert code == (1 if frozen else 0)


def test_platform_star_freezes_a_platform_model_shown_bare(tmp_path: Path) -> None:
    repo = start(
        tmp_path,
        mesh(
            **{
                ".schema-gate.yml": (
                    'policies:\n  - datasets: ["platform.*"]\n    schema_contract: freeze\n'
                )
            }
        ),
    )
    repo.write("platform/models/_models.yml", props("stg_orders", "id", "amount", "a"))
    repo.commit("a column")
    code, report = gate(repo)
    assert code == 1
    assert rules(report) == [("column_added", "stg_orders", "a")]


# -- the pure parts ----------------------------------------------------------------


def _model(name: str, project: str | None, path: str = "m.yml") -> Dataset:
    return Dataset(id=name, path=path, format="dbt", project=project)


def test_qualify_only_names_two_projects_share_on_a_side() -> None:
    base = [_model("stg_orders", "platform"), _model("orders.v2", "platform")]
    head = [
        _model("stg_orders", "platform"),
        _model("stg_orders", "finance"),
        _model("orders.v2", "platform"),
        _model("orders", "finance"),  # shares the model name of platform's orders.v2
        Dataset(id="customers", path="c.yaml", format="soda"),
    ]
    new_base, new_head = dbt_identity.qualify(base, head)
    assert [d.id for d in new_base] == ["platform.stg_orders", "platform.orders.v2"]
    assert [d.id for d in new_head] == [
        "platform.stg_orders",
        "finance.stg_orders",
        "platform.orders.v2",
        "finance.orders",
        "customers",
    ]
    assert dbt_identity.qualify(base, base) == (base, base)


def test_same_dataset_across_projects_and_formats() -> None:
    a, b = _model("stg_orders", "platform"), _model("STG_ORDERS", "finance")
    assert not dbt_identity.same_dataset(a, b)
    assert dbt_identity.same_dataset(a, _model("Stg_Orders", "platform"))
    assert dbt_identity.same_dataset(a, _model("stg_orders", None))
    # Two formats declaring one table are two contracts (issue #21, gate.declarations).
    assert not dbt_identity.same_dataset(a, Dataset(id="stg_orders", path="s.yaml", format="soda"))


def _broken(dataset: str) -> Change:
    return Change("column_removed", Severity.ERROR, dataset, "c", "p.yml", 1, "m")


def test_ack_names_exact_and_short() -> None:
    datasets = [
        replace(_model("stg_orders", "platform"), id="platform.stg_orders"),
        replace(_model("stg_orders", "finance"), id="finance.stg_orders"),
        _model("customers", "platform"),
    ]
    exact, short = dbt_identity.ack_names(datasets)
    changes = [_broken(d.id) for d in datasets]

    def acked(*tokens: str) -> tuple[set[str], list[str]]:
        result = acks.apply(changes, [acks.Token(t, "--accept") for t in tokens], exact, short)
        return (
            {c.dataset for c in result.changes if c.acknowledged},
            [t.value for t, _c in result.ambiguous],
        )

    assert acked("stg_orders") == (set(), ["stg_orders"])
    assert acked("platform.stg_orders") == ({"platform.stg_orders"}, [])
    assert acked("model.finance.stg_orders") == ({"finance.stg_orders"}, [])
    assert acked("customers", "model.platform.customers") == ({"customers"}, [])
    # without the dbt names, nothing changes for anyone else
    assert acks.apply(changes, [acks.Token("platform.customers", "x")]).unmatched


def test_scoped_lookup_resolves_refs_as_dbt_does() -> None:
    index = NameIndex(
        [
            replace(_model("stg_orders", "platform"), id="platform.stg_orders"),
            replace(_model("stg_orders", "finance"), id="finance.stg_orders"),
            _model("customers", "platform"),
            Dataset(id="lake/shop/customers", path="c.yaml", format="soda"),
        ]
    )
    in_finance = ScopedIndex(index, DbtScope("finance", frozenset({"stg_orders", "customers"})))
    assert in_finance.lookup(("stg_orders",)) == {"finance.stg_orders"}
    assert in_finance.lookup(("platform", "stg_orders")) == {"platform.stg_orders"}
    # finance's own (uncontracted) customers model: not platform's; a Soda
    # contract on a table of that name still matches, as without projects
    assert in_finance.lookup(("customers",)) == {"lake/shop/customers"}
    in_marketing = ScopedIndex(index, DbtScope("marketing"))
    assert in_marketing.lookup(("customers",)) == {"customers", "lake/shop/customers"}
    assert in_marketing.lookup(("stg_orders",)) == {"finance.stg_orders", "platform.stg_orders"}
    assert index.lookup(("platform", "stg_orders")) == {"platform.stg_orders"}


def test_two_argument_refs_keep_their_project() -> None:
    text = "select * from {{ ref('platform', 'stg_orders') }} join {{ ref('x') }}"
    assert "platform.stg_orders" in jinja.render(text)
    assert jinja.ref_projects(text) == {"platform"}


def test_a_project_has_a_model_by_its_file_or_a_version_file() -> None:
    scope = DbtScope("finance", frozenset({"orders_v2", "orders_view", "stg_orders"}))
    assert scope.is_local("stg_orders") and scope.is_local("orders")
    assert not scope.is_local("customers")
    assert not DbtScope("finance", frozenset({"orders_view"})).is_local("orders")


def test_a_qualified_id_meeting_another_format_s_dataset_is_another_contract(
    tmp_path: Path,
) -> None:
    """One table declared in two formats is two contracts (issue #21), even
    when the dbt side's id is qualified by its project."""
    files = mesh()
    files["contracts/platform_orders.yaml"] = (
        "dataset: platform.stg_orders\ncolumns:\n  - name: id\n    data_type: int\n"
    )
    repo = start(tmp_path, files)
    repo.write("platform/models/_models.yml", props("stg_orders", "id", "amount", "a"))
    repo.write("finance/models/_models.yml", props("stg_orders", "id", "total", "b"))
    repo.write(
        "contracts/platform_orders.yaml",
        files["contracts/platform_orders.yaml"] + "  - name: note\n    data_type: string\n",
    )
    repo.commit("one column each")
    code, report = gate(repo, "--contracts", "contracts/*.yaml")
    assert code == 0
    assert sorted((c["path"], c["rule"], c["dataset"], c["column"]) for c in report["changes"]) == [
        ("contracts/platform_orders.yaml", "column_added", "platform.stg_orders", "note"),
        ("finance/models/_models.yml", "column_added", "finance.stg_orders", "b"),
        ("platform/models/_models.yml", "column_added", "platform.stg_orders", "a"),
    ]


# -- a model changes project ---------------------------------------------------------


def test_a_model_moved_to_another_project_is_renamed_and_breaks_cross_project_refs(
    tmp_path: Path,
) -> None:
    files = mesh(**READERS)
    files["marketing/dbt_project.yml"] = project("marketing")
    repo = start(tmp_path, files)
    repo.move("platform/models/_models.yml", "marketing/models/_models.yml")
    repo.move("platform/models/stg_orders.sql", "marketing/models/stg_orders.sql")
    repo.remove("platform/models/orders_summary.sql")
    repo.commit("stg_orders moves to marketing")
    code, report = gate(repo)
    assert code == 1
    renamed = [c for c in report["changes"] if c["rule"] == "model_renamed"]
    assert [(c["before"], c["after"]) for c in renamed] == [
        ("platform.stg_orders", "marketing.stg_orders")
    ]
    broken = [c["path"] for c in report["changes"] if c["rule"] == "consumer_broken"]
    assert broken == ["finance/models/platform_orders.sql"]
    code, report = gate(repo, "--accept", "platform.stg_orders")
    assert [c["rule"] for c in report["changes"] if not c["acknowledged"]] == ["consumer_broken"]


def test_a_project_renamed_in_place_keeps_its_models(tmp_path: Path) -> None:
    repo = start(tmp_path, mesh())
    repo.write("platform/dbt_project.yml", project("core_platform"))
    repo.commit("rename the platform project")
    code, report = gate(repo)
    assert code == 0, report
    assert report["changes"] == []
