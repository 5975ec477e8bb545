"""Measure the action's images: size, build time, import time, cold start of a no-change PR run.

    sudo .venv/bin/python benchmarks/bench_image.py            # both images
    sudo .venv/bin/python benchmarks/bench_image.py --runs 5

It builds both images from scratch on a private Docker daemon (tests/dockerd.py:
vfs storage, a stand-in base image where Docker Hub cannot be reached, the
locked packages from a local index), then for each image:

- size: ``docker image inspect``'s Size (uncompressed, all layers);
- build: wall time of ``docker build`` with an empty build cache (the base
  image present, as on a runner that has pulled it);
- import: ``python -c "import gate.action"`` inside the container, with the
  image's bytecode and after deleting every ``__pycache__`` (what an image
  without ``compileall`` pays on every start);
- cold start: ``docker run`` of the action, exactly as in
  tests/e2e/test_container.py, on a pull request that changes no contract
  (verdict pass), from ``docker run`` to exit.

Figures are medians; they go to docs/github-action.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.action.test_action import make_pr, pr_payload  # noqa: E402
from tests.dockerd import Daemon, PackageIndex, base_image  # noqa: E402
from tests.e2e.test_container import Image, docker_run  # noqa: E402

IMPORT = (
    "import time; t = time.perf_counter(); import gate.action; "
    "print(round((time.perf_counter() - t) * 1000))"
)
WIPE = "find / -xdev -name __pycache__ -type d -prune -exec rm -rf {} +"


def import_ms(daemon: Daemon, tag: str, runs: int, wipe: bool) -> float:
    script = f"{WIPE} 2>/dev/null; " if wipe else ""
    script += "; ".join([f"python -P -c '{IMPORT}'"] * runs)
    out = daemon.docker("run", "--rm", "--entrypoint=sh", tag, "-c", script).stdout
    return statistics.median(float(x) for x in out.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repetitions per timing")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="gate-bench-", dir="/tmp"))
    daemon, reason = Daemon.find(folder)
    if daemon is None:
        raise SystemExit(f"no Docker daemon: {reason}")
    results: dict[str, dict[str, float]] = {}
    try:
        base, reason = base_image(daemon, ROOT / "Dockerfile", folder)
        if base is None:
            raise SystemExit(f"no base image: {reason}")
        index = PackageIndex(folder / "index")
        index.download(*(ROOT / "locks" / f"{n}.txt" for n in ("build", "slim", "smoke")))
        url = index.serve()
        for name, dockerfile, action in [
            ("slim", "Dockerfile", ROOT / "action.yml"),
            ("smoke", "smoke.Dockerfile", ROOT / "smoke" / "action.yml"),
        ]:
            tag = f"schema-contract-gate-{name}:bench"
            start = time.monotonic()
            daemon.docker(
                "build",
                "--quiet",
                "--no-cache",
                "--network=host",
                f"--build-arg=BASE_IMAGE={base}",
                f"--build-arg=PIP_INDEX_URL={url}",
                f"--tag={tag}",
                f"--file={ROOT / dockerfile}",
                str(ROOT),
            )
            built = time.monotonic() - start
            [info] = json.loads(daemon.docker("image", "inspect", tag).stdout)
            image = Image(tag, action, ROOT / dockerfile, built)
            starts = []
            for i in range(args.runs):
                work = folder / f"{name}-{i}"
                pr = make_pr(work, {"README.md": "shop, now documented\n"})
                run = docker_run(daemon, image, pr, pr.checkout(), pr_payload(pr))
                assert run.code == 0 and run.outputs["verdict"] == "pass", run.stdout + run.stderr
                starts.append(run.seconds)
            results[name] = {
                "size_mb": round(info["Size"] / 1e6),
                "build_s": round(built),
                "import_ms_compiled": import_ms(daemon, tag, args.runs, wipe=False),
                "import_ms_no_bytecode": import_ms(daemon, tag, args.runs, wipe=True),
                "cold_start_no_change_pr_s": round(statistics.median(starts), 2),
            }
            print(name, json.dumps(results[name]), flush=True)
        index.close()
    finally:
        daemon.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
