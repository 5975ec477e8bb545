"""Every contract is validated against its format's published schema (issue #9, section 1).

Unit cases go through ``parse_contract`` (the same path the engine takes); the
cases that promise an exit code run the CLI in a real git repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.formats import parse_contract
from gate.formats.validate import SCHEMA_DIR, schema_name
from gate.model import ContractError
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

ODCS = "apiVersion: v3.1.0\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"
ODCS32 = "apiVersion: v3.2.0\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"
DCS = "dataContractSpecification: 1.1.0\nid: shop\ninfo:\n  title: Shop\n  version: 1.0.0\n"
DBT = "version: 2\nmodels:\n  - name: orders\n    config:\n      contract: {enforced: true}\n"


def refusal(text: str, path: str = "contracts/c.yaml") -> str:
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), path)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- misspelt keys: file, line, the intended key ----------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "dataset: lake/shop/orders\ncolumn:\n  - name: id\n",
            "contracts/c.yaml:2: unknown key 'column' (did you mean 'columns'?)",
        ),
        (
            "dataset: d\ncolumns:\n  - name: id\n    data_typ: int\n",
            "contracts/c.yaml:4: unknown key 'data_typ' in columns[0] (did you mean 'data_type'?)",
        ),
        (
            ODCS + "schemas:\n  - name: t\n",
            "contracts/c.yaml:6: unknown key 'schemas' (did you mean 'schema'?)",
        ),
        (
            ODCS + "schema:\n  - name: t\n    propertes:\n      - name: a\n",
            "contracts/c.yaml:8: unknown key 'propertes' in schema[0] (did you mean 'properties'?)",
        ),
        (
            DCS + "models:\n  t:\n    feilds:\n      a: {type: int}\n",
            "contracts/c.yaml:8: unknown key 'feilds' in models.t (did you mean 'fields'?)",
        ),
        (
            DCS + "models:\n  t:\n    fields:\n      a: {type: int, requierd: true}\n",
            "contracts/c.yaml:9: unknown key 'requierd' in models.t.fields.a "
            "(did you mean 'required'?)",
        ),
        (
            DCS + "modles:\n  t: {}\n",
            "contracts/c.yaml:6: unknown key 'modles' (did you mean 'models'?)",
        ),
        (
            DBT + "    column:\n      - name: id\n        data_type: int\n",
            "contracts/c.yaml:6: unknown key 'column' in models[0] (did you mean 'columns'?)",
        ),
        (  # jaffle-shop-mesh-platform's stg_customers.yml: access and group beside the typo
            "version: 2\nmodels:\n  - name: orders\n    access: public\n    group: platform\n"
            "    config:\n      contract: {enforced: true}\n    column:\n      - name: id\n",
            "contracts/c.yaml:8: unknown key 'column' in models[0] (did you mean 'columns'?)",
        ),
        (
            DBT + "    columns:\n      - name: id\n        data_typ: int\n",
            "contracts/c.yaml:8: unknown key 'data_typ' in models[0].columns[0] "
            "(did you mean 'data_type'?)",
        ),
    ],
)
def test_a_misspelt_key_names_file_line_and_intended_key(text: str, expected: str) -> None:
    assert refusal(text).startswith(expected)


def test_the_schema_is_named_and_a_dcs_message_says_why_the_gate_is_stricter() -> None:
    odcs = refusal(ODCS + "schemas: []\n")
    assert odcs.endswith("[ODCS v3.1.0 schema]")
    dcs = refusal(DCS + "modles: {}\n")
    # Issue #21: DCS allows extension keys; only a near miss of a missing key is refused.
    assert "it allows extension keys, but this one is a near miss of 'models'" in dcs


def test_schema_rules_beyond_keys_fail_closed_with_a_line() -> None:
    # Issue #21 turned two former refusals into warnings (quality-rule shape and the
    # contract's id are not compared): tests/formats/test_validation_scope.py has them.
    assert "info.version must be string, found a number (quote it)" in refusal(
        "dataContractSpecification: 1.1.0\nid: x\ninfo: {title: t, version: 1.0}\n"
    )
    assert "'v9.9.9' is not allowed (expected one of: v3.2.0" in refusal(
        "apiVersion: v3.9.9\nkind: DataContract\nid: x\nversion: '1'\nstatus: a\n"
    ).replace("v3.9.9", "v9.9.9")


def test_dbt_config_keys_and_jinja_are_left_to_dbt() -> None:
    # dbt-core only warns about these; the gate must not refuse what dbt runs.
    text = (
        DBT.replace("contract: {enforced: true}", "contract: {enforced: true}\n      my_key: 1")
        + "    columns:\n      - name: id\n        data_type: int\n        meta: {x: 1}\n"
    )
    (dataset,) = parse_contract(text.encode(), "models/m.yml").datasets
    assert [c.name for c in dataset.columns] == ["id"]


def test_soda_extension_keys_hold_anchors() -> None:
    text = "x-defaults: &d {data_type: int}\ndataset: d\ncolumns:\n  - {name: id, <<: *d}\n"
    (dataset,) = parse_contract(text.encode(), "c.yaml").datasets
    assert dataset.columns[0].data_type == "int"


def test_dates_that_yaml_reads_as_dates_are_strings_to_the_schema() -> None:
    text = ODCS + "contractCreatedTs: 2024-01-01T10:00:00Z\nschema: []\n"
    assert parse_contract(text.encode(), "c.yaml").datasets == ()


# -- no columns where the format requires them --------------------------------------


def test_a_soda_contract_without_columns_or_checks_is_refused() -> None:
    assert refusal("dataset: lake/shop/orders\n").startswith(
        "contracts/c.yaml:1: a Soda contract needs 'columns:' or 'checks:'"
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("dataset: lake/shop/orders\ncolumn:\n  - name: id\n", id="soda"),
        pytest.param(
            ODCS + "schema:\n  - name: lake/shop/orders\n    propertes:\n      - name: id\n",
            id="odcs",
        ),
        pytest.param(DCS + "models:\n  orders:\n    feilds:\n      id: {type: int}\n", id="dcs"),
        pytest.param(DBT + "    column:\n      - name: id\n        data_type: int\n", id="dbt"),
    ],
)
def test_a_contract_whose_columns_vanished_is_exit_2_not_all_columns_removed(
    tmp_path: Path, text: str
) -> None:
    repo = GitRepo(tmp_path / "r")
    good = (
        text.replace("column:", "columns:")
        .replace("propertes", "properties")
        .replace("feilds", "fields")
    )
    repo.write("contracts/orders.yaml", good)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", text)
    repo.commit("typo")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2, proc.stdout
    assert "column_removed" not in proc.stdout
    assert proc.stderr.startswith("schema-gate: error: contracts/orders.yaml:")
    assert "did you mean" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_enforced_dbt_model_without_columns_is_refused() -> None:
    assert refusal(DBT, "models/schema.yml") == (
        "models/schema.yml:3: model 'orders' enforces a contract but declares no columns "
        "(dbt fails such a model: an enforced contract lists every column)"
    )
    # Without an enforced contract a model is no contract: nothing to require.
    text = "version: 2\nmodels:\n  - name: orders\n"
    assert [d.enforced for d in parse_contract(text.encode(), "m.yml").datasets] == [False]


# -- official examples that must parse ----------------------------------------------


def test_odcs_valid_values_may_hold_null() -> None:
    text = ODCS + (
        "schema:\n  - name: t\n    properties:\n      - name: unit\n        logicalType: string\n"
        "        quality:\n          - metric: invalidValues\n"
        "            arguments:\n              validValues: [pounds, kg, null]\n"
        "            mustBe: 0\n"
    )
    (dataset,) = parse_contract(text.encode(), "c.yaml").datasets
    assert dataset.columns[0].enum == ("pounds", "kg", "null")


VECTOR = (
    ODCS32
    + """\
schema:
  - name: docs
    properties:
      - name: id
        logicalType: string
      - name: embedding
        logicalType: vector
        physicalType: vector(1536)
        logicalTypeOptions:
          dimensions: 1536
          elementType: float32
          distanceMetric: cosine
"""
)


def test_odcs_vector_parses_with_its_dimension_and_element_type() -> None:
    (dataset,) = parse_contract(VECTOR.encode(), "c.yaml").datasets
    assert dataset.columns[1].data_type == "vector(1536,float32)"
    # elementType defaults to float32, as the spec says
    bare = VECTOR.replace("          elementType: float32\n", "")
    assert parse_contract(bare.encode(), "c.yaml").datasets[0].columns[1].data_type == (
        "vector(1536,float32)"
    )


def test_a_vector_without_dimensions_is_refused() -> None:
    text = VECTOR.replace("          dimensions: 1536\n", "")
    assert "'dimensions' is required" in refusal(text)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("dimensions: 1536", "dimensions: 768"),
        ("elementType: float32", "elementType: int8"),
    ],
)
def test_a_vector_whose_dimension_or_element_type_changes_is_breaking(
    tmp_path: Path, old: str, new: str
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("contracts/docs.odcs.yaml", VECTOR)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/docs.odcs.yaml", VECTOR.replace(old, new))
    repo.commit("change")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    changes = json.loads(proc.stdout)["changes"]
    found = [(c["rule"], c["column"], c["severity"]) for c in changes]
    assert ("type_changed", "embedding", "error") in found
    assert [rule for rule, _column, _severity in found if rule.startswith("type_")] == [
        "type_changed"
    ]


def test_an_unchanged_vector_is_no_change(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("contracts/docs.odcs.yaml", VECTOR)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/docs.odcs.yaml", VECTOR.replace("cosine", "euclidean"))
    repo.commit("advisory metric only")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["changes"] == []


# -- the vendored schemas ------------------------------------------------------------


def test_every_vendored_schema_is_listed_in_its_readme_and_loads() -> None:
    readme = (SCHEMA_DIR / "README.md").read_text()
    files = sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json"))
    assert len(files) == 7
    for name in files:
        assert f"`{name}`" in readme
        assert json.loads((SCHEMA_DIR / name).read_text())["properties"]


@pytest.mark.parametrize(
    ("fmt", "doc", "expected"),
    [
        ("odcs", {"apiVersion": "v3.0.1"}, "odcs-v3.0.2"),
        ("odcs", {"apiVersion": "v3.1.0"}, "odcs-v3.1.0"),
        ("odcs", {"apiVersion": "v3.2.0"}, "odcs-v3.2.0"),
        ("odcs", {"apiVersion": "v3.3.0"}, "odcs-v3.2.0"),
        ("dcs", {"dataContractSpecification": "0.9.3"}, "dcs-1.1.0"),
        ("dcs", {"dataContractSpecification": "1.2.0"}, "dcs-1.2.0"),
        ("dcs", {"dataContractSpecification": "1.2.1"}, "dcs-1.2.1"),
        ("dbt", {"models": []}, "dbt-properties"),
        ("soda", {"dataset": "x"}, None),
    ],
)
def test_each_version_is_validated_by_its_own_schema(fmt: str, doc: dict, expected: str) -> None:
    assert schema_name(fmt, doc) == expected


def test_the_compiled_validator_is_cached_and_a_damaged_cache_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    validate = importlib.import_module("gate.formats.validate")
    monkeypatch.setenv("SCHEMA_GATE_CACHE", str(tmp_path / "cache"))
    validate._fast.cache_clear()
    try:
        fast = validate._fast("odcs-v3.1.0")
        (entry,) = (tmp_path / "cache").glob("odcs-v3.1.0-*.marshal")
        doc = {"apiVersion": "v3.1.0", "kind": "DataContract", "id": "x", "version": "1"}
        fast({**doc, "status": "active"})  # valid: returns quietly
        entry.write_bytes(b"not marshal data")
        validate._fast.cache_clear()
        rebuilt = validate._fast("odcs-v3.1.0")
        with pytest.raises(Exception, match="must not contain"):
            rebuilt({**doc, "status": "active", "schemas": []})
        assert entry.read_bytes() != b"not marshal data"
    finally:
        validate._fast.cache_clear()


def test_without_an_explicit_cache_no_validator_code_is_written_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiled validators are code: no implicit home cache a CI step could plant."""
    import importlib

    validate = importlib.import_module("gate.formats.validate")
    monkeypatch.delenv("SCHEMA_GATE_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "schema-contract-gate").mkdir(parents=True)
    planted = tmp_path / "xdg" / "schema-contract-gate" / "odcs-v3.1.0-0000000000000000.marshal"
    planted.write_bytes(b"planted")
    validate._fast.cache_clear()
    try:
        fast = validate._fast("odcs-v3.1.0")
        doc = {"apiVersion": "v3.1.0", "kind": "DataContract", "id": "x", "version": "1"}
        fast({**doc, "status": "active"})
    finally:
        validate._fast.cache_clear()
    assert not (tmp_path / "home").exists()
    written = sorted(p.name for p in (tmp_path / "xdg").rglob("*") if p.is_file())
    assert written == [planted.name]


def test_the_format_docs_list_the_real_default_globs() -> None:
    from gate.formats import DEFAULT_GLOBS

    docs = Path(__file__).resolve().parent.parent.parent / "docs" / "formats"
    for page in sorted(docs.glob("*.md")):
        text = page.read_text()
        assert "The default globs cover `soda/contracts/` only" not in text, page.name
        for glob in DEFAULT_GLOBS:
            assert glob in text, (page.name, glob)


def test_through_the_cli_official_examples_pass_and_a_bare_soda_contract_is_exit_2(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("contracts/keep.yaml", "dataset: lake/x/keep\ncolumns:\n  - name: id\n")
    repo.commit("base")
    repo.branch("feature")
    nulls = ODCS + (
        "schema:\n  - name: units\n    properties:\n      - name: unit\n"
        "        logicalType: string\n        quality:\n          - metric: invalidValues\n"
        "            arguments:\n              validValues: [pounds, kg, null]\n"
        "            mustBe: 0\n"
    )
    repo.write("contracts/units.odcs.yaml", nulls)
    repo.write("contracts/docs.odcs.yaml", VECTOR)
    repo.commit("official shapes")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(c["dataset"] for c in json.loads(proc.stdout)["changes"]) == ["docs", "units"]
    repo.write("contracts/bare.yaml", "dataset: lake/x/bare\n")
    repo.commit("a contract with nothing in it")
    proc = run_gate(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "schema-gate: error: contracts/bare.yaml:1: a Soda contract needs 'columns:' or 'checks:'"
    )
