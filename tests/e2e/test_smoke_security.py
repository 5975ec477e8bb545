"""Hostile samples against the real CLI, a real git repository and a real local Spark.

Each test performs the attack of issue #8 as a pull request would: the files
are committed in a real repository, the gate runs as a subprocess, and the
assertions look at everything it printed, the JVM's own stderr included. The
attacks whose assertions are the report's alone (Hadoop's globs in folder
names, a symlinked sample) run in-process on the shared session instead
(tests/smoke/test_smoke_cli.py): here they cost 19 CPU s, the globs' JVM most of it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import gate_env, run_gate_process
from tests.gitrepo import GitRepo
from tests.smoke_repos import CONTRACT, REGEX_CONTRACT, SECRET, make_glob_attack
from tests.spark_fixtures import skip_without_spark

#: Runs the CLI with ``import pyarrow`` failing, as in an install without it.
NO_PYARROW = """\
import runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("pyarrow is blocked for this test")
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["gate", *sys.argv[1:]]
runpy.run_module("gate", run_name="__main__")
"""


@pytest.fixture
def glob_attack(tmp_path: Path) -> GitRepo:
    """Samples under committed folders named like Hadoop globs (tests/smoke_repos.py)."""
    return make_glob_attack(tmp_path)


def test_without_pyarrow_the_smoke_test_refuses_to_run(
    glob_attack: GitRepo,
    tmp_path: Path,
) -> None:
    """Before the fix, this install fell back to ``spark.read.parquet(path)`` and printed SECRET."""
    skip_without_spark()
    script = tmp_path / "no_pyarrow.py"
    script.write_text(NO_PYARROW, encoding="utf-8")

    proc = subprocess.run(
        [sys.executable, str(script), "--base", "main", "--smoke-test"],
        cwd=glob_attack.path,
        env=gate_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert SECRET not in proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "schema-gate: error: the smoke test reads samples with pyarrow, which is not "
        "installed: pip install 'schema-contract-gate[spark]'"
    )


# -- regexes that backtrack (issue #8, medium) --------------------------------------------------


@pytest.mark.spark
def test_backtracking_regexes_are_refused_or_stopped(tmp_path: Path) -> None:
    """``^(a+)+\\1$`` ran > 150 s in Java; one that slips past the refusal meets the time limit.

    The refusal (the check skipped, said in the report) is asserted in-process
    (tests/smoke/test_smoke_cli.py); the time limit keeps its own JVM here: the
    stopped task keeps a core busy until the run's JVM ends.
    """
    skip_without_spark()
    repo = GitRepo(tmp_path / "repo")
    # Consecutive quantifiers are not refused; on 3,000 'a' Java backtracks for hours.
    repo.write("contracts/chain.yaml", REGEX_CONTRACT.format(name="chain", regex="^a*a*a*a*a*a*b$"))
    repo.write("contracts/chain.sample.csv", "w\n" + "a" * 3000 + "\nab\n")
    repo.write(".schema-gate.yml", "limits:\n  smoke_seconds_per_dataset: 3\n")
    repo.commit("a regex the static check lets through")
    proc = run_gate_process(repo.path, "--base", "main", "--smoke-test", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    chain = json.loads(proc.stdout)["smoke"]["datasets"][0]
    assert chain["status"] == "error" and chain["results"] == []
    assert chain["error"] == (
        "contracts/chain.sample.csv: not evaluated: Spark took longer than 3 s on this "
        "dataset and was stopped (limits.smoke_seconds_per_dataset; a slow regex?)"
    )


# -- broken samples: one clear line, never a silent pass (issue #8, low) ------------------------


@pytest.fixture(scope="module")
def broken_and_hostile(
    tmp_path_factory: pytest.TempPathFactory,
) -> subprocess.CompletedProcess[str]:
    """One run (one JVM, 16 s of CPU) over the broken samples and the SQL-like values.

    The two tests below assert on their own datasets of this one report: each
    asserted a run (and a JVM) of its own, with nothing between their datasets
    (tests/conftest.py keeps the two in one unit of work with -n).
    """
    skip_without_spark()
    repo = GitRepo(tmp_path_factory.mktemp("broken-and-hostile") / "repo")
    repo.write(
        "contracts/notes.yaml",
        "dataset: notes\ncolumns:\n  - name: id\n    data_type: int\n  - name: note\n",
    )
    # The quote opened on line 3 is never closed: lines 4-5 must not vanish into one value.
    repo.write("contracts/notes.sample.csv", 'id,note\n1,fine\n2,"never closed\n3a,x\n4,y\n')
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders"))
    repo.write("contracts/orders.sample.parquet", "PAR1 this is not parquet PAR1")
    repo.write("contracts/hostile.yaml", HOSTILE_CONTRACT)
    repo.write("contracts/hostile.sample.csv", HOSTILE_SAMPLE)
    repo.commit("broken samples, values that look like SQL")
    return run_gate_process(repo.path, "--base", "main", "--smoke-test", "--format", "json")


@pytest.mark.spark
def test_unclosed_quote_and_corrupt_parquet_are_reported_in_one_line(
    broken_and_hostile: subprocess.CompletedProcess[str],
) -> None:
    proc = broken_and_hostile
    assert proc.returncode == 1, proc.stderr
    for noise in ("Py4J", "An error occurred while calling", "at org.apache", "Traceback"):
        assert noise not in proc.stderr and noise not in proc.stdout
    datasets = {d["dataset"]: d for d in json.loads(proc.stdout)["smoke"]["datasets"]}
    notes = datasets["notes"]
    assert notes["status"] == "failed" and notes["rows"] == 2
    malformed = next(r for r in notes["results"] if r["name"] == "malformed_record")
    assert malformed["status"] == "failed" and malformed["failed_rows"] == 1
    assert malformed["samples"] == ['2,"never closed\\n3a,x\\n4,y']
    orders = datasets["orders"]
    assert orders["status"] == "error"
    assert orders["error"].startswith("contracts/orders.sample.parquet: unreadable Parquet: ")
    assert "\n" not in orders["error"]


# -- size limits (issue #8, medium) ---------------------------------------------------------------


def test_a_sample_over_the_byte_limit_stops_the_run_before_spark(tmp_path: Path) -> None:
    skip_without_spark()
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders"))
    repo.write("contracts/orders.sample.csv", "id\n" + "1\n" * 5000)
    repo.write(".schema-gate.yml", "limits:\n  sample_bytes: 4096\n")
    repo.commit("a big sample")
    proc = run_gate_process(repo.path, "--base", "main", "--smoke-test")
    assert proc.returncode == 2
    assert proc.stderr == (
        "schema-gate: error: contracts/orders.sample.csv: 9.8 KiB is more than the sample "
        "limit of 4 KiB (raise limits.sample_bytes in the base side's config)\n"
    )
    assert "SMOKE TEST" not in proc.stdout


def _dictionary_bomb(path: Path, value: str, rows: int) -> None:
    """One long string repeated through a dictionary, as Spark writes it (no Arrow schema)."""
    strings = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([value]))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": strings}), path, store_schema=False)


def test_a_parquet_sample_that_decodes_into_a_bomb_exits_2_before_spark(tmp_path: Path) -> None:
    """1 MB on disk, 20 GB decoded: counted from its dictionary before Spark, in one line."""
    skip_without_spark()
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders"))
    _dictionary_bomb(repo.path / "contracts/orders.sample.parquet", "1" * 100_000, 200_000)
    repo.commit("a small sample")
    proc = run_gate_process(repo.path, "--base", "main", "--smoke-test")
    assert proc.returncode == 2
    assert re.fullmatch(
        r"schema-gate: error: contracts/orders\.sample\.parquet: 190\d\d\.\d MiB once decoded is "
        r"more than the sample limit of 512 MiB \(raise limits\.sample_decoded_bytes in the "
        r"base side's config\)\n",
        proc.stderr,
    ), proc.stderr
    assert "SMOKE TEST" not in proc.stdout
    # The same file at a tenth of the rows is within the default limit, but not this one.
    _dictionary_bomb(repo.path / "contracts/orders.sample.parquet", "1" * 1_000, 2_000)
    repo.write(".schema-gate.yml", "limits:\n  sample_decoded_bytes: 1000000\n")
    repo.commit("a smaller sample, a lower limit")
    proc = run_gate_process(repo.path, "--base", "main", "--smoke-test")
    assert proc.returncode == 2
    assert "1.9 MiB once decoded is more than the sample limit of 976.6 KiB" in proc.stderr


@pytest.mark.spark
def test_a_jvm_out_of_memory_is_one_line_naming_the_sample(tmp_path: Path) -> None:
    """Within every limit, too much for the heap: 60 lines of Java and a 300 s wait before."""
    skip_without_spark()
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CONTRACT.format(name="orders").replace("int", "string"))
    path = repo.path / "contracts/orders.sample.parquet"
    strings = pa.DictionaryArray.from_arrays(
        pa.array([i % 2 for i in range(2_000_000)], pa.int32()), pa.array(["a" * 150, "b" * 150])
    )
    pq.write_table(pa.table({"id": strings}), path, store_schema=False)  # 40 KB, 300 MB decoded
    repo.commit("a sample the smallest heap cannot hold")
    env = gate_env(GATE_SPARK_DRIVER_MEMORY="480m")  # the least Spark starts with
    proc = run_gate_process(
        repo.path, "--base", "main", "--smoke-test", "--format", "json", env=env
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[-1] == (
        "schema-gate: error: contracts/orders.sample.parquet: Spark ran out of memory on this "
        "sample (driver heap 480m); raise GATE_SPARK_DRIVER_MEMORY (e.g. 4g) or commit a "
        "smaller sample"
    )
    # Besides it, only the JVM's own lines: no stack trace, no Python traceback.
    jvm = ("WARNING: Using incubator modules", "Terminating due to java.lang.OutOfMemoryError")
    assert all(line.startswith(jvm) for line in lines[:-1]), proc.stderr
    assert proc.stdout == ""


@pytest.mark.spark
def test_the_smoke_time_limit_bounds_the_whole_smoke_test(tmp_path: Path) -> None:
    """limits.smoke_seconds counts from the start, the session's start included."""
    skip_without_spark()
    repo = GitRepo(tmp_path / "repo")
    for name in ("orders", "items"):
        repo.write(f"contracts/{name}.yaml", CONTRACT.format(name=name))
        repo.write(f"contracts/{name}.sample.csv", "id\n1\n")
    repo.write(".schema-gate.yml", "limits:\n  smoke_seconds: 1\n")  # Spark takes longer to start
    repo.commit("two fine samples, no time")
    proc = run_gate_process(repo.path, "--base", "main", "--smoke-test", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    errors = {d["dataset"]: d["error"] for d in json.loads(proc.stdout)["smoke"]["datasets"]}
    assert errors == {
        name: f"contracts/{name}.sample.csv: not evaluated: the smoke test took longer than "
        "1 s in all and was stopped (limits.smoke_seconds)"
        for name in ("orders", "items")
    }


# -- the aggregation's SQL text: values are parameters, names are the gate's -------------

HOSTILE_CONTRACT = """\
dataset: hostile
columns:
  - name: "a`b, (SELECT 1) AS x --"
    data_type: varchar(20)
    checks:
      - invalid:
          valid_values: ["x' OR '1'='1", "{frame}", ":p0", "`c0`", "a}b"]
      - missing:
          missing_values: ["') OR 1=1 --"]
  - name: code
    checks:
      - invalid:
          valid_regex_sql: '^[a-z]{2}$'
"""

HOSTILE_SAMPLE = """\
"a`b, (SELECT 1) AS x --",code
x' OR '1'='1,ab
{frame},abc
:p0,zz
`c0`,x}
a}b,ab
') OR 1=1 --,ab
evil,ab
"""


@pytest.mark.spark
def test_contract_values_and_names_never_become_sql(
    broken_and_hostile: subprocess.CompletedProcess[str],
) -> None:
    """Quotes, braces, markers and backticks in values and names are compared as text.

    The aggregation runs as SQL text (``gate.smoke.sqlexpr``): had any of
    these been spliced into it, the query would fail, match every row, or
    read ``{frame}`` as the placeholder; each is just a value here.
    """
    proc = broken_and_hostile  # the hostile dataset beside the broken samples' (above)
    assert proc.returncode == 1, proc.stderr
    [dataset] = [
        d for d in json.loads(proc.stdout)["smoke"]["datasets"] if d["dataset"] == "hostile"
    ]
    assert dataset["status"] == "failed" and dataset["rows"] == 7
    checks = {
        (r["name"], r["column"]): (r["status"], r["failed_rows"], r["samples"])
        for r in dataset["results"]
        if r["kind"] == "check"
    }
    name = "a`b, (SELECT 1) AS x --"
    # missing_values belongs to the other check, so that value is invalid here too
    assert checks[("invalid", name)] == ("failed", 2, ["') OR 1=1 --", "evil"])
    assert checks[("missing", name)] == ("failed", 1, [])
    assert checks[("invalid", "code")] == ("failed", 2, ["abc", "x}"])
    coercion = [r for r in dataset["results"] if r["kind"] == "coercion"]
    assert {r["status"] for r in coercion} == {"passed"}, coercion
