"""Hostile pull requests, attacked for real (issue #8).

Each test commits a crafted contract (or config, or PR body) to a real git
repository and runs the CLI (in-process, same answer as the command). The
attacks come from the security review in issue #8; the payloads are written
here. A defence holds when the run answers with the right exit code and one
clear line, and the output carries nothing the attacker could use.
"""

from __future__ import annotations

import html
import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from gate.report.base import visible
from gate.report.markdown import code
from gate.report.text import escape_line
from tests.conftest import run_gate
from tests.gitrepo import GitRepo

C = "soda/contracts"

# -- reports: every PR-controlled string, in every position ---------------------

#: Dataset ids and column names a hostile contributor can commit.
EVIL_DATASET = "<img src=x onerror=alert(1)></details>\n```\n@octo-org/admins #1 **b**"
EVIL_DATASET_2 = "x`|` <b>y</b>\r| forged | cell |"
EVIL_COLUMN = "c\n::error title=forged::x"
EVIL_COLUMN_2 = (
    "d\r\n  ::add-mask::secret\x1b[31mred\x1b]8;;https://evil.example\x07link\x1b]8;;\x07"
)
EVIL_COLUMN_3 = "e\n##[error]legacy\u2028::stop-commands::tok\x85\u202e"


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar holding ``text`` exactly (JSON is YAML)."""
    return json.dumps(text)


def _contract(dataset: str, columns: list[tuple[str, str]]) -> str:
    lines = [f"dataset: {_quoted(dataset)}", "columns:"]
    for name, data_type in columns:
        lines += [f"  - name: {_quoted(name)}", f"    data_type: {data_type}"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def hostile(tmp_path: Path) -> GitRepo:
    """A PR that breaks, widens and adds columns whose names are attacks."""
    repo = GitRepo(tmp_path / "hostile")
    repo.write(
        f"{C}/a.yaml",
        _contract(EVIL_DATASET, [("id", "bigint"), (EVIL_COLUMN, "int"), (EVIL_COLUMN_2, "int")]),
    )
    repo.write(f"{C}/b.yaml", _contract(EVIL_DATASET_2, [("id", "bigint"), (EVIL_COLUMN_3, "int")]))
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(f"{C}/a.yaml", _contract(EVIL_DATASET, [("id", "bigint"), (EVIL_COLUMN, "bigint")]))
    repo.write(
        f"{C}/b.yaml", _contract(EVIL_DATASET_2, [("id", "bigint"), (EVIL_COLUMN_3, "smallint")])
    )
    repo.write(f"{C}/c.yaml", _contract(EVIL_DATASET + "2", [(EVIL_COLUMN_2, "int")]))
    return repo


_PR_BODY = "accept-breaking-change: <img src=x onerror=alert(2)>`</details>`\n"


class _Tags(HTMLParser):
    """Every tag and attribute the rendered HTML contains."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.code_text: list[str] = []
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "code":
            self._in_code += 1
            self.code_text.append("")

    def handle_endtag(self, tag: str) -> None:
        self.tags.append("/" + tag)
        if tag == "code":
            self._in_code -= 1

    def handle_data(self, data: str) -> None:
        if self._in_code:
            self.code_text[-1] += data


#: The HTML the gate's own Markdown produces; anything else came from a name.
_ALLOWED_TAGS = {
    "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code",
    "details", "summary", "ul", "li", "pre",
}  # fmt: skip


def test_markdown_report_keeps_every_name_inert(hostile: GitRepo) -> None:
    proc = run_gate(
        hostile.path, "--base", "main", "--format", "markdown", "--pr-body-file", "-",
        stdin=_PR_BODY,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    markdown = proc.stdout
    # A GFM-compatible renderer with raw HTML on, as GitHub renders comments.
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    parsed = _Tags()
    parsed.feed(rendered)
    assert set(t.lstrip("/") for t in parsed.tags) <= _ALLOWED_TAGS, rendered
    assert parsed.attrs == []  # no onerror=, no src=
    # The folded section closes where the gate closes it, nowhere else.
    assert parsed.tags.count("details") == parsed.tags.count("/details") == 1
    # The acknowledgement block is one fenced block holding exactly one line per dataset.
    assert parsed.tags.count("pre") == 1
    block = rendered.split("<pre><code>", 1)[1].split("</code></pre>", 1)[0]
    assert html.unescape(block).splitlines() == [
        "accept-breaking-change: " + EVIL_DATASET.replace("\n", "\\n"),
        "accept-breaking-change: " + EVIL_DATASET_2.replace("\r", "\\r"),
    ]
    # Tables: one row per change (the forged "| forged | cell |" row never appears).
    assert rendered.count("<tr>") == 2 + 1 + 2 + 1  # 2 breaking, header; 2 additive, header
    assert "forged" not in rendered.replace("<code>", "\0").split("\0", 1)[0]
    # Each name is shown whole, in one code span, with its controls spelled out.
    shown = set(parsed.code_text)
    assert EVIL_COLUMN.replace("\n", "\\n") in shown
    assert "e\\n##[error]legacy\\u2028::stop-commands::tok\\x85\\u202e" in shown
    # The verdict sentence names the datasets in code spans too.
    verdict = next(line for line in markdown.splitlines() if line.startswith("FAIL"))
    assert "<img" not in MarkdownIt("commonmark", {"html": True}).render(verdict).replace(
        "&lt;img", ""
    )


def test_markdown_notices_quote_config_globs_as_text(tmp_path: Path) -> None:
    # The config is read from the PR's side, so its globs are hostile too.
    repo = GitRepo(tmp_path / "r")
    repo.write("README.md", "x\n")
    repo.commit("init")
    repo.branch("feature")
    glob = "<img src=x onerror=alert(1)>\n# Owned\n</details>"
    repo.write(".schema-gate.yml", f"contracts: [{_quoted(glob)}]\n")
    # Globs matching nothing are exit 2 (issue #9); the error stays one line.
    failed = run_gate(repo.path, "--base", "main", "--format", "markdown")
    assert failed.returncode == 2 and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    # allow-empty applies from the base branch (gate/policy.py); the glob stays the PR's.
    repo.remove(".schema-gate.yml")
    repo.land(".schema-gate.yml", "allow-empty: true\n")
    repo.write(".schema-gate.yml", f"contracts: [{_quoted(glob)}]\nallow-empty: true\n")
    proc = run_gate(repo.path, "--base", "main", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(proc.stdout)
    parsed = _Tags()
    parsed.feed(rendered)
    assert set(t.lstrip("/") for t in parsed.tags) <= _ALLOWED_TAGS - {"details"}, rendered
    assert parsed.attrs == []
    assert "<h1>" not in rendered
    assert "&lt;img src=x onerror=alert(1)&gt;\\n# Owned\\n&lt;/details&gt;" in rendered


def _assert_no_command_starts(output: str) -> None:
    for line in output.splitlines():
        stripped = line.lstrip()
        assert not stripped.startswith(("::", "##[")), line
        assert "\x1b" not in line and "\x07" not in line and "\x85" not in line, line
        assert "\u2028" not in line and "\u202e" not in line and "\r" not in line, line


def test_text_report_cannot_forge_workflow_commands(hostile: GitRepo) -> None:
    proc = run_gate(hostile.path, "--base", "main", "--pr-body-file", "-", stdin=_PR_BODY)
    assert proc.returncode == 1, proc.stderr
    _assert_no_command_starts(proc.stdout)
    assert "c\\n::error title=forged::x" in proc.stdout  # shown, spelled out
    assert "\\x1b[31mred\\x1b]8;;https://evil.example\\x07link" in proc.stdout


def test_error_line_quoting_a_name_cannot_forge_commands(hostile: GitRepo) -> None:
    # Two files declaring one dataset: the one-line error quotes the evil id.
    hostile.write(f"{C}/d.yaml", _contract(EVIL_DATASET_2, [("id", "bigint")]))
    proc = run_gate(hostile.path, "--base", "main")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("schema-gate: error: ")
    _assert_no_command_starts(proc.stderr)


def test_github_annotations_are_one_command_each(hostile: GitRepo) -> None:
    proc = run_gate(hostile.path, "--base", "main", "--format", "github")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    report = json.loads(run_gate(hostile.path, "--base", "main", "--format", "json").stdout)
    assert len(lines) == len(report["changes"]) + 1  # one per change, then the verdict
    for line in lines:
        assert line.startswith(("::error ", "::warning ", "::notice ", "::error::")), line
        assert "\x1b" not in line and "\x85" not in line and "\u2028" not in line, line
    assert any("c%0A::error title=forged::x" in line for line in lines)


# -- YAML: depth and expansion, refused before anything recurses ----------------


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-500:])
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    return lines[0]


@pytest.fixture
def shop(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.write(f"{C}/orders.yaml", _contract("shop.orders", [("id", "bigint")]))
    repo.commit("contracts")
    repo.branch("feature")
    return repo


@pytest.mark.parametrize(
    "nested",
    [
        "c: " + "[" * 50_000 + "]" * 50_000,  # segfaulted libyaml's composer (exit -11)
        "c: " + "{a: " * 50_000 + "1" + "}" * 50_000,
        "c:\n" + "- " * 50_000 + "x",  # compact block sequences: two bytes a level
    ],
    ids=["flow-sequences", "flow-mappings", "compact-block-sequences"],
)
def test_deep_nesting_in_a_contract_exits_2(shop: GitRepo, nested: str) -> None:
    shop.write(f"{C}/orders.yaml", f"dataset: shop.orders\n{nested}\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line.startswith(f"schema-gate: error: {C}/orders.yaml:2") or line.startswith(
        f"schema-gate: error: {C}/orders.yaml:3"
    )
    assert line.endswith("YAML nests too deeply (more than 256 levels)")


def test_deep_nesting_in_the_config_exits_2(shop: GitRepo) -> None:
    shop.write(".schema-gate.yml", "rules: " + "[" * 50_000 + "]" * 50_000 + "\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        "schema-gate: error: .schema-gate.yml:1: YAML nests too deeply (more than 256 levels)"
    )


def test_recursive_alias_is_an_alias_error(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", "dataset: shop.orders\nx: &a [*a]\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line.startswith(f"schema-gate: error: {C}/orders.yaml: YAML aliases expand too far")


def test_alias_bomb_through_one_long_string_exits_2(shop: GitRepo) -> None:
    # 14 KB of YAML, 90,600 nodes (under the node budget), 900 MB of text to a consumer.
    long = "x" * 10_000
    bomb = f'dataset: shop.orders\nnote: &s "{long}"\n' + "x: &l [" + ", ".join(["*s"] * 300)
    bomb += "]\ny: [" + ", ".join(["*l"] * 300) + "]\n"
    assert len(bomb) < 16_000
    shop.write(f"{C}/orders.yaml", bomb)
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml: YAML aliases expand too far "
        "(possible alias bomb); refusing to load"
    )


# -- size limits: checked before the work they bound -----------------------------


def enforced_orders(tmp_path: Path, sql: str) -> GitRepo:
    """A dbt project whose enforced model ``orders`` is built by ``sql``, committed on
    main, with the PR branch ``feature`` checked out: the ground of the model-file
    attacks, which then rewrite ``models/orders.sql``."""
    repo = GitRepo(tmp_path / "r")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write(
        "models/orders.yml",
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: id\n        data_type: int\n",
    )
    repo.write("models/orders.sql", sql)
    repo.commit("a model")
    repo.branch("feature")
    return repo


def _columns(count: int, data_type: str = "    data_type: int\n") -> str:
    return "dataset: shop.orders\ncolumns:\n" + "".join(
        f"  - name: c{i}\n{data_type}" for i in range(count)
    )


@pytest.mark.parametrize("megabytes", [10, 65])
def test_huge_one_line_contract_exits_2_naming_the_limit(shop: GitRepo, megabytes: int) -> None:
    # One line: a flow mapping whose description is the whole file.
    size = megabytes * 1024 * 1024
    text = '{dataset: shop.orders, description: "' + "y" * (size - 60) + '"}\n'
    shop.write(f"{C}/orders.yaml", text)
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml: the file is {len(text):,} bytes, more than "
        "the limit of 2,097,152; split it or raise limits.contract_bytes in the config"
    )


def test_hundred_thousand_columns_exit_2_at_the_node_budget(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", _columns(100_000, data_type=""))  # 1.5 MB
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml: more than 100,000 YAML nodes; split the file "
        "or raise limits.yaml_nodes in the config"
    )


def test_a_megabyte_of_tiny_nodes_exits_2(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", "dataset: shop.orders\nx: [" + "a," * 500_000 + "]\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line.endswith(
        "more than 100,000 YAML nodes; split the file or raise limits.yaml_nodes in the config"
    )


def test_columns_per_dataset_limit_and_the_base_config_raises_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "wide")
    repo.write(f"{C}/orders.yaml", _columns(2))
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(f"{C}/orders.yaml", _columns(10_001))
    line = _one_error_line(run_gate(repo.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml:1: dataset 'shop.orders' has 10,001 columns "
        "(nested fields included), more than the limit of 10,000; raise "
        "limits.columns_per_dataset in the config"
    )
    # The PR cannot raise its own limit: the base side's config decides.
    repo.write(".schema-gate.yml", "limits:\n  columns_per_dataset: 20000\n")
    line = _one_error_line(run_gate(repo.path, "--base", "main"))
    assert "more than the limit of 10,000" in line
    # Once the raised limit is merged, the same change is judged.
    (repo.path / ".schema-gate.yml").unlink()
    repo.git("stash")
    repo.git("checkout", "-q", "main")
    repo.write(".schema-gate.yml", "limits:\n  columns_per_dataset: 20000\n")
    repo.commit("raise the column limit")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "main")
    repo.git("stash", "pop")
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["additive"] == 9_999  # c2..c10000 added


def test_a_pr_raising_limits_is_told_they_apply_after_merge(shop: GitRepo) -> None:
    shop.write(".schema-gate.yml", "limits:\n  contract_bytes: 99999999\n")
    proc = run_gate(shop.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert any("the base branch's limits apply" in n for n in json.loads(proc.stdout)["notices"])


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        (
            "limits:\n  contract_byte: 5\n",
            ".schema-gate.yml:2: unknown limit 'contract_byte' (did you mean 'contract_bytes'?); "
            "known limits: "
            "contract_bytes, yaml_nodes, columns_per_dataset, type_chars_per_file, "
            "sample_bytes, sample_rows, sample_decoded_bytes, smoke_seconds_per_dataset, "
            "consumer_bytes, smoke_seconds, lineage_depth, model_file_bytes",
        ),
        (
            "limits:\n  yaml_nodes: -1\n",
            ".schema-gate.yml:2: limit 'yaml_nodes' must be a positive integer, found a number",
        ),
        ("limits: 5\n", ".schema-gate.yml:1: 'limits' must be a mapping, found a number"),
    ],
)
def test_bad_limits_in_the_config_exit_2(shop: GitRepo, limits: str, expected: str) -> None:
    shop.write(".schema-gate.yml", limits)
    assert (
        _one_error_line(run_gate(shop.path, "--base", "main")) == f"schema-gate: error: {expected}"
    )


def test_limits_in_pyproject_toml(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "toml")
    repo.write("pyproject.toml", "[tool.schema-gate.limits]\ncolumns-per-dataset = 3\n")
    repo.write(f"{C}/orders.yaml", _columns(2))
    repo.commit("contracts")
    repo.branch("feature")
    repo.write(f"{C}/orders.yaml", _columns(4))
    line = _one_error_line(run_gate(repo.path, "--base", "main"))
    assert line.endswith(
        "has 4 columns (nested fields included), more than the limit of 3; "
        "raise limits.columns_per_dataset in the config"
    )


# -- new dataset ids reach git grep through stdin, not argv ----------------------


def test_thousands_of_long_new_ids_are_checked_without_argv(tmp_path: Path) -> None:
    # 4,000 new dbt models with 600-character names: 2.4 MB of ids, more than
    # Linux's argument limit, so `git grep -e ID ...` could not even start.
    # The project enforces every model, so each is a contract, and one of them
    # is already declared in an unchanged properties file of the same project.
    clash = f"m1_1999_{'x' * 590}"
    column = "    columns: [{name: id, data_type: int}]\n"
    repo = GitRepo(tmp_path / "many")
    repo.write("dbt_project.yml", "name: p\nmodels:\n  p:\n    +contract:\n      enforced: true\n")
    repo.write("models/old.yml", f"version: 2\nmodels:\n  - name: {clash}\n{column}")
    repo.commit("an existing contract")
    repo.branch("feature")

    def add_models(skip: str | None) -> None:
        for part in range(2):
            names = (f"m{part}_{i:04d}_{'x' * 590}" for i in range(2_000))
            models = "".join(f"  - name: {name}\n{column}" for name in names if name != skip)
            repo.write(f"models/part{part}/schema.yml", "version: 2\nmodels:\n" + models)

    add_models(skip=None)
    line = _one_error_line(run_gate(repo.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: models/part1/schema.yml:4001: dataset '{clash}' is also "
        "declared in models/old.yml"
    )
    add_models(skip=clash)
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert json.loads(proc.stdout)["exit_code"] == 0  # 3,999 new contracts: additive


# -- types: bounded before sqlglot sees them ----------------------------------


def _typed(data_type: str) -> str:
    return f"dataset: shop.orders\ncolumns:\n  - name: id\n    data_type: {_quoted(data_type)}\n"


@pytest.mark.parametrize(
    ("data_type", "problem"),
    [
        # 100 KB: sqlglot took 48 s on it.
        (
            "decimal(" + ",".join(["1"] * 50_000) + ")",
            "is 100,008 characters long, more than 10,000",
        ),
        # 10,000 fields: sqlglot took 29 s.
        (
            "struct<" + ", ".join(f"f{i}: int" for i in range(10_000)) + ">",
            "is 118,896 characters long, more than 10,000",
        ),
        (
            "struct<" + ",".join(f"c{i} int" for i in range(1_001)) + ">",
            "has more than 1,000 struct fields",
        ),
        ("decimal(" + ",".join(["1"] * 65) + ")", "has more than 64 parameters in one list"),
        ("array<" * 33 + "int" + ">" * 33, "nests more than 32 levels deep"),
    ],
    ids=["50k-parameters", "10k-fields", "1001-fields", "65-parameters", "33-levels"],
)
def test_oversized_types_exit_2_before_parsing(shop: GitRepo, data_type: str, problem: str) -> None:
    shop.write(f"{C}/orders.yaml", _typed(data_type))
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml:3: dataset 'shop.orders': column 'id': the type "
        f"{problem}; refusing to parse it"
    )


def test_the_largest_allowed_struct_is_compared(shop: GitRepo) -> None:
    struct = "struct<" + ",".join(f"c{i} int" for i in range(999)) + ">"
    shop.git("checkout", "-q", "main")
    shop.write(f"{C}/orders.yaml", _typed(struct))
    shop.commit("a wide struct")
    shop.git("checkout", "-q", "feature")
    shop.git("merge", "-q", "main")
    shop.write(f"{C}/orders.yaml", _typed(struct.replace("c1 int", "c1 bigint")))
    proc = run_gate(shop.path, "--base", "main", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [c["rule"] for c in json.loads(proc.stdout)["changes"]] == ["type_widened"]


def test_many_distinct_types_hit_the_per_file_budget(shop: GitRepo) -> None:
    columns = "".join(f"  - name: c{i}\n    data_type: varchar({i + 1})\n" for i in range(3_000))
    shop.write(f"{C}/orders.yaml", "dataset: shop.orders\ncolumns:\n" + columns)
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line.startswith(
        f"schema-gate: error: {C}/orders.yaml:3249: the distinct data_type values add up to "
        "more than 20,000 characters (at dataset 'shop.orders', column 'c1623'); raise "
        "limits.type_chars_per_file in the config"
    )


# -- acknowledgements: only a real line start counts -----------------------------


@pytest.mark.parametrize(
    ("body", "acked"),
    [
        ("Looks fine.\naccept-breaking-change: shop.orders\n", True),
        ("Looks fine.\r\n   accept-breaking-change: shop.orders\r\n", True),  # 3 spaces
        ("- \taccept-breaking-change: shop.orders", True),  # after a bullet: any blanks
        # Not line breaks in Markdown, so the key is in the middle of a line.
        ("We must not\x0baccept-breaking-change: shop.orders", False),
        ("We must not\x0caccept-breaking-change: shop.orders", False),
        ("We must not\x1caccept-breaking-change: shop.orders", False),
        ("We must not\x85accept-breaking-change: shop.orders", False),
        ("We must not\u2028accept-breaking-change: shop.orders", False),
        ("We must not\u2029accept-breaking-change: shop.orders", False),
        # A tab is four columns of indentation, as four spaces are: a code block.
        ("\taccept-breaking-change: shop.orders", False),
        (" \taccept-breaking-change: shop.orders", False),
        ("    accept-breaking-change: shop.orders", False),
        ("\x0baccept-breaking-change: shop.orders", False),
    ],
)
def test_acknowledgement_needs_a_real_line_start(shop: GitRepo, body: str, acked: bool) -> None:
    shop.write(f"{C}/orders.yaml", _contract("shop.orders", [("id", "int")]))  # narrowed
    proc = run_gate(
        shop.path, "--base", "main", "--format", "json", "--pr-body-file", "-", stdin=body
    )
    assert proc.returncode == (0 if acked else 1), proc.stderr
    assert json.loads(proc.stdout)["acknowledgements"] == (["shop.orders"] if acked else [])


# -- values Python refuses: named with file and line, not "internal error" -------


def test_huge_integer_in_a_contract_names_file_and_line(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", "dataset: shop.orders\nversion: " + "9" * 5_000 + "\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml:2: invalid YAML: cannot read the value: "
        "Exceeds the limit (4300 digits) for integer string conversion"
    )


def test_huge_integer_in_pyproject_names_file_and_line(shop: GitRepo) -> None:
    shop.write("pyproject.toml", "[project]\nname = 'x'\nversion_digits = " + "9" * 5_000 + "\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        "schema-gate: error: pyproject.toml:3: invalid TOML: Exceeds the limit (4300 digits) "
        "for integer string conversion"
    )


def test_deep_arrays_in_pyproject_name_file_and_line(shop: GitRepo) -> None:
    shop.write(
        "pyproject.toml", "[project]\nname = 'x'\ndeep = " + "[" * 5_000 + "]" * 5_000 + "\n"
    )
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == "schema-gate: error: pyproject.toml:3: TOML nests too deeply"


def test_deep_arrays_in_a_contract_name_file_and_line(shop: GitRepo) -> None:
    shop.write(f"{C}/orders.yaml", "dataset: shop.orders\nx:\n  y: " + "[" * 900 + "]" * 900 + "\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        f"schema-gate: error: {C}/orders.yaml:3: YAML nests too deeply (more than 256 levels)"
    )


# -- type bounds of the dialect: never a widening ---------------------------------


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("bigint", "decimal(10000000000000000000000, 2)", "precision 10000000000000000000000"),
        ("decimal(10, 2)", "decimal(39, 2)", "precision 39"),  # issue #10: Spark's maximum is 38
    ],
)
def test_decimal_precision_above_the_dialect_maximum_is_type_changed(
    shop: GitRepo, old: str, new: str, why: str
) -> None:
    shop.git("checkout", "-q", "main")
    shop.write(f"{C}/orders.yaml", _typed(old))
    shop.commit("typed")
    shop.git("checkout", "-q", "feature")
    shop.git("merge", "-q", "main")
    shop.write(f"{C}/orders.yaml", _typed(new))
    proc = run_gate(shop.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (change,) = json.loads(proc.stdout)["changes"]
    assert (change["rule"], change["line"]) == ("type_changed", 3)
    assert f"is not a valid type: {why} is above spark's maximum of 38" in change["message"]
    # The largest valid precision still widens.
    shop.write(f"{C}/orders.yaml", _typed("decimal(38, 2)"))
    proc = run_gate(shop.path, "--base", "main", "--format", "json")
    assert [c["rule"] for c in json.loads(proc.stdout)["changes"]] == ["type_widened"]


# -- the escaping functions, for every string ------------------------------------

_HOSTILE_TEXT = st.lists(
    st.sampled_from(
        [*"ab :#[]`|<>&*_\\!-\n\r\t\x0b\x0c\x1b\x07\x85", "\u2028", "\u202e", "::", "##["]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_HOSTILE_TEXT)
def test_escape_line_is_one_line_that_is_no_command(text: str) -> None:
    line = escape_line(text)
    assert len(line.splitlines()) <= 1
    assert not line.lstrip().startswith(("::", "##["))
    assert "\x1b" not in line and "\x07" not in line


@settings(max_examples=400, deadline=None)
@given(_HOSTILE_TEXT.filter(lambda t: t.strip(" ") != ""))
def test_code_span_shows_exactly_the_text_in_a_table_cell(text: str) -> None:
    row = "| " + code(text).replace("|", "\\|") + " |"
    rendered = (
        MarkdownIt("commonmark", {"html": True})
        .enable("table")
        .render("| h |\n|---|\n" + row + "\n")
    )
    parsed = _Tags()
    parsed.feed(rendered)
    assert [
        t
        for t in parsed.tags
        if t
        not in (
            "table",
            "/table",
            "thead",
            "/thead",
            "tbody",
            "/tbody",
            "tr",
            "/tr",
            "th",
            "/th",
            "td",
            "/td",
        )
    ] == ["code", "/code"]
    assert parsed.code_text == [visible(text)]


def test_a_huge_config_file_exits_2(shop: GitRepo) -> None:
    shop.write(".schema-gate.yml", "# " + "x" * (3 * 1024 * 1024) + "\n")
    line = _one_error_line(run_gate(shop.path, "--base", "main"))
    assert line == (
        "schema-gate: error: .schema-gate.yml: the file is 3,145,731 bytes, more than the "
        "limit of 2,097,152; a config file may not be larger"
    )


@pytest.mark.parametrize("source", ["/dev/zero", "sparse"])
def test_an_endless_or_huge_pr_body_file_exits_2(
    shop: GitRepo, tmp_path: Path, source: str
) -> None:
    """``--pr-body-file /dev/zero`` (or any stream that does not end) was read
    whole before anything looked at its size: the run grew until the kernel
    killed it (exit -9). A description is at most a few MB on any platform
    (GitHub: 65,536 characters, GitLab: 1,000,000), so the read stops there."""
    path = source
    if source == "sparse":
        path = str(tmp_path / "body.md")
        with open(path, "wb") as body:
            body.truncate(64 << 20)  # 64 MiB of zeros, no disk used
    shop.write(f"{C}/orders.yaml", _contract("shop.orders", [("id", "int")]))
    proc = run_gate(shop.path, "--base", "main", "--pr-body-file", path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"--pr-body-file {path}" in proc.stderr and "more than" in proc.stderr


@pytest.mark.parametrize("head", [("--head", "HEAD"), ()])
@pytest.mark.parametrize("link", ["soda/contracts/orders.yaml", "soda/contracts/sub/orders.yaml"])
def test_editing_the_file_a_symlinked_contract_points_at_is_compared(
    tmp_path: Path, head: tuple[str, ...], link: str
) -> None:
    """Attack: the contract at a glob is a symlink (on the base branch already)
    to a file outside the globs; the PR edits that file only. git lists the
    link only when its own text changes, so the contract changed unseen: a
    dropped column passed, "0 changed contract file(s)"."""
    repo = GitRepo(tmp_path / "r")
    repo.write("shared/orders.yaml", _contract("shop.orders", [("id", "bigint"), ("note", "int")]))
    target = "../" * link.count("/") + "shared/orders.yaml"
    repo.symlink(link, target)
    repo.commit("a contract kept beside its pipeline")
    repo.branch("feature")
    repo.write("shared/orders.yaml", _contract("shop.orders", [("id", "bigint")]))
    repo.commit("drop note")
    proc = run_gate(repo.path, "--base", "main", "--format", "json", *head)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert [(c["rule"], c["column"], c["path"]) for c in report["changes"]] == [
        ("column_removed", "note", link)
    ]
    # Unchanged, the link compares nothing.
    repo.write("README.md", "x\n")
    repo.commit("unrelated")
    repo.git("checkout", "-q", "-b", "later", "main")
    assert run_gate(repo.path, "--base", "main", *head).returncode == 0


def test_dbt_versions_cannot_multiply_a_models_columns_past_the_bound(tmp_path: Path) -> None:
    """Attack: every version of a dbt model repeats the model's columns (``include:
    all`` is the default), so 100 KB of properties (1,000 versions, 2,000
    columns) expanded to 2,000,000 columns: 59 s to parse, 98 s for the run,
    under every limit. The columns versions expand to are bounded per file."""
    columns = "".join(f"      - name: c{i}\n        data_type: int\n" for i in range(400))
    versions = "".join(f"      - v: {v}\n" for v in range(1, 601))
    properties = (
        "version: 2\nmodels:\n  - name: orders\n    latest_version: 1\n    config:\n"
        f"      contract:\n        enforced: true\n    columns:\n{columns}    versions:\n"
    )
    repo = GitRepo(tmp_path / "r")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("models/orders.yml", properties + "      - v: 1\n")
    repo.write("models/orders_v1.sql", "select 1 as c0\n")
    repo.commit("one version")
    repo.branch("feature")
    repo.write("models/orders.yml", properties + versions)
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1
    assert "models/orders.yml:3: model 'orders': 600 versions of 400 columns" in proc.stderr


def test_unclosed_config_calls_cannot_make_a_model_file_quadratic(tmp_path: Path) -> None:
    """Attack: 10,000 ``config(`` left open in a 70 KB model file, each call's
    arguments read up to 20,000 characters: 44 s for one file. The scans share a
    linear budget; past it the file is refused (its settings cannot be known),
    while a model with a hundred closed calls still reads."""
    closed = "".join(f"{{{{ config(tags=['t{i}']) }}}}\n" for i in range(100))
    repo = enforced_orders(tmp_path, closed + "select 1 as id\n")
    repo.write("models/orders.sql", closed + "select 1 as id, 2 as memo\n")
    assert run_gate(repo.path, "--base", "main").returncode == 0
    repo.write("models/orders.sql", "{{ " + "config(" * 10_000 + " }}\nselect 1 as id\n")
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1
    assert "models/orders.sql:1: too many 'config(' calls left open" in proc.stderr


def test_dcs_references_cannot_expand_a_small_file_exponentially(tmp_path: Path) -> None:
    """Attack: DCS ``definitions`` whose object fields ``$ref`` the next definition,
    four fields a level, twelve levels: 2.5 KB naming 4,194,304 leaf fields. The
    columns limit was checked once every reference was expanded: no answer
    after 300 s. The fields a file builds ($ref expansions included) are bounded
    while they are built."""
    defs = "".join(
        f"  d{k}:\n    type: object\n    fields:\n"
        + "".join(f"      f{w}:\n        $ref: '#/definitions/d{k + 1}'\n" for w in range(4))
        for k in range(11)
    )
    contract = (
        "dataContractSpecification: 1.1.0\nid: x\ninfo: {title: x, version: 1.0.0}\n"
        f"definitions:\n{defs}  d11:\n    type: int\n"
        "models:\n  m:\n    fields:\n      id: {type: bigint}\n      root:\n"
        "        $ref: '#/definitions/d0'\n"
    )
    repo = GitRepo(tmp_path / "r")
    repo.write(
        "x.datacontract.yaml",
        contract.replace("      root:\n        $ref: '#/definitions/d0'\n", ""),
    )
    repo.commit("a model")
    repo.branch("feature")
    repo.write("x.datacontract.yaml", contract)
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1
    assert "x.datacontract.yaml:" in proc.stderr and "50,000 fields" in proc.stderr


@pytest.mark.parametrize(
    ("setting", "rule"),
    [
        ("contract={'enforced': false}", "contract_enforcement_removed"),
        ("alias='orders_v2'", "model_relation_changed"),
    ],
)
def test_a_config_call_padded_past_the_scan_cap_is_still_read(
    tmp_path: Path, setting: str, rule: str
) -> None:
    """Attack: a model's ``config()`` call whose arguments run past 20,000
    characters (a long ``meta`` string) was not read at all: the contract
    switched off (or the table renamed) inside it passed, "0 changed contract
    file(s)". dbt reads a call of any length; the linear budget of the file's
    scans is the bound, and a call is read to its end within it."""
    repo = enforced_orders(tmp_path, "select 1 as id\n")
    pad = "x" * 20_000
    repo.write(
        "models/orders.sql", f"{{{{ config({setting}, meta={{'p': '{pad}'}}) }}}}\nselect 1 as id\n"
    )
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [c["rule"] for c in json.loads(proc.stdout)["changes"]] == [rule]


def test_nested_kwargs_dicts_in_a_config_call_are_no_internal_error(tmp_path: Path) -> None:
    """Attack: ``config(alias='x', **{'a': 1, **{'a': 1, ...}})`` nested 1,500 deep
    (16 KB): each ``**{...}`` was read by a recursive call that split the whole
    rest again: 10 s, then "internal error: RecursionError". Deep nesting is
    opaque (it may set anything: the model stays guarded) and linear."""
    repo = enforced_orders(tmp_path, "select 1 as id\n")
    depth = 1_500
    nested = "**{'a': 1, " * depth + "}" * depth
    repo.write("models/orders.sql", f"{{{{ config(alias='x', {nested}) }}}}\nselect 1 as id\n")
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    rules = {c["rule"] for c in json.loads(proc.stdout)["changes"]}
    assert "model_relation_changed" in rules


def test_thousands_of_unevaluable_config_calls_are_read_in_linear_time(tmp_path: Path) -> None:
    """Attack: 40,000 ``{{ config(enabled=var('x')) }}`` lines (1.4 MB) in one model
    file: the line of every unevaluable setting was counted from the start of the
    file (5.6 s at 10,000 calls, 16.5 s at 20,000: quadratic, and model files have
    no size limit). Lines are looked up in one index of the file's line starts."""
    import time

    repo = enforced_orders(tmp_path, "select 1 as id\n")
    calls = "".join(f"{{{{ config(enabled=var('x{i}')) }}}}\n" for i in range(40_000))
    repo.write("models/orders.sql", calls + "select 1 as id\n")
    started = time.process_time()
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    elapsed = time.process_time() - started
    assert proc.returncode == 1, proc.stderr
    lines = {c.get("line") for c in json.loads(proc.stdout)["changes"]}
    assert 40_000 in lines, lines
    assert elapsed < 15, elapsed


def test_thousands_of_warnings_are_reported_in_linear_time(tmp_path: Path) -> None:
    """Attack: a dbt model given 6,000 versions (60 KB) adds 6,000 datasets, each a
    warning; the text report recomputed every blocking change for each warning
    and looked it up in that tuple: 50 s of CPU (10,000 versions: 156 s, over
    400 s on a loaded runner). Each warning is asked whether it blocks, once."""
    import time

    repo = GitRepo(tmp_path / "r")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    props = (
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: id\n        data_type: int\n"
    )
    repo.write("models/orders.yml", props)
    repo.write("models/orders.sql", "select 1 as id\n")
    repo.commit("a model")
    repo.branch("feature")
    versions = "".join(f"      - v: {v}\n" for v in range(1, 6_001))
    repo.write("models/orders.yml", props + "    versions:\n" + versions)
    started = time.process_time()
    proc = run_gate(repo.path, "--base", "main")
    elapsed = time.process_time() - started
    assert proc.returncode == 1, proc.stderr
    assert "WARNINGS (" in proc.stdout
    assert elapsed < 20, elapsed


def test_the_dialect_of_dbt_profiles_is_the_base_tips_not_where_the_pr_branched(
    tmp_path: Path,
) -> None:
    """Attack: the base branch switched its dbt profile from Spark to DuckDB after
    the PR branched; the PR, not rebased, changes ``numeric -> numeric(18,2)``
    (a widening in Spark, a narrowing in DuckDB). The profile was read where the
    PR branched, so the narrowing passed until someone rebased. The floor is the
    base branch's tip, for the dialect its files declare as for the config."""
    props = (
        "version: 2\nmodels:\n  - name: orders\n    config:\n      contract:\n"
        "        enforced: true\n    columns:\n      - name: amount\n        data_type: {}\n"
    )
    profile = "shop:\n  target: dev\n  outputs:\n    dev:\n      type: {}\n"
    repo = GitRepo(tmp_path / "r")
    repo.write("dbt_project.yml", "name: shop\nversion: '1.0'\nprofile: shop\n")
    repo.write("profiles.yml", profile.format("spark"))
    repo.write("models/orders.yml", props.format("numeric"))
    repo.write("models/orders.sql", "select 1 as amount\n")
    repo.commit("a model")
    repo.branch("feature")
    repo.write("models/orders.yml", props.format("numeric(18,2)"))
    repo.commit("more scale")
    repo.checkout("main")
    repo.write("profiles.yml", profile.format("duckdb"))
    repo.commit("the warehouse is DuckDB now")
    repo.checkout("feature")
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout
    report = json.loads(proc.stdout)
    assert report["dialect"] == "duckdb"
    assert [c["rule"] for c in report["changes"]] == ["type_narrowed"]
    assert not report["relaxations"]


def test_a_huge_model_file_is_refused_before_its_config_is_read(tmp_path: Path) -> None:
    """Attack: a model file of 20 MB of ``{{x}}`` (a few KB in git) took 14 s and
    935 MB of memory to read for its ``config()`` calls (model files had no size
    bound; 80 MB would exhaust a runner). Past 4 MiB the file is refused, naming
    it: what its calls set cannot be read, so ignoring it would fail open."""
    repo = enforced_orders(tmp_path, "select 1 as id\n")
    repo.write("models/orders.sql", "{{x}}" * 1_000_000 + "\nselect 1 as id\n")
    proc = run_gate(repo.path, "--base", "main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1
    assert "models/orders.sql: the model file is 5,000,016 bytes" in proc.stderr


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [("snowflake", "select $1 from shop.orders"), ("duckdb", "select #1 as n from shop.orders")],
)
def test_a_positional_column_read_is_a_reader_of_every_column(
    tmp_path: Path, dialect: str, sql: str
) -> None:
    """Attack: with ``lineage.usage_aware_severity`` on, a PR drops the first column
    of a table a SQL file reads by position (Snowflake ``$1``, DuckDB ``#1``): the
    analysis saw no column read, so "no reader found" graded the removal a
    warning and the run passed. A positional reference reads what a ``*`` reads."""
    repo = GitRepo(tmp_path / "r")
    repo.write(".schema-gate.yml", f"dialect: {dialect}\nlineage:\n  usage_aware_severity: true\n")
    columns = "  - name: note\n    data_type: int\n  - name: id\n    data_type: int\n"
    repo.write(f"{C}/orders.yaml", "dataset: shop.orders\ncolumns:\n" + columns)
    repo.write("sql/q.sql", sql + "\n")
    repo.commit("a contract and its reader")
    repo.branch("feature")
    repo.write(f"{C}/orders.yaml", "dataset: shop.orders\ncolumns:\n" + columns[34:])
    repo.commit("drop note")
    proc = run_gate(repo.path, "--base", "main", "--format", "json")
    assert proc.returncode == 1, proc.stdout
    (change,) = json.loads(proc.stdout)["changes"]
    assert (change["rule"], change["severity"]) == ("column_removed", "error")
    assert [c["path"] for c in change["consumers"]] == ["sql/q.sql"]
