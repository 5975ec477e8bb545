"""The command's stderr carries the gate's own lines only, never a library's log records.

sqlglot logs through ``logging``; in a process that configured no handler,
Python's last-resort handler prints each WARNING record to stderr. Those lines
repeat text of the pull request's SQL, mean nothing to the reader of a CI log,
and could start a line GitHub reads as a workflow command. A real process is
needed: pytest's own log capture would hide the leak in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from subprocess import CompletedProcess

from tests.gitrepo import GitRepo

Run = Callable[..., CompletedProcess[str]]

PROJECT = "name: cscl\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [models]\n"
PROPERTIES = (
    "version: 2\nmodels:\n  - name: rpl_by_field\n"
    "    config:\n      contract:\n        enforced: true\n"
    "    columns:\n      - name: rpl_id\n        data_type: string\n"
    "{extra}"
)


# NYCPlanning/data-engineering, products/cscl/models/etl_dev_qa/diffs/rpl/qa__diffs_rpl.sql:
# a QA model whose first CTE is a macro call (`with base_diffs as ({{
# generate_diff_summary(..., new_relation=ref('rpl_by_field')) }})`). Read as SQL
# the CTE's body is the placeholder alone, a column, and sqlglot's scope walk
# logged "Cannot traverse scope __jinja__ with type '<class ...Column>'" to
# stderr on every run that compared the model.
def test_a_macro_only_reader_prints_no_sqlglot_warning(gate_process: Run, repo: GitRepo) -> None:
    repo.write("dbt_project.yml", PROJECT)
    repo.write("models/rpl_by_field.sql", "select '1' as rpl_id, '2' as position_code\n")
    repo.write(
        "models/qa__diffs_rpl.sql",
        "with base_diffs as (\n"
        "  {{ generate_diff_summary(\n"
        "      old_relation=source('production_outputs', 'rpl'),\n"
        "      new_relation=ref('rpl_by_field')) }}\n"
        ")\n"
        "select rpl_id, status from base_diffs\n",
    )
    repo.write(
        "models/rpl.yml",
        PROPERTIES.format(extra="      - name: position_code\n        data_type: string\n"),
    )
    repo.commit("base")
    repo.branch("feature")
    repo.write("models/rpl.yml", PROPERTIES.format(extra=""))
    repo.commit("drop position_code")
    proc = gate_process(repo.path, "--base", "main")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "column_removed" in proc.stdout
    assert "Cannot traverse" not in proc.stderr, proc.stderr
    assert "__jinja__" not in proc.stderr, proc.stderr
