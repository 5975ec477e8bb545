"""gate.yaml_load's loader keeps no state of PyYAML's path resolvers (#26): the
composer's two calls per node for them are no-ops, so the loader has its own
empty table, whatever a host program adds to PyYAML's."""

from __future__ import annotations

import yaml
import yaml.resolver

from gate.yaml_load import YList, YMap, load_yaml

DOC = "dataset: t\ncolumns:\n  - name: a\n    data_type: int\n  - name: b\n    tags: [x, {y: 1}]\n"


def test_a_path_resolver_a_host_program_adds_does_not_reach_the_loader() -> None:
    doc = DOC.replace("name: a", "name: only_in_this_test_a")  # not in the tag memo yet
    had = "yaml_path_resolvers" in vars(yaml.resolver.Resolver)
    saved = yaml.resolver.Resolver.yaml_path_resolvers
    try:
        yaml.resolver.Resolver.add_path_resolver("!host", ["columns", None, "name"], str)
        assert yaml.resolver.Resolver.yaml_path_resolvers  # PyYAML's own loaders see it
        after = load_yaml(doc, "c.yaml")
    finally:
        if had:
            yaml.resolver.Resolver.yaml_path_resolvers = saved
        else:
            del yaml.resolver.Resolver.yaml_path_resolvers
    assert after == load_yaml(doc, "c.yaml")
    assert after["columns"][0]["name"] == "only_in_this_test_a"
    assert after["columns"][1]["tags"] == ["x", {"y": 1}]


def test_lines_survive_the_no_op_resolver_calls() -> None:
    doc = load_yaml(DOC, "c.yaml")
    assert isinstance(doc, YMap) and isinstance(doc["columns"], YList)
    assert (doc.line, doc.key_line("columns"), doc["columns"].item_lines) == (1, 2, [3, 5])
    assert doc["columns"][1]["tags"].line == 6


def test_a_repeated_key_is_refused_unless_the_caller_collects_it() -> None:
    import pytest

    from gate.model import ContractError

    text = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n"
    with pytest.raises(ContractError, match=r"x\.yml:5: invalid YAML: duplicate key 'a'"):
        load_yaml(text, "x.yml")
    repeats: list[tuple[str, int]] = []
    doc = load_yaml(text, "x.yml", duplicate_keys=repeats)
    assert doc == {"a": 3, "b": {"c": 2}}  # the last value wins, as in PyYAML and dbt
    assert doc.key_line("a") == 5
    assert sorted(repeats) == [("a", 5), ("c", 4)]


def test_keys_written_differently_that_python_builds_as_one_are_a_repeat() -> None:
    """``1``, ``1.0``, ``0x1`` and ``true`` are one dict key, ``null`` and ``~``
    another: the last value won silently, though a repeated key is refused (a DCS
    ``fields`` map keyed ``1`` and ``1.0`` lost a field without a word), and a dbt
    file's repeat went unnamed. Keys of two types stay a repeat by their text
    (``'1'`` and ``1``), as before: refused, never silently kept both."""
    import pytest

    from gate.model import ContractError

    for text in ("1: x\n1.0: y\n", "true: x\n1: y\n", "null: x\n~: y\n", "1: x\n0x1: y\n"):
        with pytest.raises(ContractError, match=r"x\.yml:3: invalid YAML: duplicate key"):
            load_yaml("a:\n" + "".join(f"  {line}\n" for line in text.splitlines()), "x.yml")
        repeats: list[tuple[str, int]] = []
        load_yaml(text, "x.yml", duplicate_keys=repeats)
        assert [line for _key, line in repeats] == [2], text
    assert load_yaml("1: x\n2: y\n'1': z\n", "x.yml", duplicate_keys=[]) == {
        1: "x",
        2: "y",
        "1": "z",
    }
