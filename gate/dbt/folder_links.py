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
from there. Between two commits, a link is let be where nothing dbt reads
through it can differ: its project's folder the same tree at both sides, and
every symlink of the repository leading to the same object (so the linked
folder, and any link inside it, too). Otherwise a base holding such a link
refused every pull request, one editing a README too, with no way out: the
config that could exclude it is read at the base.

Reading through the link instead (the folder it leads to, as dbt does) was
weighed and left: no clone of the replay (85 public repositories, every
commit of their fetched history) holds a folder link in or above a dbt model
path, and every listing, search and model-file lookup of both sides would
need the link's paths mapped onto its target's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate.dbt.projects import ProjectIndex
from gate.formats.dbt.project import PROJECT_FILE
from gate.model import ContractError, UsageError

_VENDORED = frozenset({"dbt_packages", "dbt_modules"})  # other projects' code


#: Whether the given folders are the same trees at both sides of the run (``collect``).
Unchanged = Callable[[Sequence[str]], bool]


def refuse_folder_links(
    index: ProjectIndex, negations: Sequence[str], unchanged: Unchanged | None = None
) -> None:
    """Raise ``UsageError`` naming the first symlinked folder a dbt project at the
    index's side reads through. At a commit without a symlink, one cached check.

    ``unchanged``: a link is let be where its project's folder and the folder it
    leads to are the same trees at both sides (the link itself is an entry of the
    project's tree): dbt reads the same files through it before and after, so no
    contract behind it changed, and a base holding such a link does not refuse
    every pull request (nor the one that replaces it, were it allowed through,
    since the config that could exclude it is read at the base)."""
    repo, commit = index.repo, index.commit
    folders = repo.folders_holding(commit, PROJECT_FILE)  # the run asks it anyway
    links = repo.folder_links(commit, negations) if folders else []
    if not links:
        return
    below = _below(links)
    for folder in folders:
        if not _VENDORED.isdisjoint(folder.split("/")):
            continue
        try:
            project = index.project_in(folder)
        except ContractError:
            continue  # an unreadable project is reported where it is read
        if project is None:
            continue
        link = _first_reaching(links, below, project.model_paths)
        if link is not None and not (
            unchanged and project.root and unchanged([project.root, link])
        ):
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


def _below(links: Sequence[str]) -> dict[str, str]:
    """Folder -> the first of ``links`` at or below it (each link under each of its
    folders: the links' total depth, once a side)."""
    out: dict[str, str] = {}
    for link in links:
        for folder in _ancestry(link):
            out.setdefault(folder, link)
    return out


def _first_reaching(
    links: Sequence[str], below: dict[str, str], sources: Sequence[str]
) -> str | None:
    """The first of ``links`` dbt goes through walking ``sources``: a link at a source
    or inside one (``below``), or on the way to one (a folder above it that is a link:
    the first link below itself). Asked by the sources' folders, never link by source:
    a pull request's thousands of links beside thousands of projects cost their sum,
    not their product."""
    if not sources:
        return None
    if "" in sources:  # a project reading the repository's root walks every link
        return links[0]
    hits = {below[source] for source in sources if source in below}
    hits |= {
        folder
        for source in sources
        for folder in _ancestry(source)[1:]
        if below.get(folder) == folder
    }
    return min(hits) if hits else None  # ``links`` are sorted: the first of them


__all__ = ["refuse_folder_links"]
