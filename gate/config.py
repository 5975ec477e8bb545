"""The config file: defaults for flags, rule severities and per-dataset evolution policy.

Read from the HEAD side (``.schema-gate.yml`` at the repo root, else
``[tool.schema-gate]`` in ``pyproject.toml``), because the config describes the
contracts it ships with. That means a pull request can change it: the report
says which config file was used, and reviewers must treat a config change like
a code change (see docs/configuration.md).

Policies use dlt's schema-contract vocabulary: for each entity (``tables``,
``columns``, ``data_type``) a mode, ``evolve`` (additive changes are fine) or
``freeze`` (the entity must not change at all, so additive changes block too).
dlt's ``discard_row`` and ``discard_value`` also keep the schema fixed, so the
gate treats them as ``freeze``.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gate import rules
from gate.approvals.policy import ApprovalPolicy, parse_approvals
from gate.diff import SeverityFn
from gate.formats import check_size
from gate.formats.common import describe
from gate.limits import DEFAULT_LIMITS, Limits
from gate.lineage.settings import LineageConfig, parse_lineage
from gate.model import ContractError
from gate.rules import Severity
from gate.yaml_load import YMap, load_yaml

CONFIG_FILE = ".schema-gate.yml"
PYPROJECT = "pyproject.toml"

ENTITIES = ("tables", "columns", "data_type")
MODES = {"evolve": "evolve", "freeze": "freeze", "discard_row": "freeze", "discard_value": "freeze"}

#: Which rules a frozen entity turns into errors.
_FROZEN_RULES = {
    "tables": ("model_added",),
    "columns": ("column_added", "required_column_added"),
    "data_type": ("type_widened", "type_declared", "type_removed"),
}

#: A config file is bounded by the default limit: it cannot raise its own.
_CONFIG_TOO_BIG = "a config file may not be larger"

_KEYS = {
    "contracts",
    "dialect",
    "fail_on",
    "rules",
    "policies",
    "perspective",
    "limits",
    "allow_empty",
    "consumers",
    "approvals",
    "lineage",
}

#: Where consumers live by default; build output and vendored packages are not consumers.
DEFAULT_CONSUMER_SQL = (
    "**/*.sql",
    "!**/target/**",
    "!**/dbt_packages/**",
    "!**/dbt_modules/**",
    "!**/macros/**",
)
DEFAULT_CONSUMER_PYTHON = ("**/*.py", "!**/.venv/**", "!**/venv/**", "!**/site-packages/**")
_CONSUMER_KEYS = {"enabled", "sql", "python", "tables", "max_file_bytes"}


@dataclass(frozen=True)
class ConsumerConfig:
    """Where to look for in-repo readers, and extra table names per dataset id."""

    enabled: bool = True
    sql: tuple[str, ...] = DEFAULT_CONSUMER_SQL
    python: tuple[str, ...] = DEFAULT_CONSUMER_PYTHON
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The older spelling of ``limits.consumer_bytes``; ``None`` when not set.
    #: Once the run's limits are known (``with_base_limits``), the bound in force.
    max_file_bytes: int | None = None

    @property
    def globs(self) -> tuple[str, ...]:
        return self.sql + self.python


@dataclass(frozen=True)
class Policy:
    """How one group of datasets may evolve."""

    datasets: tuple[str, ...]
    modes: dict[str, str] = field(default_factory=dict)

    def applies_to(self, dataset_id: str) -> bool:
        return any(fnmatch.fnmatchcase(dataset_id, pattern) for pattern in self.datasets)


@dataclass(frozen=True)
class Config:
    contracts: tuple[str, ...] | None = None
    dialect: str | None = None
    fail_on: Severity | None = None
    rules: dict[str, Severity] = field(default_factory=dict)
    policies: tuple[Policy, ...] = ()
    limits: Limits = DEFAULT_LIMITS
    #: The repository may hold no contract yet: an empty glob match is not an error.
    allow_empty: bool = False
    source: str | None = None  # the file it came from, for the report
    perspective: str = "both"  # whose breakage is an error: see rules.PERSPECTIVES
    consumers: ConsumerConfig = field(default_factory=ConsumerConfig)
    #: The base side's config while a pull request is open: no finding's
    #: severity falls below what it gives (``gate.policy.stricter``).
    floor: Config | None = None
    #: Who must approve a break (issue #23); the run reads the base side's only.
    approvals: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    #: Consumers outside the repository (issue #25); the run reads the base side's only.
    lineage: LineageConfig = field(default_factory=LineageConfig)

    def severity_fn(self) -> SeverityFn:
        """(rule, dataset, side) -> severity: catalogue default seen from the
        perspective, then ``rules:``, then policies; never below the ``floor``
        config's (the base side's, see ``gate.policy``)."""
        floor = self.floor.severity_fn() if self.floor is not None else None

        def severity_of(rule_id: str, dataset_id: str, breaks: str | None = None) -> Severity:
            default = rules.get(rule_id).severity_for(self.perspective, breaks)
            severity = self.rules.get(rule_id, default)
            for policy in self.policies:
                if not policy.applies_to(dataset_id):
                    continue
                for entity, mode in policy.modes.items():
                    if mode == "freeze" and rule_id in _FROZEN_RULES[entity]:
                        severity = Severity.ERROR
            if floor is not None:
                lowest = floor(rule_id, dataset_id, breaks)
                severity = severity if severity.rank <= lowest.rank else lowest
            return severity

        return severity_of


def _did_you_mean(word: Any, known: Any) -> str:
    """`` (did you mean 'fail_on'?)`` for a near miss, else nothing: a typo gets its fix."""
    choices = sorted(map(str, known))
    spelt = str(word).replace("-", "_").lower()
    same = [c for c in choices if c.replace("-", "_").lower() == spelt]
    close = same or difflib.get_close_matches(spelt, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _severity(value: Any, path: str, what: str, line: int | None) -> Severity:
    try:
        return Severity(str(value).lower())
    except ValueError:
        choices = ", ".join(s.value for s in Severity)
        raise ContractError(path, f"{what}: '{value}' is not one of {choices}", line) from None


def _str_list(value: Any, path: str, what: str, line: int | None) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ContractError(
            path, f"{what} must be a list of strings, found {describe(value)}", line
        )
    return tuple(value)


def _policy(entry: Any, path: str, line: int | None) -> Policy:
    if not isinstance(entry, dict):
        raise ContractError(path, f"a policy must be a mapping, found {describe(entry)}", line)
    where = entry.line if isinstance(entry, YMap) else line
    unknown = set(entry) - {"datasets", "schema_contract"}
    if unknown:
        raise ContractError(
            path,
            f"unknown policy key(s): {', '.join(sorted(map(str, unknown)))}"
            f"{_did_you_mean(sorted(map(str, unknown))[0], ('datasets', 'schema_contract'))}",
            where,
        )
    if "datasets" not in entry:
        raise ContractError(path, "a policy needs 'datasets' (a list of dataset-id globs)", where)
    datasets = _str_list(entry["datasets"], path, "'datasets'", where)
    contract = entry.get("schema_contract", "evolve")
    if isinstance(contract, str):
        if contract not in MODES:  # the one-word form: no entity to name
            raise ContractError(
                path,
                f"unknown schema_contract mode '{contract}'{_did_you_mean(contract, MODES)}; "
                f"use {', '.join(MODES)}",
                where,
            )
        contract = dict.fromkeys(ENTITIES, contract)
    if not isinstance(contract, dict):
        raise ContractError(
            path,
            f"'schema_contract' must be a mode or a mapping, found {describe(contract)}",
            where,
        )
    modes: dict[str, str] = {}
    for entity, mode in contract.items():
        if entity not in ENTITIES:
            raise ContractError(
                path,
                f"unknown schema_contract entity '{entity}'{_did_you_mean(entity, ENTITIES)}; "
                f"use {', '.join(ENTITIES)}",
                where,
            )
        if mode not in MODES:
            raise ContractError(
                path,
                f"unknown mode '{mode}' for '{entity}'{_did_you_mean(mode, MODES)}; "
                f"use {', '.join(MODES)}",
                where,
            )
        modes[entity] = MODES[mode]
    return Policy(datasets=datasets, modes=modes)


def _limits(value: Any, path: str, line: int | None) -> Limits:
    """``limits:``: each key a field of ``Limits``, each value a positive integer."""
    if not isinstance(value, dict):
        raise ContractError(path, f"'limits' must be a mapping, found {describe(value)}", line)
    known = Limits.names()
    chosen: dict[str, int] = {}
    for key, number in value.items():
        where = value.key_line(key) if isinstance(value, YMap) else line
        name = str(key).replace("-", "_")
        if name not in known:
            raise ContractError(
                path,
                f"unknown limit '{key}'{_did_you_mean(name, known)}; "
                f"known limits: {', '.join(known)}",
                where,
            )
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ContractError(
                path, f"limit '{key}' must be a positive integer, found {describe(number)}", where
            )
        chosen[name] = number
    return Limits(**chosen)


def _consumers(value: Any, path: str, line: int | None) -> ConsumerConfig:
    """``consumers:``: ``false`` to switch off, or a mapping (docs/impact.md)."""
    if value is None or value is True:
        return ConsumerConfig()
    if value is False:
        return ConsumerConfig(enabled=False)
    if not isinstance(value, dict):
        raise ContractError(
            path, f"'consumers' must be a mapping or false, found {describe(value)}", line
        )
    key_line = value.key_line if isinstance(value, YMap) else (lambda _key: line)
    unknown = sorted(map(str, set(value) - _CONSUMER_KEYS))
    if unknown:
        raise ContractError(
            path,
            f"unknown consumers key '{unknown[0]}'{_did_you_mean(unknown[0], _CONSUMER_KEYS)}; "
            f"known keys: {', '.join(sorted(_CONSUMER_KEYS))}",
            key_line(unknown[0]),
        )
    enabled = value.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ContractError(path, "'consumers.enabled' must be true or false", key_line("enabled"))
    globs = {}
    for key, default in (("sql", DEFAULT_CONSUMER_SQL), ("python", DEFAULT_CONSUMER_PYTHON)):
        raw = value.get(key)
        what = f"'consumers.{key}'"
        globs[key] = default if raw is None else _str_list(raw, path, what, key_line(key))
    tables_raw = value.get("tables") or {}
    if not isinstance(tables_raw, dict):
        raise ContractError(
            path, "'consumers.tables' must map dataset ids to table names", key_line("tables")
        )
    tables = {
        str(dataset): _str_list(names, path, f"'consumers.tables.{dataset}'", key_line("tables"))
        for dataset, names in tables_raw.items()
    }
    max_bytes = value.get("max_file_bytes")
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0
    ):
        raise ContractError(
            path,
            "'consumers.max_file_bytes' must be a positive integer",
            key_line("max_file_bytes"),
        )
    return ConsumerConfig(
        enabled=enabled,
        sql=globs["sql"],
        python=globs["python"],
        tables=tables,
        max_file_bytes=max_bytes,
    )


def parse_config(data: dict[str, Any], path: str) -> Config:
    """Validate a config mapping; every mistake is a one-line error naming the key."""
    line_of: Callable[[Any], int | None] = (
        data.key_line if isinstance(data, YMap) else (lambda _key: None)
    )
    if "allow-empty" in data:  # YAML users write it like the CLI flags
        if "allow_empty" in data:
            raise ContractError(path, "write 'allow-empty' or 'allow_empty', not both")
        data = {("allow_empty" if k == "allow-empty" else k): v for k, v in data.items()}
        original = line_of
        line_of = lambda key: original("allow-empty" if key == "allow_empty" else key)  # noqa: E731
    unknown = set(data) - _KEYS
    if unknown:
        first = sorted(map(str, unknown))[0]
        raise ContractError(
            path,
            f"unknown config key '{first}'{_did_you_mean(first, _KEYS | {'allow-empty'})}; "
            f"known keys: {', '.join(sorted(_KEYS))}",
            line_of(first),
        )
    contracts = None
    if data.get("contracts") is not None:
        contracts = _str_list(data["contracts"], path, "'contracts'", line_of("contracts"))
    dialect = data.get("dialect")
    if dialect is not None and not isinstance(dialect, str):
        raise ContractError(path, "'dialect' must be a string", line_of("dialect"))
    if dialect is not None and not dialect.strip():
        raise ContractError(
            path, "'dialect' is empty; name a dialect (spark, databricks, ...)", line_of("dialect")
        )
    fail_on = None
    if data.get("fail_on") is not None:
        fail_on = _severity(data["fail_on"], path, "'fail_on'", line_of("fail_on"))
        if fail_on not in (Severity.ERROR, Severity.WARNING):
            raise ContractError(path, "'fail_on' must be error or warning", line_of("fail_on"))
    rule_levels: dict[str, Severity] = {}
    raw_rules = data.get("rules") or {}
    if not isinstance(raw_rules, dict):
        raise ContractError(
            path, "'rules' must be a mapping of rule id to severity", line_of("rules")
        )
    for rule_id, level in raw_rules.items():
        rule_line = raw_rules.key_line(rule_id) if isinstance(raw_rules, YMap) else None
        if rule_id not in rules.RULES:
            raise ContractError(
                path,
                f"unknown rule '{rule_id}'"
                + (_did_you_mean(rule_id, rules.RULES) or " (see `schema-gate rules`)"),
                rule_line,
            )
        rule_levels[rule_id] = _severity(level, path, f"rule '{rule_id}'", rule_line)
    raw_policies = data.get("policies") or []
    if not isinstance(raw_policies, list):
        raise ContractError(path, "'policies' must be a list", line_of("policies"))
    policies = tuple(
        _policy(
            entry, path, raw_policies.item_line(i) if hasattr(raw_policies, "item_line") else None
        )
        for i, entry in enumerate(raw_policies)
    )
    perspective = data.get("perspective", "both")
    if perspective not in rules.PERSPECTIVES:
        raise ContractError(
            path,
            f"'perspective' must be one of {', '.join(rules.PERSPECTIVES)}, found {perspective!r}",
            line_of("perspective"),
        )
    limits = DEFAULT_LIMITS
    if data.get("limits") is not None:
        limits = _limits(data["limits"], path, line_of("limits"))
    consumers = _consumers(data.get("consumers"), path, line_of("consumers"))
    if consumers.max_file_bytes is not None:
        # The older key is a consumer size bound too: with both, the stricter.
        named = {str(k).replace("-", "_") for k in data.get("limits") or {}}
        bound = consumers.max_file_bytes
        if "consumer_bytes" in named:
            bound = min(bound, limits.consumer_bytes)
        limits = replace(limits, consumer_bytes=bound)
    allow_empty = data.get("allow_empty", False)
    if not isinstance(allow_empty, bool):
        raise ContractError(
            path,
            f"'allow-empty' must be true or false, found {describe(allow_empty)}",
            line_of("allow_empty"),
        )
    return Config(
        allow_empty=allow_empty,
        contracts=contracts,
        dialect=dialect,
        fail_on=fail_on,
        rules=rule_levels,
        policies=policies,
        limits=limits,
        source=path,
        perspective=perspective,
        consumers=consumers,
        approvals=parse_approvals(data.get("approvals"), path, line_of("approvals")),
        lineage=parse_lineage(data.get("lineage"), path, line_of("lineage")),
    )


def with_base_limits(config: Config, limits: Limits) -> Config:
    """``config`` under the base side's ``limits``, the consumer file size included.

    A pull request moves no bound for itself: raised, a bound lets it slow the
    run; lowered, the consumer size bound would hide every reader it breaks. The
    base's older ``consumers.max_file_bytes`` is already part of its
    ``limits.consumer_bytes`` (``parse_config``).
    """
    consumers = replace(config.consumers, max_file_bytes=limits.consumer_bytes)
    return replace(config, limits=limits, consumers=consumers)


def _line_of_match(text: str, pattern: str) -> int | None:
    """The line where ``pattern`` first matches, to point a TOML error at it."""
    found = re.search(pattern, text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _toml_section(data: bytes, path: str) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        text = data.decode("utf-8")
        document = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ContractError(path, f"invalid TOML: {exc}") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        line = _line_of_match(text, r"[0-9_]{4300,}")
        problem = str(exc).split(";")[0].split(": value has")[0]
        raise ContractError(path, f"invalid TOML: {problem}", line) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        line = _line_of_match(text, r"(?:[\[{]\s*){100}")
        raise ContractError(path, "TOML nests too deeply", line) from None
    section = document.get("tool", {}).get("schema-gate")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ContractError(path, "[tool.schema-gate] must be a table")
    # TOML users write fail-on as well as fail_on; accept both spellings.
    return {key.replace("-", "_"): value for key, value in section.items()}


def config_from_files(
    yml: bytes | None, pyproject: bytes | None, explicit: str | None = None
) -> Config:
    """Pick and parse the config: an explicit file, else .schema-gate.yml, else pyproject.

    The config file itself is bounded by the default limits: it cannot raise its own.
    """
    if yml is not None:
        path = explicit or CONFIG_FILE
        check_size(yml, path, advice=_CONFIG_TOO_BIG)
        if explicit and explicit.endswith(".toml"):
            section = _toml_section(yml, path)
            return parse_config(section or {}, path) if section is not None else Config(source=path)
        doc = load_yaml(yml, path)
        if doc is None:
            return Config(source=path)
        if not isinstance(doc, dict):
            raise ContractError(path, f"the config must be a mapping, found {describe(doc)}", 1)
        return parse_config(doc, path)
    if pyproject is not None:
        check_size(pyproject, PYPROJECT, advice=_CONFIG_TOO_BIG)
        section = _toml_section(pyproject, PYPROJECT)
        if section is not None:
            return parse_config(section, f"{PYPROJECT} [tool.schema-gate]")
    return Config()
