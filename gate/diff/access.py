"""The access family (``model_access_narrowed``): a dbt model other projects may no
longer ``ref()``.

dbt Mesh compiles ``ref('<project>', '<model>')`` from another project only for a
``public`` model (docs.getdbt.com, docs/mesh/govern/model-access and
reference/resource-configs/access); ``protected`` (dbt's default) still lets every
group of the same project read it, ``private`` only the model's own group.

So ``public`` -> ``protected``/``private`` breaks readers the pull request cannot
see: it is reported, and the readers the gate knows (a dbt Mesh manifest's, or
another project in this repository) are listed under it. ``protected`` ->
``private`` breaks only readers in the same project, whose ``dbt parse`` in this
same pull request already refuses the ``ref()`` ("... is private"): not reported.
An ``access`` the gate cannot evaluate (Jinja) is no finding either way.
"""

from __future__ import annotations

from gate import rules
from gate.diff.emitter import DatasetPair

PUBLIC = "public"
NARROWER = frozenset({"protected", "private"})


def narrowed(pair: DatasetPair) -> None:
    """``model_access_narrowed`` when a public dbt model became protected or private."""
    old, new = pair.old.access, pair.new.access
    if old != PUBLIC or new not in NARROWER:
        return
    project = pair.new.project or pair.old.project
    name = pair.old.id.rsplit(".v", 1)[0]  # a version's model: ref('p', 'm', v=N)
    ref = f"ref('{project}', '{name}')" if project else f"ref('<project>', '{name}')"
    pair.emit(
        rules.MODEL_ACCESS_NARROWED,
        f"dataset '{pair.new.id}' is no longer public ({old} -> {new}): other dbt projects' "
        f"{ref} no longer compile",
        before=old,
        after=new,
    )
