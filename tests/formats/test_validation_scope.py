"""Validate what the gate compares, warn about the rest (issue #21, points 1 and 6).

Each case reproduces a pattern measured on public files (the ODCS examples of
bitol-io/open-data-contract-standard and datacontract-cli's tests/fixtures; see
docs/formats/validation.md); the files themselves are not copied here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest

from gate.formats import parse_contract
from gate.formats.compared import near_miss, part
from gate.model import Contract, ContractError
from tests.gitrepo import GitRepo

ODCS = "apiVersion: v3.1.0\nkind: DataContract\nid: c1\nversion: 1.0.0\nstatus: active\n"
ODCS302 = ODCS.replace("v3.1.0", "v3.0.2")
TABLE = (
    "schema:\n  - name: orders\n    properties:\n      - name: id\n        logicalType: string\n"
)
DCS = "dataContractSpecification: 1.2.1\nid: shop\ninfo:\n  title: Shop\n  version: 1.0.0\n"
DCS_MODEL = "models:\n  orders:\n    fields:\n      id:\n        type: string\n"
PATH = "contracts/c.yaml"

Cli = Callable[..., CompletedProcess[str]]


def parse(text: str) -> Contract:
    return parse_contract(text.encode(), PATH)


def refusal(text: str) -> str:
    with pytest.raises(ContractError) as caught:
        parse(text)
    return str(caught.value)


def warnings(text: str) -> list[str]:
    contract = parse(text)
    assert [d.id for d in contract.datasets] == ["orders"]  # compared, not refused
    return [str(w) for w in contract.warnings]


# -- ODCS: parts the gate never compares are warnings with their line -----------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param(
            # datacontract-cli tests/fixtures/oracle/datacontract-oracle-odcs.yaml
            "servers:\n  - server: s\n    type: postgres\n    port: 5432\n"
            "    database: d\n    schema: public\n",
            f"{PATH}:12: 'host' is required in servers[0] [ODCS v3.1.0 schema]: "
            "the gate does not compare 'servers', so this is a warning",
            id="servers",
        ),
        pytest.param(
            # the shape of a quality rule (ODCS docs/examples/quality, a v3.0.2 'rule')
            "        quality:\n          - metric: nullValues\n",
            f"{PATH}:12: schema[0].properties[0].quality[0] needs one of: mustBe,",
            id="quality-rule shape",
        ),
        pytest.param(
            # datacontract-cli tests/fixtures/postgres/odcs.yaml: an extension key on a column
            "        isNullable: false\n",
            f"{PATH}:11: unknown key 'isNullable' in schema[0].properties[0] [ODCS v3.1.0 "
            "schema]: the gate does not compare 'isNullable', so this is a warning (ODCS keeps "
            "extensions under customProperties)",
            id="extension key",
        ),
        pytest.param(
            "customProperties:\n  - property: owner\n",
            f"{PATH}:12: 'value' is required in customProperties[0]",
            id="custom properties",
        ),
    ],
)
def test_a_violation_outside_the_compared_parts_is_a_warning(extra: str, expected: str) -> None:
    (warning,) = warnings(ODCS + TABLE + extra)
    assert warning.startswith(expected), warning


def test_a_missing_contract_id_is_a_warning_and_a_missing_version_a_refusal() -> None:
    no_id = ODCS.replace("id: c1\n", "") + TABLE
    assert warnings(no_id) == [
        f"{PATH}:1: 'id' is required [ODCS v3.1.0 schema]: the gate does not compare 'id', "
        "so this is a warning"
    ]
    # The version rules compare the contract's version: that stays exit 2.
    no_version = ODCS.replace("version: 1.0.0\n", "") + TABLE
    assert refusal(no_version) == f"{PATH}:1: 'version' is required [ODCS v3.1.0 schema]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            ODCS + TABLE + "        requierd: true\n",
            f"{PATH}:11: unknown key 'requierd' in schema[0].properties[0] "
            "(did you mean 'required'?) [ODCS v3.1.0 schema]",
            id="required",
        ),
        pytest.param(
            ODCS + TABLE.replace("properties:", "propertes:"),
            f"{PATH}:8: unknown key 'propertes' in schema[0] (did you mean 'properties'?)",
            id="columns",
        ),
        pytest.param(
            ODCS + TABLE + "        logicalTypeOptions:\n          maxLength: 0\n",
            f"{PATH}:12: property 'id': 'maxLength' must be at least 1",
            id="constraints (parser)",
        ),
    ],
)
def test_a_break_in_a_compared_part_stays_exit_2(text: str, expected: str) -> None:
    assert refusal(text).startswith(expected)


def test_a_typo_beside_the_key_it_resembles_is_an_extension_not_a_typo() -> None:
    text = ODCS + TABLE + "        required: true\n        requierd: true\n"
    (warning,) = warnings(text)
    assert "unknown key 'requierd'" in warning and "so this is a warning" in warning


# -- declared version vs content ------------------------------------------------------


def test_a_file_using_a_newer_version_than_it_declares_is_compared_with_a_warning() -> None:
    # bitol-io ODCS docs/examples/data-types/all-data-types.odcs.yaml (v3.1.0 tag, dev)
    text = ODCS302 + TABLE.replace("logicalType: string", "logicalType: time")
    contract = parse(text)
    assert contract.datasets[0].columns[0].data_type == "time"
    assert [str(w) for w in contract.warnings] == [
        f"{PATH}:10: declares v3.0.2, uses ODCS v3.1.0: schema[0].properties[0].logicalType 'time'"
    ]


def test_a_newer_schema_is_used_only_when_it_accepts_the_compared_parts() -> None:
    # 'time' needs v3.1, the typo fails every version: the typo is the refusal.
    text = ODCS302 + TABLE.replace("logicalType: string", "logicalType: time")
    assert refusal(text + "        requierd: true\n").startswith(
        f"{PATH}:11: unknown key 'requierd' in schema[0].properties[0] (did you mean 'required'?)"
    )


def test_a_v3_1_file_using_v3_2_enum_objects_says_so() -> None:
    text = ODCS + TABLE + "        enum:\n          - value: a\n"
    (warning,) = warnings(text)
    assert warning.startswith(f"{PATH}:11: declares v3.1.0, uses ODCS v3.2.0: unknown key 'enum'")
    assert parse(text).datasets[0].columns[0].enum == ("a",)


def test_a_requirement_a_newer_version_dropped_is_not_called_a_use_of_it() -> None:
    # datacontract-cli tests/fixtures/lint/invalid.odcs.yaml: v3.0.2 without `status`,
    # which v3.2.0 no longer requires. "uses ODCS v3.2.0: 'status' is required" read
    # as if v3.2.0 wanted it; the warning now says the declared version does.
    text = ODCS302.replace("status: active\n", "") + TABLE
    (warning,) = warnings(text)
    assert "uses ODCS" not in warning, warning
    assert "'status' is required by v3.0.2, which it declares" in warning, warning
    assert "ODCS v3.2.0 does not require it" in warning, warning


# -- DCS: extension keys are accepted, near misses are not -----------------------------


def test_dcs_extension_keys_are_accepted_silently() -> None:
    # datacontract-cli fixtures: avro 'namespace' on a model, 'const' on a field,
    # and a protobuf enum written as 'values' on a string field.
    text = DCS + DCS_MODEL.replace("    fields:", "    namespace: com.example\n    fields:")
    text += "        const: '1.0'\n        values:\n          RED: 1\n"
    assert warnings(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            # datacontract-cli tests/fixtures/bigquery/export/datacontract.yaml, line 186
            DCS + DCS_MODEL + "        requiered: true\n",
            f"{PATH}:11: unknown key 'requiered' in models.orders.fields.id (did you mean "
            "'required'?) [DCS 1.2.1 schema: it allows extension keys, but this one is a near "
            "miss of 'required', which is missing here and which the gate compares (required)]",
            id="requiered",
        ),
        pytest.param(
            DCS + DCS_MODEL.replace("fields:", "feilds:"),
            f"{PATH}:8: unknown key 'feilds' in models.orders (did you mean 'fields'?)",
            id="feilds",
        ),
        pytest.param(
            # datacontract-cli tests/fixtures/oracle/datacontract-oracle-dcs.yaml, line 55
            DCS + DCS_MODEL + "        other:\n          type: int\n",
            f"{PATH}:11: 'other' in models.orders.fields.id is a field definition (type: int) "
            "outside any 'fields:' mapping: indented one level too deep?",
            id="misindented field",
        ),
    ],
)
def test_dcs_refuses_a_typo_that_would_drop_a_compared_part(text: str, expected: str) -> None:
    assert refusal(text).startswith(expected)


def test_dcs_near_miss_of_a_key_the_gate_does_not_compare_is_a_warning() -> None:
    (warning,) = warnings(DCS + DCS_MODEL + "        descriptoin: the id\n")
    assert warning == (
        f"{PATH}:11: unknown key 'descriptoin' in models.orders.fields.id (did you mean "
        "'description'?) [DCS 1.2.1 schema]: the gate does not compare 'description', so "
        "this is a warning"
    )


def test_dcs_quality_entry_without_type_is_compared_as_library() -> None:
    # datacontract-cli tests/fixtures/azure-blob-file: a rule with neither type nor metric
    text = DCS + DCS_MODEL + "        quality:\n          - mustBeLessThan: 5\n"
    (check,) = parse(text).datasets[0].columns[0].checks
    assert check.kind == "library"


# -- unit: which part a path is, what a near miss is ----------------------------------


@pytest.mark.parametrize(
    ("fmt", "path", "compared", "name"),
    [
        ("odcs", ["servers", 0, "port"], False, "servers"),
        ("odcs", ["team"], False, "team"),
        ("odcs", ["schema", 0, "properties", 1, "logicalType"], True, "types"),
        ("odcs", ["schema", 0, "properties", 1, "items", "properties", 0, "required"], True, ""),
        ("odcs", ["schema", 0, "properties", 1, "quality", 0, "mustBe"], False, "quality"),
        ("odcs", ["schema", 0, "properties", 1, "map", "value", "unique"], True, "keys"),
        ("odcs", ["schema", 0, "properties", 1, "logicalTypeOptions", "maximum"], True, ""),
        ("odcs", ["schema", 0, "customProperties", 0], False, "customProperties"),
        ("odcs", ["slaProperties", 0, "value"], False, "slaProperties"),
        ("dcs", ["models", "t", "fields", "a", "config", "snowflakeType"], True, "types"),
        ("dcs", ["models", "t", "fields", "a", "config", "avroType"], False, ""),
        ("dcs", ["models", "t", "fields", "a", "items", "fields", "b", "enum"], True, "enums"),
        ("dcs", ["info", "version"], True, "the contract version"),
        ("dcs", ["info", "title"], False, "info"),
        ("dcs", ["servicelevels"], False, "servicelevels"),
    ],
)
def test_part(fmt: str, path: list[object], compared: bool, name: str) -> None:
    where = part(fmt, path)
    assert where.compared is compared
    assert name in where.name


@pytest.mark.parametrize(
    ("key", "present", "expected"),
    [
        ("requiered", [], "required"),
        ("feilds", [], "fields"),
        ("column", [], "columns"),
        ("primary_key", [], "primaryKey"),
        ("Required", [], "required"),
        ("requiered", ["required"], None),
        ("namespace", [], None),
        ("isNullable", [], None),
        ("const", [], None),
    ],
)
def test_near_miss(key: str, present: list[str], expected: str | None) -> None:
    known = ["required", "fields", "columns", "primaryKey", "config", "type", "name"]
    assert near_miss(key, known, present) == expected


# -- point 6: a matched file that is no contract says how to exclude it ---------------


def test_a_home_grown_format_is_refused_with_the_exclude_line_to_paste() -> None:
    message = refusal("owner: team-a\ntables:\n  - orders\n")
    assert message.startswith(f"{PATH}:1: not a recognised contract")
    assert f"add  - \"!{PATH}\"  under 'contracts:' in .schema-gate.yml" in message


def test_an_odcs_file_without_its_header_says_what_is_missing() -> None:
    # datacontract-cli tests/fixtures/markdown/export/multicolumn.odcs.yaml
    message = refusal("id: c1\nversion: 1.0.0\n" + TABLE)
    assert message.startswith(
        f"{PATH}:1: shaped like an ODCS contract (a 'schema:' list) but without "
        "'apiVersion: v3.x' and 'kind: DataContract'"
    )
    assert f'- "!{PATH}"' in message


def test_a_jinja_template_is_named_as_one_with_the_exclude_line() -> None:
    path = "contracts/orders.odcs.yaml"
    text = "apiVersion: v3.1.0\nkind: DataContract\nschema:\n  {% for t in tables %}\n"
    with pytest.raises(ContractError) as caught:
        parse_contract(text.encode(), path)
    message = str(caught.value)
    assert "the file holds Jinja markup ('{%' at line 4): a template is not a contract" in message
    assert f'- "!{path}"' in message


# -- through the CLI: every report format carries the warnings -----------------------


SERVERS = (
    "servers:\n  - server: s\n    type: postgres\n    port: 5432\n"
    "    database: d\n    schema: public\n"
)


def test_warnings_reach_every_report_format_and_the_run_compares(repo: GitRepo, cli: Cli) -> None:
    repo.write("contracts/orders.odcs.yaml", ODCS + TABLE)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.odcs.yaml", ODCS + TABLE + SERVERS)
    repo.commit("servers with a string port")
    line = 12
    args = ("--base", "main", "--head", "HEAD")
    text = cli(repo.path, *args)
    assert text.returncode == 0, text.stderr
    assert "CONTRACT WARNINGS (1): compared anyway" in text.stdout
    assert f"contracts/orders.odcs.yaml:{line}: 'host' is required in servers[0]" in text.stdout
    report = json.loads(cli(repo.path, *args, "--format", "json").stdout)
    (warning,) = report["warnings"]
    assert (warning["path"], warning["line"]) == ("contracts/orders.odcs.yaml", line)
    assert "the gate does not compare 'servers'" in warning["message"]
    markdown = cli(repo.path, *args, "--format", "markdown").stdout
    assert "### Contract warnings (compared anyway)" in markdown
    assert f"`contracts/orders.odcs.yaml:{line}`" in markdown
    github = cli(repo.path, *args, "--format", "github").stdout
    assert (
        f"::warning file=contracts/orders.odcs.yaml,line={line},title=contract warning::"
        "'host' is required in servers[0]" in github
    )
    gitlab = json.loads(cli(repo.path, *args, "--format", "gitlab").stdout)
    (issue,) = [i for i in gitlab if i["check_name"] == "contract_warning"]
    assert issue["severity"] == "minor"
    assert issue["location"] == {"path": "contracts/orders.odcs.yaml", "lines": {"begin": line}}
    assert "'host' is required in servers[0]" in issue["description"]


def test_a_base_file_broken_in_a_compared_part_is_read_leniently_with_a_warning(
    repo: GitRepo, cli: Cli
) -> None:
    path = "contracts/shop.datacontract.yaml"
    repo.write(path, DCS + DCS_MODEL + "        requiered: true\n")
    repo.commit("base with a typo")
    repo.branch("feature")
    repo.write(path, DCS + DCS_MODEL + "        required: true\n")
    repo.commit("fix the typo")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    (warning,) = report["warnings"]
    assert (warning["path"], warning["line"]) == (path, 11)
    assert warning["message"].startswith("the base version is broken (unknown key 'requiered'")
    assert (
        "read leniently and compared, so a PR that fixes it is not blocked" in (warning["message"])
    )
    # The base was compared as read: 'id' became required, which is a change found.
    assert [c["rule"] for c in report["changes"]] != []


def test_an_unchanged_file_read_for_duplicates_never_refuses_on_its_schema(
    repo: GitRepo, cli: Cli
) -> None:
    """The PR adds 'payments'; an untouched file mentions it and has a typo of its own."""
    untouched = DCS + DCS_MODEL + "        requiered: true\n" + "# payments live elsewhere\n"
    repo.write("contracts/legacy.datacontract.yaml", untouched)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        "contracts/payments.datacontract.yaml",
        DCS + DCS_MODEL.replace("orders", "payments"),
    )
    repo.commit("add payments")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [c["rule"] for c in json.loads(proc.stdout)["changes"]] == ["model_added"]


def test_an_unchanged_unreadable_file_is_a_warning_not_a_refusal(repo: GitRepo, cli: Cli) -> None:
    repo.write("contracts/broken.yaml", "dataset: payments\ncolumns: [\n")
    repo.write("contracts/orders.datacontract.yaml", DCS + DCS_MODEL)
    repo.commit("base, with a file broken long ago")
    repo.branch("feature")
    repo.write(
        "contracts/payments.datacontract.yaml",
        DCS + DCS_MODEL.replace("orders", "payments"),
    )
    repo.commit("add payments")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    (warning,) = report["warnings"]
    assert warning["path"] == "contracts/broken.yaml"
    assert "it was not checked for declaring that dataset too" in warning["message"]


# -- Soda: soda-core ignores keys it does not know; so does the gate, saying so ---------

#: A generator's own keys beside Soda's, as a public Soda + SQLMesh project writes
#: them (Doctacon/databox: ``source_table`` and ``source_column`` on its contracts).
SODA_WITH_OWN_KEYS = (
    "dataset: lake/shop/orders\n"
    "source_table: raw.orders\n"
    "columns:\n"
    "  - name: id\n"
    "    data_type: bigint\n"
    "    source_column: order_id\n"
    "  - name: amount\n"
    "    data_type: bigint\n"
    "    source_column: amt\n"
)


def test_a_soda_contract_with_keys_of_its_own_is_compared_with_a_warning_per_key(
    repo: GitRepo, cli: Cli
) -> None:
    path = "soda/contracts/orders.yaml"
    repo.write(path, SODA_WITH_OWN_KEYS)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        path,
        SODA_WITH_OWN_KEYS.replace("amount\n    data_type: bigint", "amount\n    data_type: int"),
    )
    repo.commit("narrow amount")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [(c["rule"], c["column"]) for c in report["changes"]] == [("type_narrowed", "amount")]
    assert [(w["path"], w["line"], w["message"].split(" [")[0]) for w in report["warnings"]] == [
        (path, 2, "unknown key 'source_table'"),
        (path, 6, "unknown key 'source_column' in columns[0] (and 1 more column(s))"),
    ]
    assert all("Soda ignores it and so does the gate" in w["message"] for w in report["warnings"])


def test_a_near_miss_of_a_soda_key_is_still_refused(repo: GitRepo, cli: Cli) -> None:
    path = "soda/contracts/orders.yaml"
    repo.write(path, SODA_WITH_OWN_KEYS)
    repo.commit("base")
    repo.branch("feature")
    repo.write(
        path,
        SODA_WITH_OWN_KEYS.replace(
            "    data_type: bigint\n    source_column: amt",
            "    data_typ: int\n    source_column: amt",
        ),
    )
    repo.commit("a typo drops amount's type")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(
        f"{path}:8: unknown key 'data_typ' in columns[1] (did you mean 'data_type'?) "
        "[Soda column keys]"
    ), proc.stderr


@pytest.mark.parametrize(
    ("old", "new", "meant"),
    [
        # dbt's, DCS's and ODCS's words for what Soda calls data_type, checks, valid_values:
        # no near miss by spelling, yet each drops what the gate compares. A PR that
        # writes 'type: string' for 'data_type: bigint' changed the type, and was
        # reported as a mere type_removed warning (exit 0).
        ("    data_type: bigint\n    source_column: amt", "    type: string\n", "data_type"),
        ("    data_type: bigint\n    source_column: amt", "    logicalType: string\n", "data_type"),
        (
            "    source_column: amt",
            "    source_column: amt\n    tests:\n      - missing:",
            "checks",
        ),
        (
            "    source_column: amt",
            "    source_column: amt\n    accepted_values: [a]",
            "valid_values",
        ),
    ],
)
def test_another_formats_name_for_a_compared_soda_key_is_refused(
    repo: GitRepo, cli: Cli, old: str, new: str, meant: str
) -> None:
    path = "soda/contracts/orders.yaml"
    base = SODA_WITH_OWN_KEYS.replace(
        "    source_column: amt", "    source_column: amt\n    checks:\n      - missing:"
    ).replace("    source_column: amt", "    source_column: amt\n    valid_values: [a, b]")
    repo.write(path, base)
    repo.commit("base")
    repo.branch("feature")
    head = base.replace(old, new)
    if meant == "checks":
        head = head.replace("    checks:\n      - missing:\n", "")
    if meant == "valid_values":
        head = head.replace("    valid_values: [a, b]\n", "")
    assert head != base
    repo.write(path, head)
    repo.commit("another format's key")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"(did you mean '{meant}'?) [Soda column keys]" in proc.stderr, proc.stderr


def test_another_formats_key_beside_the_soda_one_is_only_a_warning(repo: GitRepo, cli: Cli) -> None:
    """'type' next to 'data_type' drops nothing: Soda reads data_type, the gate too."""
    path = "soda/contracts/orders.yaml"
    text = SODA_WITH_OWN_KEYS.replace(
        "    source_column: amt", "    source_column: amt\n    type: x"
    )
    repo.write(path, text)
    repo.commit("base")
    repo.branch("feature")
    repo.write(path, text.replace("amount\n    data_type: bigint", "amount\n    data_type: int"))
    repo.commit("narrow amount")
    proc = cli(repo.path, "--base", "main", "--head", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert any("unknown key 'type'" in w["message"] for w in report["warnings"])
