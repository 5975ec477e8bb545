"""What reading a manifest's readers costs: one parse each, in the run's worker pool.

Issue #25's cost goal: 100 external readers analysed in the gate's own
process, each parsed twice, put a K=100 run over 2x its floor
(docs/impact.md, "Cost"). These tests pin the two fixes without timing
anything: a reader's compiled SQL is parsed once, and from the threshold up
the readers are analysed in the pool with the same answers, in the same order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.lineage.dbt_mesh import _FORK_THRESHOLD, read_manifest
from gate.lineage.fetch import Deadline, SourceError
from gate.lineage.run import _ColumnsOf
from gate.model import Column, Dataset
from gate.workers import Workers, fork_is_safe
from tests.conftest import run_main
from tests.lineage.mesh_repo import FINANCE, MODELS, PROPERTIES, drop, make

ANY = lambda _name: True  # noqa: E731

#: dbt style (a star CTE, then named columns), a star that reaches the output,
#: unqualified columns (attributed through the contracts' columns), no SQL.
SHAPES = [
    'with o as (select * from "db"."main"."stg_orders") select o.order_id, o.amount from o',
    'with o as (select * from "db"."main"."stg_orders") select * from o',
    'select discount_code, count(*) from "db"."main"."stg_orders" group by 1',
    'select x.order_id from "db"."main"."stg_orders" x union all select 1',
    "select from where",
    "",
]


def _manifest(readers: int, project: str = "platform") -> bytes:
    upstream = f"model.{project}.stg_orders"
    nodes = {
        upstream: {
            "unique_id": upstream,
            "resource_type": "model",
            "package_name": project,
            "name": "stg_orders",
            "relation_name": '"db"."main"."stg_orders"',
        }
    }
    for i in range(readers):
        uid = f"model.fin.m{i}"
        nodes[uid] = {
            "unique_id": uid,
            "resource_type": "model",
            "package_name": "fin",
            "name": f"m{i}",
            "original_file_path": f"models/m{i}.sql",
            "depends_on": {"nodes": [upstream]},
            "compiled_code": SHAPES[i % len(SHAPES)],
        }
    return json.dumps({"metadata": {"project_name": "fin"}, "nodes": nodes}).encode()


def _contracts() -> _ColumnsOf:
    columns = ("order_id", "amount", "discount_code")
    return _ColumnsOf(
        [
            Dataset(
                id="stg_orders",
                path="models/_models.yml",
                format="dbt",
                project="platform",
                columns=tuple(Column(c) for c in columns),
            )
        ]
    )


def test_a_readers_compiled_sql_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The star check (does ``*`` reach the model's output?) asks the trees and scopes
    the column analysis built; it used to parse every star reader a second time."""
    from sqlglot import parser

    parses: list[int] = []
    real = parser.Parser.parse

    def counted(self: parser.Parser, *args: object, **kwargs: object) -> object:
        parses.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(parser.Parser, "parse", counted)
    reads = read_manifest(_manifest(5), "m.json", "postgres", ANY, _contracts())
    assert [r.columns for r in reads] == [
        frozenset({"order_id", "amount"}),
        None,  # the star reaches the output: every column
        frozenset({"discount_code"}),
        frozenset({"order_id"}),
        None,  # sqlglot cannot read it: every column
    ]
    assert len(parses) == 5  # one per reader, stars included


def test_readers_analysed_in_the_pool_give_the_same_reads_in_the_same_order() -> None:
    data = _manifest(3 * _FORK_THRESHOLD)
    alone = read_manifest(data, "m.json", "postgres", ANY, _contracts())
    with Workers(2) as workers:
        pooled = read_manifest(
            data, "m.json", "postgres", ANY, _contracts(), Deadline.after(60).left, workers
        )
        started = workers.start_method
    assert pooled == alone
    assert len(alone) == 3 * _FORK_THRESHOLD
    assert {r.columns for r in alone} == {
        frozenset({"order_id", "amount"}),
        frozenset({"discount_code"}),
        frozenset({"order_id"}),
        None,
    }
    if fork_is_safe():
        assert started == "fork"  # the readers did go to a worker process


def test_few_readers_stay_in_this_process() -> None:
    with Workers(2) as workers:
        reads = read_manifest(FINANCE, "m.json", "spark", ANY, workers=workers)
        assert workers.start_method is None
    assert reads == read_manifest(FINANCE, "m.json", "spark", ANY)


def test_the_deadline_stops_readers_in_the_pool_too() -> None:
    """``Deadline.left`` travels to the workers: past it, the source is a warning
    (``SourceError``), as between readers in one process."""
    with Workers(2) as workers, pytest.raises(SourceError, match="timed out"):
        read_manifest(
            _manifest(3 * _FORK_THRESHOLD),
            "m.json",
            "postgres",
            ANY,
            _contracts(),
            Deadline(0.0).left,
            workers,
        )


def test_a_run_hands_its_worker_pool_to_the_manifest_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the CLI: the engine's pool (``--jobs 2``) analyses the readers, and
    the report is the one ``--jobs 1`` gives."""
    manifest = "ci/finance/manifest.json"
    repo = make(
        tmp_path / "r",
        f"lineage:\n  dbt_manifests: [{manifest}]\n",
        {manifest: _manifest(3 * _FORK_THRESHOLD, "jaffle_platform")},
    )
    repo.write(PROPERTIES, drop(MODELS, "discount_code"))
    repo.commit("drop discount_code")
    mapped: list[tuple[str, int, int]] = []
    real = Workers.map

    def spy(self: Workers, fn, shared, items, **kwargs):  # type: ignore[no-untyped-def]
        mapped.append((f"{fn.__module__}.{fn.__name__}", len(items), self.jobs))
        return real(self, fn, shared, items, **kwargs)

    monkeypatch.setattr(Workers, "map", spy)
    reports = {}
    for jobs in ("1", "2"):
        args = ("--base", "main", "--head", "feature", "--format", "json", "--jobs", jobs)
        proc = run_main(repo.path, *args)
        assert proc.returncode == 1, proc.stderr
        change = next(
            c for c in json.loads(proc.stdout)["changes"] if c["column"] == "discount_code"
        )
        reports[jobs] = change["external_consumers"]
    assert ("gate.lineage.dbt_mesh._analyse_one", 3 * _FORK_THRESHOLD, 2) in mapped
    assert reports["1"] == reports["2"]
    # the readers of discount_code: the one that groups by it, the star and the unreadable
    assert {tuple(r["columns"] or ["*"]) for r in reports["2"]} == {("discount_code",), ("*",)}


def test_a_reader_of_two_changed_models_is_parsed_once_for_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One job a reader node: a mart joining two changed upstream models (the
    jaffle mesh's ``orders`` reads ``stg_orders`` and ``stg_payments``) is parsed
    and analysed once, each upstream then read off the same analysis."""
    from sqlglot import parser

    parses: list[int] = []
    real = parser.Parser.parse

    def counted(self: parser.Parser, *args: object, **kwargs: object) -> object:
        parses.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(parser.Parser, "parse", counted)
    ups = {"stg_orders": '"db"."main"."stg_orders"', "stg_payments": '"db"."main"."stg_payments"'}
    nodes: dict[str, dict[str, object]] = {
        f"model.platform.{name}": {
            "unique_id": f"model.platform.{name}",
            "resource_type": "model",
            "package_name": "platform",
            "name": name,
            "relation_name": relation,
        }
        for name, relation in ups.items()
    }
    nodes["model.fin.orders"] = {
        "unique_id": "model.fin.orders",
        "resource_type": "model",
        "package_name": "fin",
        "name": "orders",
        "depends_on": {"nodes": [f"model.platform.{n}" for n in ups]},
        "compiled_code": (
            f"with o as (select * from {ups['stg_orders']}), p as (select * from "
            f"{ups['stg_payments']}) select o.order_id, p.amount from o join p using (order_id)"
        ),
    }
    data = json.dumps({"metadata": {"project_name": "fin"}, "nodes": nodes}).encode()
    reads = read_manifest(data, "m.json", "postgres", ANY)
    assert [(r.dataset, r.columns) for r in reads] == [
        ("model.platform.stg_orders", frozenset({"order_id"})),
        ("model.platform.stg_payments", frozenset({"amount", "order_id"})),
    ]
    assert len(parses) == 1
    # With the run's changed columns, each upstream is prefiltered on its own:
    # stg_orders' dropped ``status`` is never spelt (skipped on the tokens),
    # stg_payments' ``amount`` is (read off the parse).
    changed = {"model.platform.stg_orders": "status", "model.platform.stg_payments": "amount"}
    parses.clear()
    reads = read_manifest(
        data, "m.json", "postgres", ANY, changed_columns=lambda u: frozenset({changed[u]})
    )
    assert [r.columns for r in reads] == [frozenset(), frozenset({"amount", "order_id"})]
    assert len(parses) == 1


def test_reading_a_manifest_from_a_path_imports_no_http_client() -> None:
    """urllib.request, http.client and ssl (~15-30 ms of a run's imports) come in
    only when a URL is fetched; a run reading a manifest from a path skips them."""
    import subprocess
    import sys

    code = (
        "import sys, gate.cli, gate.engine, gate.lineage.sources, gate.lineage.fetch\n"
        "from gate.lineage.fetch import _Redirects\n"  # still importable by name...
        "print(sorted(m for m in ('urllib.request', 'http.client', 'ssl') if m in sys.modules))\n"
    )
    before = subprocess.run(
        [sys.executable, "-c", code.replace("from gate.lineage.fetch import _Redirects\n", "")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert before.stdout.strip() == "[]"
    after = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "urllib.request" in after.stdout  # ...and built on first use
