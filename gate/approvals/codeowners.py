"""GitHub's CODEOWNERS, parsed and matched as GitHub documents it ("About code owners").

Rules implemented, each from GitHub's page:

* Lookup order: ``.github/CODEOWNERS``, then ``CODEOWNERS``, then
  ``docs/CODEOWNERS``; the first one found is the file (``LOCATIONS``).
* One rule a line: a pattern, then owners (``@user``, ``@org/team``, or an
  email address); ``#`` starts a comment line; blank lines are skipped.
* "The last matching pattern takes the most precedence"; a matching line with
  no owners leaves the path without owners (it unsets).
* Patterns follow gitignore: ``*`` matches within one path segment, ``?`` one
  character, ``**`` any number of segments; a leading ``/`` anchors to the
  repository root, as does a ``/`` inside the pattern; a pattern without one
  matches at any depth; a trailing ``/`` matches a directory and everything
  in it; a pattern also matches the files under a directory it names, except
  that ``docs/*`` matches only the direct children of ``docs`` (GitHub's
  example). Paths are case-sensitive.
* "Some syntax rules for gitignore files do not work in CODEOWNERS files":
  escaping a leading ``#`` with ``\\``, negation with ``!``, ranges with
  ``[ ]``. GitHub skips such a line; the gate refuses it instead (the line is
  in ``errors`` and every lookup through this file is unresolved), because a
  skipped line could silently move ownership to someone else.

Matching is segment by segment with a table over (pattern segment, path
segment) and a two-pointer wildcard match inside a segment: time bounded by
pattern length times path length, no regular expression, no backtracking
blow-up on a hostile pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Where GitHub looks, in order; the first file found is used.
LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
#: A longer line is refused (GitHub caps the file at 3 MB; one rule is short).
MAX_LINE = 4096
_UNSUPPORTED = {"!": "negation (!)", "[": "character ranges ([ ])", "]": "character ranges ([ ])"}


@dataclass(frozen=True)
class LineError:
    line: int
    reason: str


@dataclass(frozen=True)
class Rule:
    line: int
    pattern: str
    owners: tuple[str, ...]
    segments: tuple[str, ...]
    dir_only: bool
    #: ``docs/*``: direct children only, never the files below a matched directory.
    children_only: bool


@dataclass(frozen=True)
class Lookup:
    """Who owns one path: ``owners`` (``None``: no rule matched) and the deciding line."""

    owners: tuple[str, ...] | None
    line: int | None


@dataclass(frozen=True)
class CodeOwners:
    source: str | None  # the file's path; None: the repository has none
    rules: tuple[Rule, ...] = ()
    errors: tuple[LineError, ...] = ()

    def owners_of(self, path: str) -> Lookup:
        """The last matching rule's owners (GitHub: the last match wins)."""
        parts = tuple(p for p in path.split("/") if p)
        for rule in reversed(self.rules):
            if _matches(rule, parts):
                return Lookup(rule.owners, rule.line)
        return Lookup(None, None)

    def describe_errors(self) -> list[str]:
        return [f"{self.source}:{e.line}: {e.reason}" for e in self.errors]


def valid_owner(token: str) -> bool:
    """``@user``, ``@org/team`` or an email address (GitHub's three kinds)."""
    if token.startswith("@"):
        name = token[1:]
        parts = name.split("/")
        if len(parts) > 2 or not all(parts):
            return False
        return all(_name_chars(p, extra="-_." if i else "-") for i, p in enumerate(parts))
    local, at, domain = token.partition("@")
    return bool(local and at and "." in domain and "@" not in domain and domain[-1] != ".")


def _name_chars(text: str, extra: str) -> bool:
    return all(ch.isascii() and (ch.isalnum() or ch in extra) for ch in text)


def parse(text: str, source: str) -> CodeOwners:
    """Every rule of a CODEOWNERS file, and every line that could not be read."""
    rules: list[Rule] = []
    errors: list[LineError] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if len(line) > MAX_LINE:
            errors.append(LineError(number, f"line longer than {MAX_LINE} characters"))
            continue
        pattern, *owners = line.split()
        problem = _pattern_problem(pattern)
        bad = [o for o in owners if not valid_owner(o)]
        if problem is None and bad:
            problem = f"{bad[0]!r} is not an owner (@user, @org/team or an email)"
        if problem is not None:
            errors.append(LineError(number, problem))
            continue
        rules.append(_rule(number, pattern, tuple(owners)))
    return CodeOwners(source, tuple(rules), tuple(errors))


def _pattern_problem(pattern: str) -> str | None:
    if pattern.startswith("\\"):
        return "escaping with \\ does not work in CODEOWNERS"
    for ch, what in _UNSUPPORTED.items():
        if ch in pattern:
            return f"{what} does not work in CODEOWNERS"
    if "\\" in pattern:
        return "escaping with \\ does not work in CODEOWNERS"
    if pattern.strip("/") == "":
        return "a pattern that names no path"
    return None


def _rule(number: int, pattern: str, owners: tuple[str, ...]) -> Rule:
    dir_only = pattern.endswith("/")
    body = pattern.strip("/")
    anchored = pattern.startswith("/") or "/" in body
    segments = tuple(s for s in body.split("/") if s)
    if not anchored and segments[0] != "**":
        segments = ("**", *segments)
    children_only = len(segments) >= 2 and segments[-1] == "*" and not dir_only
    return Rule(number, pattern, owners, segments, dir_only, children_only)


def _matches(rule: Rule, path: tuple[str, ...]) -> bool:
    """Whether ``rule`` matches the file ``path`` itself or a directory above it."""
    ends = _ends(rule.segments, path)  # path prefix lengths the whole pattern matches
    n = len(path)
    if rule.dir_only:
        return any(end < n for end in ends)  # a directory: a proper prefix of the path
    if rule.children_only:
        return n in ends
    return bool(ends)


def _ends(segments: Sequence[str], path: Sequence[str]) -> set[int]:
    """Each k such that the pattern matches ``path[:k]`` (k >= 1): a table, row by row."""
    reach = {0}  # path positions reachable after the pattern segments so far
    for segment in segments:
        if not reach:
            return set()
        if segment == "**":
            start = min(reach)
            reach = set(range(start, len(path) + 1))
        else:
            reach = {i + 1 for i in reach if i < len(path) and glob_segment(segment, path[i])}
    return {k for k in reach if k >= 1}


def glob_segment(pattern: str, text: str) -> bool:
    """``*`` and ``?`` within one segment: the two-pointer match, O(len(pattern) * len(text))."""
    p = t = 0
    star = -1
    mark = 0
    while t < len(text):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == text[t]):
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)
