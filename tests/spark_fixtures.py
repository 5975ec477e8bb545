"""Real Spark for the smoke-test suite: one local session that is also a Spark Connect server.

Nothing here mocks Spark. ``spark`` is a session-scoped local SparkSession
started exactly as the gate starts its own (``gate.smoke.session.start``), so
every test shares one JVM (startup is the slow part). The same JVM serves
Spark Connect: the session starts with Spark's own server plugin
(``org.apache.spark.sql.connect.SparkConnectPlugin``, what
``sbin/start-connect-server.sh`` runs) on 127.0.0.1 and a free port, through
the gate's documented ``GATE_SPARK_JAVA_OPTIONS``. :func:`serve_connect` hands
out its URL: tests/conftest.py's fixture ``connect_url``, shared by every test
that asks for it. A server of its own (the script, a second JVM) cost about
45 s of CPU a run: its start, and every query planned and compiled again in a
cold JVM (measured, docs/github-action.md). Both skip, with the reason, only
where Java is absent.

Import the local session into a test module (``connect_url`` needs no import)::

    from tests.spark_fixtures import spark  # noqa: F401
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from gate.formats import parse_contract
from gate.model import Dataset


def java_missing() -> str | None:
    """Why Spark cannot run here, or None when Java is available."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return None
    if shutil.which("java"):
        return None
    return "Java is not installed (no java on PATH, no JAVA_HOME): Spark cannot start"


def pyspark_missing() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "PySpark is not installed: pip install -e '.[connect]'"
    return None


def skip_without_spark() -> None:
    reason = pyspark_missing() or java_missing()
    if reason:
        pytest.skip(reason)


#: Spark's own Spark Connect server, as a plugin of the session's driver.
CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"


class _Shared:
    """The process's one local session and the URL of the Connect server in its JVM."""

    handle: Any = None
    url = ""
    users = 0


def _acquire() -> str:
    """Start the shared session (once per process); its Connect URL."""
    if _Shared.handle is None:
        skip_without_spark()
        from gate.smoke import session

        port = _free_port()
        plugin = (
            f"-Dspark.plugins={CONNECT_PLUGIN} -Dspark.connect.grpc.binding.address=127.0.0.1 "
            f"-Dspark.connect.grpc.binding.port={port}"
        )
        if not session._no_jvm_yet():  # a JVM without a session: its options are set
            from pyspark import SparkContext

            for option in plugin.split():
                key, _, value = option.removeprefix("-D").partition("=")
                SparkContext._jvm.java.lang.System.setProperty(key, value)
        saved = os.environ.get(session.JAVA_OPTIONS_ENV)
        os.environ[session.JAVA_OPTIONS_ENV] = " ".join(filter(None, (saved, plugin)))
        try:
            _Shared.handle = session.start(write_archive=False)
        finally:
            if saved is None:
                os.environ.pop(session.JAVA_OPTIONS_ENV)
            else:
                os.environ[session.JAVA_OPTIONS_ENV] = saved
        _Shared.url = f"sc://127.0.0.1:{port}"
    _Shared.users += 1
    return _Shared.url


def _release() -> None:
    _Shared.users -= 1
    if _Shared.users == 0 and _Shared.handle is not None:
        _Shared.handle.spark.stop()
        _Shared.handle = None


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One real local SparkSession for the whole test session.

    It maps the run's class-data-sharing archive when one is there already
    (gate/smoke/cds.py; tests/conftest.py gives a run its cache directory) but
    never writes it: a JVM dumps its classes as it exits, and this one lives
    until the end of the run; the first short gate run writes it instead.
    """
    _acquire()
    try:
        yield _Shared.handle.spark
    finally:
        _release()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the real Spark Connect server in the shared session's JVM.

    The fixture ``connect_url`` (tests/conftest.py) serves one per test process;
    ``tmp_path_factory`` is not needed since the server has no files of its own.
    """
    url = _acquire()
    try:
        yield url
    finally:
        _release()


# -- building repositories with contracts and samples --------------------------------------


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (repo-relative path -> content) under ``root``."""
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def datasets_in(root: Path, *contracts: str) -> list[Dataset]:
    """Parse contract files (repo-relative) with the gate's own parser."""
    out: list[Dataset] = []
    for relpath in contracts:
        contract = parse_contract((root / relpath).read_bytes(), relpath)
        out.extend(contract.datasets)
    return out


def by_id(report: Any) -> dict[str, Any]:
    return {dataset.dataset: dataset for dataset in report.datasets}


def find(dataset: Any, name: str, column: str | None = None, kind: str | None = None) -> Any:
    """The one result of ``dataset`` with this name (and column, and kind)."""
    matches = [
        result
        for result in dataset.results
        if result.name == name
        and (column is None or result.column == column)
        and (kind is None or result.kind == kind)
    ]
    assert len(matches) == 1, f"{name}/{column}: {[r.to_dict() for r in dataset.results]}"
    return matches[0]


def comparable(report: Any) -> list[dict[str, Any]]:
    """A report's datasets without timings, for comparing two runs."""
    out = []
    for dataset in report.datasets:
        data = dataset.to_dict()
        data.pop("seconds")
        out.append(data)
    return out


# -- scenarios shared by the local and the Spark Connect tests ------------------------------

V4_CONTRACT = """\
dataset: {id}
columns:
  - name: id
    data_type: int
    checks:
      - missing:
      - duplicate:
  - name: email
    checks:
      - missing:
          missing_values: ['N/A']
      - invalid:
          valid_format:
            name: email
            regex: '^[^@ ]+@[^@ ]+[.][a-z]+$'
  - name: size
    checks:
      - invalid:
          valid_values: [S, M, L]
  - name: price
    data_type: decimal(10,2)
    checks:
      - invalid:
          valid_min: 0
          valid_max: 100
  - name: code
    checks:
      - invalid:
          valid_length: 3
  - name: code2
    checks:
      - invalid:
          valid_min_length: 2
          valid_max_length: 4
  - name: flag
    checks:
      - invalid:
          invalid_values: [X]
  - name: nick
    checks:
      - missing:
          threshold:
            metric: percent
            must_be_less_than: 50
  - name: a
  - name: b
checks:
  - row_count:
      threshold:
        must_be_between:
          greater_than_or_equal: 4
          less_than: 100
  - duplicate:
      columns: [a, b]
"""

V4_FAIL = """\
id,email,size,price,code,code2,flag,nick,a,b
1,x@y.com,S,10,abc,ab,Y,n1,1,1
1,N/A,XL,150,abcd,a,X,,1,1
,bad-email,M,-5,ab,abcde,Y,,2,2
"""

V4_PASS = """\
id,email,size,price,code,code2,flag,nick,a,b
1,x@y.com,S,10,abc,ab,Y,n1,1,1
2,z@w.org,M,0,xyz,abcd,Z,n2,1,2
3,q@r.io,L,100,def,abc,Y,,2,1
4,t@u.net,S,55.5,ghi,abc,,n4,2,2
"""

V3_CONTRACT = """\
dataset: {id}
columns:
  - name: id
    data_type: int
    checks:
      - type: no_missing_values
      - type: no_duplicate_values
  - name: email
    checks:
      - type: missing_count
        missing_values: ['N/A']
        must_be_less_than: 1
      - type: no_invalid_values
        valid_format: email
  - name: size
    checks:
      - type: invalid_count
        valid_values: [S, M, L]
        must_be: 0
  - name: price
    data_type: decimal(10,2)
    checks:
      - type: invalid_percent
        valid_min: 0
        valid_max: 100
        must_be_less_than: 10
  - name: code
    checks:
      - type: no_invalid_values
        valid_regex_sql: '^[a-z]{{3}}$'
  - name: nick
    checks:
      - type: missing_percent
        must_be_less_than: 50
  - name: grp
    checks:
      - type: duplicate_count
        must_be_less_than: 2
  - name: grp2
    checks:
      - type: duplicate_percent
        must_be_less_than: 40
  - name: a
  - name: b
checks:
  - type: no_duplicate_values
    columns: [a, b]
"""

V3_FAIL = """\
id,email,size,price,code,nick,grp,grp2,a,b
1,x@y.com,S,10,abc,n1,g1,h1,1,1
1,N/A,XL,150,abcd,,g1,h1,1,1
,bad-email,M,-5,ab,,g1,h1,2,2
2,a@b.com,L,20,xyz,n4,g2,h3,3,3
"""

V3_PASS = """\
id,email,size,price,code,nick,grp,grp2,a,b
1,x@y.com,S,10,abc,n1,g1,h1,1,1
2,z@w.org,M,0,xyz,n2,g1,h2,1,2
3,q@r.io,L,100,def,,g2,h3,2,1
4,t@u.net,S,55.5,ghi,n4,g3,h4,2,2
"""

ROWS_CONTRACT = """\
dataset: {id}
columns:
  - name: id
checks:
  - row_count:
  - type: rows_exist
  - type: row_count
    must_be_between: [2, 10]
"""

COERCE_CONTRACT = """\
dataset: coerce
columns:
  - name: qty
    data_type: int
  - name: price
    data_type: decimal(5,2)
  - name: day
    data_type: date
  - name: code
    data_type: varchar(3)
  - name: payload
    data_type: json
  - name: uid
    data_type: uuid
  - name: at
    data_type: time
  - name: big
    data_type: bigint
  - name: label
"""

COERCE_ROWS = [
    '{"qty": "1", "price": "12.34", "day": "2024-01-05", "code": "abc", "payload": "{\\"a\\": 1}", '
    '"uid": "123e4567-e89b-12d3-a456-426614174000", "at": "10:00", "big": 1, "label": "x"}',
    '{"qty": "12a", "price": "1234.5", "day": "2024-13-01", "code": "abcd", "payload": "{bad", '
    '"uid": "not-a-uuid", "at": "11:00", "big": 2, "label": "y"}',
    '{"qty": "x", "price": "99999", "day": "05/01/2024", "code": "ab", "payload": "[1, 2]", '
    '"uid": null, "at": null, "big": 3, "label": null}',
    '{"qty": "", "price": null, "day": "2024-02-30", "code": null, "payload": null, '
    '"uid": null, "at": null, "big": null, "label": "z"}',
    '{"qty": 7, "price": "0.5", "day": null, "code": "xyz", "payload": "null", '
    '"uid": null, "at": null, "big": 5, "label": "w"}',
]


def check_repo(root: Path) -> tuple[Path, list[Dataset]]:
    """Contracts in both Soda spellings, each with failing and passing samples."""
    files: dict[str, str] = {}
    for name, contract, sample in (
        ("v4_fail", V4_CONTRACT, V4_FAIL),
        ("v4_pass", V4_CONTRACT, V4_PASS),
        ("v3_fail", V3_CONTRACT, V3_FAIL),
        ("v3_pass", V3_CONTRACT, V3_PASS),
        ("rows_empty", ROWS_CONTRACT, "id\n"),
        ("rows_ok", ROWS_CONTRACT, "id\n1\n2\n3\n"),
    ):
        files[f"contracts/{name}.yaml"] = contract.format(id=name)
        files[f"contracts/{name}.sample.csv"] = sample
    files["contracts/coerce.yaml"] = COERCE_CONTRACT
    files["contracts/coerce.sample.jsonl"] = "\n".join(COERCE_ROWS) + "\n"
    write_files(root, files)
    names = sorted(path for path in files if path.endswith(".yaml"))
    return root, datasets_in(root, *names)
