"""The symlinked-folder check (``gate.dbt.folder_links``) does work linear in the
links and projects a pull request adds, never their product.

Each link was compared with each project's every model path: 400 projects of
five model paths beside 4,800 folder links that reach none of them (shared
``macros`` links, as monorepos share their macros) were 9.6 million comparisons,
~4 s of CPU a side, before any contract was read (2,000 by 2,000: 10 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.dbt.folder_links import refuse_folder_links
from gate.dbt.projects import ProjectIndex
from gate.git import open_repo
from gate.model import UsageError
from tests.cost import cpu_seconds
from tests.gitrepo import GitRepo

PROJECTS = 400
LINKS = 12  # a project


def _projects(tmp_path: Path, reaching: bool) -> tuple[ProjectIndex, str]:
    g = GitRepo(tmp_path / "r")
    g.write("shared/macros/m.sql", "{% macro m() %}1{% endmacro %}\n")
    for i in range(PROJECTS):
        g.write(
            f"p{i}/dbt_project.yml",
            f"name: p{i}\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models, more, m3, m4, m5]\n",
        )
        for n in range(LINKS):
            (g.path / f"p{i}/macros{n}").symlink_to("../shared/macros")
    if reaching:
        (g.path / f"p{PROJECTS - 1}/more").symlink_to("../shared/macros")
    sha = g.commit("base")
    repo = open_repo(g.path)
    index = ProjectIndex(repo, sha, "base")
    for folder in repo.folders_holding(sha, "dbt_project.yml"):
        index.project_in(folder)  # read every project first: only the check is measured
    return index, sha


def test_many_projects_beside_many_links_cost_no_product(tmp_path: Path) -> None:
    index, _sha = _projects(tmp_path, reaching=False)
    with cpu_seconds() as cpu:
        refuse_folder_links(index, [])
    assert cpu.seconds < 1, cpu.seconds


def test_the_one_link_that_reaches_a_model_path_is_still_named(tmp_path: Path) -> None:
    index, _sha = _projects(tmp_path, reaching=True)
    last = PROJECTS - 1
    with pytest.raises(UsageError, match=f"^p{last}/more: a symlink to a folder in dbt project"):
        refuse_folder_links(index, [])


def _reaches(link: str, source: str) -> bool:
    """The link-by-source question, as it was asked: at, inside, or above a source."""
    return link == source or link.startswith(f"{source}/") or source.startswith(f"{link}/")


def test_the_first_reaching_link_is_the_one_asked_link_by_source() -> None:
    from gate.dbt.folder_links import _below, _first_reaching

    folders = ["a", "a/b", "a/b/c", "a/bc", "ab", "x/y", "x/y/z", "m"]
    links_sets = [sorted(set(folders[i::k])) for k in (1, 2, 3) for i in range(k)]
    sources_sets = [["a"], ["a/b"], ["a/b/c/d"], ["ab", "x"], ["x/y/z/w"], ["q"], ["a/bc", "m/n"]]
    for links in links_sets:
        # git lists nothing below a symlink: no link inside another
        links = [lk for lk in links if not any(lk.startswith(f"{o}/") for o in links)]
        below = _below(links)
        for sources in sources_sets:
            brute = next((lk for lk in links if any(_reaches(lk, s) for s in sources)), None)
            assert _first_reaching(links, below, sources) == brute, (links, sources)
