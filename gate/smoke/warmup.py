"""Load the classes a smoke test needs while the Spark session is still starting.

A local session takes 4 to 6 s to start on two cores, most of it one JVM
thread loading and initialising Spark's classes, while the other core waits.
Then the first dataset loads about 4,900 more classes (Arrow, the SQL parser,
the analyzer's rules, Janino, the task path) on the critical path, one at a
time: most of the smoke test's own cost on a cold JVM (docs/smoke-test.md,
Performance). So as soon as the JVM's gateway is up, one background thread
asks the JVM to load those classes (``warm_classes.txt``, recorded by
``benchmarks/record_warm_classes.py``), without initialising them: no static
code runs, nothing is created, and a class a Spark version does not have is
skipped. The loading happens in one JVM call: a loop compiled by Janino (which
Spark ships for its own code generation) from the constant source below; the
class names go to it as one string of data.

Nothing here can change a result: a class loads the same whether this thread
or Spark loads it first, and any failure (no Janino, an odd JVM, a session
that stopped) leaves the run as it would have been. It runs only for a local
session the gate launches itself (the recorded classes are a local driver's
and executor's), with a second CPU to run on. ``GATE_SPARK_WARMUP=0`` turns
it off (to measure it).
"""

from __future__ import annotations

import os
import re
import threading
import time
from importlib import resources
from typing import Any

from gate.smoke.session import first_line
from gate.workers import default_count

#: ``0`` turns the warm-up off.
WARMUP_ENV = "GATE_SPARK_WARMUP"
#: The recorded class names, beside this module.
CLASS_LIST = "warm_classes.txt"
#: Seconds to wait for the JVM's gateway before giving up.
GATEWAY_WAIT = 60.0

#: The JVM side: load each class named in ``p`` (one per line) without
#: initialising it; count those found. Constant source, never built from input.
_LOADER = (
    'String[] names = ((String) p).split("\\n");'
    "ClassLoader loader = ClassLoader.getSystemClassLoader();"
    "int loaded = 0;"
    "for (int i = 0; i < names.length; i++) {"
    "  try { Class.forName(names[i], false, loader); loaded++; } catch (Throwable t) { }"
    "}"
    "return loaded;"
)
_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def class_names() -> list[str]:
    """The recorded class names (``warm_classes.txt``, packaged with the gate)."""
    return parse_names(resources.files("gate.smoke").joinpath(CLASS_LIST).read_text("utf-8"))


def parse_names(text: str) -> list[str]:
    """One Java class name per line; ``#`` lines are comments, anything else odd is dropped."""
    names = (line.strip() for line in text.splitlines())
    return [name for name in names if not name.startswith("#") and _CLASS_NAME.fullmatch(name)]


def enabled() -> bool:
    """On unless ``GATE_SPARK_WARMUP=0``, and only with a second CPU this process may use."""
    if os.environ.get(WARMUP_ENV, "").strip() == "0":
        return False
    return default_count() >= 2


def preload(jvm: Any, gateway: Any, names: list[str]) -> int:
    """Load ``names`` in the JVM (not initialised); how many it found. Raises on failure."""
    with _LOCK:
        if _COMPILED and _COMPILED[0] is gateway:
            loader = _COMPILED[1]
        else:
            evaluator = jvm.org.codehaus.janino.ScriptEvaluator()
            parameters = gateway.new_array(jvm.java.lang.String, 1)
            parameters[0] = "p"
            interface = jvm.java.lang.Class.forName("java.util.function.ToIntFunction")
            loader = evaluator.createFastEvaluator(_LOADER, interface, parameters)
            # One per JVM: Py4J caches a method by its class's name, and a second
            # compiled loader would be another class of the same name.
            _COMPILED[:] = [gateway, loader]
    return int(loader.applyAsInt("\n".join(names)))


#: The gateway the loader was compiled in, and the loader (held, so never reused by id).
_COMPILED: list[Any] = []
_LOCK = threading.Lock()


class Warmup:
    """The background thread: waits for the gateway, then preloads once.

    ``result`` is the number of classes found, or None if it did not run
    (off, no gateway in time, or a failure: ``error`` says which).
    """

    def __init__(self) -> None:
        self.result: int | None = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gate-warmup", daemon=True)

    def start(self) -> Warmup:
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop waiting for a gateway (a preload already under way runs to its end)."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            from pyspark import SparkContext

            end = time.monotonic() + GATEWAY_WAIT
            while SparkContext._jvm is None:
                if self._stop.wait(0.01) or time.monotonic() > end:
                    self.error = "no JVM gateway"
                    return
            self.result = preload(SparkContext._jvm, SparkContext._gateway, class_names())
        except BaseException as err:  # a warm-up never fails a run
            self.error = _describe(err)


def _describe(err: BaseException) -> str:
    """``Type: first line``, without trusting the error: a Py4J error's text asks the JVM."""
    try:
        return f"{type(err).__name__}: {first_line(err)}"
    except BaseException:
        return type(err).__name__


def start_if_useful() -> Warmup | None:
    """A started ``Warmup`` when this process is about to launch its JVM, else None."""
    if not enabled():
        return None
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    if SparkContext._jvm is not None:  # a JVM is up already (a notebook, a test): nothing to win
        return None
    try:
        return Warmup().start()
    except RuntimeError:  # no thread to be had (process limits): run without
        return None
