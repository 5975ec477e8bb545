"""The ``contract`` and ``enabled`` settings of a model's own ``config()`` call.

dbt ranks a model file's ``{{ config(...) }}`` (SQL) or ``dbt.config(...)``
(Python) above its properties file and ``dbt_project.yml``
(``ContextConfig.calculate_node_config`` applies ``config_call_dict`` last), so
a model can switch its contract on or off there. The gate does not render
Jinja; it reads the keyword arguments of ``config(`` calls as text:
``contract={'enforced': true}`` / ``contract={"enforced": True}`` and
``enabled=false``. A value it cannot read as a literal (``var('x')``, a Jinja
expression) counts as ``true``, so the model stays guarded: fail closed.
"""

from __future__ import annotations

import re

#: ``config(`` as a call: ``{{ config(``, ``{{- config(``, ``dbt.config(``.
_CALL = re.compile(r"(?<![\w.])(?:dbt\s*\.\s*)?config\s*\(")
_ENABLED = re.compile(r"(?<![\w])enabled\s*=\s*([^,)\s]+)")
_CONTRACT = re.compile(r"(?<![\w])contract\s*=\s*\{([^}]*)\}")
_ENFORCED = re.compile(r"""['"]enforced['"]\s*:\s*([^,}\s]+)""")
_LITERALS = {"true": True, "false": False}


def _literal(text: str) -> bool:
    """``true``/``True`` and ``false``/``False``; anything else is unknowable: ``True``."""
    return _LITERALS.get(text.strip().lower(), True)


def _calls(source: str) -> list[str]:
    """The argument text of every ``config(...)`` call, parentheses balanced."""
    out: list[str] = []
    for match in _CALL.finditer(source):
        depth, start = 1, match.end()
        for index in range(start, min(len(source), start + 20_000)):
            char = source[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    out.append(source[start:index])
                    break
    return out


def model_settings(source: bytes | str) -> tuple[bool | None, bool | None]:
    """``(enforced, enabled)`` a model file's ``config()`` calls set; ``None`` = not said.

    A later call wins, as dbt applies them in order.
    """
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    enforced: bool | None = None
    enabled: bool | None = None
    for arguments in _calls(text):
        for found in _ENABLED.finditer(arguments):
            enabled = _literal(found.group(1))
        for contract in _CONTRACT.finditer(arguments):
            said = _ENFORCED.search(contract.group(1))
            if said:
                enforced = _literal(said.group(1))
    return enforced, enabled
