"""Downstream lineage through the CLI: a real git repository with a small dbt
project (tests/consumer_projects.py ``LINEAGE_PROJECT``), a dropped column
followed past its first readers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from gate import rules
from gate.config import ConsumerConfig
from gate.diff import Change
from gate.git import open_repo
from gate.lineage import downstream
from gate.lineage.downstream import MAX_PATHS, attach
from gate.model import Column, Consumer, Dataset
from gate.rules import Severity
from tests.consumer_projects import LINEAGE_PROJECT
from tests.gitrepo import GitRepo

Cli = Callable[..., subprocess.CompletedProcess[str]]
STG = "models/staging/stg_models.yml"
INT = ("int_orders", "promo_code", "models/intermediate/int_orders.sql", 7, "renamed")
FCT = ("fct_orders", "discount", "models/marts/fct_orders.sql", 3, "renamed")


def drop(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {name}")
    return "".join(lines[:start] + lines[start + 2 :])


def project(tmp_path: Path, extra: dict[str, str] | None = None) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    for path, text in {**LINEAGE_PROJECT, **(extra or {})}.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    repo.write(STG, drop(LINEAGE_PROJECT[STG], "discount_code"))
    repo.commit("drop discount_code")
    return repo


def report(cli: Cli, repo: GitRepo) -> dict:
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)


def removed(data: dict) -> dict:
    return next(c for c in data["changes"] if c["rule"] == "column_removed")


def hops(path: dict) -> list[tuple[object, ...]]:
    return [(h["model"], h["column"], h["path"], h["line"], h["how"]) for h in path["hops"]]


def test_a_dropped_column_is_followed_through_two_renames_to_its_ends(
    cli: Cli, tmp_path: Path
) -> None:
    data = report(cli, project(tmp_path))
    paths = removed(data)["downstream"]
    got = {(p["path"], p["end"], p["end_path"], p["end_line"]) for p in paths}
    assert got == {
        # two renames to a mart, then an aggregate ends it
        (
            "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount",
            "aggregated",
            "models/marts/rpt_discounts.sql",
            2,
        ),
        # a cast makes a new column of the next model, a final output
        (
            "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"
            " -> fct_orders_text.discount_text",
            "output",
            None,
            None,
        ),
        # a SQLMesh model reads the mart: its hop is its MODEL name
        (
            "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"
            " -> audit.discount_audit.discount",
            "output",
            None,
            None,
        ),
        # orders.sql passes every column on through o.*
        ("stg_orders.discount_code -> orders.discount_code", "output", None, None),
    }
    by_path = {p["path"]: p for p in paths}
    cast = by_path[
        "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"
        " -> fct_orders_text.discount_text"
    ]
    assert hops(cast) == [
        INT,
        FCT,
        ("fct_orders_text", "discount_text", "models/marts/fct_orders_text.sql", 3, "cast"),
    ]
    mesh = by_path[
        "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"
        " -> audit.discount_audit.discount"
    ]
    assert hops(mesh)[-1] == (
        "audit.discount_audit",
        "discount",
        "sqlmesh/models/discount_audit.sql",
        8,
        "same",
    )
    star = by_path["stg_orders.discount_code -> orders.discount_code"]
    assert hops(star) == [("orders", "discount_code", "models/marts/orders.sql", 2, "star")]
    # customers.sql selects * in a CTE but not discount_code in its output: no path
    assert not any("customers" in p["path"] for p in paths)
    # lineage adds no consumer_broken: the first reader is the line to fix
    broken = [(c["path"], c["line"]) for c in data["changes"] if c["rule"] == "consumer_broken"]
    assert broken == [("models/intermediate/int_orders.sql", 7), ("models/marts/orders.sql", 7)]


def test_the_text_report_lists_downstream_under_the_readers(cli: Cli, tmp_path: Path) -> None:
    repo = project(tmp_path)
    proc = cli(repo.path, "--base", "main", "--head", "feature")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    read_by = max(i for i, line in enumerate(lines) if line.startswith("      read by "))
    downstream = [i for i, line in enumerate(lines) if line.startswith("      downstream: ")]
    assert len(downstream) == 4 and min(downstream) == read_by + 1
    assert (
        "      downstream: stg_orders.discount_code -> int_orders.promo_code "
        "(models/intermediate/int_orders.sql:7) -> fct_orders.discount "
        "(models/marts/fct_orders.sql:3): ends in an aggregate at "
        "models/marts/rpt_discounts.sql:2 (rpt_discounts)"
    ) in lines


def test_markdown_lists_downstream_under_who_reads_this(cli: Cli, tmp_path: Path) -> None:
    repo = project(tmp_path)
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "markdown")
    assert proc.returncode == 1, proc.stderr
    assert (
        "  - downstream: `stg_orders.discount_code` → `int_orders.promo_code` "
        "(`models/intermediate/int_orders.sql:7`) → `fct_orders.discount` "
        "(`models/marts/fct_orders.sql:3`): "
        "`ends in an aggregate at models/marts/rpt_discounts.sql:2 (rpt_discounts)`"
    ) in proc.stdout.splitlines()


def test_annotations_and_sarif_carry_the_downstream_paths(cli: Cli, tmp_path: Path) -> None:
    repo = project(tmp_path)
    args = ("--base", "main", "--head", "feature", "--format")
    github = cli(repo.path, *args, "github").stdout.splitlines()
    [line] = [a for a in github if a.startswith("::error ") and "title=column_removed" in a]
    assert line.endswith("(downstream: 4 path(s))")
    log = json.loads(cli(repo.path, *args, "sarif").stdout)
    [result] = [r for r in log["runs"][0]["results"] if r["ruleId"] == "column_removed"]
    paths = result["properties"]["downstream"]
    assert len(paths) == 4
    assert (
        "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount: "
        "ends in an aggregate at models/marts/rpt_discounts.sql:2 (rpt_discounts)"
    ) in paths
    # related locations stay the first readers, as the "Who reads this" list
    related = [r["message"]["text"] for r in result["relatedLocations"]]
    assert len(related) == result["properties"]["consumers"]
    assert all(" reads stg_orders.discount_code " in text for text in related)


def test_the_base_side_depth_limit_cuts_a_path_and_says_so(cli: Cli, tmp_path: Path) -> None:
    repo = project(tmp_path, {".schema-gate.yml": "limits:\n  lineage_depth: 1\n"})
    paths = removed(report(cli, repo))["downstream"]
    cut = [p for p in paths if p["end"] == "cut"]
    assert [(p["path"], p["note"]) for p in cut] == [
        (
            "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount",
            "lineage cut at depth 1",
        )
    ]
    assert not any("fct_orders_text" in p["path"] for p in paths)


def test_a_pull_request_cannot_raise_its_own_depth(cli: Cli, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    for path, text in {
        **LINEAGE_PROJECT,
        ".schema-gate.yml": "limits:\n  lineage_depth: 1\n",
    }.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    repo.write(".schema-gate.yml", "limits:\n  lineage_depth: 50\n")
    repo.write(STG, drop(LINEAGE_PROJECT[STG], "discount_code"))
    repo.commit("drop discount_code, raise the depth")
    paths = removed(report(cli, repo))["downstream"]
    assert {p["note"] for p in paths if p["end"] == "cut"} == {"lineage cut at depth 1"}


def test_views_in_plain_sql_chain_through_their_names(cli: Cli, tmp_path: Path) -> None:
    views = {
        "sql/views.sql": (
            "create view mart.discounts as\n"
            "select order_id, discount_code as code from stg_orders;\n"
            "\n"
            "create view mart.discount_report as\n"
            "select d.code from mart.discounts d\n"
            "where d.code <> '';\n"
        ),
    }
    paths = removed(report(cli, project(tmp_path, views)))["downstream"]
    chain = [p for p in paths if "mart.discounts" in p["path"]]
    assert {(p["path"], p["end"], p["end_line"]) for p in chain} == {
        ("stg_orders.discount_code -> mart.discounts.code", "filtered", 6),
        (
            "stg_orders.discount_code -> mart.discounts.code -> mart.discount_report.code",
            "output",
            None,
        ),
    }


def test_a_model_that_cannot_be_read_downstream_is_listed_not_dropped(
    cli: Cli, tmp_path: Path
) -> None:
    broken = {"models/marts/rpt_broken.sql": "select discount from {{ ref('fct_orders') \n"}
    data = report(cli, project(tmp_path, broken))
    assert {
        "path": "models/marts/rpt_broken.sql",
        "line": None,
        "reason": "dbt model: unterminated {{ at line 1",
    } in data["consumers_not_analysed"]


def test_lineage_costs_nothing_when_no_reader_passes_the_column_on(repo: GitRepo) -> None:
    repo.write("models/m.sql", "select a from t\n")
    repo.commit("m")
    change = Change.of(
        rules.COLUMN_REMOVED, Severity.ERROR, "t", "t.yml", 1, "gone", column="a", before="INT"
    )
    filtered = replace(change, consumers=(Consumer("models/m.sql", 1, "m", "filtered"),))
    with open_repo(str(repo.path)) as git:
        result = attach(git, "HEAD", [change, filtered], [], [], ConsumerConfig(), "spark")
    assert result.files_read == 0
    assert result.changes == [change, filtered]


def test_consumers_off_means_no_lineage(cli: Cli, tmp_path: Path) -> None:
    repo = project(tmp_path, {".schema-gate.yml": "consumers: false\n"})
    data = report(cli, repo)
    assert removed(data)["downstream"] == []
    assert removed(data)["consumers"] == []


def test_without_the_scans_flows_the_first_readers_are_read_again(tmp_path: Path) -> None:
    """``attach`` on its own (a library caller without ``Scan.flows``) finds the same paths."""
    repo = project(tmp_path)
    change = Change.of(
        rules.COLUMN_REMOVED,
        Severity.ERROR,
        "stg_orders",
        STG,
        15,
        "gone",
        column="discount_code",
        before="STRING",
    )
    readers = (Consumer("models/intermediate/int_orders.sql", 7, "int_orders", "selected"),)
    base = Dataset("stg_orders", STG, "dbt", columns=(Column("order_id"), Column("discount_code")))
    head = replace(base, columns=(Column("order_id"),))
    with open_repo(str(repo.path)) as git:
        result = attach(
            git,
            "feature",
            [replace(change, consumers=readers)],
            [base],
            [head],
            ConsumerConfig(),
            "spark",
        )
    # int_orders; fct_orders; the three readers of fct_orders; the SQLMesh model's own
    # file, which mentions its name (a model named by its stem is skipped unread)
    assert result.files_read == 1 + 1 + 3 + 1
    paths = {p.arrow(): p.ending() for p in result.changes[0].downstream}
    assert (
        paths["stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount"]
        == "ends in an aggregate at models/marts/rpt_discounts.sql:2 (rpt_discounts)"
    )


def test_paths_past_the_cap_are_cut_with_a_note(cli: Cli, tmp_path: Path) -> None:
    views = "".join(
        f"create view v{i} as select discount_code from stg_orders;\n" for i in range(60)
    )
    repo = project(tmp_path, {"sql/views.sql": views})
    paths = removed(report(cli, repo))["downstream"]
    assert len(paths) == MAX_PATHS
    assert paths[-1]["end"] == "cut"
    assert paths[-1]["note"] == f"lineage cut: more than {MAX_PATHS} paths"
    # the terminal and the PR comment list 10 per change and say how many more
    text = cli(repo.path, "--base", "main", "--head", "feature").stdout
    assert text.count("      downstream: ") == 10
    assert f"      ... and {MAX_PATHS - 10} more downstream path(s) (see --format json)" in text
    markdown = cli(repo.path, "--base", "main", "--head", "feature", "--format", "markdown")
    assert markdown.stdout.count("  - downstream: ") == 10
    assert f"  - … and {MAX_PATHS - 10} more downstream path(s) (see the JSON report)" in (
        markdown.stdout
    )


def test_the_time_budget_cuts_the_levels_not_begun(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(downstream, "SECONDS", 0.0)
    paths = removed(report(cli, project(tmp_path)))["downstream"]
    assert {(p["path"], p["end"], p["note"]) for p in paths} == {
        (
            "stg_orders.discount_code -> int_orders.promo_code",
            "cut",
            "lineage cut: over the 0 s budget",
        ),
        (
            "stg_orders.discount_code -> orders.discount_code",
            "cut",
            "lineage cut: over the 0 s budget",
        ),
    }


def test_a_renamed_column_is_followed_under_the_name_its_readers_use(
    cli: Cli, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for path, text in LINEAGE_PROJECT.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    repo.write(STG, LINEAGE_PROJECT[STG].replace("name: discount_code", "name: discount_label"))
    repo.commit("rename discount_code")
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    renamed = next(c for c in json.loads(proc.stdout)["changes"] if c["rule"] == "column_renamed")
    assert "stg_orders.discount_code -> int_orders.promo_code -> fct_orders.discount" in {
        p["path"] for p in renamed["downstream"]
    }


def _cycle_views(n: int) -> dict[str, str]:
    """``n`` views that each read all the others (v0 also the contract's table): every
    path through them runs into a cycle. Plain SQL lets a pull request write this."""
    files = {}
    for i in range(n):
        reads = (["stg_orders"] if i == 0 else []) + [f"m{j}" for j in range(n) if j != i]
        union = " union all ".join(f"select discount_code from {t}" for t in reads)
        files[f"sql/v{i}.sql"] = f"create view m{i} as {union};\n"
    return files


def test_a_path_into_a_cycle_is_cut_and_says_so(cli: Cli, tmp_path: Path) -> None:
    paths = removed(report(cli, project(tmp_path, _cycle_views(2))))["downstream"]
    assert {(p["path"], p["end"], p["note"]) for p in paths if "m0" in p["path"]} == {
        (
            "stg_orders.discount_code -> m0.discount_code -> m1.discount_code -> m0.discount_code",
            "cut",
            "lineage cut: a cycle, m0.discount_code is read again",
        )
    }


def test_models_reading_each_other_do_not_explode_the_path_search(cli: Cli, tmp_path: Path) -> None:
    """12 views reading each other have 11! simple paths; the listing stops at the cap
    (bounded in CPU seconds of the run and its gits, which load does not inflate)."""
    from tests.cost import cpu_seconds

    repo = project(tmp_path, _cycle_views(12))
    with cpu_seconds() as cpu:
        paths = removed(report(cli, repo))["downstream"]
    assert cpu.seconds < 30, cpu.seconds
    assert len(paths) == MAX_PATHS
    assert paths[-1]["note"] == f"lineage cut: more than {MAX_PATHS} paths"


def test_a_model_reading_another_of_the_same_level_is_followed(cli: Cli, tmp_path: Path) -> None:
    """x_a and x_b both read stg_orders (level 0), and x_b reads x_a too: x_b's own
    file must still be read at level 1, or x_a's column is called a final output."""
    extra = {
        "models/marts/x_a.sql": "select order_id, discount_code from {{ ref('stg_orders') }}\n",
        "models/marts/x_b.sql": (
            "select a.discount_code as dc_a, s.discount_code as dc_s\n"
            "from {{ ref('x_a') }} a\n"
            "join {{ ref('stg_orders') }} s on a.order_id = s.order_id\n"
        ),
    }
    paths = removed(report(cli, project(tmp_path, extra)))["downstream"]
    assert {(p["path"], p["end"]) for p in paths if "x_" in p["path"]} == {
        ("stg_orders.discount_code -> x_a.discount_code -> x_b.dc_a", "output"),
        ("stg_orders.discount_code -> x_b.dc_s", "output"),
    }
