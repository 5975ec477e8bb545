"""What a job pays for the action's images: size, pull (proxied), start, the gate's run.

    sudo .venv/bin/python benchmarks/bench_image.py              # both images
    sudo .venv/bin/python benchmarks/bench_image.py --runs 5 --images slim

The images are those of tests/images.py (found by their content tag on a daemon
kept with ``SCHEMA_GATE_DOCKER_HOST``, else built on a private daemon: overlay2 where
the kernel mounts an overlay, else vfs, ``tests/dockerd.py``'s ``storage_driver``).
For each image it prints:

- ``size_mb``: ``docker image inspect``'s Size, uncompressed, all layers;
- ``compressed_mb``: ``docker save IMAGE | gzip -6 | wc -c``, a proxy for
  what a pull downloads (registries store each layer gzipped; the real pull
  is the sum of the layers' compressed sizes, within a few percent of this);
- ``load_s``: ``docker load`` of that gzipped tarball into a second, empty
  daemon: a proxy for a pull on a runner that has nothing cached, without the
  download (decompress and unpack every layer). Under the vfs storage
  driver, which copies every layer once more, this overestimates a
  runner's overlay2 (``SCHEMA_GATE_DOCKER_STORAGE=vfs`` forces it, for the
  figures in the docs, measured on vfs);
- ``start_s``: ``docker run --rm IMAGE --version`` (container start, Python's
  start, the CLI's import), median;
- ``example_s``: ``docker run --rm -v REPO:/repo -w /repo IMAGE --base main
  --head HEAD`` on the bundled example (examples/demo.py's repository: four
  Soda contracts, a PR that narrows and drops columns; exit 1), median; the
  gate's own share is ``example_s - start_s``;
- ``import_ms``: ``import gate.action`` inside the container, median;
- ``no_change_pr_s``: the action run as tests/e2e/test_container.py runs it
  (``GITHUB_ACTIONS=true``, an event payload, a checkout) on a pull request
  that changes no contract, median.

Figures go to docs/github-action.md ("What a job costs").
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.demo import build_repo  # noqa: E402
from tests.action.test_action import make_pr, pr_payload  # noqa: E402
from tests.dockerd import Daemon  # noqa: E402
from tests.e2e.test_container import Image, docker_run  # noqa: E402
from tests.images import IMAGES  # noqa: E402
from tests.images import build as build_images  # noqa: E402

IMPORT = (
    "import time; t = time.perf_counter(); import gate.action; "
    "print(round((time.perf_counter() - t) * 1000))"
)


def timed(fn: object, runs: int) -> float:
    """Median wall time of ``runs`` calls of ``fn``."""
    seconds = []
    for _ in range(runs):
        start = time.monotonic()
        fn()  # type: ignore[operator]
        seconds.append(time.monotonic() - start)
    return round(statistics.median(seconds), 2)


def compressed(daemon: Daemon, tag: str, out: Path) -> int:
    """``docker save TAG | gzip -6`` into ``out``; its size in bytes."""
    with out.open("wb") as sink:
        save = subprocess.Popen(["docker", "save", tag], env=daemon.env, stdout=subprocess.PIPE)
        gzip = subprocess.run(["gzip", "-6"], stdin=save.stdout, stdout=sink, check=True)
        assert save.wait() == 0 and gzip.returncode == 0
    return out.stat().st_size


def load_seconds(tarball: Path, folder: Path) -> float:
    """``docker load`` of ``tarball`` into a new, empty private daemon."""
    fresh = Daemon(folder)
    reason = fresh.start()
    if reason:
        raise SystemExit(f"no second daemon for the load: {reason}")
    try:
        start = time.monotonic()
        fresh.docker("load", "--quiet", "--input", str(tarball))
        return round(time.monotonic() - start, 1)
    finally:
        fresh.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repetitions per timing")
    parser.add_argument("--images", default="slim,smoke", help="which images, comma-separated")
    args = parser.parse_args()
    names = [n for n in args.images.split(",") if n]
    folder = Path(tempfile.mkdtemp(prefix="gate-bench-", dir="/tmp"))
    daemon, reason = Daemon.find(folder / "d")
    if daemon is None:
        raise SystemExit(f"no Docker daemon: {reason}")
    results: dict[str, dict[str, float]] = {}
    try:
        built, reason = build_images(daemon, folder / "d")
        if built is None:
            raise SystemExit(f"images not built: {reason}")
        example = folder / "example"
        example.mkdir()
        build_repo(example)
        for name in names:
            tag = built[name].tag
            dockerfile, action = IMAGES[name]
            image = Image(tag, ROOT / action, ROOT / dockerfile, built[name].seconds)
            [info] = json.loads(daemon.docker("image", "inspect", tag).stdout)

            def version(tag: str = tag) -> None:
                proc = daemon.docker("run", "--rm", tag, "--version")
                assert proc.stdout.strip(), proc.stderr

            def on_example(tag: str = tag) -> None:
                proc = daemon.docker(
                    "run", "--rm", f"--volume={example}:/repo", "--workdir=/repo", tag,
                    "--base", "main", "--head", "HEAD", check=False,
                )  # fmt: skip
                assert proc.returncode == 1 and "FAIL:" in proc.stdout, proc.stdout + proc.stderr

            script = "; ".join([f"python -P -c '{IMPORT}'"] * args.runs)
            imports = daemon.docker("run", "--rm", "--entrypoint=sh", tag, "-c", script).stdout
            starts = []
            for i in range(args.runs):
                pr = make_pr(folder / f"{name}-{i}", {"README.md": "shop, now documented\n"})
                run = docker_run(daemon, image, pr, pr.checkout(), pr_payload(pr))
                assert run.code == 0 and run.outputs["verdict"] == "pass", run.stdout + run.stderr
                starts.append(run.seconds)
            results[name] = {
                "size_mb": round(info["Size"] / 1e6),
                "start_s": timed(version, args.runs),
                "example_s": timed(on_example, args.runs),
                "import_ms": statistics.median(float(x) for x in imports.split()),
                "no_change_pr_s": round(statistics.median(starts), 2),
            }
            print(name, json.dumps(results[name]), flush=True)
        # the pull proxies last: a second daemon runs only once the runs are done
        for name in names:
            tarball = folder / f"{name}.tar.gz"
            results[name]["compressed_mb"] = round(
                compressed(daemon, built[name].tag, tarball) / 1e6
            )
            results[name]["load_s"] = load_seconds(tarball, folder / f"load-{name}")
            tarball.unlink()
            print(name, json.dumps(results[name]), flush=True)
    finally:
        daemon.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
