"""Shared fixtures: real temp git repos, the CLI run in-process, and as a real process.

Scenario tests run the CLI's ``main()`` in this process (:func:`run_gate`, fixtures
``gate`` and ``cli``): same exit code, stdout and stderr as the command, without an
interpreter start and the imports per run. The tests that need a real process
(signals, the environment of a child, ``python -m`` itself, import-time
behaviour, process teardown) use :func:`run_gate_process` (fixture
``gate_process``) explicitly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import GitRepo, git_env

ROOT = Path(__file__).resolve().parent.parent

# Bytecode caches on, whatever the environment says: CI images often set
# PYTHONDONTWRITEBYTECODE=1, and then every xdist worker rewrites the asserts of
# all 3,000 tests again (collection 9.8 s of CPU instead of 3.8 s) and every
# `python -m gate` child compiles the gate again (0.65 s of CPU instead of 0.5 s).
# A cache changes no result; __pycache__ is ignored by git and .dockerignore.
sys.dont_write_bytecode = False


#: The gate's cache directory (compiled validators, Spark's class-data-sharing archive).
CACHE_ENV = "SCHEMA_GATE_CACHE"
_RUN_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """One cache directory for the whole run, shared by its workers and every gate they start.

    Unless the caller chose one: the first gate run with a local Spark session
    writes the class-data-sharing archive there (gate/smoke/cds.py) and every
    later JVM of the run maps it (a real-process smoke run: 18 to 20 -> 11 to 12
    CPU s, measured), and each contract schema's validator is compiled once per
    run, not once per process. Made by the process that starts the run (an
    xdist worker inherits it) and removed when that process ends.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ.setdefault("GATE_SPARK_CDS", "1")  # written once per run, in CI (.ci/run) too
    if os.environ.get(CACHE_ENV, "").strip():
        return
    folder = tempfile.mkdtemp(prefix="gate-test-cache-")
    _RUN_CACHE.append(folder)
    os.environ[CACHE_ENV] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _RUN_CACHE:
        if os.environ.get(CACHE_ENV) == folder:
            del os.environ[CACHE_ENV]
        shutil.rmtree(folder, ignore_errors=True)
    _RUN_CACHE.clear()


def gate_env(**extra: str) -> dict[str, str]:
    """The environment the gate runs in: isolated git, no stray acknowledgements."""
    env = git_env()
    env.pop("ACCEPT_BREAKING_CHANGE", None)
    env.pop("ACCEPT_CONSUMER_BREAK", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see sys.dont_write_bytecode above
    # No empty entry: a trailing separator would put the current directory
    # (the repository under test) on the import path (tests/e2e/test_safe_command.py).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env.update(extra)
    return env


def run_gate_process(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m gate ARGS`` in ``cwd``, as a user or CI would run it: a real process."""
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        env=env or gate_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_main(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI's ``main(ARGS)`` run in this process, in ``cwd``, with ``env`` as its environment.

    Same answer shape as :func:`run_gate` (returncode, stdout, stderr), at a fraction
    of the cost: no interpreter start, no imports. Scenario tests use it; the
    end-to-end tests that need a real process (signals, the console script, the
    environment of a child) keep :func:`run_gate`.
    """
    import contextlib
    import io

    from gate.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    os.environ.clear()
    os.environ.update(env or gate_env())
    os.chdir(cwd)
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's own exits (--help, usage errors)
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["gate", *args], code, out.getvalue(), err.getvalue())


def run_gate(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The gate on ``ARGS`` in ``cwd``, in-process (:func:`run_main`): what scenario tests use.

    It answers as ``python -m gate ARGS`` does (tests/e2e/test_inprocess.py holds the
    two to the same answer); a test that needs the real process calls
    :func:`run_gate_process`.
    """
    return run_main(cwd, *args, env=env, stdin=stdin)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``main()`` in-process: the default for scenario tests (see :func:`run_main`)."""
    return run_main


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def gate() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The gate in-process (:func:`run_gate`)."""
    return run_gate


@pytest.fixture
def gate_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``python -m gate`` as a real process (:func:`run_gate_process`): signals, env, teardown."""
    return run_gate_process


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Spark Connect server (tests/spark_fixtures.py), one per test process.

    Started on first use and shared: tests/smoke/test_smoke_connect.py and the
    real-process CLI runs that need no JVM of their own (:data:`CONNECT_TESTS`)
    use the same server, where each such process with a local session started a
    JVM: 16 s of CPU a run, against 1.4 s for the client and 0.4 to 5 s on the
    server (measured, tests/e2e/test_cli_smoke.py's shop).
    """
    from tests.spark_fixtures import serve_connect

    yield from serve_connect(tmp_path_factory)


#: Set to 1 to run the Docker image tests (tests/e2e/test_container.py) in a whole-suite run.
DOCKER_OPT_IN = "GATE_DOCKER_TESTS"


def docker_opted_in(config: pytest.Config) -> bool:
    """Whether this run builds the action's images: ``GATE_DOCKER_TESTS=1`` or ``-m docker``.

    The builds take minutes (two images, a Debian base and PySpark), so a
    local ``pytest -q`` leaves them out and says so; ``.ci/run`` always opts in.
    """
    if os.environ.get(DOCKER_OPT_IN, "").strip() == "1":
        return True
    return str(config.getoption("markexpr", "") or "").strip() == "docker"


#: The folder whose files share the session's Spark (tests/spark_fixtures.py's ``spark``):
#: with -n, one worker runs them all, so a run starts one Spark session, not one per
#: worker (a session's start and first queries cost about 30 s of CPU, measured).
SPARK_FOLDER = "tests/smoke/"
#: Real-process tests that run the CLI on the ``connect_url`` server: with -n, in
#: the unit of :data:`SPARK_FOLDER`, whose tests/smoke/test_smoke_connect.py starts
#: that server, so a run starts one server, not one per worker.
CONNECT_TESTS = frozenset(
    {"tests/e2e/test_cli_smoke.py::test_failing_sample_fails_the_run_and_acks_do_not_silence_it"}
)
#: Files whose tests a run with -n hands to the workers one by one: independent
#: tests, each a real process with a JVM of its own, too long for one worker.
SPREAD_FILES = frozenset({"tests/e2e/test_smoke_security.py"})
#: Tests of :data:`SPREAD_FILES` that share one run (a module fixture): one unit.
SHARED_RUNS = {
    f"tests/e2e/test_smoke_security.py::{name}": "tests/e2e/test_smoke_security.py::broken"
    for name in (
        "test_unclosed_quote_and_corrupt_parquet_are_reported_in_one_line",
        "test_contract_values_and_names_never_become_sql",
    )
}


#: The Docker image tests. Where a daemon is named (.ci/run's, whose images build in
#: the background), each is a unit of its own: they run last, and as one file they
#: can keep one worker busy with a dozen containers after the others have run out
#: of work; a unit's fixtures there only look the daemon and the images up.
CONTAINER_FILE = "tests/e2e/test_container.py"


def xdist_scope(nodeid: str) -> str:
    """The unit of work, with -n, of the test ``nodeid``: what one worker runs in one go.

    A file, as with xdist's ``--dist loadfile``, so its module fixtures (a Spark
    Connect server, the Docker daemon and images) start once; but all of
    :data:`SPARK_FOLDER` is one unit (with :data:`CONNECT_TESTS`), and each test of
    :data:`SPREAD_FILES` (and of :data:`CONTAINER_FILE` on a named daemon) is its own.
    """
    path = nodeid.split("::", 1)[0]
    if path.startswith(SPARK_FOLDER) or nodeid.split("[", 1)[0] in CONNECT_TESTS:
        return SPARK_FOLDER
    if path in SPREAD_FILES:
        return SHARED_RUNS.get(nodeid, nodeid)
    if path == CONTAINER_FILE and os.environ.get("SCHEMA_GATE_DOCKER_HOST", "").strip():
        return nodeid
    return path


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: no error without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (pyproject's addopts) with the units of :func:`xdist_scope`.

    (xdist's ``loadgroup`` would do it with marks, but it works by renaming node
    ids, which pytest 9.2 ignores: each test became a unit of its own, measured.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The longest unit first: with -n one worker runs the Spark folder while the
    # others run the rest, not it last.
    items.sort(key=lambda item: not item.nodeid.startswith(SPARK_FOLDER))
    if docker_opted_in(config):
        # Where a daemon is named (.ci/run's, whose images build in the background
        # from its first second: tests/images.py), last in line: taken first, they
        # only waited for that build with a core idle for about two minutes, and
        # by the end of the suite the images are ready. Otherwise first in line:
        # one worker builds the images while the other runs the rest of the suite.
        background = bool(os.environ.get("SCHEMA_GATE_DOCKER_HOST", "").strip())
        items.sort(key=lambda item: (item.get_closest_marker("docker") is None) != background)
        return
    skip = pytest.mark.skip(
        reason=f"Docker image tests are opt-in: set {DOCKER_OPT_IN}=1 or run pytest -m docker"
    )
    for item in items:
        if item.get_closest_marker("docker") is not None:
            item.add_marker(skip)
