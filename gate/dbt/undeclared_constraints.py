"""Model-level constraints naming an undeclared column, decided once the model file is read.

dbt checks no model-level constraint's ``columns`` against the declared ones; it
renders the constraint into a table's DDL (the warehouse fails it) and renders none
for a view (it builds). Whether a model is a table or a view is dbt's config
precedence: ``dbt_project.yml``'s ``+materialized``, over it the properties'
``config:``, over both the model file's own ``config()`` (dbt-core's
``ContextConfigGenerator.calculate_node_config`` applies the project's levels, then
``patch_config_dict``, then ``config_call_dict``). The properties parser reads the
first two (``Dataset.view_only``, ``Dataset.table_only``); this module adds the
third, the model file's literal ``materialized`` (``Dataset.materialized``:
``NOT_LITERAL`` for Jinja or a call under a condition, where the other levels' reading
stands), on both the two-side path (``gate.read_sides``) and the single-side one
(``gate.contract_files.every_contract``). Said at none of the three levels
(``Dataset.materialized_said`` false, ``materialized`` ``None``), a SQL model is
dbt's default, a view (dbt-core's ``NodeConfig.materialized = "view"``): a warning,
as for a view said. A Python model is kept a table (dbt builds none as a view).
"""

from __future__ import annotations

from typing import NamedTuple

from gate.declarations import declares
from gate.model import ContractError, ContractWarning, Dataset

#: Materializations whose DDL dbt renders a model's constraints into (its ``table`` and
#: ``incremental`` ones). A view said elsewhere stays one for any other model file
#: literal (a custom one, ``materialized_view``: they may render none).
CONSTRAINED = frozenset({"table", "incremental"})
#: Materializations dbt renders no constraint DDL for (a view; an ephemeral model is
#: no relation at all). A table said elsewhere stays one for any other model file
#: literal (a custom materialization may render them).
UNCONSTRAINED = frozenset({"view", "ephemeral"})


class Refusal(NamedTuple):
    """A constraint the warehouse fails: the parser's ``detail`` (what the base side is
    matched on) and ``error``, which says why the model is a table."""

    detail: str
    error: ContractError


def default_view(d: Dataset) -> bool:
    """Whether nothing sets ``d``'s materialization, so dbt builds its default, a view:
    no ``+materialized`` in ``dbt_project.yml``, no properties ``config:``, no
    ``materialized`` in its model file's ``config()`` (which was read: a model file not
    found, or Jinja there, is not known to say nothing). A Python model is not (dbt
    builds Python models as tables)."""
    return (
        not d.materialized_said
        and d.materialized is None
        and d.model_file is not None
        and d.model_file.endswith(".sql")
    )


def decide(d: Dataset) -> tuple[list[Refusal], list[ContractWarning]]:
    """``d``'s undeclared-column constraints: refused where dbt builds a table with
    them, a warning (not compared) where its model file makes the table a view
    (the view's own warnings were added by the parser). Only a contract counts: an
    unenforced or disabled model renders no constraint."""
    if not declares(d):
        return [], []
    refused: list[Refusal] = []
    notes: list[ContractWarning] = []
    if d.materialized in CONSTRAINED:
        for detail, line in d.view_only:
            text = (
                f"{detail}: its model file {d.model_file}'s config(materialized="
                f"'{d.materialized}') makes it a table, which the warehouse fails"
            )
            refused.append(Refusal(detail, ContractError(d.path, text, line)))
    for detail, line in d.table_only:
        if default_view(d):
            notes.append(
                ContractWarning(
                    d.path,
                    f"{detail}: the constraint is not compared (nothing sets the model's "
                    "materialization, in dbt_project.yml, its properties or its model file "
                    f"{d.model_file}: dbt's default, a view, which dbt renders no constraint "
                    "for; a table with it fails in the warehouse)",
                    line,
                )
            )
        elif d.materialized in UNCONSTRAINED:
            notes.append(
                ContractWarning(
                    d.path,
                    f"{detail}: the constraint is not compared (its model file "
                    f"{d.model_file}'s config(materialized='{d.materialized}') makes it "
                    "a view, which dbt renders no constraint for; a table with it fails "
                    "in the warehouse)",
                    line,
                )
            )
        else:
            refused.append(Refusal(detail, ContractError(d.path, detail, line)))
    return refused, notes


def refusals(datasets: list[Dataset]) -> list[ContractError]:
    """Every refusal of ``datasets`` (one side read alone: every contract at HEAD)."""
    return [r.error for d in datasets for r in decide(d)[0]]
