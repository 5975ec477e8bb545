"""dbt's two settings that make a model a contract: ``enabled`` and ``contract.enforced``.

dbt renders Jinja in a config value before it reads it; the gate renders none.
A literal (``true``, ``False``) and a constant Jinja expression (``"{{ false }}"``,
``"{{- true -}}"``) are folded to their value. Anything else (``var('x')``,
``target.name == 'prod'``, a ``{% set %}`` variable, ``not true``) needs a
profile or a renderer: it reads as ``true``, so the model stays guarded, and it
is recorded as an *unevaluable* setting, so that a change to it is a finding
(``dbt_config_unevaluable``) instead of a silent pass.
"""

from __future__ import annotations

import re
from typing import Any

from gate.formats.common import describe
from gate.model import ContractError

ENABLED = "enabled"
ENFORCED = "contract.enforced"
#: ``access``: recorded when unevaluable, reported only where the model was public.
ACCESS = "access"

#: (setting, expression, path, line), as ``Dataset.unevaluable`` holds them.
Unevaluable = tuple[str, str, str, int | None]

_CONSTANT = re.compile(r"^\{\{-?\s*(true|false)\s*-?\}\}$", re.IGNORECASE)
_LITERALS = {"true": True, "false": False}


def fold(text: str) -> bool | None:
    """The value of a literal or a constant Jinja boolean; ``None`` for an expression."""
    stripped = text.strip()
    literal = _LITERALS.get(stripped.lower())
    if literal is not None:
        return literal
    match = _CONSTANT.match(stripped)
    return match[1].lower() == "true" if match else None


#: ``"{{ 'public' }}"``, ``"{{- "private" -}}"``: Jinja that renders one quoted string.
_CONSTANT_TEXT = re.compile(r"""^\{\{-?\s*(?:'([^'{}\\]*)'|"([^"{}\\]*)")\s*-?\}\}$""")


def fold_text(text: str) -> str | None:
    """The string a constant Jinja expression renders (``"{{ 'protected' }}"``), else ``None``.

    dbt renders such a value before it reads it; left unfolded, a constant
    rewritten in Jinja reads as an unknown value, which is no finding."""
    match = _CONSTANT_TEXT.match(text.strip())
    return None if match is None else next(g for g in match.groups() if g is not None)


def is_jinja(value: Any) -> bool:
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def shown(expression: str) -> str:
    """An expression as a finding quotes it: one line, at most 80 characters."""
    text = " ".join(expression.split())
    return text if len(text) <= 80 else text[:77] + "..."


def read_yaml(
    value: Any,
    setting: str,
    path: str,
    line: int | None,
    what: str,
    found: list[Unevaluable] | None = None,
) -> bool:
    """A YAML config value: a boolean, or Jinja (folded, else recorded in ``found``: true).

    Any other value is refused, as before: dbt validates these as booleans.
    """
    if isinstance(value, bool):
        return value
    if is_jinja(value):
        folded = fold(value)
        if folded is not None:
            return folded
        if found is not None:
            found.append((setting, shown(value), path, line))
        return True
    raise ContractError(path, f"{what} must be true or false, found {describe(value)}", line)


def merge(
    general: tuple[Unevaluable, ...], specific: tuple[Unevaluable, ...], decided: set[str]
) -> tuple[Unevaluable, ...]:
    """``general`` entries for settings the more specific level did not decide, then its own."""
    return tuple(e for e in general if e[0] not in decided) + specific


#: dbt's test severities (``Severity``: ``warn`` or ``error``, any case); default ``error``.
WARN, ERROR = "warn", "error"


def severity_value(value: Any) -> str | None:
    """``warn``/``error`` as dbt reads a ``severity``; ``None`` when not said. A value
    the gate cannot evaluate (Jinja other than a constant string) reads as ``error``:
    fail closed, the test stays a promise."""
    if value is None:
        return None
    if not isinstance(value, str):
        return ERROR
    text = value
    if is_jinja(text):
        folded = fold_text(text)
        if folded is None:
            return ERROR
        text = folded
    # dbt's pattern takes any case, no spaces (``"warn "`` fails its validation)
    return WARN if text.lower() == WARN else ERROR
