"""A contract's own owners, as each format names them.

* ODCS: ``team`` (v3.1+: a mapping with ``name``; v3.0: a list of members,
  each with ``username`` or ``name``).
* DCS: ``info.owner``.
* dbt: the model's ``meta.owner`` or ``config.meta.owner``; else its
  ``group``'s owner (``groups: [{name, owner: {name, email}}]``: the name,
  else the email), declared in the same properties file or in any other
  properties file of the project (``groups``, from ``ProjectIndex.groups``).
* Soda contracts name no owner.

Names that are not ``@handles`` are mapped through ``approvals.owners`` in
the config (gate.approvals.decide); a name that maps to nobody fails closed.
Read from the base side's file: a pull request cannot make its author owner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gate.model import ContractError, Dataset
from gate.yaml_load import load_yaml


def _names(value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, list):
        return [n for v in value for n in _names(v)]
    if isinstance(value, dict):
        for key in ("username", "name", "email"):
            if isinstance(value.get(key), str) and value[key].strip():
                return [value[key].strip()]
    return []


def _odcs(doc: dict[str, Any]) -> list[str]:
    team = doc.get("team")
    if isinstance(team, dict):
        return _names(team.get("name")) or _names(team.get("members"))
    return _names(team)


def _dcs(doc: dict[str, Any]) -> list[str]:
    info = doc.get("info")
    return _names(info.get("owner")) if isinstance(info, dict) else []


#: The dbt project's groups (name -> owner), read only when a model needs them.
Groups = Callable[[], Mapping[str, Any]]


def _dbt(doc: dict[str, Any], dataset_id: str, project_groups: Groups | None) -> list[str]:
    name = dataset_id.rsplit(".", 1)[-1] if "." in dataset_id else dataset_id
    base = dataset_id.split(".v")[0].rsplit(".", 1)[-1]
    raw_models = doc.get("models")
    models: list[Any] = raw_models if isinstance(raw_models, list) else []
    raw_groups = doc.get("groups")
    groups = {
        g.get("name"): g.get("owner")
        for g in (raw_groups if isinstance(raw_groups, list) else [])
        if isinstance(g, dict)
    }
    for model in models:
        if not isinstance(model, dict) or model.get("name") not in (name, base, dataset_id):
            continue
        raw_config = model.get("config")
        config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        for meta in (model.get("meta"), config.get("meta")):
            if isinstance(meta, dict) and _names(meta.get("owner")):
                return _names(meta.get("owner"))
        group = model.get("group") or config.get("group")
        if isinstance(group, str) and group in groups:
            return _names(groups[group])
        elsewhere = project_groups() if isinstance(group, str) and project_groups else {}
        if isinstance(group, str) and group in elsewhere:
            return _names(elsewhere[group])
    return []


def contract_owners(
    dataset: Dataset, data: bytes | None, groups: Groups | None = None
) -> tuple[str, ...]:
    """The owner names ``dataset``'s base-side file gives it (empty: none, or unreadable).

    ``groups``: the dbt project's groups (name -> owner) declared in other files,
    asked only for a model whose group its own file does not declare.
    """
    if data is None:
        return ()
    try:
        # dbt keeps a repeated key's last value; the other formats refuse the file
        doc = load_yaml(data, dataset.path, duplicate_keys=[] if dataset.format == "dbt" else None)
    except ContractError:
        return ()
    if not isinstance(doc, dict):
        return ()
    if dataset.format == "odcs":
        found = _odcs(doc)
    elif dataset.format == "dcs":
        found = _dcs(doc)
    elif dataset.format == "dbt":
        found = _dbt(doc, dataset.id, groups)
    else:
        found = []
    return tuple(dict.fromkeys(found))
