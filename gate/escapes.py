"""Text from a pull request made safe to print: control characters spelled out.

Its own small module (no imports from the gate) so that the paths that print
without rendering a report (an Action run with nothing to compare, a usage
error) escape exactly as the reports do without importing them, the diff and
sqlglot. ``gate.report.base.visible`` and ``gate.report.github.escape_data``
are these functions.
"""

from __future__ import annotations

import re

#: Characters that change what a reader (or a terminal, or the Actions runner)
#: sees without being visible themselves: C0/C1 controls and DEL (line breaks,
#: ANSI and OSC-8 escapes), Unicode line/paragraph separators and the bidi
#: controls that reorder text ("Trojan Source"; Unicode's whole ``Bidi_Control`` set,
#: U+061C included).
_INVISIBLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _spell(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every invisible control character spelled out (``\\n``, ``\\x1b``).

    Names in reports come from pull requests. Spelled out, a newline cannot
    start a forged workflow command and an escape sequence cannot drive the
    reader's terminal; the reviewer still sees that the name is odd.
    """
    return _INVISIBLE.sub(_spell, text)


#: Characters of one PR-controlled value a human-read report prints (a name, a
#: type, a message quoting them); the JSON report keeps every value whole.
SHOWN_CHARS = 2_000
#: Characters of one printed report line: a line may name two values (before -> after).
LINE_CHARS = 2 * SHOWN_CHARS


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` bounded for a reader: past ``limit`` characters, its start and end
    around ``…[N characters, M not shown]…``.

    A value comes from the pull request and may be 400 KB (an alias, a column
    name): printed whole into every line, cell and annotation that names it, it
    buries the report and breaks the PR comment's and the annotations' own
    limits. The middle goes, so what tells two values apart at either end stays.
    """
    if len(text) <= limit:
        return text
    keep = limit // 2
    hidden = len(text) - 2 * keep
    return f"{text[:keep]}…[{len(text):,} characters, {hidden:,} not shown]…{text[-keep:]}"


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` clipped (:func:`clip`), then its control characters spelled out (:func:`visible`)."""
    return visible(clip(text, limit))


def escape_data(text: str) -> str:
    """A workflow command's message, as the runner decodes it (``%25``, ``%0D``, ``%0A``)."""
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
