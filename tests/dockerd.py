"""A private Docker daemon, a stand-in base image and a local package index, for the image tests.

The action's images are built and run here the way GitHub builds and runs them,
on a machine that reaches only Debian's and PyPI's registries:

- :class:`Daemon` starts Debian's ``dockerd`` with its own data root and socket
  (``--iptables=false --bridge=none``, so it leaves the host's network alone;
  ``--storage-driver=overlay2`` where the kernel mounts an overlay there, else
  ``vfs``, which needs no kernel support: :func:`storage_driver`) and stops it by
  its pid. Nothing outside its temporary folder is touched, and another
  daemon on the machine is not used.
- :func:`import_base_image` builds the base image the Dockerfiles name
  (``debian:trixie-slim``) from Debian's archive with ``mmdebstrap
  --variant=minbase`` and ``docker import``s it under that name, because
  Docker Hub cannot be reached. The Dockerfiles pin the real image by digest;
  the tests pass the tag as the ``BASE_IMAGE`` build argument.
- :class:`PackageIndex` downloads exactly the files the hashed locks name
  (``pip download --require-hashes``) and serves them as a PEP 503 index on
  127.0.0.1, passed to the builds as ``PIP_INDEX_URL``. The builds still check
  every hash; the index only spares the container the machine's TLS setup and
  a second download of PySpark.

Where a runner already has a Docker daemon and reaches Docker Hub (GitHub's
hosted runners), :meth:`Daemon.find` uses that daemon and :func:`base_image`
pulls the pinned image itself. Each returns a reason string instead of
raising where the machine cannot do it (no daemon, no dockerd or not root,
no mmdebstrap), so the tests skip with that reason.
"""

from __future__ import annotations

import hashlib
import html
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEBIAN_MIRROR = os.environ.get("SCHEMA_GATE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
DEBIAN_SECURITY = os.environ.get(
    "SCHEMA_GATE_DEBIAN_SECURITY", "http://deb.debian.org/debian-security"
)


def base_image_arg(dockerfile: Path) -> tuple[str, str]:
    """The ``BASE_IMAGE`` default of a Dockerfile, split into (name:tag, digest)."""
    match = re.search(r"^ARG BASE_IMAGE=(\S+)$", dockerfile.read_text(), re.M)
    if not match:
        raise AssertionError(f"{dockerfile}: no ARG BASE_IMAGE=... line")
    name, _, digest = match.group(1).partition("@")
    return name, digest


class Daemon:
    """``dockerd`` on a private socket for the lifetime of a test module, or the machine's own.

    ``Daemon(folder)`` is a private daemon to :meth:`start`; ``Daemon(folder,
    shared=True)`` talks to whatever daemon the environment points ``docker``
    at (a CI runner's), and :meth:`stop` leaves that one running.
    """

    def __init__(self, folder: Path, *, shared: bool = False, host: str = "") -> None:
        self.folder = folder
        self.shared = shared
        self.host = host
        self.socket = folder / "docker.sock"
        self.log = folder / "dockerd.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.driver = ""  # the storage driver a started private daemon runs on

    @classmethod
    def find(cls, folder: Path) -> tuple[Daemon | None, str]:
        """A private daemon where this process may start one, else the machine's; or why neither.

        ``SCHEMA_GATE_DOCKER_HOST`` names a daemon to use instead (one you keep
        running between runs, so that its build cache makes rebuilds quick).
        """
        host = os.environ.get("SCHEMA_GATE_DOCKER_HOST", "")
        if host:
            given = cls(folder, shared=True, host=host)
            if given.docker("info", check=False, timeout=20).returncode == 0:
                return given, ""
            return None, f"SCHEMA_GATE_DOCKER_HOST={host} does not answer"
        private = cls(folder)
        reason = private.start()
        if reason is None:
            return private, ""
        shared = cls(folder, shared=True)
        if (
            shutil.which("docker")
            and shared.docker("info", check=False, timeout=20).returncode == 0
        ):
            return shared, ""
        return None, reason

    @property
    def env(self) -> dict[str, str]:
        """The environment for ``docker`` commands: this daemon, the classic builder."""
        env = dict(os.environ)
        if self.host:
            env["DOCKER_HOST"] = self.host
        elif not self.shared:
            env["DOCKER_HOST"] = f"unix://{self.socket}"
        # Debian's docker.io has no buildx; the classic builder is also what the
        # Dockerfiles are written for (no RUN --mount, no heredocs).
        env["DOCKER_BUILDKIT"] = "0"
        env.pop("DOCKER_CONTEXT", None)
        return env

    def start(self, timeout: float = 90.0) -> str | None:
        """Start the daemon; the reason it cannot run, or None once it answers.

        On :func:`storage_driver`'s choice; where dockerd will not run on
        overlay2 after all, once more on vfs.
        """
        if sys.platform != "linux":
            return f"Docker scenarios need Linux (this is {sys.platform})"
        if os.geteuid() != 0:
            return "starting dockerd needs root (the CI machine runs as root)"
        dockerd = shutil.which("dockerd")
        if not dockerd or not shutil.which("docker"):
            return "dockerd/docker not installed (Debian: apt-get install docker.io)"
        self.folder.mkdir(parents=True, exist_ok=True)
        driver = storage_driver(self.folder)
        reason = self._start(dockerd, driver, timeout)
        if reason is not None and driver != "vfs":
            self.stop()
            driver = "vfs"
            reason = self._start(dockerd, driver, timeout)
        if reason is None:
            self.driver = driver
        return reason

    def _start(self, dockerd: str, driver: str, timeout: float) -> str | None:
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    dockerd,
                    f"--storage-driver={driver}",
                    "--iptables=false",
                    "--ip-masq=false",
                    "--bridge=none",
                    f"--data-root={self.folder / 'data'}",
                    f"--exec-root={self.folder / 'exec'}",
                    f"--pidfile={self.folder / 'dockerd.pid'}",
                    f"--host=unix://{self.socket}",
                    # to measure what the builds cost: containers' CPU under a given cgroup
                    *(
                        [f"--cgroup-parent={os.environ['SCHEMA_GATE_DOCKER_CGROUP']}"]
                        if os.environ.get("SCHEMA_GATE_DOCKER_CGROUP")
                        else []
                    ),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"dockerd ({driver}) exited with {self.proc.returncode}: {self.tail()}"
            if self.docker("info", check=False, timeout=20).returncode == 0:
                return None
            time.sleep(0.5)
        self.stop()
        return f"dockerd ({driver}) did not answer within {timeout:.0f} s: {self.tail()}"

    def tail(self, lines: int = 5) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def docker(
        self, *args: str, check: bool = True, timeout: float = 1800, **kwargs: object
    ) -> subprocess.CompletedProcess[str]:
        """``docker ARGS`` against this daemon; a failure raises with the output."""
        proc = subprocess.run(
            ["docker", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,  # type: ignore[call-overload]
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"docker {' '.join(args[:3])} ... failed ({proc.returncode}):\n"
                f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    def stop(self) -> None:
        """Stop a private daemon by its pid (its containerd goes with it) and delete its data."""
        if self.shared:
            return
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        elif self.proc is None:
            self._stop_by_pidfile()  # started by another process (tests/images.py up)
        self.proc = None
        # dockerd leaves its network namespace mounted under the exec root
        prefix = str(self.folder) + "/"
        with open("/proc/self/mounts") as mounts:
            points = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
        for point in sorted(points, reverse=True):
            subprocess.run(["umount", "--lazy", point], check=False, capture_output=True)
        shutil.rmtree(self.folder / "data", ignore_errors=True)
        shutil.rmtree(self.folder / "exec", ignore_errors=True)

    def _stop_by_pidfile(self) -> None:
        pidfile = self.folder / "dockerd.pid"
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:  # only if that pid is still a dockerd (not a recycled pid)
            if Path(f"/proc/{pid}/comm").read_text().strip() != "dockerd":
                return
            os.kill(pid, signal.SIGTERM)
        except OSError:
            return
        deadline = time.monotonic() + 60
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
            time.sleep(1)


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left to a parent that does not reap is not running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


#: Set to ``vfs`` (or another driver) to override :func:`storage_driver`'s choice.
STORAGE_DRIVER_ENV = "SCHEMA_GATE_DOCKER_STORAGE"


def storage_driver(folder: Path) -> str:
    """``overlay2`` where the kernel mounts an overlay file system in ``folder``, else ``vfs``.

    vfs needs nothing from the kernel but copies an image's whole file system
    for every build step and every container: the smoke image's 1 GB for each
    ``docker run``, and the file system so far for each instruction of a
    build. That copying was most of the CPU the image tests cost (measured
    in docs/github-action.md); overlay2 stacks the layers instead. The images
    are the same on either driver (a driver stores layers, it does not make them).
    """
    chosen = os.environ.get(STORAGE_DRIVER_ENV, "").strip()
    if chosen:
        return chosen
    probe = folder / "overlay-probe"
    merged = probe / "merged"
    try:
        for part in ("lower", "upper", "work", "merged"):
            (probe / part).mkdir(parents=True, exist_ok=True)
        options = f"lowerdir={probe / 'lower'},upperdir={probe / 'upper'},workdir={probe / 'work'}"
        mount = subprocess.run(
            ["mount", "-t", "overlay", "overlay", "-o", options, str(merged)],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if mount.returncode != 0:
            return "vfs"
        subprocess.run(["umount", str(merged)], capture_output=True, timeout=30, check=False)
        return "overlay2"
    except (OSError, subprocess.SubprocessError):
        return "vfs"
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def base_image(daemon: Daemon, dockerfile: Path, folder: Path) -> tuple[str | None, str]:
    """The ``BASE_IMAGE`` to build with: the pinned image where it can be pulled, else a stand-in.

    Returns (image, "") or (None, why there is none).
    """
    name, digest = base_image_arg(dockerfile)
    pinned = f"{name}@{digest}"
    if daemon.docker("pull", "--quiet", pinned, check=False, timeout=600).returncode == 0:
        return pinned, ""
    if daemon.docker("image", "inspect", name, check=False).returncode == 0:
        # the stand-in built earlier: in this run (a private daemon starts empty),
        # or a kept daemon's from an earlier run, whose build cache holds
        return name, ""
    reason = import_base_image(daemon, name, folder)
    return (None, reason) if reason else (name, "")


def import_base_image(daemon: Daemon, name: str, folder: Path) -> str | None:
    """Build ``name`` (a Debian ``<suite>-slim`` tag) with mmdebstrap; the reason if it cannot."""
    mmdebstrap = shutil.which("mmdebstrap")
    if not mmdebstrap:
        return "mmdebstrap not installed (Debian: apt-get install mmdebstrap)"
    match = re.fullmatch(r"debian:([a-z]+)-slim", name)
    if not match:
        return f"no recipe for a stand-in of {name}"
    suite = match.group(1)
    tarball = folder / f"{suite}.tar"
    # What the official -slim images change: dpkg leaves out docs, man pages and
    # translations, and apt deletes the packages it downloaded (docker-clean).
    clean = folder / "docker-clean"
    clean.write_text(_DOCKER_CLEAN)
    slim = [
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        "--dpkgopt=path-exclude=/usr/share/info/*",
        f"--customize-hook=upload {clean} /etc/apt/apt.conf.d/docker-clean",
        # with docker-clean in place mmdebstrap's own `apt-get clean` keeps them
        '--customize-hook=rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/cache/apt/*.bin',
    ]
    proc = subprocess.run(
        [
            mmdebstrap,
            "--variant=minbase",
            "--quiet",
            *slim,
            suite,
            str(tarball),
            f"deb {DEBIAN_MIRROR} {suite} main",
            f"deb {DEBIAN_MIRROR} {suite}-updates main",
            f"deb {DEBIAN_SECURITY} {suite}-security main",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0:
        return f"mmdebstrap {suite} failed: {proc.stderr.strip().splitlines()[-3:]}"
    daemon.docker("import", "--change", 'CMD ["bash"]', str(tarball), name)
    tarball.unlink()
    return None


_CLEAN = (
    "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb"
    " /var/cache/apt/*.bin || true"
)
_DOCKER_CLEAN = (
    f'DPkg::Post-Invoke {{ "{_CLEAN}"; }};\n'
    f'APT::Update::Post-Invoke {{ "{_CLEAN}"; }};\n'
    'Dir::Cache::pkgcache "";\n'
    'Dir::Cache::srcpkgcache "";\n'
)


def _project(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class PackageIndex:
    """The files of the hashed locks, served as a PEP 503 index on 127.0.0.1."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files = folder / "files"
        self.server: ThreadingHTTPServer | None = None

    def download(self, *locks: Path, python_version: str = "3.13") -> None:
        """``pip download`` what the locks pin, for the images' Python, hashes checked."""
        machine = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64"}.get(
            platform.machine().lower(), platform.machine().lower()
        )
        abi = "cp" + python_version.replace(".", "")
        for lock in locks:
            proc = self._download(lock, python_version, abi, machine)
            if proc.returncode != 0:  # once more, after a dropped connection
                proc = self._download(lock, python_version, abi, machine)
            if proc.returncode != 0:
                # the reason, not the pip configuration's notes about missing local indexes
                lines = [
                    line
                    for line in proc.stderr.splitlines()
                    if not line.startswith("WARNING: Location ")
                ]
                reason = "\n".join(lines)[-3000:]
                raise AssertionError(f"pip download -r {lock.name} failed twice: {reason}")
        self._write_pages()

    def _download(
        self, lock: Path, python_version: str, abi: str, machine: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--require-hashes",
                "--dest",
                str(self.files),
                "--python-version",
                python_version,
                "--implementation",
                "cp",
                "--abi",
                abi,
                "--abi",
                "abi3",
                "--abi",
                "none",
                # pip matches --platform tags literally: name every
                # manylinux level trixie's glibc (2.41) runs
                *(
                    f"--platform=manylinux_2_{minor}_{machine}"
                    for minor in (17, 24, 26, 27, 28, 31, 34, 35, 36, 38, 39, 41)
                ),
                f"--platform=manylinux2014_{machine}",
                "--platform=any",
                "-r",
                str(lock),
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )

    def _write_pages(self) -> None:
        projects: dict[str, list[Path]] = {}
        for path in sorted(self.files.iterdir()):
            name = re.split(r"-\d", path.name, maxsplit=1)[0]
            projects.setdefault(_project(name), []).append(path)
        simple = self.folder / "simple"
        for project, paths in projects.items():
            page = simple / project
            page.mkdir(parents=True, exist_ok=True)
            links = []
            for path in paths:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                href = html.escape(f"../../files/{path.name}#sha256={digest}")
                links.append(f'<a href="{href}">{html.escape(path.name)}</a><br>')
            page.joinpath("index.html").write_text(
                "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
            )

    def serve(self) -> str:
        """Start serving; the index URL (``http://127.0.0.1:PORT/simple``)."""
        handler = partial(_QuietHandler, directory=str(self.folder))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple"

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass
