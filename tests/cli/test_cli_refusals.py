"""Every refused contract file of a run, at once: the CLI in-process on real git repos.

A platform wiring the gate into CI for hundreds of contracts wants every
refusal of a run in one log, each the one line (``path:line: message``) it
always was, then a count; still exit 2. Only HEAD-side contract problems are
collected: git, ref, config and usage errors stop the run at the first, and a
base-side problem stays a warning.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from gate import Settings, run
from gate.model import ContractError, ContractErrors
from gate.report import refused
from gate.workers import fork_is_safe
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

C = "soda/contracts"
N = 20  # changed files: 40 to parse, over the engine's fork threshold


def contract(i: int, extra: str = "") -> str:
    return f"dataset: lake/shop/t{i:02d}\ncolumns:\n  - name: id\n    data_type: bigint\n" + (
        f"  - name: {extra}\n    data_type: string\n" if extra else ""
    )


#: What the PR does to three of its files, three different ways, and the line each gets.
BROKEN = {
    2: ("dataset: lake/shop/t02\ncolumns: [unclosed\n", "3: invalid YAML: did not find expected"),
    11: (
        contract(11).replace("bigint\n", "bigint\n    optinal: true\n"),
        "5: unknown key 'optinal' in columns[0] (did you mean 'optional'?) [Soda column keys]",
    ),
    17: (
        contract(17).replace("data_type: bigint", "data_type: 42"),
        "4: column 'id': 'data_type' must be a string, found a number",
    ),
}
#: A new file declaring a dataset an unchanged file already has (t05 differs only in case).
CLASH = (
    f"{C}/z_copy.yaml",
    contract(5).replace("lake/shop/t05", "lake/shop/T05"),
    f"1: dataset 'lake/shop/T05' is also declared in {C}/t05.yaml (as 'lake/shop/t05')",
)


def dcs(*models: str) -> str:
    body = "".join(f"  {m}:\n    fields:\n      id: {{type: bigint}}\n" for m in models)
    return (
        "dataContractSpecification: 1.1.0\nid: c\ninfo: {title: c, version: 1.0.0}\n"
        f"models:\n{body}"
    )


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    """30 contracts on main; the feature branch adds a column to 20 of them (additive)."""
    repo = GitRepo(tmp_path / "shop")
    for i in range(30):
        repo.write(f"{C}/t{i:02d}.yaml", contract(i))
    repo.commit("contracts")
    repo.branch("feature")
    for i in range(N):
        repo.write(f"{C}/t{i:02d}.yaml", contract(i, extra="note"))
    repo.commit("add note")
    return repo


def break_three(repo: GitRepo) -> list[str]:
    """Break three files and copy a fourth; the stderr line starts each refusal must have."""
    for i, (text, _) in BROKEN.items():
        repo.write(f"{C}/t{i:02d}.yaml", text)
    repo.write(CLASH[0], CLASH[1])
    repo.commit("break three contracts, copy one")
    return [
        *(f"schema-gate: error: {C}/t{i:02d}.yaml:{said}" for i, (_, said) in BROKEN.items()),
        f"schema-gate: error: {CLASH[0]}:{CLASH[2]}",
    ]


def gate(repo: GitRepo, *args: str) -> tuple[int, str, str]:
    proc = run_gate(repo.path, "--base", "main", "--head", "feature", *args)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def test_a_clean_pr_of_the_same_shape_passes(shop: GitRepo) -> None:
    code, out, err = gate(shop)
    assert code == 0, err
    assert f"{N} changed contract file" in out


@pytest.mark.skipif(not fork_is_safe(), reason="forking workers needs Linux")
def test_every_refusal_is_one_line_in_file_order_whatever_the_jobs(shop: GitRepo) -> None:
    starts = break_three(shop)
    seen = {}
    for jobs in ("1", "4"):
        code, out, err = gate(shop, "--jobs", jobs)
        assert code == 2, err
        assert out == ""  # text: the refusals are the error output, as one error was
        lines = err.splitlines()
        assert len(lines) == 5, err
        for line, start in zip(lines, starts, strict=False):
            assert line.startswith(start), line
        assert lines[-1] == "schema-gate: refused 4 contract files; nothing was compared"
        seen[jobs] = err
    assert seen["4"] == seen["1"]


def test_one_refusal_is_the_one_line_it_always_was(shop: GitRepo) -> None:
    shop.write(f"{C}/t03.yaml", "dataset: lake/shop/t03\ncolumns: [unclosed\n")
    shop.commit("break one")
    code, out, err = gate(shop)
    assert code == 2 and out == ""
    assert err.startswith(f"schema-gate: error: {C}/t03.yaml:3: invalid YAML")
    assert len(err.splitlines()) == 1


def test_two_clashes_in_one_file_count_files_and_errors(shop: GitRepo) -> None:
    shop.write(f"{C}/t03.yaml", "dataset: lake/shop/t03\ncolumns: [unclosed\n")
    # one DCS file declaring two models that two other files (listed before it) declare
    for name in ("t25", "t26"):
        shop.write(f"{C}/dcs_{name}.yaml", dcs(name))
    shop.write(f"{C}/zz_copies.yaml", dcs("t25", "t26"))
    shop.commit("break one, copy two")
    code, _, err = gate(shop)
    assert code == 2
    lines = err.splitlines()
    assert [line.split(": ")[2].split(":")[0] for line in lines[:3]] == [
        f"{C}/t03.yaml",
        f"{C}/zz_copies.yaml",
        f"{C}/zz_copies.yaml",
    ], err
    assert f"dataset 't25' is also declared in {C}/dcs_t25.yaml" in lines[1]
    assert f"dataset 't26' is also declared in {C}/dcs_t26.yaml" in lines[2]
    assert lines[-1] == "schema-gate: refused 2 contract files (3 errors); nothing was compared"


def test_the_list_is_capped_so_a_hostile_pr_cannot_flood_the_log(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "many")
    repo.write(f"{C}/ok.yaml", contract(0))
    repo.commit("one contract")
    repo.branch("feature")
    count = refused.CAP + 13
    for i in range(count):
        repo.write(f"{C}/bad{i:03d}.yaml", f"dataset: bad{i}\ncolumns: [\n")
    repo.commit("many broken files")
    code, _, err = gate(repo)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == refused.CAP + 2
    assert lines[refused.CAP - 1].startswith(f"schema-gate: error: {C}/bad{refused.CAP - 1:03d}")
    assert lines[-2] == f"schema-gate: ... and 13 more (the first {refused.CAP} are listed)"
    assert lines[-1] == f"schema-gate: refused {count} contract files; nothing was compared"
    code, out, _ = gate(repo, "--format", "json")
    report = json.loads(out)
    assert len(report["errors"]) == refused.CAP and report["errors_total"] == count
    code, out, _ = gate(repo, "--format", "github")
    commands = out.splitlines()
    assert len(commands) == refused.CAP + 1
    assert commands[-1] == (
        f"::error::refused {count} contract files; nothing was compared "
        f"(... and 13 more (the first {refused.CAP} are listed))"
    )


def test_json_and_output_carry_every_refusal(shop: GitRepo, tmp_path: Path) -> None:
    break_three(shop)
    out_file = tmp_path / "report.json"
    code, out, err = gate(shop, "--format", "json", "--output", str(out_file))
    assert code == 2
    assert out_file.read_text() == out
    report = json.loads(out)
    assert report["verdict"] == "error" and report["exit_code"] == 2
    assert report["message"] == "refused 4 contract files; nothing was compared"
    assert [(e["path"], e["line"]) for e in report["errors"]] == [
        (f"{C}/t02.yaml", 3),
        (f"{C}/t11.yaml", 5),
        (f"{C}/t17.yaml", 4),
        (CLASH[0], 1),
    ]
    assert (
        report["errors"][1]["message"]
        == "unknown key 'optinal' in columns[0] (did you mean 'optional'?) [Soda column keys]"
    )
    assert report["errors_total"] == 4
    assert len(err.splitlines()) == 5  # stderr says the same for a human


def test_one_refusal_in_json_is_the_error_object_with_its_line(shop: GitRepo) -> None:
    shop.write(f"{C}/t03.yaml", "dataset: lake/shop/t03\ncolumns: [unclosed\n")
    shop.commit("break one")
    code, out, _ = gate(shop, "--format", "json")
    assert code == 2
    report = json.loads(out)
    assert report["message"].startswith(f"{C}/t03.yaml:3: invalid YAML")
    assert [(e["path"], e["line"]) for e in report["errors"]] == [(f"{C}/t03.yaml", 3)]


def test_github_format_annotates_each_refused_line(shop: GitRepo) -> None:
    break_three(shop)
    code, out, _ = gate(shop, "--format", "github")
    assert code == 2
    commands = out.splitlines()
    assert [c.split("::")[1] for c in commands[:4]] == [
        f"error file={C}/t02.yaml,line=3,title=contract refused",
        f"error file={C}/t11.yaml,line=5,title=contract refused",
        f"error file={C}/t17.yaml,line=4,title=contract refused",
        f"error file={CLASH[0]},line=1,title=contract refused",
    ]
    assert commands[4] == "::error::refused 4 contract files; nothing was compared"


def test_pr_text_in_a_refusal_cannot_forge_commands_or_lines(shop: GitRepo) -> None:
    """A column name and a file name chosen by the PR: one annotation each, one stderr line each."""
    evil_key = "x%0A::warning::forged\\n::error::y"
    evil_path = f"{C}/a,b:c%0A::notice::x.yaml"
    # (an unknown key is only a warning since Soda ignores it: a refused column carries the text)
    shop.write(f"{C}/t04.yaml", contract(4) + f'  - name: "{evil_key}"\n    data_type: 42\n')
    shop.write(evil_path, "dataset: evil\ncolumns: [\n")
    shop.commit("hostile names")
    code, out, err = gate(shop, "--format", "github")
    assert code == 2
    commands = out.splitlines()
    assert len(commands) == 3, out
    assert all(c.startswith("::error ") or c.startswith("::error::") for c in commands)
    assert commands[0].startswith(
        "::error file=soda/contracts/a%2Cb%3Ac%250A%3A%3Anotice%3A%3Ax.yaml,line=3,"
    )
    assert "x%250A::warning::forged" in commands[1]
    lines = err.splitlines()
    assert len(lines) == 3
    assert not any(line.lstrip().startswith("::") for line in lines)


def test_markdown_format_is_a_table_of_refusals(shop: GitRepo) -> None:
    break_three(shop)
    code, out, _ = gate(shop, "--format", "markdown")
    assert code == 2
    assert out.startswith("## Schema contract gate: ⚠️ contract files refused")
    assert (
        f"| `{C}/t11.yaml:5` | `unknown key 'optinal' in columns[0] (did you mean 'optional'?) [Soda column keys]` |"
        in out
    )


def test_a_base_side_problem_stays_a_warning_beside_head_refusals(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write(f"{C}/a.yaml", "dataset: a\ncolumns: [\n")  # broken on main
    repo.write(f"{C}/b.yaml", contract(1))
    repo.commit("a broken on main")
    repo.branch("feature")
    repo.write(f"{C}/a.yaml", contract(0))  # the PR fixes a ...
    repo.write(f"{C}/b.yaml", "dataset: b\ncolumns: [\n")  # ... and breaks b
    repo.commit("fix a, break b")
    code, out, err = gate(repo)
    assert code == 2
    assert err.splitlines() == [
        f"schema-gate: error: {C}/b.yaml:3: invalid YAML: did not find expected node content"
    ]
    repo.write(f"{C}/b.yaml", contract(1))
    repo.commit("fix b")
    code, out, err = gate(repo)
    assert code == 0, err
    assert f"the base version of {C}/a.yaml:3 is unreadable" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--base", "nope"), "schema-gate: error: unknown ref 'nope'"),
        (
            ("--base", "main", "--config", "missing.yml"),
            "schema-gate: error: config file missing.yml not found",
        ),
    ],
)
def test_errors_that_are_not_about_a_contract_stay_one_line_and_no_json(
    shop: GitRepo, args: tuple[str, ...], expected: str
) -> None:
    break_three(shop)  # the run stops before any contract is read
    proc = run_gate(shop.path, "--head", "feature", "--format", "json", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith(expected), proc.stderr


def test_a_bad_config_is_its_first_error_alone(shop: GitRepo) -> None:
    break_three(shop)
    shop.write(".schema-gate.yml", "fail_on: sometimes\nbogus: 1\n")
    shop.commit("bad config")
    code, out, err = gate(shop)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("schema-gate: error: .schema-gate.yml:"), err


def test_the_library_raises_one_contract_error_listing_them_all(shop: GitRepo) -> None:
    break_three(shop)
    with pytest.raises(ContractError) as caught:  # code written for one error still catches it
        run(Settings(repo=str(shop.path), base="main", head="feature", jobs=1))
    exc = caught.value
    assert isinstance(exc, ContractErrors)
    assert [(e.path, e.line) for e in exc.errors] == [
        (f"{C}/t02.yaml", 3),
        (f"{C}/t11.yaml", 5),
        (f"{C}/t17.yaml", 4),
        (CLASH[0], 1),
    ]
    # the first error's fields and message, as a single ContractError had them
    assert (exc.path, exc.line, str(exc)) == (
        exc.errors[0].path,
        exc.errors[0].line,
        str(exc.errors[0]),
    )
    again = pickle.loads(pickle.dumps(exc))
    assert isinstance(again, ContractErrors)
    assert [str(e) for e in again.errors] == [str(e) for e in exc.errors]
    with pytest.raises(ValueError):
        ContractErrors(())
