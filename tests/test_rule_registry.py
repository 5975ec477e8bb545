"""The rule registry: every rule id bound to its family module and to a fixture.

The table below holds, for each rule id, the smallest base/HEAD pair that makes
the diff emit it (``consumer_broken`` needs a consumer's read beside the
diff). The table's keys are the catalogue's ids, so a new rule without a
fixture fails here; each fixture records which module built its findings, so
a rule emitted from another family module than the catalogue says fails too.
"""

from __future__ import annotations

import ast
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gate import rules
from gate.consumers import explain
from gate.consumers.reader import Found
from gate.diff import default_severity, diff_datasets
from gate.model import Change, Check, Column, Dataset, Relation, Relationship
from gate.report.base import change_dict

ROOT = Path(__file__).resolve().parent.parent


def ds(id_: str = "d", *columns: Column, **kw) -> Dataset:
    return Dataset(id=id_, path="c/d.yaml", format="soda", columns=columns, line=1, **kw)


def col(name: str = "c", data_type: str | None = "bigint", position: int = 0, **kw) -> Column:
    return Column(name=name, data_type=data_type, position=position, line=position + 3, **kw)


C = col()
ROWS = Check.make("row_count", {"must_be_greater_than": 0})
REL = Relationship(("c",), "t.id")
PAST = datetime(2020, 1, 1, tzinfo=timezone.utc)
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
UNEVALUABLE = (("enabled", "{{ var('on') }}", "m/p.yml", 4),)

#: rule id -> (base, head, diff keywords, every rule the pair emits). The rule under
#: test is among them; the others are what it needs to fire (a breaking change for
#: ``version_not_bumped``, a new column for ``type_unknown``).
FIXTURES: dict[str, tuple[list[Dataset], list[Dataset], dict, set[str]]] = {
    "model_removed": ([ds("d", C)], [], {}, {"model_removed"}),
    "model_renamed": ([ds("a", C)], [ds("b", C)], {}, {"model_renamed"}),
    "column_removed": ([ds("d", C, col("x", position=1))], [ds("d", C)], {}, {"column_removed"}),
    "column_renamed": ([ds("d", C)], [ds("d", col("k"))], {}, {"column_renamed"}),
    "column_case_changed": ([ds("d", C)], [ds("d", col("C"))], {}, {"column_case_changed"}),
    "type_narrowed": ([ds("d", C)], [ds("d", col(data_type="int"))], {}, {"type_narrowed"}),
    "type_changed": ([ds("d", C)], [ds("d", col(data_type="string"))], {}, {"type_changed"}),
    "required_added": ([ds("d", C)], [ds("d", col(required=True))], {}, {"required_added"}),
    "required_column_added": (
        [ds("d", C)],
        [ds("d", C, col("x", position=1, required=True))],
        {},
        {"required_column_added"},
    ),
    "enum_value_removed": (
        [ds("d", col(enum=("a", "b")))],
        [ds("d", col(enum=("a",)))],
        {},
        {"enum_value_removed"},
    ),
    "primary_key_changed": (
        [ds("d", col("a", primary_key_position=1), col("b", position=1, primary_key_position=2))],
        [ds("d", col("a", primary_key_position=2), col("b", position=1, primary_key_position=1))],
        {},
        {"primary_key_changed"},
    ),
    "version_not_bumped": (
        [ds("d", C, col("x", position=1), version="1.0.0")],
        [ds("d", C, version="1.1.0")],
        {},
        {"column_removed", "version_not_bumped"},
    ),
    "version_decreased": (
        [ds("d", C, version="2.0.0")],
        [ds("d", C, version="1.0.0")],
        {},
        {"version_decreased"},
    ),
    "consumer_broken": ([], [], {}, {"consumer_broken"}),  # see consumer_broken()
    "contract_enforcement_removed": (
        [ds("d", C)],
        [ds("d", C, enforced=False)],
        {},
        {"contract_enforcement_removed"},
    ),
    "dbt_config_unevaluable": (
        [ds("d", C)],
        [ds("d", C, unevaluable=UNEVALUABLE)],
        {},
        {"dbt_config_unevaluable"},
    ),
    "required_removed": ([ds("d", col(required=True))], [ds("d", C)], {}, {"required_removed"}),
    "enum_declared": ([ds("d", C)], [ds("d", col(enum=("a",)))], {}, {"enum_declared"}),
    "constraint_tightened": (
        [ds("d", C)],
        [ds("d", col(constraints=(("maximum", 5),)))],
        {},
        {"constraint_tightened"},
    ),
    "model_disabled": ([ds("d", C)], [ds("d", C, enabled=False)], {}, {"model_disabled"}),
    "model_relation_changed": (
        [ds("d", C, relation=Relation(schema="marts", default_alias="d"))],
        [ds("d", C, relation=Relation(schema="serving", default_alias="d"))],
        {},
        {"model_relation_changed"},
    ),
    "model_access_narrowed": (
        [ds("d", C, access="public")],
        [ds("d", C, access="protected")],
        {},
        {"model_access_narrowed"},
    ),
    "type_removed": ([ds("d", C)], [ds("d", col(data_type=None))], {}, {"type_removed"}),
    "enum_value_added": (
        [ds("d", col(enum=("a",)))],
        [ds("d", col(enum=("a", "b")))],
        {},
        {"enum_value_added"},
    ),
    "latest_version_changed": (
        [ds("m.v1", C, unpinned_name="m"), ds("m.v2", C)],
        [ds("m.v1", C), ds("m.v2", C, unpinned_name="m")],
        {},
        {"latest_version_changed"},
    ),
    "model_file_missing": (
        [ds("d", C, model_file_missing=True)],
        [ds("d", C, model_file_missing=True)],
        {},
        {"model_file_missing"},
    ),
    "unique_removed": ([ds("d", col(unique=True))], [ds("d", C)], {}, {"unique_removed"}),
    "check_removed": ([ds("d", C, checks=(ROWS,))], [ds("d", C)], {}, {"check_removed"}),
    "enum_removed": ([ds("d", col(enum=("a",)))], [ds("d", C)], {}, {"enum_removed"}),
    "constraint_relaxed": (
        [ds("d", col(constraints=(("maximum", 5),)))],
        [ds("d", C)],
        {},
        {"constraint_relaxed"},
    ),
    "constraint_changed": (
        [ds("d", col(constraints=(("format", "email"),)))],
        [ds("d", col(constraints=(("format", "uri"),)))],
        {},
        {"constraint_changed"},
    ),
    "check_changed": (
        [ds("d", C, checks=(ROWS,))],
        [ds("d", C, checks=(Check.make("row_count", {"must_be_greater_than": 10}),))],
        {},
        {"check_changed"},
    ),
    "relationship_removed": (
        [ds("d", C, relationships=(REL,))],
        [ds("d", C)],
        {},
        {"relationship_removed"},
    ),
    "relationship_changed": (
        [ds("d", C, relationships=(REL,))],
        [ds("d", C, relationships=(Relationship(("c",), "u.id"),))],
        {},
        {"relationship_changed"},
    ),
    "type_unknown": (
        [ds("d", C)],
        [ds("d", C, col("x", "txet", 1))],
        {},
        {"column_added", "type_unknown"},
    ),
    "model_added": ([], [ds("d", C)], {}, {"model_added"}),
    "contract_enforcement_added": (
        [ds("d", C, enforced=False)],
        [ds("d", C)],
        {},
        {"contract_enforcement_added"},
    ),
    "column_added": ([ds("d", C)], [ds("d", C, col("x", position=1))], {}, {"column_added"}),
    "type_widened": ([ds("d", col(data_type="int"))], [ds("d", C)], {}, {"type_widened"}),
    "type_declared": ([ds("d", col(data_type=None))], [ds("d", C)], {}, {"type_declared"}),
    "check_added": ([ds("d", C)], [ds("d", C, checks=(ROWS,))], {}, {"check_added"}),
    "unique_added": ([ds("d", C)], [ds("d", col(unique=True))], {}, {"unique_added"}),
    "relationship_added": (
        [ds("d", C)],
        [ds("d", C, relationships=(REL,))],
        {},
        {"relationship_added"},
    ),
    "version_bumped": (
        [ds("d", C, version="1.0.0")],
        [ds("d", C, version="1.1.0")],
        {},
        {"version_bumped"},
    ),
    "model_removed_after_deprecation": (
        [ds("d", C, deprecation_date=PAST)],
        [],
        {"now": NOW},
        {"model_removed_after_deprecation"},
    ),
}

#: Modules a finding passes through on its way from its handler: not families.
_PLUMBING = {"gate.model", "gate.diff.emitter"}


def _emitted(monkeypatch: pytest.MonkeyPatch, run) -> tuple[list[Change], dict[str, set[str]]]:
    """Run ``run`` and record, per rule id, the modules whose code built its findings."""
    built: dict[str, set[str]] = {}
    of = Change.of.__func__  # type: ignore[attr-defined]

    def recording(cls, rule, *args, **kwargs):
        frame = sys._getframe(1)
        while frame.f_globals.get("__name__") in _PLUMBING:
            frame = frame.f_back
        built.setdefault(rule.id, set()).add(frame.f_globals["__name__"])
        return of(cls, rule, *args, **kwargs)

    monkeypatch.setattr(Change, "of", classmethod(recording))
    return run(), built


def consumer_broken() -> list[Change]:
    """A removed column that a consumer at HEAD still reads."""
    changes = diff_datasets([ds("d", C, col("x", position=1))], [ds("d", C)])
    read = Found("d", ("d",), "x", "q.sql", 2, "q", "select")
    return explain(changes, [read], [ds("d", C)], default_severity)


def test_every_rule_has_a_fixture_and_a_family() -> None:
    assert set(FIXTURES) == set(rules.RULES)
    assert {rule.family for rule in rules.all_rules()} == set(rules.FAMILIES)


@pytest.mark.parametrize("rule_id", sorted(FIXTURES))
def test_each_fixture_emits_its_rule_from_its_family(
    rule_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, head, kwargs, expected = FIXTURES[rule_id]
    if rule_id == "consumer_broken":
        changes, built = _emitted(monkeypatch, consumer_broken)
        expected = {"column_removed", "consumer_broken"}
    else:
        changes, built = _emitted(monkeypatch, lambda: diff_datasets(base, head, **kwargs))
    assert {c.rule for c in changes} == expected
    assert built[rule_id] == {rules.get(rule_id).family}


def _rule_constants(tree: ast.AST) -> set[str]:
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "rules"
        and node.attr.isupper()
    }


def test_each_family_module_names_its_rules_and_no_emit_site_spells_an_id() -> None:
    """Handlers name catalogue constants (``rules.COLUMN_REMOVED``); an id spelt as a
    string where findings are made would be an id the registry never checked."""
    ids = set(rules.RULES)
    for family in rules.FAMILIES:
        path = ROOT / (family.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text())
        named = _rule_constants(tree)
        own = {r.id.upper() for r in rules.all_rules() if r.family == family}
        assert own <= named, (family, own - named)
        spelt = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ids}
        assert spelt == set(), (family, spelt)
    for rule in rules.all_rules():
        assert getattr(rules, rule.id.upper()) is rule


def test_a_finding_of_an_unknown_rule_cannot_be_made() -> None:
    with pytest.raises(ValueError, match="unknown rule id 'column_dropped'"):
        Change("column_dropped", rules.Severity.ERROR, "d", "c", "d.yaml", 1, "m")


def test_categories_are_fields_of_the_rule_not_its_spelling() -> None:
    """What code used to read from the id's spelling, pinned to the catalogue's fields."""
    by = rules.RULES
    explained = {r.id for r in rules.all_rules() if r.explained_by_consumers}
    assert explained == {i for i in by if i.startswith(("column_", "type_", "model_"))}
    assert {"consumer_broken"} == rules.UNACKNOWLEDGEABLE
    assert by["consumer_broken"].missing_after == "gone"
    assert by["model_removed_after_deprecation"].missing_after is None
    assert {by[i].verb for i in ("type_widened", "type_narrowed", "type_changed")} == {
        "widened",
        "narrowed",
        "changed",
    }
    assert by["constraint_changed"].direction == "undetermined"
    assert all(r.replaced_by is None and not r.deprecated for r in rules.all_rules())


def test_every_non_additive_finding_has_a_direction_consumer_broken_too() -> None:
    """docs/json-report.md: ``direction`` is null only for additive findings. Before
    the registry built every finding, ``consumer_broken`` had none."""
    broken = [c for c in consumer_broken() if c.rule == "consumer_broken"]
    assert [c.direction for c in broken] == ["loosened"]
    assert change_dict(broken[0])["direction"] == "loosened"  # the JSON report's key
    for rule_id, (base, head, kwargs, _) in FIXTURES.items():
        for change in diff_datasets(base, head, **kwargs):
            additive = rules.get(change.rule).severity is rules.Severity.INFO
            assert (change.direction is None) == additive, (rule_id, change.rule)


def test_consumer_broken_has_its_direction_in_the_cli_json_report(tmp_path: Path, cli) -> None:
    """The same through ``schema-gate --format json`` on a real dbt project in git
    (the scenario of tests/cli/test_cli_consumers.py): the JSON docs promise a
    ``direction`` on every non-additive finding."""
    from tests.cli.test_cli_consumers import STG, drop_column
    from tests.consumer_projects import DBT_PROJECT
    from tests.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "repo")
    for path, text in DBT_PROJECT.items():
        repo.write(path, text)
    repo.commit("project")
    repo.branch("feature")
    repo.write(STG, drop_column(DBT_PROJECT[STG], "discount_code"))
    repo.commit("drop discount_code")
    proc = cli(repo.path, "--base", "main", "--head", "feature", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    directions = {(c["rule"], c["direction"]) for c in report["changes"]}
    assert ("consumer_broken", "loosened") in directions
    assert all((d is None) == (rules.get(r).severity is rules.Severity.INFO) for r, d in directions)
