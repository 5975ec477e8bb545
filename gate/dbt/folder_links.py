"""dbt resource folders reached through a symlink: refused, never read as empty.

dbt walks each resource path following symlinks (dbt-core's ``find_matching``:
``os.walk(..., followlinks=True)``); git lists a symlinked folder as one entry
and nothing below it. A project whose ``models/`` is a link to
``../shared/models`` held an enforced contract no listing of the gate ever
saw: a pull request turning the link into a real folder whose contract drops a
column read as a model added, exit 0. So a folder link inside (or above) a dbt
project's model paths (where its models and their contracts live) stops the
run with its name, at either side; the config's exclusions (``!shop/models``)
take it out as they take out any file. A link in the other resource paths
(a shared ``macros/``, common in monorepos) is left alone: no model is built
from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.dbt.projects import ProjectIndex
from gate.formats.dbt.project import PROJECT_FILE
from gate.model import ContractError, UsageError

_VENDORED = frozenset({"dbt_packages", "dbt_modules"})  # other projects' code


def refuse_folder_links(index: ProjectIndex, negations: Sequence[str]) -> None:
    """Raise ``UsageError`` naming the first symlinked folder a dbt project at the
    index's side reads through. At a commit without a symlink, one cached check."""
    repo, commit = index.repo, index.commit
    folders = repo.folders_holding(commit, PROJECT_FILE)  # the run asks it anyway
    links = repo.folder_links(commit, negations) if folders else []
    if not links:
        return
    by_link = {link: _ancestry(link) for link in links}
    for folder in folders:
        if not _VENDORED.isdisjoint(folder.split("/")):
            continue
        try:
            project = index.project_in(folder)
        except ContractError:
            continue  # an unreadable project is reported where it is read
        if project is None:
            continue
        link = _first_reaching(links, by_link, project.model_paths)
        if link is not None:
            side = (
                "the working tree"
                if commit is None
                else ("the base" if index.side == "base" else "HEAD")
            )
            raise UsageError(
                f"{link}: a symlink to a folder in dbt project '{project.name}' at {side}"
                " (dbt reads the files through it; git lists one entry, so the gate"
                f" cannot compare them); replace it with the folder, or exclude it"
                f" ('!{link}')"
            )


def _ancestry(path: str) -> list[str]:
    """``path`` and every folder above it (``a/b/c``: ``a/b/c``, ``a/b``, ``a``)."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _first_reaching(
    links: Sequence[str], by_link: dict[str, list[str]], sources: Sequence[str]
) -> str | None:
    """The first of ``links`` dbt goes through walking ``sources`` (a link at a source,
    inside one, or on the way to one), asked per link by its own folders and the
    sources' folders, never link by source: a pull request's thousands of links
    beside thousands of projects cost their sum, not their product."""
    if not sources:
        return None
    if "" in sources:  # a project reading the repository's root walks every link
        return links[0]
    walked = set(sources)
    above = {folder for source in sources for folder in _ancestry(source)[1:]}
    for link in links:
        if link in above or any(folder in walked for folder in by_link[link]):
            return link
    return None


__all__ = ["refuse_folder_links"]
