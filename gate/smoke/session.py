"""Start (or reach) the one Spark session a smoke-test run uses.

Three ways, from ``SmokeSettings``:

- default: ``local[*]`` in this process's JVM, tuned to start fast and say
  nothing: no UI, no console progress bar, 4 shuffle partitions, bound to
  127.0.0.1 (or ``SPARK_LOCAL_IP``), in-memory catalog (no Hive, no
  ``metastore_db``), log4j at ERROR;
- ``spark_master``: a classic cluster URL (``spark://host:7077``...);
- ``spark_remote``: Spark Connect (``sc://host:15002``); needs the ``connect``
  extra on this side, no Java.

Every session runs with ``spark.sql.session.timeZone=UTC`` (dates and
timestamps parse the same on every machine) and ``spark.sql.caseSensitive=true``
(so ``id`` and ``ID`` are two columns the schema check can see).

PySpark is imported here, lazily: importing ``gate.smoke`` (or ``gate.cli``)
never imports it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.model import UsageError
from gate.smoke import cds

APP_NAME = "schema-contract-gate smoke test"
MIN_PYSPARK = (4, 0)

INSTALL_SPARK = "pip install 'schema-contract-gate[spark]'"
INSTALL_CONNECT = "pip install 'schema-contract-gate[connect]'"

#: Settings that matter for results; set on every session (runtime SQL confs).
RUNTIME_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.caseSensitive": "true",
    "spark.sql.shuffle.partitions": "4",
}

#: Settings only a session we launch ourselves can take (static confs).
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "true",
    "spark.driver.memory": "1g",
}

#: JVM options for a short-lived driver: serial GC, quick JIT (C1 only). On two
#: cores the C2 compiler threads compete with the first queries; without them
#: the warm-up is shorter (see docs/smoke-test.md, Performance). On an
#: out-of-memory error the JVM exits at once (code ``OOM_EXIT``), its one line
#: on stderr, not stdout: Spark otherwise logged 60 lines of stack trace from a
#: scheduler thread and the job waited for the dataset's time limit (300 s, measured).
JVM_OPTIONS = (
    "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
    "-XX:+ExitOnOutOfMemoryError -XX:+DisplayVMOutputToStderr"
)
#: The JVM's exit code after ``-XX:+ExitOnOutOfMemoryError``.
OOM_EXIT = 3

#: More JVM options for a local session (e.g. a class-data-sharing archive).
JAVA_OPTIONS_ENV = "GATE_SPARK_JAVA_OPTIONS"

#: The local driver's heap (``spark.driver.memory``, default 1g): raise it for
#: samples beyond a few million values, e.g. ``GATE_SPARK_DRIVER_MEMORY=4g``.
DRIVER_MEMORY_ENV = "GATE_SPARK_DRIVER_MEMORY"

#: Quiet log4j 2 configuration: errors only. Spark prints "Setting default log
#: level" unless the logger of the Python gateway has its own level.
LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""

#: Modules the Spark Connect client needs (the ``connect`` extra).
_CONNECT_MODULES = {
    "pyarrow": "pyarrow",
    "pandas": "pandas",
    "grpc": "grpcio",
    "grpc_status": "grpcio-status",
    "google.rpc": "googleapis-common-protos",
    "zstandard": "zstandard",
}


@dataclass
class SparkHandle:
    """The session of a run and how it was reached."""

    spark: Any
    master: str  # for reports: "local[*]", the master URL, "sc://host:port"
    version: str
    seconds: float  # time to start or connect
    remote: bool  # Spark Connect
    local: bool  # driver and executors on this machine (local master)
    owned: bool  # started by us: stop it when done
    connect_mode_set: bool = False  # we switched this process into Spark Connect mode
    dump: cds.Dump | None = None  # this run's JVM writes the class-data-sharing archive

    def stop(self) -> None:
        if self.owned:  # a session that is already gone is stopped enough
            with contextlib.suppress(Exception):
                self.spark.stop()
        if self.dump is not None:
            _stop_jvm_for(self.dump)
            self.dump = None
        if self.connect_mode_set:
            # PySpark marks the whole process as "Spark Connect" once a remote
            # session exists; undo it so a later local session works again.
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def display_master(spark_master: str | None, spark_remote: str | None) -> str:
    """The master to show in reports, without tokens or passwords."""
    if spark_remote:
        rest = spark_remote.split("://", 1)[-1]
        netloc = rest.split("/", 1)[0].split(";", 1)[0]
        netloc = netloc.rsplit("@", 1)[-1]
        return f"sc://{netloc}"
    if spark_master:
        scheme, sep, rest = spark_master.partition("://")
        if sep:
            return f"{scheme}://{rest.rsplit('@', 1)[-1]}"
        return spark_master
    return "local[*]"


def require_pyspark(remote: bool) -> None:
    """Fail early, with the install command, when PySpark (or Connect's needs) is missing."""
    if _find_spec("pyspark") is None:
        extra = INSTALL_CONNECT if remote else INSTALL_SPARK
        raise UsageError(f"the smoke test needs PySpark, which is not installed: {extra}")
    import pyspark

    version = _version_tuple(pyspark.__version__)
    if version < MIN_PYSPARK:
        wanted = ".".join(map(str, MIN_PYSPARK))
        raise UsageError(
            f"the smoke test needs PySpark {wanted} or later (found {pyspark.__version__}): "
            f"pip install -U 'pyspark>={wanted}'"
        )
    if _find_spec("pyarrow") is None:
        extra = INSTALL_CONNECT if remote else INSTALL_SPARK
        raise UsageError(
            f"the smoke test reads samples with pyarrow, which is not installed: {extra}"
        )
    if remote:
        missing = [
            package for module, package in _CONNECT_MODULES.items() if _find_spec(module) is None
        ]
        if missing:
            raise UsageError(
                f"Spark Connect needs {', '.join(missing)}, not installed: {INSTALL_CONNECT}"
            )


def require_java() -> None:
    """A local or classic session starts a JVM: Java must be there."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        if not (Path(java_home) / "bin" / "java").exists():
            raise UsageError(
                f"JAVA_HOME={java_home} has no bin/java; point it at a Java 17+ runtime or unset it"
            )
        return
    if shutil.which("java") is None:
        raise UsageError(
            "the smoke test runs Spark, which needs Java 17 or later: no `java` on PATH and "
            "JAVA_HOME is not set (install one, e.g. `apt-get install default-jre-headless`, "
            "or use --spark-remote sc://host:port)"
        )


def is_local(spark_master: str | None) -> bool:
    """A master that runs Spark in this process's JVM (``local``, ``local[*]``, the default)."""
    return (spark_master or "local[*]").startswith("local")


def start(
    spark_master: str | None = None, spark_remote: str | None = None, write_archive: bool = True
) -> SparkHandle:
    """Start a session (or connect to Spark Connect); ``UsageError`` when that fails.

    ``write_archive=False``: map the class-data-sharing archive if there is one,
    never write it (``cds``), for a session that lives long.
    """
    started = time.perf_counter()
    shown = display_master(spark_master, spark_remote)
    if spark_remote:
        require_pyspark(remote=True)
        from pyspark.sql import SparkSession

        _check_reachable(spark_remote, shown)
        mode_was_set = "SPARK_CONNECT_MODE_ENABLED" in os.environ
        spark = None
        try:
            spark = SparkSession.builder.remote(spark_remote).create()
            version = spark.version  # the first call reaches the server
        except Exception as err:
            if spark is not None:
                with contextlib.suppress(Exception):
                    spark.stop()
            if not mode_was_set:
                os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
            raise UsageError(f"cannot reach Spark Connect at {shown}: {first_line(err)}") from None
        _set_runtime_conf(spark)
        return SparkHandle(
            spark,
            shown,
            version,
            time.perf_counter() - started,
            remote=True,
            local=False,
            owned=True,
            connect_mode_set=not mode_was_set,
        )
    require_pyspark(remote=False)
    require_java()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:  # a notebook's or a test's session: use it, never stop it
        return attach(active)
    master = spark_master or "local[*]"
    local = is_local(master)
    builder = SparkSession.builder.master(master).appName(APP_NAME)
    conf = dict(LOCAL_CONF)
    memory = os.environ.get(DRIVER_MEMORY_ENV, "").strip()
    if memory:
        if not re.fullmatch(r"[1-9][0-9]{0,6}[kmgtKMGT]?", memory):
            raise UsageError(f"{DRIVER_MEMORY_ENV}={memory!r}: use a size such as 2g or 1536m")
        conf["spark.driver.memory"] = memory
    extra = os.environ.get(JAVA_OPTIONS_ENV, "").strip()
    sharing, dump = "", None
    if _no_jvm_yet():  # the options only reach a JVM this start launches
        sharing, dump = cds.options(extra, write_archive)
    conf["spark.driver.extraJavaOptions"] = " ".join(
        filter(
            None,
            (f"-Dlog4j2.configurationFile={_log4j_file().as_uri()}", JVM_OPTIONS, sharing, extra),
        )
    )
    if local:
        address = os.environ.get("SPARK_LOCAL_IP") or "127.0.0.1"
        os.environ.setdefault("SPARK_LOCAL_IP", address)
        conf["spark.driver.bindAddress"] = address
        conf["spark.driver.host"] = address
    for key, value in {**conf, **RUNTIME_CONF}.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as err:
        if dump is not None:
            _stop_jvm_for(dump)
        raise UsageError(f"cannot start Spark (master {shown}): {first_line(err)}") from None
    _set_runtime_conf(spark)
    return SparkHandle(
        spark,
        shown,
        spark.version,
        time.perf_counter() - started,
        remote=False,
        local=local,
        owned=True,
        dump=dump,
    )


def _no_jvm_yet() -> bool:
    """Whether this process has no Py4J gateway yet (a start launches the JVM)."""
    from pyspark import SparkContext

    return SparkContext._gateway is None


def _stop_jvm_for(dump: cds.Dump) -> None:
    """Let the JVM this run launched exit, so it writes the archive (``cds``; not waited for).

    Only the run that writes the archive does this (once per Java and Spark
    install); the next session in this process launches a JVM of its own.
    """
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    with contextlib.suppress(Exception):
        if gateway is not None:
            gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    dump.finish(proc)


#: Seconds to wait for a Spark Connect server's port before giving up.
CONNECT_TIMEOUT = 10.0
DEFAULT_CONNECT_PORT = 15002


def _check_reachable(url: str, shown: str) -> None:
    """Fail fast on a server that is not there.

    The Spark Connect client retries an unreachable server with backoff for
    many minutes; a CI job should instead stop at once with the reason.
    """
    netloc = shown.split("://", 1)[-1]
    host, _, port_text = netloc.rpartition(":")
    if not host or not port_text.isdigit():
        host, port = netloc.strip("[]"), DEFAULT_CONNECT_PORT
    else:
        port = int(port_text)
    if not url.startswith("sc://") or not host:
        raise UsageError("--spark-remote must look like sc://host:port")
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as err:
        raise UsageError(f"cannot reach Spark Connect at {shown}: {err}") from None


def attach(spark: Any) -> SparkHandle:
    """Wrap a session the caller owns (tests, notebooks): used as is, never stopped."""
    remote = _is_connect(spark)
    _set_runtime_conf(spark)
    if remote:
        master = "sc://"
        with contextlib.suppress(Exception):
            master = display_master(None, spark.client._builder.url)
    else:
        master = spark.conf.get("spark.master", "local[*]")
    local = (not remote) and is_local(master)
    return SparkHandle(spark, master, spark.version, 0.0, remote=remote, local=local, owned=False)


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _set_runtime_conf(spark: Any) -> None:
    for key, value in RUNTIME_CONF.items():
        with contextlib.suppress(Exception):  # a server that pins a setting keeps its own
            spark.conf.set(key, value)


_LOG4J_DIR: list[str] = []


def _log4j_file() -> Path:
    if not _LOG4J_DIR:
        folder = tempfile.mkdtemp(prefix="gate-smoke-")
        _LOG4J_DIR.append(folder)
        atexit.register(shutil.rmtree, folder, True)
    path = Path(_LOG4J_DIR[0]) / "log4j2.properties"
    if not path.exists():
        path.write_text(LOG4J2, encoding="utf-8")
    return path


def _find_spec(module: str) -> Any:
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def _version_tuple(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for part in text.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def first_line(err: BaseException) -> str:
    """The first meaningful line of an exception, for one-line reports."""
    text = str(err).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("JVM stacktrace"):
            return line[:500]
    return type(err).__name__


class Deadline:
    """Stop a dataset's Spark jobs after ``seconds``: ``with Deadline(handle, 120): ...``.

    Every job started in the block (in this thread) carries a fresh job tag;
    when time is up, ``interruptTag`` cancels them, the waiting call raises and
    ``expired`` says why, so the dataset is reported "not evaluated" instead of
    holding the run (a regex that backtracks for hours). Works the same on a
    local session, a cluster and Spark Connect. A cancelled task whose regex
    never looks up keeps one core busy until the run ends; the run goes on.
    """

    def __init__(self, handle: SparkHandle, seconds: float) -> None:
        self.spark = handle.spark
        self.remote = handle.remote
        self.seconds = seconds
        self.tag = f"schema-gate-{uuid.uuid4().hex}"
        self.expired = False
        self._done = threading.Event()
        self._watch: threading.Thread | None = None
        self._tagged = False

    def __enter__(self) -> Deadline:
        with contextlib.suppress(Exception):  # a server without tags: no deadline
            if self.remote:  # Spark Connect: operations carry the session's tags
                self.spark.addTag(self.tag)
            else:  # classic: job tags of this thread (session tags do not cancel jobs)
                self.spark.sparkContext.addJobTag(self.tag)
            self._tagged = True
        if self._tagged:
            self._watch = threading.Thread(target=self._expire, daemon=True)
            self._watch.start()
        return self

    def _expire(self) -> None:
        """After the deadline, cancel the tag's jobs, and again each second until the block ends.

        Again, because a job may start after the first cancel (its plan was
        still being built) and would then run unbounded.
        """
        if self._done.wait(self.seconds):
            return
        self.expired = True
        while True:
            with contextlib.suppress(Exception):
                if self.remote:
                    self.spark.interruptTag(self.tag)
                else:
                    self.spark.sparkContext.cancelJobsWithTag(self.tag)
            if self._done.wait(1.0):
                return

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._tagged:
            with contextlib.suppress(Exception):
                if self.remote:
                    self.spark.removeTag(self.tag)
                else:
                    self.spark.sparkContext.removeJobTag(self.tag)


class SparkStopped(UsageError):
    """The local JVM is gone (out of memory, killed): the run stops with this one line."""


def jvm_exit(handle: SparkHandle, err: BaseException | None = None) -> int | None:
    """The exit code of the driver JVM this run launched, or ``None`` while it lives.

    Asked after a Spark call failed with ``err``: a JVM that ran out of memory
    exits with ``OOM_EXIT`` moments after the connection broke, so when ``err``
    says the connection is lost, wait for it a little (an ordinary Spark error
    costs no wait). The
    driver runs in this process's JVM for a local and a classic cluster master
    alike; Spark Connect's server and a session the caller owns are not ours.
    """
    if handle.remote or not handle.owned:
        return None
    try:
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
    except Exception:
        return None
    if proc is None:
        return None
    with contextlib.suppress(Exception):
        if _connection_lost(err) or not _answers(handle):
            return proc.wait(timeout=2.0)
        return proc.poll()
    return None


def _answers(handle: SparkHandle) -> bool:
    """Whether the JVM still answers a trivial call (about a millisecond when it does).

    A JVM out of memory can answer the failing call with a Java error and exit
    just after; the next call then finds the connection gone.
    """
    try:
        handle.spark.sparkContext._jvm.java.lang.System.nanoTime()
    except Exception:
        return False
    return True


def _connection_lost(err: BaseException | None) -> bool:
    """Whether ``err`` (or what caused it) is py4j losing the JVM's connection."""
    seen = 0
    while err is not None and seen < 16:
        if isinstance(err, (ConnectionError, EOFError)) or type(err).__name__ == (
            "Py4JNetworkError"
        ):
            return True
        err = err.__cause__ or err.__context__
        seen += 1
    return False


def stopped(shown: str, code: int) -> SparkStopped:
    """The one line for a JVM that exited while it worked on the sample ``shown``."""
    if code == OOM_EXIT:
        memory = os.environ.get(DRIVER_MEMORY_ENV, "").strip() or LOCAL_CONF["spark.driver.memory"]
        return SparkStopped(
            f"{shown}: Spark ran out of memory on this sample (driver heap {memory}); "
            f"raise {DRIVER_MEMORY_ENV} (e.g. 4g) or commit a smaller sample"
        )
    return SparkStopped(f"{shown}: the Spark JVM stopped (exit code {code}) on this sample")


def _from_py4j(record: logging.LogRecord) -> bool:
    """Keep every record but py4j's own, which it logs on the root logger."""
    return not (record.name == "root" and f"{os.sep}py4j{os.sep}" in record.pathname)


@contextlib.contextmanager
def quiet_py4j() -> Iterator[None]:
    """Drop the tracebacks py4j logs on the root logger while a run talks to Spark.

    py4j calls ``logging.exception`` (not its own logger) when the JVM's
    connection breaks: a JVM that ran out of memory printed 40 lines of Python
    traceback before the run's one line said what happened (measured).
    """
    root = logging.getLogger()
    root.addFilter(_from_py4j)
    try:
        yield
    finally:
        root.removeFilter(_from_py4j)
