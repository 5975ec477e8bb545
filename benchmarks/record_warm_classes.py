"""Record the classes a smoke test loads once its session is up: gate/smoke/warm_classes.txt.

    python benchmarks/record_warm_classes.py [--out gate/smoke/warm_classes.txt]

``gate/smoke/warmup.py`` loads these classes on the idle core while the next
session starts. This script runs, each in a fresh process with the JVM's
class-load log on and the warm-up off:

- a bare session, started and stopped (what every session loads anyway);
- the smoke test over varied samples: the benchmark's contract over CSV,
  JSON Lines and Parquet samples, large (several partitions) and small (one);
  a JSON Lines sample pyarrow declines (Spark's JSON reader), a repeated key
  (Spark's group-by), passing and failing checks; and the bundled example;

and writes the classes the second loaded and the first did not, read from a
jar or the JDK's modules: loading by name cannot reach what the JVM makes at
run time (lambdas, method-handle species, Spark's generated code), and the
JDK's shared archive needs no warming.
Re-run it after a PySpark or Java upgrade; a stale list only warms less.
Needs Java and the ``spark`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_smoke import generate  # noqa: E402

VARIETY = """\
dataset: record/variety
columns:
  - name: id
    data_type: bigint
    checks:
      - duplicate:
  - name: seen
    data_type: timestamp
  - name: flag
    data_type: boolean
  - name: ratio
    data_type: double
    checks:
      - invalid:
          valid_max: 1
  - name: code
    data_type: varchar(3)
    checks:
      - missing:
  - name: extra
    optional: true
"""

BARE = """
from gate.smoke import session
session.start().stop()
print("{}")
"""

SMOKE = """
import json
from pathlib import Path
from gate.formats import parse_contract
from gate.smoke import SmokeSettings, run_smoke
statuses = []
for folder in {folders!r}:
    root = Path(folder)
    datasets = []
    for path in sorted(root.rglob("*.yaml")):
        datasets.extend(parse_contract(path.read_bytes(), path.relative_to(root).as_posix()).datasets)
    report = run_smoke(datasets, root, SmokeSettings())
    statuses += [d.status for d in report.datasets]
print(json.dumps(statuses))
"""


def variety(root: Path) -> None:
    """A contract whose samples take the paths the benchmark's do not."""
    folder = root / "contracts"
    folder.mkdir(parents=True)
    (folder / "variety.yaml").write_text(VARIETY)
    lines = ['{"id": 1, "seen": "2024-01-01T00:00:00", "flag": true, "ratio": 0.5, "code": "a"}']
    lines += [
        json.dumps(
            {
                "id": i % 50,
                "seen": "2024-01-02 10:00:00",
                "flag": i % 2 == 0,
                "ratio": i / 100,
                "code": "abcd" if i % 7 == 0 else "ab",
                "extra": "text" if i % 3 else 5,
            }
        )  # a mixed type: Spark's reader
        for i in range(2, 3000)
    ]
    lines.append("{not json")
    (folder / "variety.sample.jsonl").write_text("\n".join(lines) + "\n")


def classes(log: Path) -> dict[str, str]:
    """Class name -> source, from a ``-Xlog:class+load`` file without decorations."""
    out: dict[str, str] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = re.match(r"(\S+) source: (.*)", line)
        if match:
            out.setdefault(match.group(1), match.group(2))
    return out


def loadable(name: str, source: str) -> bool:
    """A class ``Class.forName`` finds in any JVM: one read from a jar or the JDK's modules.

    Not one the JVM made at run time (lambdas and other hidden classes,
    method-handle species, Spark's generated code: their sources are names
    like ``__JVM_LookupDefineClass__`` or ``_ClassSpecializer_...``), nor one
    from the JDK's shared archive, which costs next to nothing to load.
    """
    if "/0x" in name or "$$Lambda" in name or name.startswith(_JANINO_OUTPUT):
        return False
    return source.startswith(("jrt:/", "file:", "jar:"))


#: Where Spark's code generation puts the classes Janino compiles (their log
#: line names the compiler's jar as source, but no class loader finds them by name).
_JANINO_OUTPUT = "org.apache.spark.sql.catalyst.expressions.GeneratedClass"


def run(code: str, log: Path) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GATE_SPARK_WARMUP": "0",
        "GATE_SPARK_JAVA_OPTIONS": f"-Xlog:class+load=info:file={log}:none",
    }
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"recording step failed:\n{proc.stderr[-3000:]}")
    return proc.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "gate" / "smoke" / "warm_classes.txt")
    args = parser.parse_args()
    import pyspark

    with tempfile.TemporaryDirectory(prefix="record-warm-") as folder:
        base = Path(folder)
        generate(base / "large", 10, 60_000)
        generate(base / "small", 10, 2_000)
        variety(base / "variety")
        shutil.copytree(ROOT / "examples" / "shop", base / "example")
        folders = [str(base / name) for name in ("large", "small", "variety", "example")]
        run(BARE, base / "bare.log")
        statuses = json.loads(run(SMOKE.format(folders=folders), base / "smoke.log"))
        bare = classes(base / "bare.log")
        smoke = classes(base / "smoke.log")
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    names = sorted(
        name for name, source in smoke.items() if name not in bare and loadable(name, source)
    )
    header = [
        "# Classes a smoke test loads once its Spark session is up (gate/smoke/warmup.py",
        "# loads them while the next session starts). Generated by",
        "# benchmarks/record_warm_classes.py; do not edit. Recorded with PySpark",
        f"# {pyspark.__version__}, {java.stderr.splitlines()[0] if java.stderr else 'java'}.",
    ]
    args.out.write_text("\n".join(header + names) + "\n", encoding="utf-8")
    print(
        f"{len(names)} classes ({len(smoke)} loaded by the smoke runs, {len(bare)} by a bare "
        f"session; statuses {sorted(set(statuses))}) -> {args.out}"
    )


if __name__ == "__main__":
    main()
