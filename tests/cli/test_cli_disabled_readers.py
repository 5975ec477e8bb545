"""A reader dbt does not build (``enabled: false``) breaks nothing: no ``consumer_broken``.

TEAMSchools/teamster at 0cdc7eef against its first contracts (2025-03): 5 of its 7
``consumer_broken`` findings were reads in models whose (unchanged) properties entry
says ``config: {enabled: false}`` (e.g. ``int_performance_management__scores_archive``).
Each test builds its own small repository with the pattern; nothing is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = (
    "name: warehouse\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
    "models:\n  warehouse:\n    staging:\n      +contract: {enforced: true}\n"
)
LEGACY_OFF = PROJECT + "    legacy:\n      +enabled: false\n"
READ = "select s.student_id, s.email\nfrom {{ ref('stg_students') }} as s\n"


def _contract(*columns: str) -> str:
    listed = "".join(f"      - name: {c}\n        data_type: string\n" for c in columns)
    return f"models:\n  - name: stg_students\n    columns:\n{listed}"


def _entry(name: str, enabled: str | None) -> str:
    config = f"    config:\n      enabled: {enabled}\n" if enabled is not None else ""
    return f"models:\n  - name: {name}\n{config}"


def _run(cli: Cli, repo: GitRepo, readers: dict[str, str], project: str = PROJECT) -> str:
    files = {
        "dbt_project.yml": project,
        "models/staging/stg_students.sql": "select 1 as student_id, 'a' as email\n",
        "models/staging/_staging.yml": _contract("student_id", "email"),
        **readers,
    }
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/staging/_staging.yml", _contract("student_id"))
    repo.commit("pr: drop email")
    proc = cli(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed stg_students.email" in proc.stdout, proc.stdout
    return proc.stdout


def _broken(stdout: str) -> set[str]:
    """The reader files the ``consumer_broken`` findings point at."""
    lines = stdout.splitlines()
    out = set()
    for i, line in enumerate(lines):
        if line.strip().startswith("consumer_broken") and i + 1 < len(lines):
            anchor = lines[i + 1].rsplit("(", 1)[-1]
            out.add(anchor.split(":", 1)[0])
    return out


LIVE = {"models/marts/live.sql": READ}


@pytest.mark.parametrize(
    "readers",
    [
        # the properties entry, in a file the pull request does not change
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/properties/old.yml": _entry("old", "false"),
            },
            id="properties-entry",
        ),
        # the model file's own config() call
        pytest.param(
            {"models/marts/old.sql": "{{ config(enabled=false) }}\n" + READ}, id="config-call"
        ),
        # a folder level of dbt_project.yml
        pytest.param({"models/legacy/old.sql": READ}, id="project-folder"),
        # a constant Jinja value dbt renders to false
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/old.yml": _entry("old", '"{{ false }}"'),
            },
            id="constant-jinja",
        ),
        # the entry's name written with YAML escapes: the parsed name counts, not its spelling
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/properties/x.yml": _entry('"o\\x6cd"', "false"),
            },
            id="escaped-name",
        ),
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/properties/x.yml": _entry('"\\u006f\\u006c\\u0064"', "false"),
            },
            id="unicode-escaped-name",
        ),
    ],
)
def test_a_disabled_reader_is_not_broken_and_an_enabled_one_beside_it_is(
    cli: Cli, repo: GitRepo, readers: dict[str, str]
) -> None:
    stdout = _run(cli, repo, {**LIVE, **readers}, LEGACY_OFF)
    assert _broken(stdout) == {"models/marts/live.sql"}, stdout


@pytest.mark.parametrize(
    "readers",
    [
        # Jinja the gate cannot evaluate: fail closed, the reader may well be built
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/old.yml": _entry("old", "\"{{ var('legacy_on', false) }}\""),
            },
            id="jinja-entry",
        ),
        pytest.param(
            {"models/marts/old.sql": "{{ config(enabled=var('legacy', false)) }}\n" + READ},
            id="jinja-config-call",
        ),
        # the model file's config() goes over its properties entry and the project
        pytest.param(
            {
                "models/marts/old.sql": "{{ config(enabled=true) }}\n" + READ,
                "models/marts/old.yml": _entry("old", "false"),
            },
            id="file-over-entry",
        ),
        pytest.param(
            {"models/legacy/old.sql": "{{ config(enabled=true) }}\n" + READ},
            id="file-over-project",
        ),
        # the properties entry goes over the project's folder level
        pytest.param(
            {"models/legacy/old.sql": READ, "models/legacy/old.yml": _entry("old", "true")},
            id="entry-over-project",
        ),
        pytest.param(
            {
                "models/legacy/old.sql": READ,
                "models/legacy/x.yml": _entry('"o\\x6cd"', "true"),
            },
            id="escaped-entry-over-project",
        ),
        # an unloadable file that may spell the name with escapes: unknown, so enabled
        pytest.param(
            {
                "models/legacy/old.sql": READ,
                "models/legacy/x.yml": 'models:\n  - name: "o\\x6cd"\n    config: {enabled: true\n',
            },
            id="unloadable-escaped-entry",
        ),
        # two entries of one name (dbt refuses): which one counts is unknown
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/a.yml": _entry("old", "false"),
                "models/marts/b.yml": _entry("old", "true"),
            },
            id="two-entries",
        ),
        # a properties file that does not load: what it says (maybe enabled: true over
        # the folder's +enabled: false) is unknown
        pytest.param(
            {
                "models/legacy/old.sql": READ,
                "models/legacy/old.yml": "models:\n  - name: old\n    config: {enabled: true\n",
            },
            id="unloadable-entry",
        ),
        # a versioned entry: which file is which version is not read here
        pytest.param(
            {
                "models/marts/old.sql": READ,
                "models/marts/old.yml": _entry("old", "false") + "    versions:\n      - v: 1\n",
            },
            id="versioned-entry",
        ),
    ],
)
def test_a_reader_that_may_be_built_still_breaks(
    cli: Cli, repo: GitRepo, readers: dict[str, str]
) -> None:
    stdout = _run(cli, repo, {**LIVE, **readers}, LEGACY_OFF)
    broken_reader = next(p for p in readers if p.endswith(".sql"))
    assert _broken(stdout) == {"models/marts/live.sql", broken_reader}, stdout


def test_a_reader_outside_the_dbt_project_is_not_looked_up(cli: Cli, repo: GitRepo) -> None:
    # Plain SQL beside a properties entry of its name: not a dbt model, still broken.
    readers = {
        "reports/old.sql": "select email from stg_students\n",
        "models/marts/old.yml": _entry("old", "false"),
    }
    stdout = _run(cli, repo, {**LIVE, **readers})
    assert _broken(stdout) == {"models/marts/live.sql", "reports/old.sql"}, stdout
