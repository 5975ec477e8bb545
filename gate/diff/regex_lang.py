"""Two regular-expression patterns compared as the languages they accept.

A contract's ``pattern`` says which values are allowed. When it changes, the
question is whether the new pattern accepts fewer values (``tightened``: some
producer may now fail), more (``relaxed``: consumers may see new values),
neither, or the same language spelt differently (nothing to report). That is
decidable for true regular expressions: both become automata and the gate
checks inclusion both ways (interegular builds the automata; it parses Python
regex syntax, which agrees with ECMA-262 on what contracts use, and reads
``\\d``, ``\\w``, ``\\s`` as ASCII classes, as ECMA-262 and JSON Schema do).

What a pattern accepts depends on how it is matched:

- JSON Schema, ODCS, DCS and dbt_expectations *search*: ``pattern: '[0-9]'``
  accepts any value containing a digit. ``^`` and ``$`` anchor the search, so
  the language of an unanchored branch is the branch with anything around it.
- Soda hands the regex to the warehouse: PostgreSQL ``~``, BigQuery
  ``REGEXP_CONTAINS`` and DuckDB ``REGEXP_MATCHES`` search, Snowflake's
  ``REGEXP_LIKE`` must match the whole value. The gate does not know the
  warehouse, so a Soda pattern is compared under both readings and a direction
  is reported only when both readings agree on it.

Anything the automata cannot express (backreferences, lookarounds, ``\\b``,
anchors inside a group, the multiline flag) or that exceeds the budget
(``BUDGET_SECONDS`` of automaton construction per comparison, ``RUN_SECONDS``
per diff, ``MAX_PATTERN`` characters, repetition counts above ``MAX_REPEAT``) answers ``None``: the caller reports
``constraint_changed``, as it did before the gate compared languages. Building
an automaton can be exponential in the pattern (``(a|b)*a(a|b){20}``), so the
budget is enforced inside interegular's state crawl, the one loop every
automaton operation runs; a contract cannot stall the gate.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
import time
from collections.abc import Callable
from typing import Any

#: Wall-clock budget for the automata of one comparison (both readings).
BUDGET_SECONDS = 1.0
#: ... and for all the comparisons of one diff (:func:`start_run`): a pull request
#: that changes a thousand hostile patterns costs this much, not a thousand budgets.
RUN_SECONDS = 15.0
#: Longer patterns are not compared (the parser is recursive).
MAX_PATTERN = 1000
#: ``{n}`` / ``{n,m}`` above this many repetitions are not compared.
MAX_REPEAT = 1000

#: Results of :func:`compare`.
TIGHTENED, RELAXED, CHANGED = "tightened", "relaxed", "changed"

_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")
#: A character range ``a-b`` (either end literal or ``\xHH``/``\uHHHH``/``\u{H..}``).
#: interegular lists every code point of a class while parsing it, before any
#: budget can run: a range wider than ``MAX_CLASS_SPAN`` is undecidable instead.
_END = r"\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|[^\\\]]"
_RANGE = re.compile(f"({_END})-({_END})")
MAX_CLASS_SPAN = 4096


def _code_point(end: str) -> int:
    if end.startswith("\\"):
        return int(end[2:].strip("{}"), 16)
    return ord(end)


def _classes_within_budget(pattern: str) -> bool:
    """No range wider than ``MAX_CLASS_SPAN`` code points (one linear scan; a ``-``
    outside a class also counts, which only errs towards "cannot decide")."""
    return all(
        _code_point(high) - _code_point(low) <= MAX_CLASS_SPAN
        for low, high in _RANGE.findall(pattern)
    )


_LEADING_FLAGS = re.compile(r"^\(\?([a-zA-Z]+)\)")
_ANYTHING = r"[\s\S]*"


class _OverBudget(Exception):
    """Raised inside interegular's crawl when the comparison's deadline passed."""


_deadline = threading.local()


def start_run() -> None:
    """Give this thread a fresh :data:`RUN_SECONDS` for the comparisons that follow."""
    _deadline.run_left = RUN_SECONDS


def _key(state: Any) -> Any:
    """A hashable stand-in for a crawl state, equal exactly when the states are ``==``.

    interegular's states are ints, tuples, frozensets, and sets and dicts of them.
    """
    try:
        if isinstance(state, dict):
            return (dict, frozenset(state.items()))
        if isinstance(state, set):
            return frozenset(state)
        hash(state)
        return state
    except TypeError:  # unhashable parts inside: convert them too
        pass
    if isinstance(state, dict):
        return (dict, frozenset((k, _key(v)) for k, v in state.items()))
    if isinstance(state, (set, frozenset)):
        return frozenset(_key(item) for item in state)
    return tuple(_key(item) for item in state)


def _crawl(fsm_module: Any) -> Callable[..., Any]:
    """interegular's ``crawl`` with the deadline, and states found by hash.

    The library's own crawl finds each successor with ``list.index``, quadratic
    in the number of states: most of the time of a comparison. This one builds
    the same automaton (states numbered in discovery order, oblivion skipped)
    with a dictionary, and checks the current thread's deadline on every step.
    """
    oblivion = fsm_module.OblivionError

    def crawl(alphabet: Any, initial: Any, final: Any, follow: Any) -> Any:
        until = getattr(_deadline, "until", None)
        states = [initial]
        index = {_key(initial): 0}
        finals = set()
        transitions: dict[int, dict[Any, int]] = {}
        i = 0
        while i < len(states):
            if until is not None and time.monotonic() > until:
                raise _OverBudget
            state = states[i]
            if final(state):
                finals.add(i)
            row: dict[Any, int] = {}
            for transition in alphabet.by_transition:
                try:
                    successor = follow(state, transition)
                except oblivion:
                    continue
                key = _key(successor)
                j = index.get(key)
                if j is None:
                    j = index[key] = len(states)
                    states.append(successor)
                row[transition] = j
            transitions[i] = row
            i += 1
        return fsm_module.FSM(
            alphabet=alphabet,
            states=range(len(states)),
            initial=0,
            finals=finals,
            map=transitions,
            __no_validation__=True,
        )

    crawl.__wrapped__ = fsm_module.crawl  # type: ignore[attr-defined]
    return crawl


def _guarded(crawl: Callable[..., Any]) -> Callable[..., Any]:
    """``crawl`` whose ``follow`` step checks the current thread's deadline."""

    def guarded(alphabet: Any, initial: Any, final: Any, follow: Any) -> Any:
        def timed_follow(state: Any, symbol: Any) -> Any:
            until = getattr(_deadline, "until", None)
            if until is not None and time.monotonic() > until:
                raise _OverBudget
            return follow(state, symbol)

        return crawl(alphabet, initial, final, timed_follow)

    guarded.__wrapped__ = crawl  # type: ignore[attr-defined]
    return guarded


@functools.cache
def _interegular() -> Any:
    """Import interegular once and put the deadline into its state crawl.

    Every FSM operation of interegular (union, concatenation, star, difference,
    emptiness) builds its result through the module-level ``crawl`` functions of
    ``interegular.fsm``; replacing them is the only place a budget can live. So
    pyproject.toml keeps interegular on its 0.3 line and the locks pin 0.3.3.
    """
    import interegular
    import interegular.fsm as fsm

    if not hasattr(fsm.crawl, "__wrapped__"):
        fsm.crawl = _crawl(fsm)
    if not hasattr(fsm.crawl_hash_no_result, "__wrapped__"):
        fsm.crawl_hash_no_result = _guarded(fsm.crawl_hash_no_result)
    return interegular


def _scan(pattern: str) -> tuple[list[int], list[int]] | None:
    """Top-level ``|`` positions and anchor positions; None for what automata cannot do.

    Anchors (``^``, ``$``) are returned only at depth 0; one inside a group,
    a lookaround or a conditional makes the pattern unsupported.
    """
    bars: list[int] = []
    anchors: list[int] = []
    depth = 0
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
            elif pattern.startswith(("[:", "[=", "[."), i):
                return None  # POSIX classes: each engine reads them its own way
        elif char == "[":
            in_class = True
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                return None  # '[]a]': a literal ']' in Python and POSIX, an empty class in ECMA-262
        elif char == "(":
            if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?("), i):
                return None
            depth += 1
        elif char == ")":
            depth -= 1
        elif char in "^$":
            if depth:
                return None
            anchors.append(i)
        elif char == "|" and depth == 0:
            bars.append(i)
        i += 1
    return bars, anchors


def _language(pattern: str, search: bool) -> str | None:
    """The pattern rewritten as one whole-value expression, or None if unsupported.

    Under ``search`` an unanchored side of each top-level branch may be
    surrounded by anything; under full-match the anchors are redundant.
    """
    flags = ""
    found = _LEADING_FLAGS.match(pattern)
    if found:
        flags = found.group(1)
        if set(flags) - set("is"):  # multiline, verbose, ...: other anchor rules
            return None
        pattern = pattern[found.end() :]
    scanned = _scan(pattern)
    if scanned is None:
        return None
    bars, anchors = scanned
    edges = [-1, *bars, len(pattern)]
    parts: list[str] = []
    for start, end in itertools.pairwise(edges):
        body_start, body_end = start + 1, end
        starts = body_start < body_end and pattern[body_start] == "^" and body_start in anchors
        if starts:
            body_start += 1
        ends = body_start < body_end and pattern[body_end - 1] == "$" and body_end - 1 in anchors
        if ends:
            body_end -= 1
        if any(body_start <= a < body_end for a in anchors):
            return None  # an anchor in the middle of a branch
        body = pattern[body_start:body_end]
        before = "" if starts or not search else _ANYTHING
        after = "" if ends or not search else _ANYTHING
        parts.append(f"{before}(?:{body}){after}")
    text = "|".join(f"(?:{part})" for part in parts)
    return f"(?{flags}){text}" if flags else text


def _relation(old: str, new: str, search: bool) -> str | None:
    """``equal``/``tightened``/``relaxed``/``changed`` under one reading; None if undecidable."""
    a, b = _language(old, search), _language(new, search)
    if a is None or b is None:
        return None
    lib = _interegular()
    from interegular.fsm import Alphabet

    pa, pb = lib.parse_pattern(a), lib.parse_pattern(b)
    flags = lib.REFlags(0)
    alphabet = Alphabet.union(pa.get_alphabet(flags), pb.get_alphabet(flags))[0]
    fa, fb = pa.to_fsm(alphabet), pb.to_fsm(alphabet)
    new_within = fb.issubset(fa)
    old_within = fa.issubset(fb)
    if new_within and old_within:
        return "equal"
    if new_within:
        return TIGHTENED
    if old_within:
        return RELAXED
    return CHANGED


def _repeats_within_budget(pattern: str) -> bool:
    if "{," in pattern:  # '{,3}': 0 to 3 in Python, the literal text in ECMA-262
        return False
    for low, high in _REPEAT.findall(pattern):
        if int(low) > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
            return False
    return True


#: Decided comparisons (and patterns no automaton can express); never a timeout.
_cache: dict[tuple[str, str, bool], str | None] = {}


def compare(old: str, new: str, full_match_too: bool = False) -> str | None:
    """How the language of ``new`` relates to that of ``old``.

    ``tightened`` (new accepts a strict subset), ``relaxed`` (a strict
    superset), ``changed`` (neither), ``""`` (the same language), or None when
    the gate cannot decide within its budget. ``full_match_too`` also reads the
    patterns as whole-value matches (Soda on Snowflake) and keeps a direction
    only when both readings agree.
    """
    if old == new:
        return ""
    if max(len(old), len(new)) > MAX_PATTERN or not all(
        _repeats_within_budget(p) and _classes_within_budget(p) for p in (old, new)
    ):
        return None
    key = (old, new, full_match_too)
    if key in _cache:
        return _cache[key]
    left = getattr(_deadline, "run_left", RUN_SECONDS)
    if left <= 0:
        return None
    started = time.monotonic()
    _deadline.until = started + min(BUDGET_SECONDS, left)
    try:
        readings = {_relation(old, new, search=True)}
        if full_match_too:
            readings.add(_relation(old, new, search=False))
    except (_OverBudget, RecursionError, MemoryError):
        return None  # not cached: another run may have the time
    except Exception:  # interegular's Unsupported, InvalidSyntax and parser errors
        readings = {None}
    finally:
        _deadline.until = None
        _deadline.run_left = left - (time.monotonic() - started)
    result = _verdict(readings)
    if len(_cache) >= 1024:
        _cache.clear()
    _cache[key] = result
    return result


def _verdict(readings: set[str | None]) -> str | None:
    """One answer from the readings: a direction only when every reading agrees."""
    if None in readings:
        return None
    moves = readings - {"equal"}
    if not moves:
        return ""
    if len(moves) == 1:
        return moves.pop()
    return CHANGED
