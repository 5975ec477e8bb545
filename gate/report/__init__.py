"""Output formats: each renders the one ``Report`` to text.

``RENDERERS`` maps each format to its ``render``; a renderer's module is
imported when its format is first looked up, so a run pays only for the
format it prints.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

from gate.report.base import EXIT_BREAKING, EXIT_ERROR, EXIT_OK, Report

#: Each format and the module (in this package) whose ``render`` prints it.
_MODULES = {
    "text": "text",
    "json": "json_report",
    "markdown": "markdown",
    "github": "github",
    "sarif": "sarif",
    "junit": "junit",
    "gitlab": "gitlab",
}


class _Renderers(Mapping[str, Callable[[Report], str]]):
    """Format name -> ``render``, each module imported on first lookup."""

    def __getitem__(self, name: str) -> Callable[[Report], str]:
        module = importlib.import_module(f"{__name__}.{_MODULES[name]}")
        render: Callable[[Report], str] = module.render
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


RENDERERS: Mapping[str, Callable[[Report], str]] = _Renderers()

__all__ = ["EXIT_BREAKING", "EXIT_ERROR", "EXIT_OK", "RENDERERS", "Report"]
