"""The action's two images, built and run the way GitHub builds and runs a Docker action.

This is the last step short of GitHub itself: tests/action/test_action.py runs
``python -m gate.action`` as a subprocess; here the real images are built from
``Dockerfile`` (slim, ``uses: <owner>/schema-contract-gate@v1``) and
``smoke.Dockerfile`` (``uses: <owner>/schema-contract-gate/smoke@v1``) on a
private Docker daemon, and started as the runner starts them::

    docker run --workdir /github/workspace --rm -e INPUT_... -e GITHUB_... \\
      -v _temp/_github_home:/github/home -v _temp/_github_workflow:/github/workflow \\
      -v _temp/_runner_file_commands:/github/file_commands \\
      -v <checkout>:/github/workspace <image>

with the checkout owned by the runner's user (uid 1001, not root), a real bare
``origin`` that a shallow checkout fetches from, an event payload file, and a
fake GitHub REST API on 127.0.0.1 (hence ``--network host``: the daemon runs
with ``--bridge=none``). The tests read what the runner reads: the exit code,
the workflow commands, ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY``, and
check that the container left no root-owned file in the workspace.

The daemon, the base image (a stand-in for ``debian:trixie-slim`` built with
mmdebstrap) and the package index come from tests/dockerd.py; where they cannot
(not root, no dockerd, no mmdebstrap) the module is skipped with the reason.
The images come from tests/images.py: found by their content tag where
``.ci/run`` built them in the background (this module then waits for that
build), else built here. Run alone with ``pytest -m docker``; ``.ci/run``
installs what it needs.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.action.test_action import (
    ACK,
    BREAKING_ORDERS,
    CUSTOMERS_PATH,
    ORDERS_PATH,
    PR,
    TOKEN,
    Run,
    assert_outputs,
    customers,
    make_pr,
    parse_outputs,
    pr_payload,
    runner_commands,
)
from tests.dockerd import Daemon, base_image_arg
from tests.fake_github import FakeGitHub
from tests.gitrepo import GitRepo
from tests.images import IMAGES
from tests.images import build as build_images

# The first test of each image also builds it where .ci/run has not (tests/images.py),
# which on two cores takes several minutes.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parent.parent.parent
# The checkout belongs to the runner's user (uid 1001 on GitHub's hosted
# runners) while the container runs as root. As root the tests hand the
# workspace to 1001; otherwise it is already someone other than root's.
RUNNER_UID = 1001 if os.geteuid() == 0 else os.geteuid()
ENTRYPOINT = ["python", "-P", "-m", "gate.action"]


@dataclass(frozen=True)
class Image:
    tag: str
    action: Path  # its action.yml
    dockerfile: Path
    seconds: float  # build time


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    # a short path: the daemon's unix sockets must stay under 108 bytes
    folder = Path(tempfile.mkdtemp(prefix="gate-dockerd-", dir="/tmp"))
    found, reason = Daemon.find(folder)
    try:
        if found is None:
            pytest.skip(f"no Docker daemon: {reason}")
        yield found
    finally:
        if found is not None:
            found.stop()
        shutil.rmtree(folder, ignore_errors=True)


class Images(Mapping[str, Image]):
    """The two images, each found (or built) when a test first asks for it.

    Where ``.ci/run`` builds them in the background, the slim image's tests
    start as soon as it is tagged, while the smoke image is still being built.
    """

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.got: dict[str, Image] = {}

    def __getitem__(self, name: str) -> Image:
        if name not in self.got:
            built, reason = build_images(self.daemon, self.daemon.folder, only=(name,))
            if built is None:
                pytest.skip(f"no base image {base_image_arg(ROOT / 'Dockerfile')[0]}: {reason}")
            dockerfile, action = IMAGES[name]
            self.got[name] = Image(
                built[name].tag, ROOT / action, ROOT / dockerfile, built[name].seconds
            )
        return self.got[name]

    def __iter__(self) -> Iterator[str]:
        return iter(IMAGES)

    def __len__(self) -> int:
        return len(IMAGES)


@pytest.fixture(scope="module")
def images(daemon: Daemon) -> Images:
    """Both images: found by their content tag (built by .ci/run in the background), else built."""
    pinned = base_image_arg(ROOT / "Dockerfile")
    assert base_image_arg(ROOT / "smoke.Dockerfile") == pinned
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", pinned[1]), "the base image is pinned by digest"
    return Images(daemon)


# running a container as the runner does


@dataclass
class Runner:
    """The folders a hosted runner keeps for one job (``_work/_temp``, the checkout)."""

    root: Path

    @property
    def temp(self) -> Path:
        return self.root / "_temp"

    def owned(self, path: Path) -> Path:
        """Create ``path`` (a folder) owned by the runner's user."""
        path.mkdir(parents=True, exist_ok=True)
        _chown(path)
        return path


def _chown(path: Path, *, recursive: bool = False) -> None:
    if os.geteuid() == 0:
        subprocess.run(
            ["chown", *(["-R"] if recursive else []), f"{RUNNER_UID}:{RUNNER_UID}", str(path)],
            check=True,
        )


def spec_inputs(action: Path, **given: str) -> dict[str, str]:
    """INPUT_* for every input of ``action``, defaults filled in, as the runner sets them."""
    env = {}
    for name, spec in yaml.safe_load(action.read_text())["inputs"].items():
        default = str(spec.get("default", ""))
        env[f"INPUT_{name.upper()}"] = "" if "${{" in default else default
    for key, value in given.items():
        env[f"INPUT_{key.replace('_', '-').upper()}"] = value
    return env


def docker_run(
    daemon: Daemon,
    image: Image,
    pr: PR,
    workspace: GitRepo,
    payload: dict[str, Any],
    *,
    api_url: str = "http://127.0.0.1:9",
    extra_env: dict[str, str] | None = None,
    **inputs: str,
) -> Run:
    """Start ``image`` on ``workspace`` exactly as the runner starts a Docker action."""
    runner = Runner(workspace.path.parent / f"runner-{secrets.token_hex(4)}")
    home = runner.owned(runner.temp / "_github_home")
    workflow = runner.owned(runner.temp / "_github_workflow")
    commands = runner.owned(runner.temp / "_runner_file_commands")
    (workflow / "event.json").write_text(json.dumps(payload))
    suffix = secrets.token_hex(8)
    output = commands / f"set_output_{suffix}"
    summary = commands / f"step_summary_{suffix}"
    for path in (output, summary):
        path.touch()
        _chown(path)
    _chown(workspace.path, recursive=True)
    env = {
        **spec_inputs(image.action, **inputs),
        "HOME": "/github/home",
        "GITHUB_JOB": "schema-gate",
        "GITHUB_REF": f"refs/pull/{pr.number}/merge",
        "GITHUB_SHA": pr.merge_sha,
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_REPOSITORY_OWNER": "acme",
        "GITHUB_RUN_ID": "1",
        "GITHUB_RUN_NUMBER": "1",
        "GITHUB_RETENTION_DAYS": "90",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_ACTOR": "dev",
        "GITHUB_WORKFLOW": "schema contract gate",
        "GITHUB_HEAD_REF": "feature",
        "GITHUB_BASE_REF": "main",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": api_url,
        "GITHUB_GRAPHQL_URL": f"{api_url}/graphql",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_ACTION": "gate",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_ACTION_REPOSITORY": "",
        "GITHUB_ACTION_REF": "",
        "GITHUB_PATH": f"/github/file_commands/add_path_{suffix}",
        "GITHUB_ENV": f"/github/file_commands/set_env_{suffix}",
        "GITHUB_STEP_SUMMARY": f"/github/file_commands/step_summary_{suffix}",
        "GITHUB_STATE": f"/github/file_commands/save_state_{suffix}",
        "GITHUB_OUTPUT": f"/github/file_commands/set_output_{suffix}",
        "RUNNER_OS": "Linux",
        "RUNNER_ARCH": "X64",
        "RUNNER_NAME": "GitHub Actions 1",
        "RUNNER_ENVIRONMENT": "github-hosted",
        "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache",
        "RUNNER_TEMP": "/home/runner/work/_temp",
        "RUNNER_WORKSPACE": "/home/runner/work/shop",
        "ACTIONS_RUNTIME_URL": "",
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        **(extra_env or {}),
    }
    argv = [
        "run",
        f"--name=gate-{suffix}",
        "--label=schema-contract-gate-test",
        "--workdir=/github/workspace",
        "--rm",
        "--network=host",  # the fake API listens on the host's 127.0.0.1
        *(f"--env={name}" for name in env),  # values come from the client's environment
        f"--volume={home}:/github/home",
        f"--volume={workflow}:/github/workflow",
        f"--volume={commands}:/github/file_commands",
        f"--volume={workspace.path}:/github/workspace",
        # origin is a bare repository on this machine: mounted where the
        # checkout's remote URL points, as github.com is reachable on a runner
        f"--volume={pr.origin}:{pr.origin}:ro",
        image.tag,
    ]
    start = time.monotonic()
    proc = subprocess.run(
        ["docker", *argv],
        env={**daemon.env, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    return Run(
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=parse_outputs(output.read_text()),
        summary=summary.read_text(),
        workspace=workspace.path,
        seconds=time.monotonic() - start,
        commands=runner_commands(proc.stdout),
    )


def root_owned(workspace: Path) -> list[str]:
    """Files in the checkout that the runner's user could no longer change."""
    return [
        str(p.relative_to(workspace))
        for p in [workspace, *workspace.rglob("*")]
        if p.lstat().st_uid != RUNNER_UID or p.lstat().st_gid != RUNNER_UID
    ]


def is_shallow(repo: GitRepo) -> bool:
    return repo.git("rev-parse", "--is-shallow-repository").strip() == "true"


# the slim image


def test_the_slim_image_has_no_spark_and_says_what_to_use(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    run = docker_run(
        daemon, images["slim"], pr, ws, pr_payload(pr, body=ACK), **{"smoke-test": "true"}
    )
    assert run.code == 2, run.stdout + run.stderr
    assert_outputs(run, verdict="error")
    assert "PySpark" in run.summary and "schema-contract-gate/smoke@" in run.summary
    assert "pip install" not in run.summary
    assert root_owned(ws.path) == []


# pull requests, end to end


def test_breaking_pr_in_a_shallow_checkout_fails_with_annotations_outputs_and_summary(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS}, feature_commits=2, main_commits=2)
    ws = pr.checkout(depth=1)  # actions/checkout's default
    assert is_shallow(ws)
    # the current description has no acknowledgement (the replayed payload had one)
    with FakeGitHub(pull_body="no ack") as api:
        run = docker_run(
            daemon,
            images["slim"],
            pr,
            ws,
            pr_payload(pr, body=ACK),
            api_url=api.url,
            **{"github-token": TOKEN},
        )
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="2", acknowledged="0", verdict="fail")
    assert run.outputs["report"] == ".schema-gate/report.json"
    report = run.report()
    assert report["base"]["sha"] == pr.base_sha  # fetched from origin into the shallow clone
    narrowed = [e for e in run.annotations("error") if "title=type_narrowed" in e]
    assert narrowed and narrowed[0].startswith(f"::error file={ORDERS_PATH},line=5,")
    assert any("title=column_removed" in e for e in run.annotations("error"))
    assert run.verdict_line.startswith("::error title=schema-contract-gate::FAIL: 2 unacknowledged")
    assert run.summary.startswith("## Schema contract gate: ❌ failed")
    assert "accept-breaking-change: lake/shop/orders" in run.summary
    # the live description was read with the token, which went nowhere else
    assert api.requests[0].method == "GET" and api.requests[0].path == "/repos/acme/shop/pulls/1"
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in api.requests)
    assert TOKEN not in run.everything()
    # the sticky PR comment, through the container's network
    [comment] = api.ours()
    assert "## Schema contract gate: ❌ failed" in comment["body"]
    assert run.outputs["comment-url"] == comment["html_url"]
    # git as root in the container: fetched objects and the report belong to the runner
    assert root_owned(ws.path) == []
    ws.git("-c", "safe.directory=*", "cat-file", "-e", f"{pr.base_sha}^{{commit}}")


def test_a_check_run_carries_120_annotations_in_3_requests(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    from tests.action.test_action_check_run import narrowed

    pr = narrowed(tmp_path, 120)
    ws = pr.checkout()
    with FakeGitHub(pull_body="no ack", checks=True) as api:
        run = docker_run(
            daemon,
            images["slim"],
            pr,
            ws,
            pr_payload(pr, body="no ack"),
            api_url=api.url,
            **{"github-token": TOKEN, "comment": "false"},
        )
    assert run.code == 1, run.stdout + run.stderr
    writes = api.check_writes()
    assert [(w.method, len(w.body["output"]["annotations"])) for w in writes] == [
        ("POST", 50),
        ("PATCH", 50),
        ("PATCH", 20),
    ]
    [check] = api.check_runs
    assert check["head_sha"] == pr.head_sha and check["conclusion"] == "failure"
    assert len(check["output"]["annotations"]) == 120
    assert not [c for c in run.commands if " file=" in c]  # all on the check run
    assert "120 annotation(s) on the check run" in run.verdict_line
    assert TOKEN not in run.everything()
    assert root_owned(ws.path) == []


def test_a_comment_and_a_summary_past_their_limits_are_cut(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    from tests.action.test_action_check_run import narrowed

    pr = narrowed(tmp_path, 2600, name_length=400)  # a 1.4 MB report
    ws = pr.checkout()
    with FakeGitHub(pull_body="no ack") as api:  # no checks: write: workflow commands
        run = docker_run(
            daemon,
            images["slim"],
            pr,
            ws,
            pr_payload(pr, body="no ack"),
            api_url=api.url,
            **{"github-token": TOKEN},
        )
    assert run.code == 1, run.stdout + run.stderr
    [comment] = api.ours()
    for text, limit in ((comment["body"], 65_536), (run.summary, 1024 * 1024)):
        assert len(text.encode("utf-8")) <= limit
        shown = text.count("| ❌ |")
        assert 0 < shown < 2600 and f"{2600 - shown} finding(s) left out" in text
        assert "`.schema-gate/report.json`" in text
    assert any("no check run (HTTP 403" in n for n in run.annotations("notice"))
    assert run.report()["summary"]["breaking"] == 2600
    assert root_owned(ws.path) == []


def test_acknowledged_pr_passes(daemon: Daemon, images: dict[str, Image], tmp_path: Path) -> None:
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout()
    with FakeGitHub(pull_body=f"Retiring the note column.\r\n\r\n{ACK}\r\n") as api:
        run = docker_run(
            daemon,
            images["slim"],
            pr,
            ws,
            pr_payload(pr, body="old body", action="edited"),
            api_url=api.url,
            **{"github-token": TOKEN},
        )
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="0", acknowledged="2", verdict="pass")
    assert run.annotations("warning") and not run.annotations("error")
    assert run.summary.startswith("## Schema contract gate: ✅")
    assert root_owned(ws.path) == []


def test_pr_without_contract_changes_passes_and_ignores_code_in_the_workspace(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    marker = "/github/workspace/pwned"
    trap = f"open({marker!r}, 'w').close()\n"
    pr = make_pr(
        tmp_path,
        {"README.md": "shop, now documented\n", "gate/__init__.py": trap, "yaml.py": trap},
    )
    ws = pr.checkout()
    run = docker_run(daemon, images["slim"], pr, ws, pr_payload(pr))
    assert run.code == 0, run.stdout + run.stderr
    assert_outputs(run, breaking="0", unacknowledged="0", acknowledged="0", verdict="pass")
    assert not (ws.path / "pwned").exists()
    assert root_owned(ws.path) == []


# the image outside Actions: the command line


def test_the_image_outside_actions_runs_the_cli(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    """``docker run --rm -v "$PWD:/repo" -w /repo IMAGE --base origin/main``, as documented.

    No GITHUB_ACTIONS, so no Action and no silent "skipped": the CLI, its exit codes,
    on a checkout owned by another user than the container's root.
    """
    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    breaking = pr.checkout()
    clean = pr.checkout("clean")
    clean.git("checkout", "-q", "--detach", "origin/main")
    image = images["slim"]

    def cli(ws: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
        _chown(ws.path, recursive=True)
        return daemon.docker(
            "run", "--rm", f"--volume={ws.path}:/repo", "--workdir=/repo", image.tag, *args,
            check=False,
        )  # fmt: skip

    note = "not in GitHub Actions (GITHUB_ACTIONS is not 'true'): running the command line"
    proc = cli(breaking, "--base", "origin/main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert note in proc.stderr and "dubious ownership" not in proc.stderr
    assert "column_removed lake/shop/orders.note" in proc.stdout
    assert "skipped" not in proc.stdout + proc.stderr
    assert root_owned(breaking.path) == []
    proc = cli(breaking, "--base", "origin/main", "--accept", "shop.orders")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cli(clean, "--base", "origin/main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert root_owned(clean.path) == []
    proc = cli(clean, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: schema-gate"), proc.stderr
    proc = cli(clean)  # no arguments at all: the CLI's defaults, never the Action's "skipped"
    assert note in proc.stderr and "skipped" not in proc.stdout + proc.stderr


# the merge queue


def test_merge_group_takes_the_acks_of_the_queued_pr(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    from tests.action.test_merge_queue import QUEUE_REFS, group_payload

    pr = make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})
    ws = pr.checkout(depth=1)  # the queue branch's head, as actions/checkout leaves it
    payload = group_payload(pr.base_sha, pr.merge_sha)
    queue = {
        "GITHUB_EVENT_NAME": "merge_group",
        "GITHUB_REF": payload["merge_group"]["head_ref"],
        "GITHUB_SHA": pr.merge_sha,
        "GITHUB_HEAD_REF": "",
        "GITHUB_BASE_REF": "",
    }
    with FakeGitHub(pull_body=f"Retiring the note column.\r\n\r\n{ACK}\r\n") as api:
        run = docker_run(
            daemon,
            images["slim"],
            pr,
            ws,
            payload,
            api_url=api.url,
            extra_env=queue,
            **{"github-token": TOKEN},
        )
        assert run.code == 0, run.stdout + run.stderr
        assert_outputs(run, breaking="2", acknowledged="2", unacknowledged="0", verdict="pass")
        assert run.report()["base"]["sha"] == pr.base_sha  # fetched into the shallow clone
        # The queued PR's description, then the queue's branches (no other PR batched
        # with it here) are the only reads; the check run is tried too (refused here:
        # the fake token has no checks: write) and falls back.
        reads = [(r.method, r.path) for r in api.requests if not r.path.endswith("/check-runs")]
        assert reads == [("GET", "/repos/acme/shop/pulls/1"), ("GET", QUEUE_REFS)]
        assert TOKEN not in run.everything()
        assert root_owned(ws.path) == []
        # without the token the queue run fails closed, it is never "skipped"
        run = docker_run(daemon, images["slim"], pr, ws, payload, api_url=api.url, extra_env=queue)
    assert run.code == 2, run.stdout + run.stderr
    assert_outputs(run, verdict="error")
    assert "needs the github-token input" in run.verdict_line
    # no request of its own: the two reads (and the check run tried) came from the run above
    assert len([r for r in api.requests if not r.path.endswith("/check-runs")]) == 2


# approval by owners: the re-run a review triggers


def test_a_pull_request_review_event_approves_or_with_a_dismissed_review_blocks(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    """The example workflow also runs on ``pull_request_review`` (submitted, dismissed).

    The base side's config asks for an approval by ``@carol`` (or ``@acme/data``)
    and no longer takes the description line; the review event's run reads the
    reviews through the API, as a runner would run the slim image on that event.
    """
    from tests.action.test_action_approvals import make

    pr = make(tmp_path)

    def run_on(action: str, state: str, name: str) -> Run:
        payload = {
            **pr_payload(pr, body=ACK),  # the description line does not suffice here
            "action": action,
            "review": {"state": state, "user": {"login": "carol"}, "commit_id": pr.head_sha},
        }
        return docker_run(
            daemon,
            images["slim"],
            pr,
            pr.checkout(name),
            payload,
            api_url=api.url,
            extra_env={"GITHUB_EVENT_NAME": "pull_request_review"},
            **{"github-token": TOKEN, "comment": "false"},
        )

    with FakeGitHub(pull_body=ACK) as api:
        approval = api.add_review("carol", "APPROVED", pr.head_sha)
        run = run_on("submitted", "approved", "approved")
        assert run.code == 0, run.stdout + run.stderr
        assert_outputs(run, breaking="2", unacknowledged="0", verdict="pass")
        changes = [c for c in run.report()["changes"] if c["breaking"]]
        assert changes and all(c["approvals"]["received"] == ["@carol"] for c in changes)
        assert ("GET", "/repos/acme/shop/pulls/1/reviews") in [
            (r.method, r.path.split("?")[0]) for r in api.requests
        ]
        assert TOKEN not in run.everything()
        assert root_owned(run.workspace) == []
        # GitHub marks the same review DISMISSED and sends the event again
        approval["state"] = "DISMISSED"
        run = run_on("dismissed", "dismissed", "dismissed")
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, breaking="2", unacknowledged="2", verdict="fail")
    changes = [c for c in run.report()["changes"] if c["breaking"]]
    assert all(c["approvals"]["missing"] and not c["approvals"]["received"] for c in changes)
    assert root_owned(run.workspace) == []


# both images: last, since .ci/run may still be building the smoke one


def test_both_images_share_the_entrypoint_and_the_settings_github_relies_on(
    daemon: Daemon, images: dict[str, Image]
) -> None:
    for name, image in images.items():
        spec = yaml.safe_load(image.action.read_text())
        assert spec["runs"]["using"] == "docker"
        # the runner builds runs.image relative to action.yml, with the
        # Dockerfile's folder as the build context
        assert (image.action.parent / spec["runs"]["image"]).resolve() == image.dockerfile
        [config] = json.loads(daemon.docker("image", "inspect", image.tag).stdout)
        config = config["Config"]
        assert config["Entrypoint"] == ENTRYPOINT, name
        assert not config.get("User"), name  # root, to read the checkout
        assert not config.get("WorkingDir"), name  # GitHub passes --workdir
        assert "PYTHONSAFEPATH=1" in config["Env"], name


def _installed(daemon: Daemon, image: Image) -> dict[str, str]:
    script = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): d.version "
        "for d in m.distributions()}))"
    )
    proc = daemon.docker("run", "--rm", "--entrypoint=python", image.tag, "-c", script)
    return json.loads(proc.stdout)


def _locked(lock: Path) -> dict[str, str]:
    return {
        name.lower().replace("_", "-"): version
        for name, version in re.findall(r"^([A-Za-z0-9._-]+)==(\S+) \\$", lock.read_text(), re.M)
    }


def test_images_hold_exactly_the_locked_packages(daemon: Daemon, images: dict[str, Image]) -> None:
    from gate import __version__

    for name, image in images.items():
        installed = _installed(daemon, image)
        assert installed.pop("schema-contract-gate") == __version__
        assert installed == _locked(ROOT / "locks" / f"{name}.txt"), name
    assert images["slim"].seconds > 0 and images["smoke"].seconds > 0


def test_smoke_image_runs_the_smoke_test_in_spark(
    daemon: Daemon, images: dict[str, Image], tmp_path: Path
) -> None:
    sample = "order_id,customer_id,amount,status,channel\n1,99999999999,1.50,paid,web\n"
    pr = make_pr(
        tmp_path,
        {
            ORDERS_PATH: BREAKING_ORDERS,
            CUSTOMERS_PATH: customers(),
            "samples/lake.shop.orders.csv": sample,
        },
    )
    ws = pr.checkout()
    run = docker_run(
        daemon,
        images["smoke"],
        pr,
        ws,
        pr_payload(pr, body=ACK),
        **{"sample-data": "samples"},
    )
    # the break is acknowledged, but the narrowed id does not hold the sample's value
    assert run.code == 1, run.stdout + run.stderr
    assert_outputs(run, acknowledged="2", unacknowledged="0", verdict="fail")
    assert run.report()["smoke"]["failed"] is True
    assert "Smoke test" in run.summary
    [smoke] = [a for a in run.annotations("error") if "title=smoke coercion" in a]
    assert smoke.startswith(f"::error file={ORDERS_PATH},line=5,")
    assert root_owned(ws.path) == []
