"""Patterns met replaying public dbt repositories the gate had never seen (eighth
round, docs/precision.md). Each test rebuilds, in a real git repo of its own, the
shape one public project showed; nothing of those repositories is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Cli = Callable[..., CompletedProcess[str]]

PROJECT = "name: cdbg\nversion: '1.0'\nconfig-version: 2\nprofile: cdbg\n"


def _entry(name: str, enforced: str = "true") -> str:
    return (
        f"  - name: {name}\n    config:\n      contract:\n        enforced: {enforced}\n"
        "    columns:\n"
        "      - name: borough_name\n        data_type: text\n"
        "      - name: total_population\n        data_type: integer\n"
    )


def _changes(proc: CompletedProcess[str]) -> list[dict[str, object]]:
    return list(json.loads(proc.stdout)["changes"])


# NYCPlanning/data-engineering (products/cdbg, commits 06787e0a and 31db48f4): a
# PR added an enforced entry `cdbg_borough` while the model file it wrote was
# `cdbg_boros.sql`. dbt built `cdbg_boros` (no contract) and only warned about the
# entry (NoNodeForYamlKey); the gate said `model_file_missing`. The fix renamed the
# file to `cdbg_boroughs.sql` and the entry to `cdbg_boroughs`: the gate blocked it
# as `model_removed cdbg_borough ... its consumers will break`, for a model dbt had
# never built (dbt's own contract check, which walks manifest nodes, sees nothing).
def test_removing_an_entry_that_never_had_a_model_file_is_no_break(cli: Cli, repo: GitRepo) -> None:
    repo.write("products/cdbg/dbt_project.yml", PROJECT)
    repo.write("products/cdbg/models/product/cdbg_tracts.sql", "select 1 as borough_name\n")
    repo.write("products/cdbg/models/product/cdbg_boros.sql", "select 1 as borough_name\n")
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + _entry("cdbg_borough"),
    )
    repo.commit("base: an enforced entry whose model file has another name")
    repo.branch("feature")
    repo.git(
        "mv",
        "products/cdbg/models/product/cdbg_boros.sql",
        "products/cdbg/models/product/cdbg_boroughs.sql",
    )
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + _entry("cdbg_boroughs", "false"),
    )
    repo.commit("pr: file and entry named alike")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (change,) = _changes(proc)
    assert change["rule"] == "model_file_missing"
    assert change["dataset"] == "cdbg_borough"
    assert not change["breaking"]
    assert "built nothing" in str(change["message"])


def test_removing_an_entry_whose_model_file_existed_still_blocks(cli: Cli, repo: GitRepo) -> None:
    """The other direction: the model was built at the base, so its removal breaks readers."""
    repo.write("products/cdbg/dbt_project.yml", PROJECT)
    repo.write("products/cdbg/models/product/cdbg_tracts.sql", "select 1 as borough_name\n")
    repo.write("products/cdbg/models/product/cdbg_borough.sql", "select 1 as borough_name\n")
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + _entry("cdbg_borough"),
    )
    repo.commit("base")
    repo.branch("feature")
    repo.git("rm", "-q", "products/cdbg/models/product/cdbg_borough.sql")
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts"),
    )
    repo.commit("pr removes the model")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rules = {(c["rule"], c["dataset"]) for c in _changes(proc) if c["breaking"]}
    assert rules == {("model_removed", "cdbg_borough")}


def test_disabling_an_entry_that_never_had_a_model_file_is_no_break(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("products/cdbg/dbt_project.yml", PROJECT)
    repo.write("products/cdbg/models/product/cdbg_tracts.sql", "select 1 as borough_name\n")
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + _entry("cdbg_borough"),
    )
    repo.commit("base")
    repo.branch("feature")
    disabled = _entry("cdbg_borough").replace(
        "    config:\n", "    config:\n      enabled: false\n"
    )
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + disabled,
    )
    repo.commit("pr disables the entry")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(not c["breaking"] for c in _changes(proc))


def test_without_any_model_file_in_sight_the_removal_still_blocks(cli: Cli, repo: GitRepo) -> None:
    """A project none of whose compared models has a file may generate them at build
    time: there a missing file proves nothing, and removing the entry stays a break."""
    repo.write("products/cdbg/dbt_project.yml", PROJECT)
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts") + _entry("cdbg_borough"),
    )
    repo.commit("base: no model file committed")
    repo.branch("feature")
    repo.write(
        "products/cdbg/models/product/_models.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts"),
    )
    repo.commit("pr removes an entry")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rules = {(c["rule"], c["dataset"]) for c in _changes(proc) if c["breaking"]}
    assert rules == {("model_removed", "cdbg_borough")}


def test_a_never_built_entry_alone_in_its_file_is_judged_as_beside_a_built_one(
    cli: Cli, repo: GitRepo
) -> None:
    """Whether the project commits its model files is asked of the project (its model
    paths at the base), not of the other models the pull request happens to touch:
    the same removal, in a properties file of its own, was ``model_removed``."""
    repo.write("products/cdbg/dbt_project.yml", PROJECT)
    repo.write("products/cdbg/models/product/cdbg_tracts.sql", "select 1 as borough_name\n")
    repo.write(
        "products/cdbg/models/product/_tracts.yml", "version: 2\nmodels:\n" + _entry("cdbg_tracts")
    )
    repo.write(
        "products/cdbg/models/product/_borough.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_borough"),
    )
    repo.commit("base: an entry without a file, in its own properties file")
    repo.branch("feature")
    repo.git("rm", "-q", "products/cdbg/models/product/_borough.yml")
    repo.commit("pr removes the entry")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (change,) = _changes(proc)
    assert (change["rule"], change["dataset"]) == ("model_file_missing", "cdbg_borough")


def test_a_project_of_the_same_name_that_commits_its_files_proves_nothing(
    cli: Cli, repo: GitRepo
) -> None:
    """Two projects may share a name (``dbt init``'s defaults): the one whose model
    files are generated at build time keeps its removals a break, whatever the
    other commits."""
    repo.write("built/dbt_project.yml", PROJECT)
    repo.write("built/models/cdbg_tracts.sql", "select 1 as borough_name\n")
    repo.write("built/models/_m.yml", "version: 2\nmodels:\n" + _entry("cdbg_tracts"))
    repo.write("generated/dbt_project.yml", PROJECT)
    repo.write("generated/models/_m.yml", "version: 2\nmodels:\n" + _entry("cdbg_borough"))
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "built/models/_m.yml",
        "version: 2\nmodels:\n" + _entry("cdbg_tracts").replace("text", "varchar"),
    )
    repo.write("generated/models/_m.yml", "version: 2\nmodels: []\n")
    repo.commit("pr: one project edited, the other's entry removed")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rules = {(c["rule"], c["dataset"]) for c in _changes(proc) if c["breaking"]}
    assert ("model_removed", "cdbg_borough") in rules, rules


TUVA_PROPS = (
    "version: 2\nmodels:\n  - name: input_layer__provider_attribution\n"
    "    columns:\n      - name: person_id\n        data_type: string\n"
)


def _model_sql(enabled: str) -> str:
    return (
        f"{{{{ config(\n     enabled = {enabled}\n   )\n}}}}\n\nselect * from {{{{ ref('x') }}}}\n"
    )


# tuva-health/tuva (commits 3196b29d, 16b0ad0b, 5a38145b, 1241cb18): a package
# with no contract at all gates each model with `{{ config(enabled=var(...)) }}`.
# A PR that rewrote such an expression was blocked with `dbt_config_unevaluable
# ... read as true: the model stays guarded`, for models that guard nothing.
def test_an_unevaluable_enabled_on_an_unenforced_model_is_no_finding(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("dbt_project.yml", "name: the_tuva_project\nconfig-version: 2\n")
    repo.write("models/input_layer/_models.yml", TUVA_PROPS)
    repo.write(
        "models/input_layer/input_layer__provider_attribution.sql",
        _model_sql("var('claims_enabled', False) | as_bool"),
    )
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "models/input_layer/input_layer__provider_attribution.sql",
        _model_sql("(var('provider_attribution_enabled', False) and var('claims_enabled', False))"),
    )
    repo.write("models/input_layer/_models.yml", TUVA_PROPS + "        description: id\n")
    repo.commit("pr rewrites the expression")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _changes(proc) == []


def test_an_unevaluable_enabled_on_an_enforced_model_is_still_reported(
    cli: Cli, repo: GitRepo
) -> None:
    """The other direction: a guarded model's existence now hangs on an expression."""
    enforced = TUVA_PROPS.replace(
        "    columns:", "    config:\n      contract: {enforced: true}\n    columns:"
    )
    repo.write("dbt_project.yml", "name: the_tuva_project\nconfig-version: 2\n")
    repo.write("models/input_layer/_models.yml", enforced)
    repo.write(
        "models/input_layer/input_layer__provider_attribution.sql",
        _model_sql("var('claims_enabled', False) | as_bool"),
    )
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "models/input_layer/input_layer__provider_attribution.sql",
        _model_sql("(var('provider_attribution_enabled', False) and var('claims_enabled', False))"),
    )
    repo.write("models/input_layer/_models.yml", enforced + "        description: id\n")
    repo.commit("pr rewrites the expression")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rules = {c["rule"] for c in _changes(proc) if c["breaking"]}
    assert rules == {"dbt_config_unevaluable"}


# NYCPlanning/data-engineering (products/cscl, commits 5c9b6417 and 3e7c5132): an
# enforced entry `special_sedat` beside the file `sedat_special.sql`. The later PR
# that named the file `special_sedat.sql` (and left the entry unenforced) was told
# `contract_enforcement_removed special_sedat`: no contract of it was ever in force.
def test_a_never_built_entry_that_gets_its_model_file_is_a_new_model(
    cli: Cli, repo: GitRepo
) -> None:
    repo.write("products/cscl/dbt_project.yml", PROJECT.replace("cdbg", "cscl"))
    repo.write("products/cscl/models/product/sedat.sql", "select 1 as borough_name\n")
    repo.write("products/cscl/models/product/sedat_special.sql", "select 1 as borough_name\n")
    repo.write(
        "products/cscl/models/product/_sedat.yml",
        "version: 2\nmodels:\n" + _entry("sedat") + _entry("special_sedat"),
    )
    repo.commit("base: the file has another name")
    repo.branch("feature")
    repo.git(
        "mv",
        "products/cscl/models/product/sedat_special.sql",
        "products/cscl/models/product/special_sedat.sql",
    )
    dropped = _entry("special_sedat").split("      - name: total_population")[0]
    repo.write(
        "products/cscl/models/product/_sedat.yml",
        "version: 2\nmodels:\n" + _entry("sedat") + dropped,
    )
    repo.commit("pr names the file after the entry, drops a column")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {(c["rule"], c["dataset"]) for c in _changes(proc)} == {("model_added", "special_sedat")}

    repo.write(
        "products/cscl/models/product/_sedat.yml",
        "version: 2\nmodels:\n" + _entry("sedat") + _entry("special_sedat", "false"),
    )
    repo.commit("pr leaves it unenforced")
    proc = cli(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _changes(proc) == []
