"""Pin both actions to the images a release pushed: ``runs.image`` becomes ``docker://IMAGE:VERSION@DIGEST``.

The release workflow (.github/workflows/release.yml) builds and pushes
``ghcr.io/<owner>/schema-contract-gate`` and ``...-smoke``, then runs::

    python3 scripts/pin_images.py --version 1.4.0 \\
        --slim ghcr.io/acme/schema-contract-gate@sha256:<64 hex> \\
        --smoke ghcr.io/acme/schema-contract-gate-smoke@sha256:<64 hex>

and commits the result on the release tag, as pinned Docker actions do: a job
using ``<owner>/schema-contract-gate@v1`` pulls the image (seconds) instead of
building the Dockerfile (minutes), and the digest makes the tag's content
immutable even if the image tag on GHCR were moved. Branches keep
``image: Dockerfile`` for development.

Only the one ``image:`` line of each file's ``runs:`` block changes, byte for
byte everything else stays (comments, order, line endings): the line is
rewritten in place, no YAML round trip. Anything unexpected (a digest that is
not ``sha256:`` and 64 lowercase hex digits, a version that is not
gate/__init__.py's, an image of another name, a file already pinned, no or
two ``image:`` lines) is an error naming the file and line, exit 2, and no
file is written.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "schema-contract-gate"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
VERSION = re.compile(r"(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)")
# a registry host, then a lowercase path (GitHub owners: letters, digits, hyphens)
IMAGE = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9](?:[a-z0-9-]{0,38})/(?P<name>[a-z0-9-]+)")
RUNS = re.compile(r"^runs:[ \t]*(?:#.*)?$")
IMAGE_LINE = re.compile(r"^(?P<lead>[ \t]+image:[ \t]*)(?P<value>\S+)(?P<tail>[ \t]*(?:#.*)?)$")


class PinError(Exception):
    """A refusal: the message names the file (and line) and what is wrong."""


@dataclass(frozen=True)
class Target:
    action: str  # path of the action.yml, relative to the root
    dockerfile: str  # what its runs.image names on a branch
    image: str  # the image's name on the registry


TARGETS = {
    "slim": Target("action.yml", "Dockerfile", NAME),
    "smoke": Target("smoke/action.yml", "../smoke.Dockerfile", f"{NAME}-smoke"),
}


def package_version(root: Path) -> str:
    """``__version__`` of gate/__init__.py, read as text (the release need not import it)."""
    path = root / "gate" / "__init__.py"
    match = re.search(r'^__version__ = "([^"]+)"$', path.read_text(), re.M)
    if not match:
        raise PinError(f"{path}: no __version__ line")
    return match.group(1)


def reference(kind: str, given: str, version: str) -> str:
    """``IMAGE@sha256:...`` checked, as ``docker://IMAGE:VERSION@sha256:...``."""
    image, sep, digest = given.partition("@")
    if not sep or not DIGEST.fullmatch(digest):
        raise PinError(f"--{kind} {given!r}: expected IMAGE@sha256:<64 lowercase hex digits>")
    match = IMAGE.fullmatch(image)
    if not match:
        raise PinError(f"--{kind} {given!r}: not a lowercase registry/owner/name image")
    if match.group("name") != TARGETS[kind].image:
        raise PinError(f"--{kind} {given!r}: the image must be named {TARGETS[kind].image}")
    return f"docker://{image}:{version}@{digest}"


def pin_text(text: str, target: Target, ref: str, where: str) -> str:
    """``text`` with the ``image:`` line of its top-level ``runs:`` block set to ``ref``."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if RUNS.match(line.rstrip("\r\n"))]
    if len(starts) != 1:
        raise PinError(f"{where}: expected one top-level 'runs:' line, found {len(starts)}")
    found: list[int] = []
    for i in range(starts[0] + 1, len(lines)):
        body = lines[i].rstrip("\r\n")
        if body and not body[0].isspace() and not body.startswith("#"):
            break  # the next top-level key
        if re.match(r"^[ \t]+image:", body):
            found.append(i)
    if len(found) != 1:
        raise PinError(f"{where}: expected one 'image:' line under 'runs:', found {len(found)}")
    index = found[0]
    line = lines[index]
    body = line.rstrip("\r\n")
    match = IMAGE_LINE.match(body)
    if not match:
        raise PinError(f"{where}:{index + 1}: cannot read the image line {body.strip()!r}")
    if match.group("value") != target.dockerfile:
        raise PinError(
            f"{where}:{index + 1}: image is {match.group('value')!r}, expected "
            f"{target.dockerfile!r} (already pinned?)"
        )
    lines[index] = match.group("lead") + ref + match.group("tail") + line[len(body) :]
    return "".join(lines)


def pin(root: Path, version: str, given: dict[str, str]) -> dict[Path, str]:
    """The new text of each action.yml; nothing is written (raises :class:`PinError`)."""
    if not VERSION.fullmatch(version):
        raise PinError(f"--version {version!r}: expected X.Y.Z")
    if version != package_version(root):
        raise PinError(
            f"--version {version} is not gate/__init__.py's __version__ ({package_version(root)})"
        )
    out = {}
    for kind, target in TARGETS.items():
        path = root / target.action
        ref = reference(kind, given[kind], version)
        out[path] = pin_text(path.read_bytes().decode("utf-8"), target, ref, target.action)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the release, X.Y.Z (no v)")
    parser.add_argument("--slim", required=True, help=f"ghcr.io/OWNER/{NAME}@sha256:...")
    parser.add_argument("--smoke", required=True, help=f"ghcr.io/OWNER/{NAME}-smoke@sha256:...")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    args = parser.parse_args(argv)
    try:
        texts = pin(args.root, args.version, {"slim": args.slim, "smoke": args.smoke})
    except (PinError, OSError, UnicodeDecodeError) as exc:
        print(f"pin_images: {exc}", file=sys.stderr)
        return 2
    for path, text in texts.items():
        path.write_bytes(text.encode("utf-8"))
        print(f"{path.relative_to(args.root)}: pinned")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
