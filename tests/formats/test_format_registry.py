"""The format registry: detection order, every fixture detected as its format, clear refusals."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from gate.formats import FORMATS, parse_contract
from gate.model import ContractError

FIXTURES = Path(__file__).parent.parent / "fixtures"
ALL = sorted(
    path for path in FIXTURES.rglob("*") if path.suffix in {".yaml", ".yml"} and path.is_file()
)


def test_registry_order() -> None:
    # Soda's marker (``dataset``) is the most generic, so it is tried last.
    assert [module.FORMAT for module in FORMATS] == ["dcs", "odcs", "dbt", "soda"]


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_is_detected_as_its_directory_format(path: Path) -> None:
    relative = str(path.relative_to(FIXTURES))
    contract = parse_contract(path.read_bytes(), relative)
    assert contract.format == path.parent.name
    assert contract.path == relative
    assert all(d.format == contract.format and d.path == relative for d in contract.datasets)
    # Contracts cross process boundaries (parsing runs in workers): they must pickle.
    assert pickle.loads(pickle.dumps(contract)) == contract


def test_fixture_directories_cover_every_format() -> None:
    assert {path.parent.name for path in ALL} == {"dcs", "odcs", "dbt", "soda"}


def test_unrecognised_yaml_is_refused_naming_every_format() -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract(b"title: my notes\nitems: [1, 2]\n", "docs/notes.yaml")
    rendered = str(caught.value)
    assert rendered.startswith("docs/notes.yaml:1: not a recognised contract: expected ")
    for marker in ("dataContractSpecification:", "kind: DataContract", "models:", "dataset:"):
        assert marker in rendered
    assert "\n" not in rendered


def test_markers_are_checked_in_order() -> None:
    # Each document carries another format's marker too; the first format in
    # FORMATS claims it, and that format's schema then judges the rest.
    both = b"dataContractSpecification: 1.1.0\ndataset: orders\nmodels: {}\n"
    with pytest.raises(ContractError, match=r"\[DCS 1\.1\.0 schema"):
        parse_contract(both, "a.yaml")
    odcs_v3 = b"apiVersion: v3.0.0\nkind: DataContract\nmodels: []\n"
    with pytest.raises(ContractError, match=r"\[ODCS v3\.0\.2 schema"):
        parse_contract(odcs_v3, "b.yaml")
    soda_with_a_typo = b"dataset: orders\ncolums: []\n"
    with pytest.raises(ContractError, match=r"unknown key 'colums' \(did you mean 'columns'\?\)"):
        parse_contract(soda_with_a_typo, "c.yaml")


@pytest.mark.parametrize(
    "prefix",
    ["dataset: t\nchecks:\n  - x: ", "models:\n  - name: t\n    data_tests:\n      - x: "],
)
def test_deeply_nested_options_fail_closed(prefix: str) -> None:
    spec = "{a: " * 3000 + "1" + "}" * 3000
    with pytest.raises(ContractError) as caught:
        parse_contract(f"{prefix}{spec}\n".encode(), "deep.yaml")
    assert str(caught.value).startswith("deep.yaml:")
    assert str(caught.value).endswith(": YAML nests too deeply (more than 256 levels)")


def test_nesting_by_indentation_alone_is_refused_too() -> None:
    # No alias and no indicator: only the line count bounds the depth, so the
    # depth walk that alias-free documents skip must still run here.
    text = "dataset: t\nx:\n" + "".join(" " * i + "a:\n" for i in range(1, 300)) + " " * 300 + "1\n"
    assert "*" not in text
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), "deep.yaml")
    assert str(caught.value).endswith("YAML nests too deeply (more than 256 levels)")
