"""Regex patterns compared as languages (gate/diff/regex_lang.py): directions, readings, refusals, budget."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.diff import regex_lang
from gate.diff.regex_lang import CHANGED, RELAXED, TIGHTENED, compare
from tests.cost import counting, cpu_seconds


@pytest.fixture(autouse=True)
def fresh_run() -> None:
    """Each test is one diff: its own run budget (the hostile tests spend theirs)."""
    regex_lang.start_run()


@pytest.mark.parametrize(
    ("old", "new", "searched"),
    [
        # anchored patterns: the same under both readings
        (r"^[A-Z]{2,3}$", r"^[A-Z]{2}$", TIGHTENED),
        (r"^[A-Z]{2}$", r"^[A-Z]{2,3}$", RELAXED),
        (r"^[A-Z]{3}$", r"^[A-Z]{2}[0-9]$", CHANGED),
        (r"^\d{5}$", r"^[0-9]{5}$", ""),  # the same language spelt differently
        (r"^(a|b)$", r"^a$|^b$", ""),  # anchors per top-level branch
        (r"^[a-z]+@[a-z]+\.com$", r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$", RELAXED),
        (r"(?i)^abc$", r"^abc$", TIGHTENED),  # a leading flag is part of the language
        # search: an unanchored pattern accepts any value that contains a match
        (r"[0-9]", r"^[0-9]+$", TIGHTENED),
        (r"abc", r"b", RELAXED),
        (r"^a", r"^ab", TIGHTENED),
    ],
)
def test_search_reading(old: str, new: str, searched: str) -> None:
    assert compare(old, new) == searched


@pytest.mark.parametrize(
    ("old", "new", "both"),
    [
        (r"^[A-Z]{2,3}$", r"^[A-Z]{2}$", TIGHTENED),
        # searched: tightened; matched whole: '[0-9]' is one digit, '^[0-9]+$' many: relaxed
        (r"[0-9]", r"^[0-9]+$", CHANGED),
        # searched: relaxed ('b' is in more values); whole: {'abc'} vs {'b'}: disjoint
        (r"abc", r"b", CHANGED),
        # searched: tightened; whole: the same language: the direction stands
        (r"[A-Z]{3}", r"^[A-Z]{3}$", TIGHTENED),
    ],
)
def test_soda_needs_both_readings_to_agree(old: str, new: str, both: str) -> None:
    # Soda's regex runs in the warehouse: PostgreSQL '~' searches, Snowflake's
    # REGEXP_LIKE matches the whole value (soda-core's _build_regex_like_sql).
    assert compare(old, new, full_match_too=True) == both


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a)\1",  # backreference
        r"(?=a)a",  # lookahead
        r"(?<=a)b",  # lookbehind
        r"\bfoo\b",  # word boundary
        r"(^a|b)",  # an anchor inside a group
        r"a^b",  # an anchor inside a branch
        r"(?m)^a$",  # multiline: other anchor rules
        r"[[:alpha:]]+",  # a POSIX class: each engine reads it its own way
        r"[]a]",  # ']' first: a literal in Python and POSIX, an empty class in ECMA-262
        r"a{,3}",  # 0 to 3 in Python, the literal text in ECMA-262
        r"\p{L}+",  # Unicode property
        r"a{2000}",  # repetition over the budget
        "[",  # not a regex
        "(" * 600 + "a" + ")" * 600,  # too long
    ],
)
def test_what_automata_cannot_decide_is_undecided(pattern: str) -> None:
    assert compare(pattern, "^a$") is None
    assert compare("^a$", pattern, full_match_too=True) is None


#: The DFA of (a|b)*a(a|b){n} has 2**n states: unbounded, comparing it runs for hours.
HOSTILE = "(a|b)*a(a|b){24}"


def test_hostile_pattern_is_cut_off_by_the_budget() -> None:
    # CPU seconds, not wall time: within the (wall-clock) budget this thread can
    # use at most the budget's CPU, however loaded the machine; more means the
    # deadline was checked too late (or not at all: then this runs for hours).
    regex_lang.start_run()
    with cpu_seconds() as cpu:
        assert compare(HOSTILE, HOSTILE + "c", full_match_too=True) is None
    assert cpu.seconds < regex_lang.BUDGET_SECONDS + 2.0, cpu.seconds
    # the budget is per comparison: the next one starts afresh
    assert compare(r"^[A-Z]{2,3}$", r"^[A-Z]{2}$", full_match_too=True) == TIGHTENED


def test_many_hostile_patterns_share_one_run_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_lang, "BUDGET_SECONDS", 0.3)
    monkeypatch.setattr(regex_lang, "RUN_SECONDS", 1.0)
    regex_lang.start_run()
    # Counted, not timed: each hostile comparison spends at least its 0.3 s of the
    # run's 1 s before it is cut, so at most 4 of the 20 get to build automata.
    built = counting(monkeypatch, regex_lang, "_relation")
    with cpu_seconds() as cpu:
        for n in range(20):  # 20 x 0.3 s unbounded; the run stops them after 1 s
            assert compare(HOSTILE, f"{HOSTILE}{n}") is None
    assert 1 <= len(built) <= 4, len(built)
    assert cpu.seconds < 1.0 + 2.0, cpu.seconds
    regex_lang.start_run()  # the next diff has its time again
    assert compare(r"^[A-Z]{2,3}$", r"^[A-Z]{3}$") == TIGHTENED


# -- the answers agree with Python's own matcher on every short string ------------------

_ATOMS = st.sampled_from(["a", "b", "[ab]", ".", "c"])


def _regex(depth: int = 3) -> st.SearchStrategy[str]:
    return st.recursive(
        _ATOMS,
        lambda inner: st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
            inner.map(lambda p: f"(?:{p})*"),
            inner.map(lambda p: f"(?:{p})?"),
            inner.map(lambda p: f"(?:{p}){{1,2}}"),
        ),
        max_leaves=depth + 2,
    )


_PATTERNS = st.tuples(st.booleans(), _regex(), st.booleans()).map(
    lambda t: ("^" if t[0] else "") + t[1] + ("$" if t[2] else "")
)
_STRINGS = ["".join(p) for n in range(6) for p in itertools.product("abc", repeat=n)]


def _accepted(pattern: str, full: bool) -> set[str]:
    compiled = re.compile(pattern)
    match = compiled.fullmatch if full else compiled.search
    return {s for s in _STRINGS if match(s)}


@settings(max_examples=150, deadline=None)
@given(old=_PATTERNS, new=_PATTERNS, full_match_too=st.booleans())
def test_answers_agree_with_re_on_short_strings(old: str, new: str, full_match_too: bool) -> None:
    regex_lang.start_run()  # one diff per example
    answer = compare(old, new, full_match_too)
    assert answer is not None, (old, new)  # plain regular expressions are always decided
    readings = [False, True] if full_match_too else [False]
    for full in readings:
        before, after = _accepted(old, full), _accepted(new, full)
        if answer == TIGHTENED:
            assert after <= before, (full, after - before)
        elif answer == RELAXED:
            assert before <= after, (full, before - after)
        elif answer == "":
            assert before == after, (full, before ^ after)
