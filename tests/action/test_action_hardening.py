"""Attacks on the Action's edges (issue #8, "The Action"), each performed for real.

- JSON nested 100,000 deep, from a real HTTP server on 127.0.0.1 (the API
  answer) and in the event payload file: no traceback; the API case falls back
  to the payload's description as documented, the payload case is exit 2.
- A FIFO (and other non-regular files) where the JSON report goes: refused,
  never waited on (a blocked ``open`` would hang the job until its timeout).
- An API server that trickles its answer a byte at a time: a per-read socket
  timeout never fires, so the request needs a total deadline.

The workspaces, origins and payloads are the ones ``tests/action/test_action.py``
builds for its end-to-end runs.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gate.action.bounded_json import JsonError, loads, nests_deeper_than
from tests.action.test_action import (
    ACK,
    BREAKING_ORDERS,
    ORDERS_PATH,
    PR,
    TOKEN,
    _Handler,
    fake_github,
    make_pr,
    pr_payload,
    run_action,
    with_api,
)

DEEP = 100_000


@pytest.fixture
def pr(tmp_path: Path) -> PR:
    """A pull request with two breaking changes, as in tests/action/test_action.py."""
    return make_pr(tmp_path, {ORDERS_PATH: BREAKING_ORDERS})


def raw_reply(data: bytes, status: int = 200) -> Callable[[_Handler], None]:
    def respond(handler: _Handler) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:
            pass

    return respond


# deep nesting


@pytest.mark.parametrize(
    "answer",
    [
        b"[" * DEEP,  # unterminated: Python's decoder raises RecursionError
        b'{"number": 1, "body": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        b'{"number": 1, "body": "x", "labels": ' + b"[" * 900 + b"]" * 900 + b"}",
    ],
    ids=["unterminated", "deep-body", "deep-but-under-the-interpreter-limit"],
)
def test_deeply_nested_api_answer_falls_back_to_the_payload_body(pr: PR, answer: bytes) -> None:
    ws = pr.checkout()
    with fake_github(raw_reply(answer)) as server:
        run = run_action(
            ws.path,
            "pull_request",
            pr_payload(pr, body=ACK),
            env=with_api(server),
            **{"github-token": TOKEN},
        )
    assert server.requests, "the API was not asked"
    assert "Traceback" not in run.stdout + run.stderr
    assert run.code == 0, run.stdout + run.stderr  # the payload's acknowledgement counts
    [notice] = [n for n in run.annotations("notice") if "could not read the current PR" in n]
    assert "the answer nests too deeply" in notice and "event payload" in notice


def _write_deep_payload(tmp: Path, where: str) -> Path:
    """A payload file with ``where`` nested DEEP levels (json.dumps itself would recurse)."""
    path = tmp / "deep-event.json"
    deep = "[" * DEEP + "]" * DEEP
    if where == "labels":
        text = '{"number": 1, "pull_request": {"labels": ' + deep + "}}"
    elif where == "number":
        text = '{"number": ' + "[" * 950 + "]" * 950 + ', "pull_request": {}}'
    else:
        text = '{"number": 1, "pull_request": ' + "[" * DEEP
    path.write_text(text)
    return path


@pytest.mark.parametrize("where", ["labels", "number", "unterminated"])
def test_deeply_nested_event_payload_is_one_clear_error(pr: PR, tmp_path: Path, where: str) -> None:
    ws = pr.checkout()
    path = _write_deep_payload(tmp_path, where)
    run = run_action(ws.path, "pull_request", None, env={"GITHUB_EVENT_PATH": str(path)})
    assert run.code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert run.outputs["verdict"] == "error"
    assert run.verdict_line.startswith("::error title=schema-contract-gate::")
    assert f"the event payload {path} nests too deeply" in run.verdict_line
    assert "internal error" not in run.verdict_line


def test_bounded_json_counts_nesting_not_brackets_in_strings() -> None:
    assert loads('{"a": "[[[[\\"[[[[", "b": [[{}]]}', max_depth=4) == {
        "a": '[[[["[[[[',
        "b": [[{}]],
    }
    assert not nests_deeper_than(b"[" * 4 + b"]" * 4, 4)
    assert nests_deeper_than(b"[" * 5 + b"]" * 5, 4)
    assert nests_deeper_than(b"[{" * 3 + b"}]" * 3, 5)  # mixed kinds count level by level
    assert not nests_deeper_than(b"[]" * 100_000, 1)  # wide is fine
    with pytest.raises(JsonError, match="nests too deeply"):
        loads("[" * DEEP)
    with pytest.raises(JsonError, match="is not JSON"):
        loads("[1,")


# the report path


@pytest.mark.parametrize("which", ["report.json", ".gitignore", "folder"])
def test_a_fifo_at_the_report_path_is_refused_not_waited_on(pr: PR, which: str) -> None:
    ws = pr.checkout()
    folder = ws.path / ".schema-gate"
    if which == "folder":
        os.mkfifo(folder)
    else:
        folder.mkdir()
        os.mkfifo(folder / which)
    run = run_action(ws.path, "pull_request", pr_payload(pr))  # hangs here without the fix
    assert run.code == 1, run.stdout + run.stderr  # the verdict does not depend on the file
    assert run.outputs["verdict"] == "fail" and run.outputs["report"] == ""
    assert "could not write .schema-gate/report.json" in run.stdout
    target = folder if which == "folder" else folder / which
    assert target.is_fifo()  # left alone, not replaced or written into


def test_a_symlink_to_a_device_at_the_report_path_is_replaced(pr: PR) -> None:
    ws = pr.checkout()
    folder = ws.path / ".schema-gate"
    folder.mkdir()
    (folder / "report.json").symlink_to("/dev/zero")  # a symlink is replaced, never followed
    run = run_action(ws.path, "pull_request", pr_payload(pr))
    assert run.code == 1 and run.outputs["report"] == ".schema-gate/report.json"
    assert not (folder / "report.json").is_symlink()
    assert json.loads((folder / "report.json").read_text())["verdict"] == "fail"


# a total deadline for the API request


class _Trickle:
    """An HTTP server on 127.0.0.1 that sends its answer one byte every 50 ms.

    ``slow="head"`` trickles the status line and headers too; ``slow="body"``
    sends the headers at once. Either way each read gets a byte long before a
    per-read timeout, so only a total deadline ends the request early.
    """

    def __init__(self, body: bytes, slow: str) -> None:
        self.body = body
        self.slow = slow
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.requests = 0
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> _Trickle:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.sock.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(self.body)
        )
        with conn:
            conn.recv(65536)  # the request
            fast, slow = (b"", head + self.body) if self.slow == "head" else (head, self.body)
            try:
                conn.sendall(fast)
                for byte in _bytes(slow):
                    if self.stop.is_set():
                        return
                    conn.sendall(byte)
                    time.sleep(0.05)
            except OSError:
                return  # the client gave up: what the deadline is for


def _bytes(data: bytes) -> Iterator[bytes]:
    return (data[i : i + 1] for i in range(len(data)))


@pytest.mark.parametrize("slow", ["head", "body"])
def test_a_trickling_api_answer_hits_the_total_deadline(pr: PR, slow: str) -> None:
    # The trickled answer carries the acknowledgement; the payload does not. A
    # client with only a per-read timeout reads it all (a few seconds here,
    # forever for a real attacker) and passes; with a total deadline of 1 s the
    # action gives up and judges the payload's description: a failure.
    body = json.dumps({"number": 1, "body": ACK}).encode()
    with _Trickle(body, slow) as server:
        run = run_action(
            pr.checkout().path,
            "pull_request",
            pr_payload(pr, body="no acknowledgement here"),
            env={"GITHUB_API_URL": server.url, "SCHEMA_GATE_API_TIMEOUT": "1"},
            comment="false",  # one request: the PR body
            **{"github-token": TOKEN},
        )
    assert server.requests == 1
    assert run.code == 1, run.stdout + run.stderr
    [notice] = [n for n in run.annotations("notice") if "could not read the current PR" in n]
    assert "no answer within 1s" in notice
