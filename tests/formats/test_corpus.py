"""Real contract files from published packages (tests/corpus/README.md) parse, or fail closed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gate.formats import parse_contract
from gate.model import ContractError
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

CORPUS = Path(__file__).parent.parent / "corpus"
FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))

#: Real files that are not valid contracts as shipped, with the error they must give.
INVALID = {
    "dbt/constrained_model_schema.yml": ":19: invalid YAML: did not find expected key",
    "dbt/incremental_foreign_key_schema.yml": ":27: invalid YAML: did not find expected key",
    "dbt/model_data_type_schema.yml": (
        ":9: column 'wrong_data_type_column_name': 'data_type' must be a string, found a mapping"
    ),
}

#: Valid files the gate refuses until another part of issue #9 lands.
PENDING: dict[str, str] = {}


def rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def test_every_corpus_file_is_listed_with_its_provenance() -> None:
    readme = (CORPUS / "README.md").read_text()
    assert len(FILES) >= 10
    for path in FILES:
        assert f"`{rel(path)}`" in readme, rel(path)


VALID = [p for p in FILES if rel(p) not in INVALID]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            id=rel(p),
            marks=[pytest.mark.xfail(reason=PENDING[rel(p)], strict=True, raises=ContractError)]
            if rel(p) in PENDING
            else [],
        )
        for p in VALID
    ],
)
def test_every_valid_file_parses(path: Path) -> None:
    contract = parse_contract(path.read_bytes(), rel(path))
    assert contract.format == path.parent.name


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_files_fail_closed_with_file_and_line(name: str) -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract((CORPUS / name).read_bytes(), name)
    message = str(caught.value)
    assert message == f"{name}{INVALID[name]}", message


#: The key whose misspelling would drop a format's columns, and the misspelling.
TYPOS = {
    "odcs": ("properties", "propertes"),
    "dcs": ("models", "modles"),
    "dbt": ("columns", "column"),
}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=rel(p))
        for p in VALID
        if rel(p) not in PENDING
        and re.search(rf"^\s*-?\s*{TYPOS[p.parent.name][0]}:", p.read_text(), re.M)
    ],
)
def test_a_misspelt_column_key_in_a_real_file_is_refused(path: Path) -> None:
    key, typo = TYPOS[path.parent.name]
    text = re.sub(rf"^(\s*-?\s*){key}:", rf"\g<1>{typo}:", path.read_text(), count=1, flags=re.M)
    original = parse_contract(path.read_bytes(), rel(path))
    if original.format == "dbt" and not any(d.enforced for d in original.datasets[:1]):
        # An unenforced dbt model is no contract: its keys are dbt's business (issue #21).
        parse_contract(text.encode(), rel(path))
        return
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), rel(path))
    assert f"unknown key '{typo}'" in str(caught.value)
    assert f"(did you mean '{key}'?)" in str(caught.value)


def test_the_corpus_through_the_cli_in_a_real_repository(tmp_path: Path) -> None:
    """Every valid file added in a PR is read (default globs) and passes as additions."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "corpus\n")
    repo.write("contracts/keep.yaml", "dataset: lake/x/keep\ncolumns:\n  - name: id\n")
    repo.commit("base")
    repo.branch("feature")
    places = {"odcs": "contracts/odcs", "dcs": "contracts/dcs", "dbt": "models"}
    # The dbt fixtures come from separate test projects and reuse model names
    # (my_model); one repository may declare each dataset once.
    ids: set[str] = set()
    added = 0
    for path in VALID:
        if rel(path) in PENDING:
            continue
        declared = {d.id for d in parse_contract(path.read_bytes(), rel(path)).datasets}
        if declared & ids:
            continue
        ids |= declared
        repo.write(f"{places[path.parent.name]}/{path.name}", path.read_bytes())
        added += 1
    repo.commit("add the corpus")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert added >= 6
    assert report["summary"]["files_compared"] == added
    # No type_unknown: every data_type in the corpus is a type its dialect (or
    # its format: ODCS's vector) knows.
    assert {c["rule"] for c in report["changes"]} == {"model_added"}
    # An invalid one in the same PR makes the run exit 2 with its line.
    name = "dbt/model_data_type_schema.yml"
    repo.write(f"models/{Path(name).name}", (CORPUS / name).read_bytes())
    repo.commit("add a template")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr == f"schema-gate: error: models/{Path(name).name}{INVALID[name]}\n"


def test_every_invalid_corpus_file_in_one_pr_is_refused_in_one_run(tmp_path: Path) -> None:
    """Three real files broken three ways: three lines and a count, not three runs."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("contracts/keep.yaml", "dataset: lake/x/keep\ncolumns:\n  - name: id\n")
    repo.commit("base")
    repo.branch("feature")
    for name in INVALID:
        repo.write(f"models/{Path(name).name}", (CORPUS / name).read_bytes())
    repo.commit("add the invalid ones")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        *(
            f"schema-gate: error: models/{Path(name).name}{said}"
            for name, said in sorted(INVALID.items(), key=lambda item: Path(item[0]).name)
        ),
        f"schema-gate: refused {len(INVALID)} contract files; nothing was compared",
    ]


def test_every_valid_corpus_file_is_compared_without_a_schema_warning() -> None:
    """The published fixtures are the reference: none of them draws a warning (issue #21)."""
    for path in VALID:
        assert parse_contract(path.read_bytes(), rel(path)).warnings == (), rel(path)


def test_a_v3_0_file_using_v3_1_team_is_compared_and_says_so() -> None:
    """The v3.0.1 round-trip with the v3.1 round-trip's ``team`` mapping added.

    The pattern of the official ODCS example stakeholders/basic-four-dpo.odcs.yaml
    (v3.1.0 tag, main, dev), which declares v3.0.2 and writes ``team`` as v3.1 does.
    """
    old = (CORPUS / "odcs/roundtrip-v3.0.1.odcs.yaml").read_text()
    new = (CORPUS / "odcs/roundtrip-v3.1.0.odcs.yaml").read_text()
    team = new[new.index("team:") :]
    text = old.rstrip() + "\n" + team
    contract = parse_contract(text.encode(), "contracts/c.odcs.yaml")
    assert [str(w) for w in contract.warnings] == [
        "contracts/c.odcs.yaml:8: declares v3.0.1, uses ODCS v3.1.0: team must be array, "
        "found a mapping"
    ]
