"""The ``contract`` and ``enabled`` settings of a model's own ``config()`` call.

dbt ranks a model file's ``{{ config(...) }}`` (SQL) or ``dbt.config(...)``
(Python) above its properties file and ``dbt_project.yml``
(``ContextConfig.calculate_node_config`` applies ``config_call_dict`` last), so
a model can switch its contract on or off there. The gate does not render
Jinja; it splits the arguments of ``config(`` calls as text (brackets and
quotes balanced) and reads ``contract={'enforced': true}`` /
``contract={"enforced": True}`` and ``enabled=false``, and the relation parts
``schema=``/``alias=``/``database=`` (``gate.formats.dbt.relation``).

A literal is folded (``true``/``False``, ``{{ false }}``). A value it cannot
evaluate (``var('x')``, a ``{% set %}`` variable, ``not true``, ``(false)``,
``dict(enforced=false)``, ``bool(0)``) counts as ``true``, so the model stays
guarded, and is recorded with its line; so is ``**kwargs``, which may set
either (its value is left as the other levels say). A changed unevaluable
setting is a finding (``dbt_config_unevaluable``), never a silent pass.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gate.formats.dbt import relation
from gate.formats.dbt.flags import ACCESS, ENABLED, ENFORCED, fold, is_jinja, shown
from gate.formats.dbt.settings import UNKNOWN_ACCESS, access_value, checked_access
from gate.limits import DEFAULT_LIMITS
from gate.model import ContractError

#: ``config(`` as a call: ``{{ config(``, ``{{- config(``, ``dbt.config(``; also
#: ``config.set(`` (group 1), which dbt-core's ``Config.set(name, value)`` makes
#: ``config({name: value})``.
_CALL = re.compile(r"(?<![\w.])(?:dbt\s*\.\s*)?config\s*(\.\s*set\s*)?\(")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)\s*", re.ASCII)
_STRING_KEY = re.compile(r"""^(['"])(\w+)\1\s*:\s*""", re.ASCII)
_CLOSE = {"(": ")", "[": "]", "{": "}"}
#: Bytes of a model file read for its ``config()`` calls (real models are under
#: 200 KB; 20 MB of ``{{x}}`` took 14 s and 935 MB): a bigger one is refused. The
#: default of ``limits.model_file_bytes``, which the base side's config may change.
MAX_FILE_BYTES = DEFAULT_LIMITS.model_file_bytes
#: ``**{...}`` literals unpacked inside one another: each level splits its text
#: again (1,500 levels in 16 KB: 10 s, then RecursionError); deeper is opaque.
_MAX_UNPACK = 16
#: Characters the ``config(`` scans of a file may read beyond the per-character budget.
_BUDGET_SLACK = 40_000


@dataclass(frozen=True)
class ModelSettings:
    """What a model file's ``config()`` calls set; ``None`` = not said.

    ``unevaluable`` holds (setting, expression, line) for the settings whose
    value the gate could not evaluate.
    """

    enforced: bool | None = None
    enabled: bool | None = None
    unevaluable: tuple[tuple[str, str, int], ...] = ()
    #: The relation parts (``database``, ``schema``, ``alias``) the calls set, as
    #: (part, value) sorted: a string's text, ``None`` for ``none``, else ``{{ code }}``.
    relation: tuple[tuple[str, str | None], ...] = ()
    #: ``access=``: a modifier, ``unknown`` (not evaluable), ``None`` = not said.
    access: str | None = None
    #: ``materialized=``: a string literal's text, lower-cased; ``None`` = not said;
    #: ``NOT_LITERAL`` = said in a way not known here (Jinja, a variable, ``**kwargs``,
    #: a call under a condition): the other levels' reading stands, never dbt's default.
    materialized: str | None = None

    def meaning(
        self,
    ) -> tuple[
        bool | None,
        bool | None,
        frozenset[tuple[str, str]],
        tuple[tuple[str, str | None], ...],
        str | None,
        str | None,
    ]:
        """What the settings say, without where they are written."""
        unevaluable = frozenset((s, e) for s, e, _l in self.unevaluable)
        return (
            self.enforced,
            self.enabled,
            unevaluable,
            self.relation,
            self.access,
            self.materialized,
        )


#: ``ModelSettings.materialized`` for a ``materialized`` the file sets in a way not known
#: here: not a materialization name (``{`` cannot start one), so never ``view``.
NOT_LITERAL = "{{ not a literal }}"

_TAG = re.compile(r"\{[{%#]")
_CLOSES = {"{{": "}}", "{%": "%}", "{#": "#}"}
_RAW = re.compile(r"\{%[-+]?\s*raw\s*[-+]?%\}$")
_ENDRAW = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}")
_BLOCK_OPEN = re.compile(r"\{%[-+]?\s*(?:if|for|macro|call|filter)\b")
_BLOCK_CLOSE = re.compile(r"\{%[-+]?\s*end(?:if|for|macro|call|filter)\b")


def jinja_code(source: str) -> str:
    """The code of ``source`` (:func:`_scan`)."""
    return _scan(source)[0]


def _scan(source: str) -> tuple[str, list[tuple[int, int]]]:
    """``source`` with what dbt does not run blanked (newlines kept, so offsets and
    lines stand): Jinja comments ``{# ... #}`` and, in a file with Jinja tags,
    everything outside ``{{ ... }}`` / ``{% ... %}`` (SQL text: ``-- config(...)``
    in a comment or a string is no call; ``-- {{ config(...) }}`` is rendered), and
    ``{% raw %}...{% endraw %}``, which Jinja prints as text. A file without tags is
    code as it is. Also the spans under ``{% if %}``/``{% for %}`` (and macro, call,
    filter blocks), where a call runs only when its target makes it. One pass, linear."""
    spans: list[tuple[int, int, bool]] = []  # (start, end, is code)
    guarded: list[tuple[int, int]] = []
    depth, opened = 0, 0
    index = 0
    while (match := _TAG.search(source, index)) is not None:
        start = match.start()
        opener = source[start : start + 2]
        index = _tag_end(source, start + 2, _CLOSES[opener])
        if opener == "{%" and _RAW.match(source, start, index):
            # ``{% raw %}...{% endraw %}`` is text to Jinja: nothing in it runs.
            endraw = _ENDRAW.search(source, index)
            index = len(source) if endraw is None else endraw.end()
            spans.append((start, index, False))
            continue
        if not depth and opener != "{#" and not _runs_alone(source, start, index):
            guarded.append(
                (start, index)
            )  # ``{{ config(...) if x }}``, ``{{ x and config(...) }}``
        if opener == "{%" and _BLOCK_OPEN.match(source, start, index):
            depth += 1
            opened = index if depth == 1 else opened
        elif opener == "{%" and depth and _BLOCK_CLOSE.match(source, start, index):
            depth -= 1
            if not depth:
                guarded.append((opened, start))
        spans.append((start, index, opener != "{#"))
    if depth:
        guarded.append((opened, len(source)))
    if not spans:
        return source, guarded
    code = any(is_code for _s, _e, is_code in spans)
    pieces: list[str] = []
    done = 0
    for start, end, is_code in spans:
        between = source[done:start]
        pieces.append(_blank(between) if code else between)
        pieces.append(source[start:end] if is_code else _blank(source[start:end]))
        done = end
    pieces.append(_blank(source[done:]) if code else source[done:])
    return "".join(pieces), guarded


#: A tag that is one ``config()`` call and nothing else: ``{{ config(...) }}``,
#: ``{{- dbt.config(...) -}}``, ``{% do config(...) %}``.
_ALONE = re.compile(r"\{(?:\{|%[-+]?\s*do\b)[-+]?\s*(?:dbt\s*\.\s*)?config\s*(?:\.\s*set\s*)?\(")
_ALONE_END = re.compile(r"\)\s*[-+]?[}%]\}")


def _runs_alone(source: str, start: int, end: int) -> bool:
    """Whether the tag ``source[start:end]`` calls ``config()`` only as its whole
    expression, or not at all. A call beside anything else may not run: dbt
    renders ``{{ config(enabled=true) if target.name == 'x' }}``, ``{{ false and
    config(...) }}``, ``{% set s = "{{ config(...) }}" %}`` without calling it,
    so such a call's ``enabled``, ``contract`` and ``access`` are unevaluable,
    as under ``{% if %}``."""
    if _CALL.search(source, start, end) is None:
        return True
    call = _ALONE.match(source, start, end)
    if call is None:
        return False
    close = _balanced_end(source, call.end(), end)
    return close is not None and _ALONE_END.fullmatch(source, close, end) is not None


def _tag_end(source: str, start: int, closer: str) -> int:
    """The offset after a tag's ``closer``, as Jinja's lexer finds it: not inside a
    string or brackets (``{{ config(x={'a': {'b': 1}}) }}``); a comment ends at its
    first ``#}``. The end of ``source`` if it never closes."""
    if closer == "#}":
        close = source.find(closer, start)
        return len(source) if close == -1 else close + 2
    depth = 0
    for index, char in _outside_quotes(source, start, len(source)):
        if depth == 0 and source.startswith(closer, index):
            return index + 2
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
    return len(source)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _calls(source: str) -> list[tuple[int, str]]:
    """(offset, argument text) of every ``config(...)`` call, parentheses balanced.

    Raises ``CallsTooCostly`` past a budget of characters scanned: an unclosed
    call's scan runs to the end, so thousands of unclosed ``config(`` in 70 KB
    cost 44 s; a real model file spends a fraction of the budget. A call is read
    to its end however long (dbt reads it): a per-call cap let a call padded past
    it (a long ``meta`` string) switch the contract off unseen.
    """
    out: list[tuple[int, str]] = []
    budget = _BUDGET_PER_CHAR * len(source) + _BUDGET_SLACK
    for match in _CALL.finditer(source):
        start = match.end()
        stop = min(len(source), start + max(budget, 0))
        end = _balanced_end(source, start, stop)
        budget -= (end if end is not None else stop) - start
        if end is None and stop < len(source):  # the budget ran out inside the call
            raise CallsTooCostly(source.count("\n", 0, match.start()) + 1)
        if end is not None:
            arguments = source[start:end]
            out.append((start, _as_dict(arguments) if match[1] else arguments))
    return out


def _as_dict(arguments: str) -> str:
    """``config.set(name, value)``'s arguments as ``config()``'s: ``name=value`` for a
    quoted name, else ``**(...)`` of the text (no dict literal: opaque, may set anything)."""
    pieces = _split(arguments)
    if len(pieces) == 2:
        name = re.fullmatch(r"""(['"])([A-Za-z_]\w*)\1""", pieces[0][1], re.ASCII)
        if name:
            return f"{name[2]}={pieces[1][1]}"
    return f"**({arguments})"


#: Characters a file's ``config(`` scans may read per character of the file.
_BUDGET_PER_CHAR = 8


class CallsTooCostly(Exception):
    """A file whose ``config(`` calls would cost more than a linear scan to read."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _unquoted(text: str, start: int, stop: int) -> Iterator[tuple[int, str, int]]:
    """(offset, character, bracket depth after it) of each character outside string
    quotes, from ``start`` to ``stop``; depth counts ``([{`` opened since ``start``.
    One pass, a backslash escaping the next character inside quotes."""
    depth = 0
    for index, char in _outside_quotes(text, start, stop):
        depth += (char in "([{") - (char in ")]}")
        yield index, char, depth


def _outside_quotes(text: str, start: int, stop: int) -> Iterator[tuple[int, str]]:
    """(offset, character) of each character outside string quotes, from ``start``
    to ``stop``: one pass, a backslash escaping the next character inside quotes.
    Shared by the call reader and the Jinja tag reader, which count brackets apart."""
    quote, index = "", start
    while index < stop:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        else:
            yield index, char
        index += 1


def _balanced_end(text: str, start: int, stop: int) -> int | None:
    """The offset of the ``)`` that closes a call opened just before ``start``."""
    for index, char, depth in _unquoted(text, start, stop):
        if depth == -1:
            return index if char == ")" else None
    return None


def _split(text: str) -> list[tuple[int, str]]:
    """(offset, piece) of ``text`` split at top-level commas (brackets and quotes kept)."""
    pieces: list[tuple[int, str]] = []
    begin = 0
    for index, char, depth in _unquoted(text, 0, len(text)):
        if char == "," and depth == 0:
            pieces.append((begin, text[begin:index]))
            begin = index + 1
    pieces.append((begin, text[begin:]))
    return [(o + len(p) - len(p.lstrip()), p.strip()) for o, p in pieces if p.strip()]


def _dict_literal(text: str) -> list[tuple[int, str | None, str]] | None:
    """(offset, key, value) of a ``{'k': v, **x}`` literal; ``None`` if not one.

    A ``**x`` entry, or a key that is not a quoted name, has key ``None``.
    """
    if not (text.startswith("{") and text.endswith("}")):
        return None
    out: list[tuple[int, str | None, str]] = []
    for offset, piece in _split(text[1:-1]):
        match = _STRING_KEY.match(piece)
        if match:
            out.append((offset + 1 + match.end(), match[2], piece[match.end() :]))
        else:
            out.append((offset + 1, None, piece))
    return out


#: A string literal in a ``config()`` call: its text exactly (no quote or backslash inside).
_ACCESS_STRING = re.compile(r"""^(['"])([^'"\\]*)\1$""")


def _access_argument(code: str) -> str | None:
    """``config(access=...)``'s value as dbt receives it: a plain string literal's text
    exactly, spaces kept (dbt's ``AccessType('public ')`` raises, ``dbt parse`` fails:
    checked with dbt-core 1.10.23, "Node model.shop.orders has an invalid value (public )
    for the access field"); ``relation.argument`` trims, as the relation macros do, which
    read ``'public '`` as public. Anything else as ``relation.argument`` reads it."""
    match = _ACCESS_STRING.match(code.strip())
    if match and not is_jinja(match[2]):
        return match[2]
    return relation.argument(code)


class _Reader:
    def __init__(
        self, source: str, path: str = "", lenient: bool = False, python: bool = False
    ) -> None:
        self.source = source
        #: A Python model: only keywords are read (a ``config(x)`` there may be the
        #: file's own function; dbt's is ``dbt.config(...)``).
        self.python = python
        self.path = path
        #: The base side's file: an ``access`` dbt refuses reads as before (``access_value``),
        #: so the pull request that fixes it is not refused for it.
        self.lenient = lenient
        self.values: dict[str, bool | None] = {ENFORCED: None, ENABLED: None}
        self.unknown: dict[str, tuple[str, int]] = {}
        self.relation: dict[str, str | None] = {}
        self.access: str | None = None
        self.materialized: str | None = None
        #: The call being read runs only under a Jinja condition (``{% if %}``, ``{% for %}``).
        self.conditional = False
        self._newlines: list[int] | None = None

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset``: a lookup in the file's line starts, indexed
        once (counting from the start for each setting was quadratic)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.source)]
        return bisect.bisect_left(self._newlines, offset) + 1

    def said(self, setting: str, value: str, offset: int) -> None:
        folded = None if self.conditional else fold(value)
        if folded is None:
            self.values[setting] = True  # unknowable: keep the model guarded
            self.unknown[setting] = (self.shown(value), self.line(offset))
        else:
            self.values[setting] = folded
            self.unknown.pop(setting, None)

    def shown(self, value: str) -> str:
        """An expression as a finding quotes it; a call under a condition says so."""
        return f"{shown(value)} (under a Jinja condition)" if self.conditional else shown(value)

    def opaque(self, expression: str, offset: int) -> None:
        """``**kwargs``: may set either setting; what the other levels say stands."""
        for setting in (ENFORCED, ENABLED):
            self.unknown[setting] = (shown(expression), self.line(offset))
        self.materialized = NOT_LITERAL

    def keywords(self, entries: list[tuple[int, str | None, str]], depth: int = 0) -> None:
        for offset, key, value in entries:
            if key is None:
                if value.startswith("**"):
                    inner = _dict_literal(value[2:].strip()) if depth < _MAX_UNPACK else None
                    if inner is None:  # a variable, or nested past the bound: may set anything
                        self.opaque(value, offset)
                    else:
                        self.keywords([(offset, k, v) for _o, k, v in inner], depth + 1)
                continue
            if key == "enabled":
                self.said(ENABLED, value, offset)
            elif key == "contract":
                self.contract(value, offset)
            elif key == "materialized":
                literal = _ACCESS_STRING.match(value.strip())
                text = literal[2] if literal and not is_jinja(literal[2]) else None
                # Jinja, a variable, a call under a condition: not known here
                known = None if self.conditional else text
                self.materialized = NOT_LITERAL if known is None else known.lower()
            elif key in relation.KEYS:
                self.relation[relation.KEYS[key]] = relation.argument(value)
            elif key == "access":
                said = _access_argument(value)
                if said is None:
                    self.access = None
                elif self.lenient:
                    self.access = access_value(said)
                else:
                    where = self.line(offset)
                    self.access = checked_access(said, self.path, where, "'config(access=...)'")
                if self.conditional and self.access is not None:
                    self.access = UNKNOWN_ACCESS
                if self.access == UNKNOWN_ACCESS:  # var(), a macro: dbt decides, not the gate
                    self.unknown[ACCESS] = (self.shown(value), self.line(offset))
                else:
                    self.unknown.pop(ACCESS, None)

    def contract(self, value: str, offset: int) -> None:
        entries = _dict_literal(value)
        if entries is None:  # dict(enforced=false), a variable, ...
            self.said(ENFORCED, value, offset)
            return
        for e_offset, key, e_value in entries:
            if key == "enforced":
                self.said(ENFORCED, e_value, offset + e_offset)
            elif key is None:  # **x inside the literal
                self.said(ENFORCED, value, offset)

    def call(self, offset: int, arguments: str) -> None:
        entries: list[tuple[int, str | None, str]] = []
        for p_offset, piece in _split(arguments):
            match = _KEYWORD.match(piece)
            if match:
                entries.append((offset + p_offset + match.end(), match[1], piece[match.end() :]))
            elif piece.startswith("**"):
                entries.append((offset + p_offset, None, piece))
            elif not self.python:
                # dbt's ``Config.__call__`` takes one positional dict as its keywords
                # (``config({'materialized': 'table'})``, ``config(settings)``): read as
                # ``**`` of it, a variable opaque. Two positionals, or one beside
                # keywords, dbt refuses (``InlineModelConfigError``).
                entries.append((offset + p_offset, None, "**" + piece))
        self.keywords(entries)


def read_settings(
    source: bytes | str,
    python: bool = False,
    path: str = "",
    max_bytes: int = MAX_FILE_BYTES,
    lenient: bool = False,
) -> ModelSettings:
    """What a model file's ``config()`` calls set; a later call wins, as dbt applies them.
    ``python``: a Python model, code as it is (dbt renders no Jinja there); ``path``
    names the file in the error a hostile one gets. A file over ``max_bytes`` (the
    base side's ``limits.model_file_bytes``) is refused: what its calls set cannot
    be known, so skipping it would fail open. ``lenient`` (the base side's file): an
    ``access`` dbt refuses reads as ``access_value`` reads it, not refused, so the
    pull request that fixes it passes."""
    if len(source) > max_bytes:
        raise ContractError(
            path,
            f"the model file is {len(source):,} bytes, more than the limit of {max_bytes:,}; "
            "its config() settings are not read; raise limits.model_file_bytes in the config",
        )
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    reader = _Reader(text, path, lenient, python)
    code, guarded = (text, []) if python else _scan(text)
    try:
        calls = _calls(code)
    except CallsTooCostly as exc:  # fail closed: what it sets is not known
        raise ContractError(
            path,
            "too many 'config(' calls left open to read in linear time (a model file "
            "dbt could not parse either)",
            exc.line,
        ) from None
    starts = [start for start, _end in guarded]
    outer_end = -1
    for offset, arguments in calls:
        at = bisect.bisect_right(starts, offset) - 1
        # a call inside another's arguments (or in a string there) runs first, if at all
        nested = offset < outer_end
        reader.conditional = nested or (at >= 0 and offset < guarded[at][1])
        outer_end = max(outer_end, offset + len(arguments))
        reader.call(offset, arguments)
    return ModelSettings(
        enforced=reader.values[ENFORCED],
        enabled=reader.values[ENABLED],
        unevaluable=tuple(
            (setting, expression, line)
            for setting, (expression, line) in sorted(reader.unknown.items())
        ),
        relation=tuple(sorted(reader.relation.items())),
        access=reader.access,
        materialized=reader.materialized,
    )


def model_settings(source: bytes | str) -> tuple[bool | None, bool | None]:
    """``(enforced, enabled)`` a model file's ``config()`` calls set; ``None`` = not said."""
    settings = read_settings(source)
    return settings.enforced, settings.enabled
