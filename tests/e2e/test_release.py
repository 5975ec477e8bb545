"""What a release is made of: licence, metadata, the locks, both actions, the workflows, the type check.

The package is built for real (``python -m build --no-isolation``) and its
wheel and sdist are read back, so what PyPI would receive is what is checked.
"""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

import gate

ROOT = Path(__file__).resolve().parent.parent.parent
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def _pyproject() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="python -m build is in the test extra")
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("src") / "src"
    # a clean copy: no .venv or build/ of the working tree in the sdist
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", "benchmarks"
        ),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


# the licence and the package's metadata


def test_license_is_the_full_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License")
    assert "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(text) > 10_000


def test_wheel_metadata_is_pep_639_and_single_sourced(dist: Path) -> None:
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        [meta_name] = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = email.message_from_bytes(zf.read(meta_name))
    assert meta["Name"] == "schema-contract-gate"
    assert meta["Version"] == gate.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert float(meta["Metadata-Version"]) >= 2.4
    assert not [c for c in meta.get_all("Classifier") if c.startswith("License ::")]
    assert "Typing :: Typed" in meta.get_all("Classifier")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
    assert "gate/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    # every runtime dependency has a lower bound
    for requirement in meta.get_all("Requires-Dist"):
        req = Requirement(requirement)
        assert any(s.operator == ">=" for s in req.specifier), requirement


def test_sdist_carries_the_licence_and_the_changelog(dist: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    assert sdist.name == f"schema_contract_gate-{gate.__version__}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"LICENSE", "pyproject.toml", "gate/py.typed", "gate/__init__.py"} <= names


def test_changelog_has_a_section_for_the_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert re.search(rf"^## \[{re.escape(gate.__version__)}\]", text, re.M)


# the locks


def _lock(name: str) -> dict[str, str]:
    text = (ROOT / "locks" / f"{name}.txt").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+) \\$", text, re.M))
    # every pin carries hashes, and nothing else is requested
    entries = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert len(entries) == len(pins), entries
    for block in re.split(r"\n(?=\S)", text):
        if "==" in block and not block.startswith("#"):
            assert "--hash=sha256:" in block, block
    return {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in pins.items()}


def _satisfied(requirements: list[str], pins: dict[str, str]) -> None:
    env = {"python_version": "3.13", "sys_platform": "linux", "platform_system": "Linux"}
    for text in requirements:
        req = Requirement(text)
        if req.marker and not req.marker.evaluate(env):
            continue
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{name} is not in the lock: run scripts/lock.sh"
        assert req.specifier.contains(pins[name], prereleases=True), (text, pins[name])


def test_locks_pin_what_pyproject_asks_for_with_hashes() -> None:
    project = _pyproject()["project"]
    slim, smoke, build = _lock("slim"), _lock("smoke"), _lock("build")
    _satisfied(project["dependencies"], slim)
    _satisfied(project["dependencies"] + project["optional-dependencies"]["spark"], smoke)
    _satisfied(_pyproject()["build-system"]["requires"], build)
    # the smoke image is the slim image plus Spark: the shared pins agree
    assert {k: smoke[k] for k in slim} == slim
    assert {"pyspark", "pyarrow"} <= set(smoke) and "pyspark" not in slim


def test_dockerfiles_install_only_from_the_locks() -> None:
    for name, lock in [("Dockerfile", "slim"), ("smoke.Dockerfile", "smoke")]:
        text = (ROOT / name).read_text()
        assert "--require-hashes --no-deps -r /src/build.txt" in text, name
        assert re.search(rf"--require-hashes --no-deps .*-r /src/{lock}\.txt", text), name
        # every pip call checks hashes or reaches no index at all
        calls = re.findall(r"pip (?:--python \S+ )?(?:install|wheel) [^\\]*", text)
        # the smoke image is the slim image's four, then its own wheel and install
        assert len(calls) == {"Dockerfile": 4, "smoke.Dockerfile": 4 + 2}[name], (name, calls)
        for call in calls:
            assert "--require-hashes" in call or "--no-index" in call, (name, call)
        assert re.search(r"^ARG BASE_IMAGE=debian:trixie-slim@sha256:[0-9a-f]{64}$", text, re.M), (
            name
        )


def _instructions(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_smoke_image_is_the_slim_image_plus_spark() -> None:
    """smoke.Dockerfile repeats the Dockerfile's instructions verbatim, so a daemon that
    built the slim image builds the smoke image from its cached layers."""
    slim = _instructions((ROOT / "Dockerfile").read_text())
    smoke = _instructions((ROOT / "smoke.Dockerfile").read_text())
    assert smoke[: len(slim)] == slim
    extra = smoke[len(slim) :]
    assert extra[0] == "FROM build AS smoke-build" and "FROM slim" in extra
    assert not any(line.startswith("FROM ${BASE_IMAGE}") for line in extra)


# the two actions


def test_the_smoke_action_mirrors_the_default_action() -> None:
    default = yaml.safe_load((ROOT / "action.yml").read_text())
    smoke = yaml.safe_load((ROOT / "smoke" / "action.yml").read_text())
    assert smoke["outputs"] == default["outputs"]
    assert list(smoke["inputs"]) == list(default["inputs"])
    for name, spec in default["inputs"].items():
        if name != "smoke-test":
            assert smoke["inputs"][name] == spec, name
    assert smoke["inputs"]["smoke-test"]["default"] == "true"
    assert default["inputs"]["smoke-test"]["default"] == "false"
    # GitHub builds runs.image relative to action.yml, in the Dockerfile's
    # folder: both images need the repository root as their context
    assert default["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert smoke["runs"] == {"using": "docker", "image": "../smoke.Dockerfile"}
    for action, spec in [(ROOT, default), (ROOT / "smoke", smoke)]:
        dockerfile = (action / spec["runs"]["image"]).resolve()
        assert dockerfile.parent == ROOT and dockerfile.name.endswith("Dockerfile")
    entrypoints = {
        re.search(r"^ENTRYPOINT (.+)$", (ROOT / f).read_text(), re.M).group(1)  # type: ignore[union-attr]
        for f in ("Dockerfile", "smoke.Dockerfile")
    }
    assert entrypoints == {'["python", "-P", "-m", "gate.action"]'}


def test_smoke_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if not hadolint:
        pytest.skip("hadolint is not installed (pip install -e '.[test]')")
    proc = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(ROOT / "smoke.Dockerfile")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# the project's own workflows


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_workflows_pin_every_action_by_sha_with_its_version(name: str) -> None:
    text = (ROOT / ".github" / "workflows" / name).read_text()
    workflow = yaml.safe_load(text)
    assert workflow["permissions"] == {"contents": "read"}  # jobs widen only what they need
    uses = re.findall(r"^\s*(?:- )?uses: (.+)$", text, re.M)
    assert uses
    for ref in uses:
        assert SHA_PIN.match(ref), f"{name}: {ref} is not pinned to a commit with a # vX comment"
    for step in _steps(workflow):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert "persist-credentials" in step.get("with", {}), name
        assert "${{" not in step.get("run", ""), (name, step)  # values go through env:


def test_ci_workflow_runs_ci_run() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    assert {"pull_request", "merge_group", "push"} <= set(workflow[True])
    assert any(step.get("run") == "bash .ci/run" for step in _steps(workflow))


def test_release_workflow_publishes_pypi_ghcr_and_moves_the_major_tag() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert list(workflow[True]) == ["push"] and workflow[True]["push"]["tags"]
    jobs = workflow["jobs"]
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    assert any(
        s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in _steps(workflow)
    )
    images = {i["dockerfile"] for i in jobs["images"]["strategy"]["matrix"]["include"]}
    assert images == {"Dockerfile", "smoke.Dockerfile"}
    assert jobs["images"]["permissions"]["packages"] == "write"
    assert set(jobs["major-tag"]["needs"]) == {"pypi", "images"}
    assert "push --force origin" in jobs["major-tag"]["steps"][-1]["run"]


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_workflows_validate_against_schemastore(name: str) -> None:
    tool = shutil.which("check-jsonschema") or shutil.which(
        "check-jsonschema", path=str(Path(sys.executable).parent)
    )
    if not tool:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    proc = subprocess.run(
        [
            tool,
            "--builtin-schema",
            "vendor.github-workflows",
            str(ROOT / ".github/workflows" / name),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _lint_tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_workflows_pass_actionlint_and_zizmor() -> None:
    files = [str(ROOT / ".github" / "workflows" / n) for n in ("ci.yml", "release.yml")]
    proc = subprocess.run(
        [_lint_tool("actionlint"), "-no-color", *files], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run(
        [_lint_tool("zizmor"), "--offline", "--persona=auditor", "--no-progress", *files],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and "No findings" in proc.stdout + proc.stderr, proc.stdout


# the type check


def test_mypy_is_clean_on_gate() -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


# the release pins both actions to the pushed images (scripts/pin_images.py)

DIGESTS = {"slim": "sha256:" + "a1" * 32, "smoke": "sha256:" + "b2" * 32}


def _pin_images(root: Path, **refs: str) -> subprocess.CompletedProcess[str]:
    given = {
        "slim": f"ghcr.io/acme/schema-contract-gate@{DIGESTS['slim']}",
        "smoke": f"ghcr.io/acme/schema-contract-gate-smoke@{DIGESTS['smoke']}",
        "version": gate.__version__,
        **refs,
    }
    argv = [f"--{key}={value}" for key, value in given.items()]
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "pin_images.py"), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def release_tree(tmp_path: Path) -> Path:
    """The files the pin step reads, copied from this checkout."""
    for name in ("action.yml", "smoke/action.yml", "gate/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    return tmp_path


def test_the_release_pins_both_actions_to_the_pushed_digests(release_tree: Path) -> None:
    proc = _pin_images(release_tree)
    assert proc.returncode == 0, proc.stderr
    version = gate.__version__
    for name, action, image in [
        ("slim", "action.yml", "schema-contract-gate"),
        ("smoke", "smoke/action.yml", "schema-contract-gate-smoke"),
    ]:
        before = (ROOT / action).read_bytes().splitlines(keepends=True)
        after = (release_tree / action).read_bytes().splitlines(keepends=True)
        # one line changed, every other byte kept (comments, order, line endings)
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert len(changed) == 1, (action, changed)
        ref = f"docker://ghcr.io/acme/{image}:{version}@{DIGESTS[name]}"
        assert after[changed[0]] == f"  image: {ref}\n".encode(), action
        # still the same action, now run from the pinned image
        spec = yaml.safe_load(b"".join(after))
        original = yaml.safe_load(b"".join(before))
        assert spec["runs"] == {"using": "docker", "image": ref}
        assert {k: v for k, v in spec.items() if k != "runs"} == {
            k: v for k, v in original.items() if k != "runs"
        }
    tool = shutil.which("check-jsonschema") or shutil.which(
        "check-jsonschema", path=str(Path(sys.executable).parent)
    )
    if tool:  # GitHub's action metadata schema (schemastore), as the workflows are checked
        for action in ("action.yml", "smoke/action.yml"):
            check = subprocess.run(
                [tool, "--builtin-schema", "vendor.github-actions", str(release_tree / action)],
                capture_output=True,
                text=True,
            )
            assert check.returncode == 0, check.stdout + check.stderr
    # a second run refuses: the files are pinned already
    again = _pin_images(release_tree)
    assert again.returncode == 2 and "already pinned" in again.stderr


@pytest.mark.parametrize(
    ("arg", "value", "says"),
    [
        ("slim", "ghcr.io/acme/schema-contract-gate@sha256:abc", "64 lowercase hex"),
        ("slim", "ghcr.io/acme/schema-contract-gate@sha256:" + "A1" * 32, "64 lowercase hex"),
        ("smoke", "ghcr.io/acme/schema-contract-gate-smoke@sha512:" + "b2" * 64, "64 lowercase"),
        ("smoke", "ghcr.io/acme/schema-contract-gate-smoke:latest", "IMAGE@sha256"),
        (
            "slim",
            "ghcr.io/acme/schema-contract-gate@sha256:" + "a1" * 32 + "\n  env: {}",
            "64 lowercase hex",
        ),
        ("slim", "ghcr.io/acme/schema-contract-gate-smoke@" + DIGESTS["smoke"], "must be named"),
        ("smoke", "ghcr.io/Acme/schema-contract-gate-smoke@" + DIGESTS["smoke"], "lowercase"),
        ("version", "9.9.9", "__version__"),
        ("version", "v" + gate.__version__, "X.Y.Z"),
    ],
)
def test_the_pin_step_refuses_a_bad_digest_image_or_version(
    release_tree: Path, arg: str, value: str, says: str
) -> None:
    before = {p: p.read_bytes() for p in release_tree.rglob("*.yml")}
    proc = _pin_images(release_tree, **{arg: value})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("pin_images: ") and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert {p: p.read_bytes() for p in before} == before  # nothing written


def test_the_pin_step_keeps_crlf_and_a_comment_and_refuses_two_image_lines(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import pin_images
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    target = pin_images.TARGETS["slim"]
    ref = f"docker://ghcr.io/acme/schema-contract-gate:1.0.0@{DIGESTS['slim']}"
    text = "name: x\r\nruns:\r\n  using: docker\r\n  image: Dockerfile  # built on branches\r\n"
    assert pin_images.pin_text(text, target, ref, "a.yml") == text.replace("Dockerfile", ref)
    # an image: line outside runs: is not touched
    other = "inputs:\n  image:\n    default: Dockerfile\n" + text.replace("\r\n", "\n")
    pinned = other.replace("image: Dockerfile  #", f"image: {ref}  #")
    assert pinned != other and pin_images.pin_text(other, target, ref, "a.yml") == pinned
    for bad, says in [
        (text + "  image: Dockerfile\r\n", "found 2"),
        (text.replace("runs:", "run:"), "found 0"),
    ]:
        with pytest.raises(pin_images.PinError, match=says):
            pin_images.pin_text(bad, target, ref, "a.yml")


def test_the_release_workflow_pins_the_pushed_digests_before_moving_the_tags() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    jobs = workflow["jobs"]
    push = [s for s in jobs["images"]["steps"] if s.get("id") == "push"]
    assert push and push[0]["uses"].startswith("docker/build-push-action@")
    runs = [s.get("run", "") for s in jobs["major-tag"]["steps"]]
    pin = next(i for i, r in enumerate(runs) if "scripts/pin_images.py" in r)
    tags = next(i for i, r in enumerate(runs) if "push --force origin" in r)
    assert pin < tags and 'git tag --force "$TAG" HEAD' in runs[tags]
    assert jobs["major-tag"]["permissions"] == {"contents": "write"}
