"""The lines of a PR description that a reader sees once GitHub renders it.

An acknowledgement counts only where a reader of the rendered description can
see it, so the body is read the way GitHub reads it: parsed as CommonMark
(markdown-it-py, the commonmark preset, raw HTML on as on GitHub), rendered to
HTML, and that HTML read back with the standard library's parser. What comes
back is the text of the paragraphs, list items and headings the *Markdown*
made, line by line, with the source line each starts on.

What a reader does not see never comes back:

- raw HTML blocks of every CommonMark type (1-7: ``<script>``/``<pre>``/
  ``<style>``/``<textarea>``, comments, processing instructions, declarations,
  CDATA, block tags such as ``<div>``, any other complete tag on its own line):
  their text is the author's HTML, not Markdown prose, and does not count even
  where a browser would show it (fail closed);
- HTML comments, tags and attributes (a link's title, an image's alt text), and
  everything inside an element opened with a ``hidden`` attribute, wherever
  the opening tag stands; a Markdown paragraph that ends up inside an
  attribute value (an HTML block that leaves a quote open) is not a paragraph
  to the HTML parser either;
- text inside ``<del>``, ``<s>`` or ``<strike>``, shown crossed out (withdrawn),
  and all text after an ``<s>`` or ``<strike>`` left open (HTML reopens it in
  every following paragraph until its end tag);
- fenced and indented code blocks: templates quote the syntax there;
- autolinks (``<scheme:...>``) and images stand as one non-blank placeholder
  character, so the line does not start with what they hold.

Inline code spans, emphasis, entities and backslash escapes are visible text
and come back as the reader sees them (``**key:**`` is ``key:``). Paragraphs in
block quotes come back marked ``quoted``: visible, but not a line of the PR's
own (``near_misses`` names them, ``parse_pr_body`` does not count them).

Our own paragraphs carry an attribute holding a random nonce drawn for each
call, so raw HTML in the body cannot forge one. Parsing is linear in the body,
but markdown-it-py's constant is large on hostile input (65,536 ``[`` took 7 s
on a loaded 2-core runner, measured), so callers bound the body first
(``MAX_BODY_CHARS``).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a body is parsed: most runs never need it (~0.17 s)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

#: GitHub refuses a description longer than this many characters.
MAX_BODY_CHARS = 65_536
#: Stands for an autolink or an image: not blank, never part of a name.
PLACEHOLDER = "\ufffc"

_MARKED = ("paragraph_open", "heading_open")
#: Elements without an end tag: never pushed on the open-element stack.
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)  # fmt: skip
#: Elements whose text no reader sees (GitHub drops them with their content).
#: ``rp`` is ruby fallback text, which browsers with ruby support (all) never show.
_UNSEEN = frozenset({"script", "style", "template", "noscript", "title", "rp"})
#: Elements GitHub shows crossed out: a reviewer reads their text as withdrawn, so it
#: acknowledges nothing (``~~...~~`` stays text to the commonmark reader: no line start).
_STRUCK = frozenset({"del", "s", "strike"})
#: Of those, HTML's formatting elements: one left open when its paragraph ends is
#: reopened by the browser (and GitHub's HTML5 sanitizer) around all text after
#: it, until its end tag: ``<s>old`` strikes out every following paragraph.
_REOPENED = frozenset({"s", "strike"})


@dataclass(frozen=True)
class Line:
    """One line: its 1-based source line, its text, inside a block quote or not.

    ``raw``: a line of a raw HTML block (outside comments), which a browser may
    show but which never acknowledges; kept so a line meant as an
    acknowledgement there can be named (a pasted ``<img>`` on the line before
    makes the next lines HTML until a blank line).
    """

    number: int
    text: str
    quoted: bool = False
    raw: bool = False


def visible_lines(body: str) -> list[Line]:
    """Every visible line of paragraphs, list items and headings of ``body``, in order."""
    from markdown_it import MarkdownIt

    nonce = secrets.token_hex(8)
    md = MarkdownIt("commonmark", {"html": True})
    env: dict[str, object] = {}
    tokens = md.parse(body, env)
    source = _NULL.sub("\ufffd", _NEWLINES.sub("\n", body)).split("\n")
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            _keep_lead(token, source[token.map[0]], md, env)
    _mark(tokens, nonce)
    raw = [line for token in tokens if token.type == "html_block" for line in _raw_lines(token)]
    cutoff = _tame_html_blocks(tokens)
    reader = _Reader(nonce)
    reader.feed(md.renderer.render(tokens, md.options, {}))
    reader.close()
    seen = [line for line in reader.lines if cutoff is None or line.number <= cutoff]
    return sorted(seen + raw, key=lambda line: line.number)


#: The longest tag or comment of a raw HTML block read as markup (see ``_tame``).
MAX_TAG_CHARS = 512


def _tame_html_blocks(tokens: Sequence[Token]) -> int | None:
    """Raw HTML blocks reduced to complete tags and escaped text; the first source
    line after which nothing counts, if a block holds markup that is not.

    A raw HTML block is the author's text verbatim, and ``html.parser`` is
    quadratic on unfinished markup (65,536 characters of ``<a `` cost a minute of
    CPU, CVE-2025-6069 on Python 3.11.7). Its text never acknowledges anything,
    so only complete tags (for ``hidden`` and friends) need to reach the parser.
    A ``<`` that opens no complete tag within ``MAX_TAG_CHARS`` is escaped, and
    as a browser would read it as a tag swallowing what follows, nothing after
    that block counts: the gate fails closed.
    """
    from markdown_it.common.html_re import HTML_TAG_RE

    cutoff: int | None = None
    for token in tokens:
        if token.type != "html_block":
            continue
        text, out, pos, broken = token.content, [], 0, False
        while (start := text.find("<", pos)) != -1:
            out.append(text[pos:start].replace(">", "&gt;"))
            match = HTML_TAG_RE.match(text, start, min(len(text), start + MAX_TAG_CHARS))
            if match:
                out.append(match.group(0))
                pos = match.end()
            else:
                out.append("&lt;")
                pos = start + 1
                broken = True
        out.append(text[pos:].replace(">", "&gt;"))
        token.content = "".join(out)
        if broken and token.map is not None and cutoff is None:
            cutoff = token.map[0]
    return cutoff


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


def _raw_lines(token: Token) -> list[Line]:
    """The lines of a raw HTML block outside its comments, marked ``raw``."""
    if token.map is None:
        return []
    text = _COMMENT.sub(lambda match: "\n" * match.group(0).count("\n"), token.content)
    first = token.map[0] + 1
    return [Line(first + n, line, raw=True) for n, line in enumerate(text.split("\n")) if line]


_NEWLINES = re.compile(r"\r\n?")  # as markdown-it normalizes the source
_NULL = re.compile("\0")


def _keep_lead(token: Token, line: str, md: MarkdownIt, env: dict[str, object]) -> None:
    """Put back what markdown-it-py trimmed before a block's text beyond spaces and tabs.

    It trims a paragraph or heading with JavaScript's ``trim`` set (vertical
    tab, form feed, U+00A0, U+2028...), where CommonMark skips only spaces and
    tabs: ``\\vaccept-breaking-change:`` must not start with the key.
    """
    first = token.content.split("\n", 1)[0]
    if not line.endswith(first):
        return
    lead = line[: len(line) - len(first)]
    end = len(lead)
    while end and lead[end - 1].isspace():
        end -= 1
    kept = lead[end:].lstrip(" \t")
    if not kept:
        return
    token.content = kept + token.content
    token.children = []
    md.inline.parse(token.content, md, env, token.children)
    for child in token.children:
        if child.type == "text_special":  # what the core rule text_join does
            child.type = "text"


def _mark(tokens: Sequence[Token], nonce: str) -> None:
    """Tag the Markdown's own blocks (and autolinks) with the nonce and their source line."""
    quotes = 0
    for token in tokens:
        if token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        elif token.type in _MARKED and token.map is not None:
            token.hidden = False  # tight list items drop their <p>; keep it as our marker
            token.attrSet("data-gate", nonce)
            token.attrSet("data-line", str(token.map[0] + 1))
            if quotes:
                token.attrSet("data-quoted", "1")
        elif token.type == "paragraph_close":
            token.hidden = False
        for child in token.children or ():
            if child.type == "link_open" and child.markup == "autolink":
                child.attrSet("data-gate-autolink", nonce)


class _Reader(HTMLParser):
    """Collects the text of the nonce-marked blocks that no hidden element encloses."""

    def __init__(self, nonce: str) -> None:
        super().__init__(convert_charrefs=True)
        self.nonce = nonce
        self.lines: list[Line] = []
        #: Open elements: (tag, hides its content, is one of our blocks, is an autolink).
        self.stack: list[tuple[str, bool, bool, bool]] = []
        self.block: tuple[int, bool] | None = None  # (first line, quoted) while in one
        self.moved = 0  # source lines since the block's first
        self.text: list[str] = []
        #: ``<s>``/``<strike>`` closed only by an enclosing end tag: still striking.
        self.reopened: list[str] = []

    # -- structure ----------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.moved += (self.get_starttag_text() or "").count("\n")
        ours = values.get("data-gate") == self.nonce and self.block is None
        autolink = tag == "a" and values.get("data-gate-autolink") == self.nonce
        if tag == "img" or (autolink and not self._hidden()):
            self._append(PLACEHOLDER)
        if tag in _VOID:
            return
        hides = "hidden" in values or tag in _UNSEEN or tag in _STRUCK
        self.stack.append((tag, hides, ours, autolink))
        if ours and not self._hidden():
            line = values.get("data-line") or "0"
            self.block = (int(line) if line.isdigit() else 0, "data-quoted" in values)
            self.moved = 0
            self.text = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.moved += (self.get_starttag_text() or "").count("\n")
        if tag == "img":
            self._append(PLACEHOLDER)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                closed = self.stack[depth:]
                del self.stack[depth:]
                self.reopened += [name for name, *_ in closed[1:] if name in _REOPENED]
                if any(ours for _, _, ours, _ in closed):
                    self._flush()
                return
        if tag in self.reopened:  # its own end tag, past the paragraph it opened in
            del self.reopened[len(self.reopened) - 1 - self.reopened[::-1].index(tag)]

    def handle_comment(self, data: str) -> None:
        self.moved += data.count("\n")

    def close(self) -> None:
        super().close()
        self._flush()

    # -- text ---------------------------------------------------------------------

    def handle_data(self, data: str) -> None:
        if self.block is None or self._hidden() or self._in_autolink():
            return
        self._append(data)

    def _append(self, data: str) -> None:
        if self.block is None or self._hidden():
            return
        parts = data.split("\n")
        for index, part in enumerate(parts):
            if index:
                self._line_break()
            self.text.append(part)

    def _line_break(self) -> None:
        self._emit()
        self.moved += 1

    def _emit(self) -> None:
        if self.block is not None:
            first, quoted = self.block
            self.lines.append(Line(first + self.moved, "".join(self.text), quoted))
        self.text = []

    def _flush(self) -> None:
        if self.block is not None:
            self._emit()
            self.block = None

    def _hidden(self) -> bool:
        return bool(self.reopened) or any(hides for _, hides, _, _ in self.stack)

    def _in_autolink(self) -> bool:
        return any(autolink for _, _, _, autolink in self.stack)
