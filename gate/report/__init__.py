"""Output formats: each renders the one ``Report`` to text."""

from __future__ import annotations

from collections.abc import Callable

from gate.report import github, gitlab, json_report, junit, markdown, sarif, text
from gate.report.base import EXIT_BREAKING, EXIT_ERROR, EXIT_OK, Report

RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": text.render,
    "json": json_report.render,
    "markdown": markdown.render,
    "github": github.render,
    "sarif": sarif.render,
    "junit": junit.render,
    "gitlab": gitlab.render,
}

__all__ = ["EXIT_BREAKING", "EXIT_ERROR", "EXIT_OK", "RENDERERS", "Report"]
