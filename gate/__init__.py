"""schema-contract-gate: stop pull requests from silently breaking data contracts.

Library use::

    from gate import Settings, run
    report = run(Settings(repo=".", base="origin/main"))
    print(report.exit_code, [c.rule for c in report.changes])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gate import _renamed

__version__ = "0.1.0"

__all__ = ["Settings", "__version__", "run"]

if TYPE_CHECKING:
    from gate.engine import Settings, run

_renamed.install()


def __getattr__(name: str) -> Any:
    # Lazy, so that importing one layer (the parsers in a worker process, the
    # smoke-test result classes) does not import the whole engine and sqlglot.
    if name in ("Settings", "run"):
        from gate import engine

        return getattr(engine, name)
    raise AttributeError(name)
