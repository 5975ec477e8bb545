"""A project's own ``generate_database_name`` / ``generate_schema_name`` /
``generate_alias_name`` macros, and the HEAD relations that mention them.

dbt computes a model's final database, schema and table name with these macros;
a project that defines one in its own macros replaces dbt's default (a common
override builds the schema from the custom schema alone, without the target's
prefix). The gate renders no Jinja, so it compares the configured values, the
macro's input, and says in the finding that the final name comes from the
project's macro. Looked up only for the projects of models whose relation
changed: one ``git grep -F`` over the project's resource paths, then one batch
read of the files it names. The same relations get the database their profile
targets, read at the **base** (gate/dbt/profiles.py): what none means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from gate.dbt.profiles import TargetDatabase, target_database
from gate.dbt.projects import ProjectIndex, literal
from gate.formats.dbt.project import Project
from gate.model import Dataset

MACROS = ("generate_database_name", "generate_schema_name", "generate_alias_name")
_DEFINITION = re.compile(r"\{%-?\s*macro\s+(" + "|".join(MACROS) + r")\s*\(", re.ASCII)
#: Bytes of one macro file read here.
_MAX_BYTES = 1024 * 1024


def overridden(index: ProjectIndex, project: Project) -> tuple[str, ...]:
    """The ``generate_*_name`` macros the project defines, in ``MACROS`` order."""
    globs = [
        f"{literal(source)}/**/*.sql" if source else "**/*.sql" for source in project.source_paths
    ]
    found = index.repo.files_containing(index.commit, globs, MACROS)
    mine = [
        path
        for path, owner in index.locate(found).items()
        if owner is not None and owner.root == project.root  # not a nested project's
    ]
    names: set[str] = set()
    for data in index.repo.read_optional(index.commit, mine).values():
        if data is None:
            continue
        names.update(_DEFINITION.findall(data[:_MAX_BYTES].decode("utf-8", "replace")))
    return tuple(m for m in MACROS if m in names)


def mark(
    index: ProjectIndex,
    head: Sequence[Dataset],
    projects: Mapping[str, Project | None],
    base: Sequence[Dataset],
    base_index: ProjectIndex | None = None,
    profiles_at: str | None = None,
) -> list[Dataset]:
    """HEAD's guarded dbt datasets whose relation is not the base's same-id one, with
    the macros their project overrides (``Relation.macros``) and, when the database
    changed, what its profile targets on the base branch (at ``profiles_at``, the
    base branch's tip where the floor is read, like the dialect; else
    ``base_index``'s commit); the others as they are."""
    before = {d.id: d.relation for d in base if d.relation is not None}
    cache: dict[str, tuple[str, ...]] = {}
    targets: dict[str, TargetDatabase] = {}
    out: list[Dataset] = []
    for dataset in head:
        project = projects.get(dataset.path)
        old = before.get(dataset.id)
        moved = dataset.relation is not None and old != dataset.relation
        if project is None or not moved or not dataset.enforced or dataset.relation is None:
            out.append(dataset)
            continue
        if project.root not in cache:
            cache[project.root] = overridden(index, project)
        relation = replace(dataset.relation, macros=cache[project.root])
        database_moved = old is None or old.database != relation.database
        if base_index is not None and database_moved:
            if project.root not in targets:
                targets[project.root] = target_database(
                    base_index.repo, profiles_at or base_index.commit, project.root
                )
            found = targets[project.root]
            relation = replace(relation, target_database=found.value, target_source=found.source)
        out.append(replace(dataset, relation=relation))
    return out
