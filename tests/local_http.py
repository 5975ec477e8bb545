"""The HTTP servers tests start on 127.0.0.1, made safe to run beside other tests.

Two things a plain ``ThreadingHTTPServer`` does that made the suite flaky:

* A handler that fails (the client hung up on purpose: a size limit, a
  deadline, a slow drip) prints a traceback to ``sys.stderr`` from its own
  thread, possibly while the *next* test captures ``sys.stderr`` of an
  in-process gate run, whose exact stderr it then asserts. Errors are kept on
  the server (``errors``) instead.
* ``accept()`` on a blocking socket waits for the next connection when the one
  the selector announced was reset before it was accepted, so ``shutdown()``
  waited for ever (a 600 s pytest timeout, seen once under load). The
  listening socket has a timeout; ``serve_forever`` treats it as "no request".
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

#: How long ``accept()`` may wait; ``serve_forever`` polls again after it.
ACCEPT_TIMEOUT = 0.5


class LocalHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.errors: list[BaseException] = []
        super().__init__(*args, **kwargs)

    def server_activate(self) -> None:
        super().server_activate()
        # Accepted sockets stay blocking (socket.accept makes them so when the
        # default timeout is None), so the handlers behave as before.
        self.socket.settimeout(ACCEPT_TIMEOUT)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is not None:
            self.errors.append(error)


@contextmanager
def garbage_server() -> Iterator[str]:
    """A server on 127.0.0.1 that answers one request with bytes that are not HTTP.

    ``http.client`` raises ``BadStatusLine`` for it, which is neither an
    ``OSError`` nor a ``ValueError``: the case a fetcher forgets. Yields its URL.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(10)

    def answer() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.recv(4096)
            conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        thread.join(5)
        listener.close()


class Drip:
    """A slow answer for deadline tests: a byte every 0.1 s, ``count`` of them.

    Asserted by bytes, never wall time (tests/test_suite_rules.py): the client
    gave up while the drip was still going (``stopped_mid_drip``). Call it with a
    request handler; ``stop`` ends it when the test is over."""

    def __init__(self, headers: dict[str, str], count: int = 600) -> None:
        self.headers = headers
        self.count = count
        self.sent = 0
        self.over = threading.Event()  # the drip sent all its bytes
        self.stop = threading.Event()  # the test is over

    def __call__(self, handler: Any) -> None:
        handler.send_response(200)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        for _ in range(self.count):
            if self.stop.is_set():
                return
            try:
                handler.wfile.write(b" ")
                handler.wfile.flush()
            except OSError:
                return
            self.sent += 1
            self.stop.wait(0.1)
        self.over.set()

    def stopped_mid_drip(self) -> bool:
        return not self.over.is_set() and self.sent < self.count
