"""Hostile pull requests, round three: bounds a base branch may raise, values
printed whole, and the newest readers (conversion pairing, servers, dbt
profiles, still-built models). Each test commits the attack to a real git
repository and runs the CLI in-process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_security import enforced_orders
from tests.conftest import run_gate
from tests.gitrepo import GitRepo
from tests.lineage.mesh_repo import make
from tests.lineage.test_cli_lineage import pr_drops


def _padded_model(size: int) -> str:
    """A model file of about ``size`` bytes: a valid model padded by a comment."""
    return "select 1 as id\n-- " + "x" * size + "\n"


def test_a_base_config_raises_the_model_file_bound_and_a_pr_cannot(tmp_path: Path) -> None:
    """Left open in round two: a dbt model file over 4 MiB was refused with no
    way for a project with large generated models to raise the bound.
    ``limits.model_file_bytes`` raises (or lowers) it, read from the base tip:
    a PR that raises it in its own config is still refused."""
    repo = enforced_orders(tmp_path, "select 1 as id\n")
    repo.git("checkout", "-q", "main")
    repo.write(".schema-gate.yml", "limits:\n  model_file_bytes: 2000\n")
    repo.commit("a low model file bound")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "main")
    repo.write("models/orders.sql", _padded_model(3000))
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "models/orders.sql: the model file is 3,019 bytes, more than the limit of 2,000" in (
        proc.stderr
    )
    assert "raise limits.model_file_bytes in the config" in proc.stderr
    # The PR raising the bound in its own config changes nothing yet.
    repo.write(".schema-gate.yml", "limits:\n  model_file_bytes: 100000\n")
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert "more than the limit of 2,000" in proc.stderr
    # Once the base branch raises it, the same model file is read.
    repo.write(".schema-gate.yml", "limits:\n  model_file_bytes: 2000\n")
    repo.git("stash")
    repo.git("checkout", "-q", "main")
    repo.write(".schema-gate.yml", "limits:\n  model_file_bytes: 100000\n")
    repo.commit("raise the bound")
    repo.git("checkout", "-q", "feature")
    repo.git("stash", "pop")
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 0, proc.stderr


def test_a_raised_model_file_bound_reads_a_model_over_four_mebibytes(tmp_path: Path) -> None:
    """The default stays 4 MiB; a base raising it reads a 5 MB model's config(),
    and one that turns the contract off there is a finding, not a refusal."""
    repo = GitRepo(tmp_path / "r")
    repo.write(".schema-gate.yml", "limits:\n  model_file_bytes: 8388608\n")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write(
        "models/orders.yml",
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: id\n        data_type: int\n",
    )
    repo.write("models/orders.sql", "select 1 as id\n")
    repo.commit("a model")
    repo.branch("feature")
    repo.write(
        "models/orders.sql",
        "{{ config(contract={'enforced': false}) }}\n" + _padded_model(5 * 1024 * 1024),
    )
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stderr
    assert "contract_enforcement_removed" in proc.stdout, proc.stdout


# -- untrusted values printed whole ----------------------------------------------

C = "soda/contracts"
#: A column name of 400 KB (round two: a 400 KB dbt alias was printed whole).
HUGE = "c" + "x" * 409_599


def _dropped_huge_column(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "huge")
    columns = f"  - name: id\n    data_type: int\n  - name: {HUGE}\n    data_type: int\n"
    repo.write(f"{C}/orders.yaml", "dataset: shop.orders\ncolumns:\n" + columns)
    repo.commit("a contract with a huge column name")
    repo.branch("feature")
    repo.write(f"{C}/orders.yaml", "dataset: shop.orders\ncolumns:\n  - name: id\n")
    return repo


def test_a_huge_untrusted_value_is_printed_bounded_by_every_reporter(tmp_path: Path) -> None:
    """Attack: a 400 KB name (column, alias, dataset id, server value) was printed
    whole into every line that names it: the text report, each Markdown cell (the
    PR comment, whose 65,536-character limit it alone exceeds) and each
    annotation. Each reporter prints a bounded excerpt with the full length; the
    JSON report keeps the whole value."""
    repo = _dropped_huge_column(tmp_path)

    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    assert HUGE in {c["column"] for c in json.loads(proc.stdout)["changes"]}
    for fmt in ("text", "markdown", "github", "junit", "sarif", "gitlab"):
        proc = run_gate(repo.path, "--base", "main", "--format", fmt)
        assert proc.returncode == 1, (fmt, proc.stderr)
        out = proc.stdout
        if fmt in ("sarif", "gitlab"):  # JSON documents: "…" is written \u2026
            out = json.dumps(json.loads(out), ensure_ascii=False)
        assert HUGE[:5_000] not in out, fmt  # no value printed past the bound
        assert len(out) < 80_000, (fmt, len(out))  # was 820 KB to 2.5 MB
        assert re.search(r"…\[\d{3},\d{3} characters, \d{3},\d{3} not shown\]…", out), fmt
        assert "column_removed" in out, fmt


# -- still_built: a fake dbt model to dodge consumer_broken ----------------------


def _dropped_table_read_by_sql(tmp_path: Path) -> GitRepo:
    """``orders`` (a Soda contract) read by ``sql/report.sql``, on main; on
    ``feature`` the contract is deleted: its table is dropped."""
    repo = GitRepo(tmp_path / "dropped")
    repo.write(f"{C}/orders.yaml", "dataset: orders\ncolumns:\n  - name: id\n    data_type: int\n")
    repo.write("sql/report.sql", "select id from orders\n")
    repo.commit("a contract and its reader")
    repo.branch("feature")
    repo.remove(f"{C}/orders.yaml")
    return repo


def test_a_dbt_model_added_by_the_pr_does_not_keep_a_dropped_table_built(
    tmp_path: Path,
) -> None:
    """Attack: a PR drops a table (deletes its Soda contract, acknowledged) and adds
    ``fake/dbt_project.yml`` with ``fake/models/orders.sql`` (or one under
    ``dbt_packages/``): the deleted contract then counted as a dbt model "still
    built", and the reader it breaks was no ``consumer_broken``. Only a model file
    dbt built at the base as well keeps the table; the reader breaks."""
    for root in ("fake", "dbt_packages/pkg"):
        repo = _dropped_table_read_by_sql(tmp_path / root.replace("/", "_"))
        repo.write(f"{root}/dbt_project.yml", "name: fake\nversion: '1.0'\nprofile: fake\n")
        repo.write(f"{root}/models/orders.sql", "select 1 as id\n")
        proc = run_gate(repo.path, "--base", "main", "--accept", "orders")
        assert proc.returncode == 1, (root, proc.stdout, proc.stderr)
        assert "consumer_broken orders" in proc.stdout, (root, proc.stdout)


# -- servers: a location that is no plain name ------------------------------------

DCS_SERVER = (
    "dataContractSpecification: 1.1.0\nid: stations\ninfo:\n  title: Stations\n"
    "  version: 0.1.0\nservers:\n  local:\n    type: postgres\n    database: {database}\n"
    "    schema: public\nmodels:\n  stations:\n    type: table\n    fields:\n"
    "      station_id:\n        type: string\n"
)


def test_a_server_database_rewritten_as_a_list_or_map_is_still_a_move(tmp_path: Path) -> None:
    """Attack: a PR moves the table (``database: prod`` -> ``analytics``) but writes
    the new database as ``[analytics]``, ``{analytics: 1}`` or ``true``: a value
    that is no plain name was left out of the server's location, so the move was
    never compared: exit 0, no finding. A present value the gate cannot read as a
    name is kept as its text: ``prod`` -> ``[analytics]`` is a move."""
    for i, database in enumerate(("[analytics]", "{analytics: 1}", "true", "[prod]")):
        repo = GitRepo(tmp_path / f"r{i}")
        path = "contracts/stations.datacontract.yaml"
        repo.write(path, DCS_SERVER.format(database="prod"))
        repo.commit("base")
        repo.branch("feature")
        repo.write(path, DCS_SERVER.format(database=database))
        proc = run_gate(repo.path, "--base", "main")
        assert proc.returncode == 1, (database, proc.stdout, proc.stderr)
        assert "model_relation_changed stations" in proc.stdout, (database, proc.stdout)


# -- OpenLineage events: the run's lineage deadline bounds the parse --------------


def test_an_events_file_of_broken_lines_is_stopped_at_the_lineage_deadline(
    tmp_path: Path,
) -> None:
    """Attack: an OpenLineage export the PR's own CI job writes into the working
    tree (untracked, which the gate reads when the base has none) of 4 million
    ``{`` lines (8 MB): each broken line is two failed JSON decodes, 19.8 s of CPU
    for 4 MB and 73 s for 16 MB (the 64 MB bound: about 5 minutes), and the parse
    never looked at ``lineage.timeout_seconds``. It now stops there: a warning
    naming the source, and nothing lowered."""
    config = (
        "lineage:\n  openlineage_events: [lineage/events.jsonl]\n  timeout_seconds: 1\n"
        "  usage_aware_severity: true\n"
    )
    repo = make(tmp_path / "r", config)
    pr_drops(repo, "ordered_at")
    (repo.path / "lineage").mkdir()
    (repo.path / "lineage" / "events.jsonl").write_text("{\n" * 4_000_000)
    proc = run_gate(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    notices = [n for n in report["notices"] if "lineage source lineage/events.jsonl" in n]
    assert notices and "timed out (lineage.timeout_seconds)" in notices[0], report["notices"]
    dropped = [c for c in report["changes"] if c["rule"] == "column_removed"]
    assert dropped and dropped[0]["severity"] == "error"


# -- dbt Mesh: a star whose columns are used by position --------------------------


def test_a_star_in_a_union_branch_or_a_compared_subquery_reads_every_column(
    tmp_path: Path,
) -> None:
    """Attack: a downstream project's model reads the upstream only through ``*``
    in a union branch (``select ... union all select * from up``) or a subquery
    compared by position (``(a, b) in (select * from up)``): every column counts
    (a dropped one changes the arity and the query fails), yet the analysis saw
    the star end inside the model (only the named outer columns read) and the
    prefilter skipped its parse: not a reader of the dropped column, so with
    ``usage_aware_severity`` nothing read it. Such a star reads every column."""
    from tests.lineage.test_prefilter import UP, external_readers_of_a_dropped_column

    sqls = [
        "with s as (select 1 as a, 2 as b, 3 as c, 4 as d, 5 as e from x "
        f"union all select * from {UP}) select s.a from s",
        f"select t.a from (select * from {UP} except select * from y) t",
        f"select o.id from x o where (o.a, o.b, o.c, o.d, o.e) in (select * from {UP})",
    ]
    _repo, consumers = external_readers_of_a_dropped_column(tmp_path, sqls)
    assert consumers == ["fin.m0", "fin.m1", "fin.m2"]


def test_a_dbt_model_moved_to_another_folder_still_keeps_the_dropped_contract_built(
    tmp_path: Path,
) -> None:
    """Precision of the rule above: a PR deletes the Soda contract of ``orders``
    and, in the same refactor, moves the dbt model ``models/staging/orders.sql``
    to ``models/marts/orders.sql`` of the same project. dbt still builds
    ``orders``; its reader does not break. The same-path rule read the moved file
    as one the PR added and reported a false ``consumer_broken``. Moved into a
    project the PR adds (``fake/dbt_project.yml``), it is still no evidence."""
    for target, broken in (("models/marts", False), ("fake/models", True)):
        repo = GitRepo(tmp_path / target.replace("/", "_"))
        repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
        repo.write("models/staging/orders.sql", "select 1 as id\n")
        repo.write(
            f"{C}/orders.yaml", "dataset: orders\ncolumns:\n  - name: id\n    data_type: int\n"
        )
        repo.write("sql/report.sql", "select id from orders\n")
        repo.commit("a dbt model, its Soda contract and a reader")
        repo.branch("feature")
        repo.remove(f"{C}/orders.yaml")
        if broken:
            repo.write("fake/dbt_project.yml", "name: fake\nversion: '1.0'\nprofile: fake\n")
        repo.move("models/staging/orders.sql", f"{target}/orders.sql")
        repo.commit("drop the contract, move the model")
        proc = run_gate(repo.path, "--base", "main", "--accept", "orders")
        assert ("consumer_broken orders" in proc.stdout) == broken, (target, proc.stdout)
        assert proc.returncode == int(broken), (target, proc.stdout, proc.stderr)
