"""A hostile reviewer's CPU-time findings, each a test that failed before its fix.

Each runs the hostile input in a child process with a wall-clock cap, so a
failing test costs its cap, not the minutes the defect takes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, gate_env

CAP_SECONDS = 10


def _finishes(code: str) -> None:
    try:
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            cwd=ROOT,
            env=gate_env(),
            timeout=CAP_SECONDS,
            check=True,
            capture_output=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {CAP_SECONDS} s")


def test_review_regex_wide_class_respects_budget() -> None:
    """A one-class pattern ``[\\x01-\\U0010FFFF]`` costs 20-55 s of CPU (4 such classes:
    45 s): interegular's alphabet (``get_alphabet``/``Alphabet.union``) enumerates
    every code point of the range outside the guarded crawl (gate/diff/regex_lang.py:271-274),
    so BUDGET_SECONDS (1 s) and RUN_SECONDS (15 s) do not bound it."""
    _finishes(
        """
        from gate.diff import regex_lang
        regex_lang.compare("^[A-Z]{2}[0-9]$", "^[\\x01-\\U0010FFFF]{2}[0-9]$")
        """
    )


def test_review_pr_body_html_block_is_not_quadratic() -> None:
    """65,536 characters of PR body: a ``<div>`` HTML block followed by ``<a `` repeated
    takes 72 s of CPU in html.parser (Python 3.11.7 lacks the CVE-2025-6069 fix; the
    raw block is passed through markdown-it verbatim into ``_Reader.feed``,
    gate/rendered_lines.py:94-96). ``<!--`` repeated: 5 s."""
    _finishes(
        """
        from gate import acks
        body = ("accept-breaking-change: orders\\n\\n<div>\\n" + "<a " * 65536)[:65536]
        acks.parse_pr_body(body)
        """
    )
