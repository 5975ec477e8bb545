"""dbt exposures in the repository: the dashboards and applications that read models.

An exposure (``exposures:`` in a dbt properties file) names what it reads in
``depends_on``: ``ref('orders')``, ``ref('platform', 'orders')``,
``ref('orders', v=2)``, ``source('shop', 'orders')``, ``metric('revenue')``.
dbt checks these when it parses the project (a node that is gone fails it),
and the dashboard behind them reads the table without naming its columns. So
an exposure is a reader of the whole model: of the dataset (what model-level
changes list, and what ``consumer_broken`` checks when the model goes) and of
every column (``*``: listed under a column change, never broken by one, as
``select *`` is). Its usage is ``exposure``, its object the exposure's name,
its line the ``depends_on`` entry's.

Pure: one file's bytes in, reads out (``gate.consumers.scan`` finds the files).
A ``metric()`` names no table (its model is named by a semantic model, which is
not read); an entry that is none of the three, or a file that is not YAML, is
*not analysed* with the reason, so usage-aware severity lowers nothing on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gate.consumers.names import NameIndex, ScopedIndex, split_name
from gate.dbt.projects import literal
from gate.formats.dbt.project import PROJECT_FILE
from gate.git import Repo
from gate.model import ContractError, NotAnalysed
from gate.yaml_load import YList, YMap, load_yaml

if TYPE_CHECKING:  # the reader imports sqlglot's optimizer: only once a file is read
    from gate.consumers.reader import FileResult, Found

#: The usage of an exposure's read, as reports print it.
USAGE = "exposure"
#: Where dbt reads properties files from, less its own outputs and packages.
GLOBS = ("**/*.yml", "**/*.yaml", "!**/target/**", "!**/dbt_packages/**", "!**/dbt_modules/**")
#: The word a file must contain to declare exposures (``git grep -w``).
KEY = "exposures"


def globs(repo: Repo, head: str | None) -> tuple[str, ...]:
    """``GLOBS`` under the folders that hold a ``dbt_project.yml`` at ``head``.

    dbt reads exposures only inside a project (the scan keeps the files a
    project reads), so the YAML elsewhere need not be searched: on a repository
    of 10,000 Soda contracts and no dbt project, searching all of them was
    80-130 ms of CPU per run with a break. No project: nothing to search.
    """
    folders = repo.folders_holding(head, PROJECT_FILE)
    if not folders or "" in folders:
        return GLOBS if folders else ()
    kept = [g for g in GLOBS if not g.startswith("!")]
    return (
        *(f"{literal(folder)}/{glob}" for folder in folders for glob in kept),
        *(g for g in GLOBS if g.startswith("!")),
    )


def _line(items: Any, index: int, fallback: int | None) -> int:
    if isinstance(items, YList):
        return items.item_line(index)
    return fallback or 1


def read_exposures(path: str, data: bytes, lookup: NameIndex | ScopedIndex) -> FileResult:
    """The contracted datasets the exposures of one properties file depend on."""
    from gate.consumers import jinja  # here too: globs() alone needs no Jinja reader
    from gate.consumers.reader import FileResult, Found

    try:
        doc = load_yaml(data, path, duplicate_keys=[])  # dbt keeps a repeated key's last value
    except ContractError as exc:
        return FileResult(
            not_analysed=(NotAnalysed(path, f"dbt exposures: {exc.detail}", exc.line),)
        )
    exposures = doc.get(KEY) if isinstance(doc, dict) else None
    if exposures is None:
        return FileResult()
    if not isinstance(exposures, list):
        # dbt refuses it, yet it names readers the gate cannot list: fail closed
        line = doc.key_line(KEY) if isinstance(doc, YMap) else None
        reason = "dbt exposures: 'exposures' is not a list"
        return FileResult(not_analysed=(NotAnalysed(path, reason, line or 1),), kind="dbt")
    index = lookup.index if isinstance(lookup, ScopedIndex) else lookup
    found: list[Found] = []
    problems: list[NotAnalysed] = []
    for at, exposure in enumerate(exposures):
        if not isinstance(exposure, dict):
            line = _line(exposures, at, None)
            problems.append(NotAnalysed(path, "dbt exposures: an exposure is not a mapping", line))
            continue
        name = exposure.get("name")
        where = exposure.line if isinstance(exposure, YMap) else _line(exposures, at, None)
        label = name if isinstance(name, str) and name else f"exposure at line {where}"
        depends = exposure.get("depends_on")
        if depends is None:
            continue
        if not isinstance(depends, list):
            line = exposure.key_line("depends_on") if isinstance(exposure, YMap) else where
            problems.append(
                NotAnalysed(path, f"exposure '{label}': depends_on is not a list", line)
            )
            continue
        for i, entry in enumerate(depends):
            line = _line(depends, i, where)
            table = jinja.dependency(entry) if isinstance(entry, str) else None
            if table is None:
                problems.append(
                    NotAnalysed(
                        path,
                        f"exposure '{label}': depends_on entry is not ref(), source() or metric()",
                        line,
                    )
                )
                continue
            if not table:
                continue  # a metric()
            written = split_name(table)
            also = tuple(sorted(lookup.claimants(written))) if index.tiered else ()
            for dataset_id in sorted(lookup.lookup(written)):
                found.append(Found(dataset_id, written, None, path, line, label, USAGE, also))
                found.append(Found(dataset_id, written, "*", path, line, label, USAGE))
    return FileResult(found=tuple(dict.fromkeys(found)), not_analysed=tuple(problems), kind="dbt")
