"""dbt model versions: the ``v`` label, and which version ``latest_version`` defaults to.

Split from the properties parser because version labels follow dbt's own
rules (an integer, a float or a string, declared once; the greatest
numerically when every label is a number) that the version walk and
``latest_version`` both use.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from gate.formats.common import describe, require_mapping
from gate.formats.dbt.flags import is_jinja, shown
from gate.model import ContractError, ContractWarning, Dataset
from gate.yaml_load import YMap

#: ``"{{ 2 }}"``, ``"{{- 'v2' -}}"``: Jinja that renders one constant label (a number or a
#: quoted string; ``{{ target.name }}`` is a variable, not a label).
_CONSTANT = re.compile(r"^\{\{-?\s*(?:'([^'{}]*)'|\"([^\"{}]*)\"|(\d+(?:\.\d+)?))\s*-?\}\}$")


def version_label(value: Any, path: str, line: int, owner: str) -> str:
    """``v`` may be an integer, a float or a string (dbt accepts all three)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ContractError(
            path,
            f"{owner}: version 'v' must be a number or a string, found {describe(value)}",
            line,
        )
    label = str(value).strip()
    if not label:
        raise ContractError(path, f"{owner}: version 'v' is empty", line)
    return label


def latest(labels: list[str]) -> str:
    """dbt's default ``latest_version``: the greatest version, numerically when it can."""
    try:
        return max(labels, key=float)
    except ValueError:
        return max(labels)


def entry(
    path: str, value: Any, index: int, line: int, owner: str, labels: list[str]
) -> tuple[YMap, str]:
    """One entry of ``versions:`` and its label, not one of ``labels`` already declared."""
    version = require_mapping(value, path, f"{owner}: version #{index + 1}", line)
    if version.get("v") is None:
        raise ContractError(path, f"{owner}: version #{index + 1} has no 'v'", line)
    label = version_label(version["v"], path, version.key_line("v"), owner)
    if label in labels:
        raise ContractError(
            path, f"{owner}: version {label} is declared twice", version.key_line("v")
        )
    return version, label


def mark_latest(
    datasets: list[Dataset],
    labels: list[str],
    model: YMap,
    path: str,
    owner: str,
    name: str,
    warnings: list[ContractWarning] | None = None,
) -> list[Dataset]:
    """Mark the version an unpinned ``ref('<name>')`` resolves to (``latest_version``).

    dbt renders Jinja in a properties file before it reads ``latest_version``
    (``"{{ 2 if target.name == 'uat' else 1 }}"`` picks a version per target).
    Constant Jinja is folded; any other expression is dbt's default here (the
    greatest version), with a warning in ``warnings``: refusing it refused a
    project that parses.
    """
    chosen = latest(labels)
    raw = model.get("latest_version")
    line = model.key_line("latest_version")
    if isinstance(raw, str) and is_jinja(raw):
        constant = _CONSTANT.match(raw.strip())
        if constant is None:
            if warnings is not None:
                warnings.append(
                    ContractWarning(
                        path,
                        f"{owner}: latest_version '{shown(raw)}' is an expression the gate "
                        f"cannot evaluate: unpinned ref('{name}') is read as version {chosen}, "
                        "dbt's default",
                        line,
                    )
                )
            raw = None
        else:
            raw = next(group for group in constant.groups() if group is not None)
    if raw is not None:
        chosen = version_label(raw, path, line, owner)
        if chosen not in labels:
            raise ContractError(
                path,
                f"{owner}: latest_version {chosen} is not one of its versions",
                model.key_line("latest_version"),
            )
    index = labels.index(chosen)
    # dbt lets the latest version live in ``<model>.sql`` when its own file is absent.
    datasets[index] = replace(
        datasets[index],
        unpinned_name=name,
        model_names=tuple(dict.fromkeys((*datasets[index].model_names, name))),
    )
    return datasets
