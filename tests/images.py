"""The action's two images, built once per content: by ``.ci/run`` in the background, then by the tests.

Building both images is most of what the container scenarios cost (a Debian
base from mmdebstrap, the locked packages, PySpark), so:

- an image is tagged with a digest of everything it is built from (the build
  context .dockerignore lets through, both Dockerfiles, the base image's id):
  ``schema-contract-gate-slim:ctx-<digest>``. A daemon that already holds that
  tag is not asked to build again (a daemon kept between local runs with
  ``SCHEMA_GATE_DOCKER_HOST``, or the one ``.ci/run`` started);
- one build of an image at a time per daemon: :func:`build` holds a lock per
  image beside the daemon's socket, so the tests wait for a build ``.ci/run``
  started in the background at its very start (while pip, ruff and the rest
  of the suite run), each test only for the image it uses;
- the smoke image is the slim image plus Spark (smoke.Dockerfile repeats the
  Dockerfile's stages verbatim, so the classic builder's cache reuses the slim
  image's layers instead of building them again).

``.ci/run`` drives it from the command line (standard library only, any
``python3`` with pip)::

    python3 -m tests.images up FOLDER      # start a private dockerd in FOLDER, detached
    python3 -m tests.images build FOLDER   # build both images on it (or find them)
    python3 -m tests.images down FOLDER    # stop that dockerd by its pid, delete its data

Each step's wall and CPU time go to FOLDER/timings.jsonl (and stderr); the base
image and the package index run side by side, so their CPU figures overlap.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from tests.dockerd import Daemon, PackageIndex, base_image

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")

#: name -> (Dockerfile, action.yml), built in this order (smoke reuses slim's layers).
IMAGES = {
    "slim": ("Dockerfile", "action.yml"),
    "smoke": ("smoke.Dockerfile", "smoke/action.yml"),
}
#: What .dockerignore lets into the build context (the Dockerfiles are hashed too).
CONTEXT = ("pyproject.toml", "README.md", "LICENSE", "locks", "gate")


@dataclass(frozen=True)
class Built:
    tag: str
    seconds: float  # what this call spent on it: the build, or the wait and the look-up
    reused: bool  # the daemon already held the tag


def context_digest(root: Path = ROOT) -> str:
    """A digest of every file the images are built from (paths and bytes)."""
    digest = hashlib.sha256()
    files: list[Path] = [root / "Dockerfile", root / "smoke.Dockerfile"]
    for name in CONTEXT:
        path = root / name
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            )
        else:
            files.append(path)
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def tag_of(name: str, digest: str) -> str:
    return f"schema-contract-gate-{name}:ctx-{digest}"


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _cgroup_cpu() -> float | None:
    """CPU seconds of this process's cgroup (cgroup v1 cpuacct), when it has one of its own.

    Start the daemon with ``SCHEMA_GATE_DOCKER_CGROUP`` set to that cgroup and the
    figure includes dockerd's layer copies and the build containers, which the
    process's own rusage cannot see.
    """
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "cpuacct" in controllers.split(",") and path != "/":
                usage = Path(f"/sys/fs/cgroup/{controllers}{path}/cpuacct.usage")
                return int(usage.read_text()) / 1e9
    except (OSError, ValueError):
        pass
    return None


class Timer:
    """Wall and CPU time of each step, appended to a JSON-lines file and printed to stderr."""

    def __init__(self, log: Path | None) -> None:
        self.log = log

    def __call__(self, step: str, fn: Callable[[], T]) -> T:
        wall, cpu, group = time.monotonic(), _cpu(), _cgroup_cpu()
        result = fn()
        row: dict[str, object] = {
            "step": step,
            "wall_s": round(time.monotonic() - wall, 1),
            "cpu_s": round(_cpu() - cpu, 1),  # without the daemon's own (not our child)
        }
        after = _cgroup_cpu()
        if group is not None and after is not None:
            row["cgroup_cpu_s"] = round(after - group, 1)
        print(f"images: {json.dumps(row)}", file=sys.stderr, flush=True)
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(json.dumps(row) + "\n")
        return result


def lock_path(daemon: Daemon, name: str) -> Path:
    """One lock per image and daemon: beside its unix socket, else in the caller's folder."""
    host = daemon.host or (f"unix://{daemon.socket}" if not daemon.shared else "")
    if host.startswith("unix://"):
        return Path(host.removeprefix("unix://")).parent / f"images-{name}.lock"
    return daemon.folder / f"images-{name}.lock"


class _Lock:
    """An exclusive ``flock`` on a file, released by :meth:`release` or on exit."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("a")
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def release(self) -> None:
        if not self.handle.closed:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()


def _has(daemon: Daemon, tag: str) -> bool:
    return daemon.docker("image", "inspect", tag, check=False, timeout=60).returncode == 0


def build(
    daemon: Daemon,
    work: Path,
    *,
    only: tuple[str, ...] = tuple(IMAGES),
    root: Path = ROOT,
    timings: Path | None = None,
) -> tuple[dict[str, Built] | None, str]:
    """The images ``only`` names on ``daemon``, found by their content tag or built; (None, why).

    Each image has its own lock, taken in the order of :data:`IMAGES` and let go
    as soon as that image is tagged: the tests that need only the slim image
    start while a build started earlier (``.ci/run``'s) still builds the smoke one.
    """
    start = time.monotonic()
    step = Timer(timings)
    digest = context_digest(root)
    names = [name for name in IMAGES if name in only]
    tags = {name: tag_of(name, digest) for name in names}
    locks: dict[str, _Lock] = {}
    built: dict[str, Built] = {}
    index = PackageIndex(work / "index")
    try:
        for name in names:
            locks[name] = _Lock(lock_path(daemon, name))
        missing = [name for name in names if not _has(daemon, tags[name])]
        for name in names:
            if name not in missing:
                built[name] = Built(tags[name], time.monotonic() - start, True)
                locks[name].release()
        if not missing:
            return built, ""
        # both wait on the network (Debian's archive, PyPI): side by side
        lockfiles = [root / "locks" / f"{name}.txt" for name in ("build", "slim", "smoke")]
        with ThreadPoolExecutor(max_workers=1) as pool:
            download = (
                None
                if (index.folder / "simple").is_dir()  # downloaded by an earlier call
                else pool.submit(step, "package index", lambda: index.download(*lockfiles))
            )
            base, reason = step("base image", lambda: base_image(daemon, root / "Dockerfile", work))
            if download is not None:
                download.result()
        if base is None:
            return None, reason
        url = index.serve()
        for name in missing:
            dockerfile = IMAGES[name][0]
            began = time.monotonic()
            argv = [
                "build",
                "--quiet",
                "--network=host",  # RUN steps reach the index on 127.0.0.1
                f"--build-arg=BASE_IMAGE={base}",
                f"--build-arg=PIP_INDEX_URL={url}",
                f"--tag={tags[name]}",
                f"--file={root / dockerfile}",
                str(root),
            ]
            step(f"build {name}", partial(daemon.docker, *argv))
            built[name] = Built(tags[name], time.monotonic() - began, False)
            locks[name].release()
    finally:
        index.close()
        for lock in locks.values():
            lock.release()
    return built, ""


def _daemon_at(folder: Path) -> Daemon:
    return Daemon(folder, shared=True, host=f"unix://{folder / 'docker.sock'}")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("up", "build", "down"):
        print("usage: python3 -m tests.images up|build|down FOLDER", file=sys.stderr)
        return 2
    command, folder = argv[0], Path(argv[1]).resolve()
    if command == "up":
        reason = Daemon(folder).start()  # detached: it outlives this process
        if reason:
            print(f"images: no private Docker daemon: {reason}", file=sys.stderr)
            return 1
        print(f"unix://{folder / 'docker.sock'}")
        return 0
    if command == "down":
        Daemon(folder).stop()
        return 0
    started = time.monotonic()
    daemon = _daemon_at(folder)
    built, reason = build(daemon, folder, timings=folder / "timings.jsonl")
    if built is None:
        print(f"images: not built: {reason}", file=sys.stderr)
        return 1
    driver = daemon.docker("info", "--format", "{{.Driver}}", check=False).stdout.strip()
    print(
        f"images: {', '.join(b.tag for b in built.values())} ready after "
        f"{time.monotonic() - started:.0f} s (storage driver {driver or 'unknown'})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    raise SystemExit(main(sys.argv[1:]))
