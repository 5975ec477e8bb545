"""A small, documented Jinja pre-pass that turns a dbt model into plain SQL.

The gate never runs dbt or Jinja (a model is untrusted text). It replaces:

- ``{{ ref('m') }}`` -> ``m``; ``ref('m', v=2)`` -> ``m_v2`` (dbt's default
  relation name for a version); ``{{ ref('project', 'm') }}`` -> ``project.m``
  (the two-argument, cross-project ref keeps its project, so the consumer scan
  can tell ``platform``'s ``stg_orders`` from ``finance``'s; a table name
  ending in ``m`` still matches a contract that names only ``m``);
- ``{{ source('s', 't') }}`` -> ``s.t``;
- ``{{ config(...) }}`` -> nothing;
- ``{{ this }}`` and any other ``{{ expression }}`` -> the placeholder ``__jinja__``
  (a valid identifier, so it parses as a column or a table and matches no contract);
  a ``ref()``/``source()`` inside such an expression (``dbt_utils.star(ref('x'))``)
  still counts as a read of that table, at the expression's line;
- ``{% ... %}`` tags and ``{# ... #}`` comments -> nothing; the text between
  ``{% if %}``/``{% else %}`` branches is kept as is (both branches),
  and ``{% raw %}`` bodies are kept verbatim;
- ``{% set q %}BODY{% endset %}`` then ``{{ q }}``: each ``{{ q }}`` becomes BODY
  (its own refs replaced as above), the block itself nothing, when BODY holds no
  ``{%`` tag, ``q`` is set by that one block and used only after it
  (``_expand_set_blocks``); otherwise ``{{ q }}`` is the placeholder, as before.

Every replacement keeps the newlines it removes, so line numbers still point
into the model file. A model this cannot turn into SQL sqlglot parses is
reported as "not analysed", never dropped.
"""

from __future__ import annotations

import re

PLACEHOLDER = "__jinja__"

_STR = r"""\s*(?P<q{n}>['"])(?P<s{n}>[^'"]+)(?P=q{n})\s*"""
_REF = re.compile(
    r"^\s*ref\s*\("
    + _STR.format(n=1)
    + r"(?:,"
    + _STR.format(n=2)
    + r")?(?:,\s*(?:v|version)\s*=\s*['\"]?(?P<v>[\w.]+)['\"]?\s*)?\)\s*$",
    re.S,
)
_SOURCE = re.compile(
    r"^\s*source\s*\(" + _STR.format(n=1) + "," + _STR.format(n=2) + r"\)\s*$", re.S
)
_CONFIG = re.compile(r"^\s*config\s*\(", re.S)
_METRIC = re.compile(r"^\s*metric\s*\(" + _STR.format(n=1) + r"(?:,[^)]*)?\)\s*$", re.S)
_NESTED = re.compile(
    r"\b(?P<fn>ref|source)\s*\(\s*(['\"])(?P<a>[^'\"]+)\2\s*(?:,\s*(['\"])(?P<b>[^'\"]+)\4)?"
)
_RAW_END = re.compile(r"{%-?\s*endraw\s*-?%}")
#: A string argument in parentheses of its own (``ref((('m')))``, ``ref(('p'), ('m'))``):
#: Jinja evaluates ``('m')`` to ``'m'``. Only after ``(``, ``,`` or ``=``, so a call's
#: own parentheses (``ref('m')``, ``ref ('m')``) are kept.
_WRAPPED = re.compile(r"""(?P<pre>[(,=]\s*)\(\s*(?P<s>'[^'"]*'|"[^'"]*")\s*\)""")
#: Levels of such parentheses taken off (one pass each, so linear): deeper is no ref.
_MAX_WRAPPED = 8


#: A set block's opening and closing tags, and the uses and ``=`` sets of any name:
#: each found in one scan of the text (a lazy body pattern scanned to the end from
#: every opener without an end tag: quadratic on a 256 KiB reader).
_SET_OPEN = re.compile(r"{%-?\s*set\s+(?P<name>[A-Za-z_]\w*)\s*-?%}")
_SET_END = re.compile(r"{%-?\s*endset\s*-?%}")
_SET_ASSIGN = re.compile(r"{%-?\s*set\s+([A-Za-z_]\w*)\s*=")
_USE = re.compile(r"{{-?\s*([A-Za-z_]\w*)\s*-?}}")
#: Text a model's set blocks may add when expanded, beyond the model's own length.
_EXPANSION_SLACK = 64 * 1024


class JinjaError(Exception):
    """The template is not balanced; the message names the line."""


def looks_templated(text: str) -> bool:
    return "{{" in text or "{%" in text or "{#" in text


def _close(text: str, start: int, closer: str) -> int:
    """Index just past ``closer``, skipping quoted strings inside the tag."""
    i = start
    quote: str | None = None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif text.startswith(closer, i):
            return i + len(closer)
        i += 1
    return -1


def _unwrapped(text: str) -> str:
    """``text`` with string arguments taken out of redundant parentheses."""
    for _ in range(_MAX_WRAPPED):
        if "(" not in text:
            break
        done = _WRAPPED.sub(r"\g<pre>\g<s>", text)
        if done == text:
            break
        text = done
    return text


def _expression(inner: str) -> str:
    body = _unwrapped(inner.strip("-").strip())
    ref = _REF.match(body)
    if ref:
        name = ref["s2"] or ref["s1"]
        name = f"{name}_v{ref['v']}" if ref["v"] else name
        return f"{ref['s1']}.{name}" if ref["s2"] else name
    source = _SOURCE.match(body)
    if source:
        return f"{source['s1']}.{source['s2']}"
    if _CONFIG.match(body):
        return ""
    return PLACEHOLDER


def dependency(text: str) -> str | None:
    """The table a dbt ``depends_on`` entry (an exposure's) names, as a model's ref reads.

    ``ref('m')`` -> ``m``, ``ref('p', 'm')`` -> ``p.m``, ``ref('m', v=2)`` ->
    ``m_v2``, ``source('s', 't')`` -> ``s.t``, with or without ``{{ }}``; ``""``
    for ``metric('x')`` (no table); ``None`` for anything else.
    """
    body = text.strip()
    if body.startswith("{{") and body.endswith("}}"):
        body = body[2:-2]
    body = _unwrapped(body.strip("-").strip())
    if _REF.match(body) or _SOURCE.match(body):
        return _expression(body)
    if _METRIC.match(body):
        return ""
    return None


def ref_projects(text: str) -> set[str]:
    """The projects (or packages) named by two-argument ``ref`` calls, lower-cased."""
    return {m["a"].lower() for m in _NESTED.finditer(text) if m["fn"] == "ref" and m["b"]}


def render(text: str) -> str:
    """The model as SQL with the same line breaks; raises ``JinjaError``."""
    return render_with_refs(text)[0]


def _nested(inner: str) -> list[str]:
    """Tables named by ``ref``/``source`` calls inside a larger expression."""
    names = []
    for match in _NESTED.finditer(_unwrapped(inner)):
        if match["fn"] == "ref":
            names.append(f"{match['a']}.{match['b']}" if match["b"] else match["a"])
        elif match["b"]:
            names.append(f"{match['a']}.{match['b']}")
    return names


class _Lines:
    """Line numbers of increasing positions, counted once: never from the start again."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.line = 1

    def at(self, position: int) -> int:
        if position < self.position:  # not expected: positions only grow
            self.position, self.line = 0, 1
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


def _expand_set_blocks(text: str) -> str:
    """``text`` with each ``{{ q }}`` of a ``{% set q %}BODY{% endset %}`` block replaced
    by BODY, as Jinja renders it (dbt models that keep a query in a set block and
    select from it, ``from ({{ orders_q }}) as o``, read as "not analysed" when the
    use was a placeholder and the body sat, rendered, ahead of the SQL). Sound only
    where the text is the whole story: BODY holds no ``{%`` tag (no control flow, no
    nested set) and no line comment (``--``, ``#``: put on one line, it would swallow
    the rest of the use), ``q`` has this one block and no ``{% set q = ... %}``, and every
    ``{{ q }}`` (whitespace control allowed) comes after the block; a name that fails
    any of this is left alone. The block is blanked and BODY put in each use on one
    line (newlines kept after it), so line numbers still point into the model file
    and a ref in BODY counts at the line that uses it. Bounded: expansions that would
    add more than the model's length plus ``_EXPANSION_SLACK`` are not made."""
    if "endset" not in text:
        return text
    blocks: dict[str, list[tuple[int, int, str]]] = {}  # name -> (start, end, body)
    ends = _SET_END.finditer(text)
    closing = next(ends, None)
    done = 0
    for opener in _SET_OPEN.finditer(text):
        if opener.start() < done:
            continue  # inside the block before: its body (which then holds a tag)
        while closing is not None and closing.start() < opener.end():
            closing = next(ends, None)
        if closing is None:
            break  # no end tag after it, nor after any later opener
        body = text[opener.end() : closing.start()]
        blocks.setdefault(opener["name"], []).append((opener.start(), closing.end(), body))
        done = closing.end()
    assigned = {m[1] for m in _SET_ASSIGN.finditer(text)}
    used: dict[str, list[re.Match[str]]] = {}
    for use in _USE.finditer(text):
        if use[1] in blocks:
            used.setdefault(use[1], []).append(use)
    edits: list[tuple[int, int, str]] = []
    added = 0
    for name, found in blocks.items():
        start, stop, raw = found[0]
        if len(found) > 1 or any(t in raw for t in ("{%", "--", "#")):
            continue  # control flow; a line comment would swallow the rest of its use
        if name in assigned:
            continue
        uses = used.get(name, [])
        if not uses or any(u.start() < stop for u in uses):
            continue
        body = " " + " ".join(raw.split("\n")) + " "
        added += len(body) * len(uses)
        edits.append((start, stop, ""))
        edits += [(u.start(), u.end(), body) for u in uses]
    if not edits or added > len(text) + _EXPANSION_SLACK:
        return text
    out: list[str] = []
    done = 0
    for start, end, body in sorted(edits):
        if start < done:  # overlapping edits: a name inside another's block; leave all
            return text
        span = text[start:end]
        out += [text[done:start], body if body else " ", "\n" * span.count("\n")]
        done = end
    out.append(text[done:])
    return "".join(out)


def render_with_refs(text: str) -> tuple[str, list[tuple[int, str]]]:
    """(SQL, [(line, table)] for refs inside other expressions); raises ``JinjaError``."""
    sql, nested, _direct = render_with_reads(text)
    return sql, nested


def render_with_reads(
    text: str,
) -> tuple[str, list[tuple[int, str]], list[tuple[int, str]]]:
    """(SQL, [(line, table)] for refs inside other expressions, [(line, table)] for each
    ``{{ ref() }}``/``{{ source() }}`` written as a table name); raises ``JinjaError``.

    The third list is every ref the SQL holds, wherever it stands: one passed to a
    function (``table(f({{ ref('x') }}))``) parses as a column, not a table, and
    ``gate.consumers.reader`` still counts it as a read of ``x``.

    One scan: each opener's next position is looked up again only once the scan
    has passed it (an absent ``{#`` is searched for once, not from every
    tag), and line numbers are counted on from the last one. Set blocks used as
    queries are expanded first (``_expand_set_blocks``).
    """
    text = _expand_set_blocks(text)
    nested: list[tuple[int, str]] = []
    direct: list[tuple[int, str]] = []
    out: list[str] = []
    lines = _Lines(text)
    following = {opener: text.find(opener) for opener in ("{{", "{%", "{#")}
    i = 0
    while True:
        for opener, at in following.items():
            if 0 <= at < i:
                following[opener] = text.find(opener, i)
        j = min((k for k in following.values() if k >= 0), default=-1)
        if j < 0:
            out.append(text[i:])
            return "".join(out), nested, direct
        out.append(text[i:j])
        opener = text[j : j + 2]
        closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener]
        end = text.find(closer, j + 2) + 2 if opener == "{#" else _close(text, j + 2, closer)
        if end < 2 or end == -1:
            raise JinjaError(f"unterminated {opener} at line {lines.at(j)}")
        span = text[j:end]
        newlines = "\n" * span.count("\n")
        if opener == "{{":
            replacement = _expression(span[2:-2])
            if replacement == PLACEHOLDER:
                line = lines.at(j)
                nested += [(line, name) for name in _nested(span[2:-2])]
            elif replacement:
                direct.append((lines.at(j), replacement))
            out.append(" " + replacement + " " + newlines)
        elif opener == "{%" and re.match(r"{%-?\s*raw\s*-?%}", span):
            raw_end = _RAW_END.search(text, end)
            if raw_end is None:
                raise JinjaError(f"unterminated raw block at line {lines.at(j)}")
            out.append(newlines + text[end : raw_end.start()] + "\n" * raw_end.group(0).count("\n"))
            end = raw_end.end()
        else:
            out.append(" " + newlines)
        i = end
