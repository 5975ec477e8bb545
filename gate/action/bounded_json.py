"""JSON from outside the process (the event payload, API answers), refused before it can hurt.

Python's decoder recurses once per ``[`` or ``{``: 100,000 of them raise
``RecursionError`` (not ``ValueError``), and a document just under the
interpreter's limit parses but makes any later recursive walk (``repr`` in an
error message) fail. GitHub's own documents nest fewer than a dozen levels, so
anything deeper than ``MAX_DEPTH`` is refused before decoding, with a reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: GitHub's payloads and REST answers nest well under 20 levels.
MAX_DEPTH = 64
_ESCAPE = re.compile(rb"\\.", re.S)  # a backslash escape inside a string
_STRING = re.compile(rb'"[^"]*"')  # after escapes are gone: brackets in one are not nesting
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


class JsonError(ValueError):
    """Not JSON, or too deep; ``str(exc)`` is a one-line reason."""


def nests_deeper_than(data: bytes, limit: int) -> bool:
    """Whether arrays/objects in ``data`` nest more than ``limit`` deep, in C-speed passes.

    Strings are dropped, then each pass removes the innermost empty ``[]``/``{}``
    (exactly one level: each is marked first, so ``{[]}`` takes two passes).
    What is left after ``limit`` passes is deeper. Malformed input stops early
    and is left to the decoder to refuse.
    """
    skeleton = _STRING.sub(b"", _ESCAPE.sub(b"", data).translate(None, _NOT_STRUCTURE))
    for _ in range(limit):
        if not skeleton:
            return False
        inner = skeleton.replace(b"[]", b"0").replace(b"{}", b"0").translate(None, b"0")
        if inner == skeleton:
            return False
        skeleton = inner
    return b"[]" in skeleton or b"{}" in skeleton


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises ``JsonError`` for bad or too deeply nested input."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if nests_deeper_than(raw, max_depth):
        raise JsonError(f"nests too deeply (more than {max_depth} levels)")
    try:
        return json.loads(raw)
    except RecursionError:  # malformed and deep: "[[[[..." without an end
        raise JsonError(f"nests too deeply (more than {max_depth} levels)") from None
    except ValueError as exc:
        raise JsonError(f"is not JSON: {exc}") from None


def describe(value: object, limit: int = 80) -> str:
    """A short, safe rendering of an untrusted value for an error message.

    Containers are named, not printed: ``repr`` of a deep one recurses.
    """
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return repr(value)[:limit]
