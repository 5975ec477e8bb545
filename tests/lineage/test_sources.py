"""The pieces under the step: fetching, the dbt manifest reader, matching, the grade."""

from __future__ import annotations

import json

import pytest

from gate import rules
from gate.lineage.attach import Evidence, attach, usage_aware
from gate.lineage.dbt_mesh import ManifestError, read_manifest
from gate.lineage.external import ExternalRead
from gate.lineage.fetch import Deadline, SourceError, check_url, fetch_url
from gate.lineage.matching import DatasetMatcher
from gate.model import Change, Consumer, Dataset
from gate.rules import Severity
from tests.lineage.mesh_repo import FINANCE, serve
from tests.local_http import Drip, LocalHTTPServer, garbage_server

ANY = lambda _name: True  # noqa: E731


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/m.json",
        "ftp://example.com/m.json",
        "file:///etc/passwd",
        "http://10.0.0.1/m.json",
        "https:///nohost",
    ],
)
def test_only_https_and_local_http_are_fetched(url: str) -> None:
    with pytest.raises(SourceError, match="only https:// URLs"):
        check_url(url)
    assert check_url("https://ci.example/m.json")
    assert check_url("http://localhost:8080/m.json")


def test_a_redirect_to_plain_http_elsewhere_is_refused() -> None:
    import http.server
    import threading

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "http://example.com/m.json")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(SourceError, match="only https://"):
            fetch_url(f"http://127.0.0.1:{server.server_address[1]}/", Deadline.after(5))
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_over_the_bound_is_refused_not_cut() -> None:
    with serve({"/big": b"x" * 5000}) as (url, _hits):
        with pytest.raises(SourceError, match="over the 1,000-byte bound"):
            fetch_url(f"{url}/big", Deadline.after(5), max_bytes=1000)
        assert fetch_url(f"{url}/big", Deadline.after(5), max_bytes=5000) == b"x" * 5000


def test_a_spent_deadline_fetches_nothing() -> None:
    with serve({"/m": b"{}"}) as (url, hits), pytest.raises(SourceError, match="timed out"):
        fetch_url(f"{url}/m", Deadline(0.0))
    assert hits == []


def test_the_reader_asks_only_about_wanted_upstreams() -> None:
    asked: list[str] = []
    reads = read_manifest(FINANCE, "m.json", "spark", lambda u: asked.append(u) or False)
    assert reads == [] and set(asked) == {"model.jaffle_platform.stg_orders"}


def test_versions_and_nodes_of_other_packages() -> None:
    manifest = {
        "metadata": {"project_name": "finance", "adapter_type": "snowflake"},
        "nodes": {
            "model.finance.rev.v2": {
                "unique_id": "model.finance.rev.v2",
                "name": "rev",
                "version": 2,
                "resource_type": "model",
                "package_name": "finance",
                "original_file_path": "models/rev_v2.sql",
                "depends_on": {"nodes": ["model.platform.orders.v3", "model.finance.x"]},
                "compiled_code": 'select "AMOUNT" from analytics.platform.orders_v3',
            },
            "model.dbt_utils.helper": {  # a package's own node: not the project's code
                "unique_id": "model.dbt_utils.helper",
                "name": "helper",
                "resource_type": "model",
                "package_name": "dbt_utils",
                "depends_on": {"nodes": ["model.platform.orders.v3"]},
            },
        },
    }
    (read,) = read_manifest(json.dumps(manifest).encode(), "m.json", "spark", ANY)
    assert read == ExternalRead(
        "dbt-mesh:finance",
        "finance.rev.v2",
        "model.platform.orders.v3",
        frozenset({"amount"}),
        "models/rev_v2.sql",
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [(b"\xff", "not JSON"), (b"[1]", "no 'nodes' mapping"), (b'{"nodes": []}', "no 'nodes'")],
)
def test_not_a_manifest(data: bytes, why: str) -> None:
    with pytest.raises(ManifestError, match=why):
        read_manifest(data, "m.json", "spark", ANY)


def _dbt(name: str, project: str | None) -> Dataset:
    return Dataset(id=name, path="models/_models.yml", format="dbt", project=project)


def test_matching_rules() -> None:
    datasets = [
        _dbt("stg_orders", "platform"),
        _dbt("orders.v2", "platform"),
        Dataset(id="lake/shop/customers", path="c.yaml", format="soda"),
        Dataset(id="payments", path="p.yaml", format="soda"),
    ]
    matcher = DatasetMatcher(
        datasets, {"payments": ["kafka://broker/payments-topic"]}, {"payments": ["pay_v"]}
    )
    assert matcher.match("model.platform.stg_orders") == {"stg_orders"}
    assert matcher.match("model.other.stg_orders") == set()  # another project's model
    assert matcher.match("model.platform.orders.v2") == {"orders.v2"}
    assert matcher.match("postgres://db:5432/shop.customers") == {"lake/shop/customers"}
    assert matcher.match('"analytics"."other"."customers"') == set()
    assert matcher.match("KAFKA://broker/payments-topic") == {"payments"}
    assert matcher.match("warehouse.pay_v") == {"payments"}  # consumers.tables names too
    assert matcher.match("snowflake://acct/db.sch.unknown") == set()


def _removed(dataset: str, column: str | None, **kw: object) -> Change:
    rule = rules.COLUMN_REMOVED if column else rules.MODEL_REMOVED
    change = Change.of(rule, Severity.ERROR, dataset, "m.yml", 3, "gone", column=column)
    return change if not kw else Change(**{**change.__dict__, **kw})


def test_attach_keeps_reads_of_the_column_and_whole_table_reads() -> None:
    reads = [
        ExternalRead("s", "a", "x", frozenset({"amount"})),
        ExternalRead("s", "b", "x", frozenset({"other"})),
        ExternalRead("s", "c", "x", None),
    ]
    (column,) = attach([_removed("orders", "amount")], {"orders": reads})
    assert [r.consumer for r in column.external] == ["a", "c"]
    (model,) = attach([_removed("orders", None)], {"orders": reads})
    assert [r.consumer for r in model.external] == ["a", "b", "c"]


def test_only_consumer_side_rules_are_graded() -> None:
    narrowed = Change.of(
        rules.TYPE_NARROWED, Severity.ERROR, "o", "m.yml", 3, "n", column="a", before="BIGINT"
    )
    renamed = Change.of(rules.COLUMN_RENAMED, Severity.ERROR, "o", "m.yml", 3, "r", column="b")
    removed = _removed("o", "c")
    read = _removed("o", "d", consumers=(Consumer("x.sql", 1, "x", "selected"),))
    out, notices = usage_aware([narrowed, renamed, removed, read], Evidence(2))
    assert [c.severity for c in out] == [
        Severity.ERROR,
        Severity.ERROR,
        Severity.WARNING,
        Severity.ERROR,
    ]
    assert out[2].message == (
        "gone; graded warning (lineage.usage_aware_severity): no reader found in the "
        "repository or in 2 external sources"
    )
    assert notices == []
    kept, notices = usage_aware([removed], Evidence(1, ("1 lineage source(s) could not be read",)))
    assert kept[0].severity is Severity.ERROR and notices


@pytest.mark.parametrize(
    ("sql", "columns"),
    [
        # dbt style: every upstream through a star CTE, then the columns named
        ("with p as (select * from db.s.t) select p.a, p.b from p", {"a", "b"}),
        ("select a from (select * from db.s.t) x", {"a"}),
        ("select count(*) from db.s.t", set()),
        # a star in the model's own output passes every column on
        ("with p as (select * from db.s.t) select * from p", None),
        ("with p as (select * from db.s.t) select p.* from p", None),
        ("select 1 as z union all select * from db.s.t", None),
        ("select from where", None),  # sqlglot cannot read it: every column
    ],
)
def test_columns_of_compiled_sql(sql: str, columns: set[str] | None) -> None:
    from gate.lineage.dbt_mesh import _columns

    found = _columns(sql, "duckdb", ("db", "s", "t"), lambda _t: None)
    assert found == (frozenset(columns) if columns is not None else None)


def test_the_deadline_stops_the_analysis_of_a_manifest_between_readers() -> None:
    spent = Deadline(0.0)
    with pytest.raises(SourceError, match="timed out"):
        read_manifest(FINANCE, "m.json", "spark", ANY, tick=spent.left)


@pytest.mark.parametrize(
    "url", ["https://[ci.example/m.json", "https://ci .example/m.json", "https://ci.example:x/m"]
)
def test_a_malformed_url_is_a_source_error_not_a_traceback(url: str) -> None:
    with pytest.raises(SourceError):
        fetch_url(url, Deadline.after(5))


def test_a_server_answering_garbage_is_a_source_error_not_a_traceback() -> None:
    with garbage_server() as url, pytest.raises(SourceError, match="not an HTTP answer"):
        fetch_url(f"{url}/m", Deadline.after(5))


@pytest.mark.parametrize("local", ["http://127.0.0.1:8080/admin", "https://localhost/x"])
def test_a_remote_server_cannot_redirect_the_gate_to_this_machine(local: str) -> None:
    """An https manifest host is someone else's; its redirect must not reach a CI
    runner's local services (http:// to localhost is allowed for a sidecar only)."""
    import urllib.request

    from gate.lineage.fetch import _Redirects

    request = urllib.request.Request("https://ci.example/m.json")
    with pytest.raises(SourceError, match=r"redirected from ci\.example to this machine"):
        _Redirects().redirect_request(request, None, 302, "Found", {}, local)
    # a local sidecar may redirect locally, and a remote host to another remote host
    sidecar = urllib.request.Request("http://127.0.0.1:9000/m.json")
    assert _Redirects().redirect_request(sidecar, None, 302, "Found", {}, local) is not None
    assert (
        _Redirects().redirect_request(request, None, 302, "Found", {}, "https://cdn.example/m")
        is not None
    )


def _one_reader(node: dict) -> bytes:
    base = {
        "unique_id": "model.fin.rev",
        "resource_type": "model",
        "package_name": "fin",
        "name": "rev",
        "depends_on": {"nodes": ["model.platform.stg_orders"]},
        "original_file_path": "models/rev.sql",
    }
    manifest = {"metadata": {"project_name": "fin"}, "nodes": {"model.fin.rev": {**base, **node}}}
    return json.dumps(manifest).encode()


def test_a_reader_whose_sql_names_the_upstream_otherwise_reads_every_column() -> None:
    """dbt says the model depends on stg_orders, but its SQL names it by an alias the
    manifest does not hold: which columns it reads is unknown, not none of them (an
    empty set would drop the reader, and usage-aware severity would lower the break)."""
    sql = 'select o.discount_code from "db"."main"."orders_staging" o'
    (read,) = read_manifest(_one_reader({"compiled_code": sql}), "m.json", "postgres", ANY)
    assert read.columns is None
    assert read.reads_column("discount_code")
    # named as dbt names it, the columns are read from the SQL
    sql = 'select o.discount_code from "db"."main"."stg_orders" o'
    (read,) = read_manifest(_one_reader({"compiled_code": sql}), "m.json", "postgres", ANY)
    assert read.columns == frozenset({"discount_code"})


@pytest.mark.parametrize(
    "manifest",
    [
        {"nodes": {"a": {"unique_id": ["model", "fin", "a"]}}},
        {"metadata": ["x"], "nodes": {}},
        {
            "nodes": {
                "a": {"unique_id": "model.fin.a", "resource_type": "model", "depends_on": ["x"]}
            }
        },
    ],
)
def test_a_manifest_of_the_wrong_shapes_is_a_manifest_error(manifest: dict) -> None:
    with pytest.raises(ManifestError):
        read_manifest(json.dumps(manifest).encode(), "m.json", "postgres", ANY)


def test_a_slow_drip_answer_is_stopped_by_the_deadline() -> None:
    """A server that sends a byte now and then keeps each socket read alive; the
    run's deadline must still stop the download (read1, checked between chunks).
    Asserted by bytes, not wall time: the 1 s deadline gives up while the drip
    (a byte every 0.1 s, 600 of them) is still going; without the deadline the
    client reads to the drip's end."""
    import http.server
    import threading

    drip = Drip({"Content-Length": "100000"})

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            drip(self)

        def log_message(self, *args: object) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(SourceError, match="timed out"):
            fetch_url(f"http://127.0.0.1:{server.server_address[1]}/m", Deadline.after(1))
        assert drip.stopped_mid_drip(), drip.sent
    finally:
        drip.stop.set()
        server.shutdown()
        server.server_close()


def test_a_more_specific_contract_does_not_take_a_reader_away() -> None:
    """A pull request adding a contract named ``warehouse.orders`` must not take the
    external reader of ``warehouse.orders`` away from the ``orders`` contract whose
    column it removes: usage-aware severity would then grade the break a warning.
    Every contract whose names agree with the external name is its reader's."""
    orders = Dataset(id="orders", path="o.yaml", format="soda", columns=())
    added = Dataset(id="warehouse/orders", path="w.yaml", format="soda", columns=())
    matcher = DatasetMatcher([orders, added])
    assert matcher.match("postgres://db/warehouse.orders") == {"orders", "warehouse/orders"}
    read = ExternalRead("openlineage:e.jsonl", "jobs/daily", "postgres://db/warehouse.orders")
    changes = attach([_removed("orders", "amount")], matcher.reads_of([read]))
    lowered, _ = usage_aware(changes, Evidence(1))
    assert lowered[0].severity is Severity.ERROR
    assert lowered[0].external == (read,)
    # a name that agrees with neither stays unattributed
    assert matcher.match("postgres://db/other.orders.x") == set()


def test_a_manifest_url_with_credentials_is_refused_before_any_request() -> None:
    # The warning naming an unread source would print the password; the lineage
    # API refuses the same (one rule, gate.lineage.fetch.url_problem).
    with pytest.raises(SourceError, match="credentials in a lineage source URL are refused"):
        fetch_url("https://ci:s3cret@ci.example/finance/manifest.json", Deadline.after(5))
