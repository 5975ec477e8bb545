"""Read a contract check (Soda v4 or v3 spelling) into a plan the runner evaluates.

Pure Python, no Spark: every decision about what a check means is made here and
can be tested without a JVM. A check the smoke test cannot evaluate faithfully
(freshness, SQL checks, reference data, check filters, an unknown option)
becomes an ``Unsupported`` reason and is reported ``skipped``, never passed.

Supported, with Soda's semantics:

=================  ======================================  ===================
family             v4 kind                                 v3 kinds
=================  ======================================  ===================
missing            ``missing``                             ``no_missing_values``, ``missing_count``, ``missing_percent``
invalid            ``invalid``                             ``no_invalid_values``, ``invalid_count``, ``invalid_percent``
duplicate          ``duplicate`` (column, or ``columns``)  ``no_duplicate_values``, ``duplicate_count``, ``duplicate_percent``
row_count          ``row_count``                           ``row_count``, ``rows_exist``
=================  ======================================  ===================

- missing: NULL, or one of ``missing_values``, or matching ``missing_format`` /
  ``missing_regex_sql``; percent is of all rows.
- invalid: a value that is not missing and breaks any validity option; percent
  is of all rows.
- duplicate: non-missing rows beyond the first of each value (or tuple of
  values); percent is of the non-missing rows (of all rows for several columns).
- row_count: the number of rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gate import check_thresholds as thresholds
from gate.check_thresholds import FLAT_KEYS, Threshold, Unsupported
from gate.model import Check

MISSING = "missing"
INVALID = "invalid"
DUPLICATE = "duplicate"
ROW_COUNT = "row_count"

#: kind -> (family, forced metric, fixed threshold)
_KINDS: dict[str, tuple[str, str | None, bool]] = {
    "missing": (MISSING, None, False),
    "no_missing_values": (MISSING, None, True),
    "missing_count": (MISSING, "count", False),
    "missing_percent": (MISSING, "percent", False),
    "invalid": (INVALID, None, False),
    "no_invalid_values": (INVALID, None, True),
    "invalid_count": (INVALID, "count", False),
    "invalid_percent": (INVALID, "percent", False),
    "duplicate": (DUPLICATE, None, False),
    "no_duplicate_values": (DUPLICATE, None, True),
    "duplicate_count": (DUPLICATE, "count", False),
    "duplicate_percent": (DUPLICATE, "percent", False),
    "row_count": (ROW_COUNT, None, False),
    "rows_exist": (ROW_COUNT, None, True),
}

#: dbt's generic data tests, read as the Soda check they are: ``not_null`` is
#: missing, ``unique`` is duplicate, ``accepted_values`` is invalid with
#: ``valid_values`` (dbt ignores NULLs there too). A ``dbt.`` prefix is allowed.
_DBT_KINDS: dict[str, str] = {
    "not_null": "no_missing_values",
    "unique": "no_duplicate_values",
    "accepted_values": "no_invalid_values",
}
#: dbt test ``config`` keys that do not change what is measured.
_DBT_CONFIG_IGNORED = frozenset(
    {
        "severity",
        "tags",
        "meta",
        "enabled",
        "alias",
        "store_failures",
        "store_failures_as",
        "schema",
        "database",
        "description",
    }
)

#: Kinds the smoke test answers elsewhere (the schema findings) and does not report again.
SCHEMA_KINDS = frozenset({"schema"})

#: Options every check may carry that do not change what is measured.
_IGNORED = frozenset(
    {
        "name",
        "qualifier",
        "attributes",
        "description",
        "id",
        "identity",
        "quote",  # dbt accepted_values: SQL quoting only
        "warn_unenforced",  # dbt constraints
        "warn_unsupported",
    }
)
_MISSING_OPTIONS = frozenset(
    {"missing_values", "missing_format", "missing_regex_sql", "missing_regex"}
)
_VALIDITY_OPTIONS = frozenset(
    {
        "valid_values",
        "invalid_values",
        "valid_format",
        "invalid_format",
        "valid_regex_sql",
        "valid_regex",
        "regex",
        "invalid_regex_sql",
        "invalid_regex",
        "valid_min",
        "valid_max",
        "valid_length",
        "valid_min_length",
        "valid_max_length",
    }
)
_REFERENCE_OPTIONS = frozenset(
    {"valid_reference_data", "valid_values_column", "valid_values_reference_data"}
)
_THRESHOLD_OPTIONS = frozenset({"threshold", "metric", "level", *FLAT_KEYS})

#: SodaCL's named formats the smoke test knows, as full-match regexes.
NAMED_FORMATS: dict[str, str] = {
    "integer": r"^[-+]?\d+$",
    "positive integer": r"^\+?\d+$",
    "negative integer": r"^(-\d+|0)$",
    "decimal": r"^[-+]?(\d+([.,]\d+)?|[.,]\d+)$",
    "positive decimal": r"^\+?(\d+([.,]\d+)?|[.,]\d+)$",
    "negative decimal": r"^(-(\d+([.,]\d+)?|[.,]\d+)|0)$",
    "decimal point": r"^[-+]?(\d+(\.\d+)?|\.\d+)$",
    "decimal comma": r"^[-+]?(\d+(,\d+)?|,\d+)$",
    "percentage": r"^[-+]?(\d+([.,]\d+)?|[.,]\d+) ?%$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "email": r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
    "ip address": r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
    "ipv4 address": r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
    "date iso 8601": r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$",
    "date us": r"^(0?[1-9]|1[0-2])[-./](0?[1-9]|[12]\d|3[01])[-./]\d{4}$",
    "date eu": r"^(0?[1-9]|[12]\d|3[01])[-./](0?[1-9]|1[0-2])[-./]\d{4}$",
    "phone number": r"^\+?[\d\s().-]{7,20}$",
}


@dataclass(frozen=True)
class MissingSpec:
    """What counts as missing beside NULL."""

    values: tuple[str, ...] = ()
    regexes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ValiditySpec:
    """Validity options of an ``invalid`` check; a value breaking any is invalid."""

    valid_values: tuple[Any, ...] | None = None
    invalid_values: tuple[Any, ...] | None = None
    valid_regexes: tuple[str, ...] = ()
    invalid_regexes: tuple[str, ...] = ()
    valid_min: float | str | None = None
    valid_max: float | str | None = None
    valid_length: int | None = None
    valid_min_length: int | None = None
    valid_max_length: int | None = None

    def describe(self) -> str:
        """The options in a few words, for messages."""
        parts: list[str] = []
        if self.valid_values is not None:
            shown = ", ".join(str(value) for value in self.valid_values[:6])
            more = ", ..." if len(self.valid_values) > 6 else ""
            parts.append(f"valid_values [{shown}{more}]")
        if self.invalid_values is not None:
            shown = ", ".join(str(value) for value in self.invalid_values[:6])
            more = ", ..." if len(self.invalid_values) > 6 else ""
            parts.append(f"invalid_values [{shown}{more}]")
        if self.valid_regexes:
            parts.append("valid format")
        if self.invalid_regexes:
            parts.append("invalid format")
        if self.valid_min is not None:
            parts.append(f"valid_min {self.valid_min}")
        if self.valid_max is not None:
            parts.append(f"valid_max {self.valid_max}")
        if self.valid_length is not None:
            parts.append(f"valid_length {self.valid_length}")
        if self.valid_min_length is not None:
            parts.append(f"valid_min_length {self.valid_min_length}")
        if self.valid_max_length is not None:
            parts.append(f"valid_max_length {self.valid_max_length}")
        return ", ".join(parts)


@dataclass(frozen=True)
class CheckPlan:
    """A check the smoke test evaluates."""

    check: Check
    family: str  # MISSING | INVALID | DUPLICATE | ROW_COUNT
    columns: tuple[str, ...]
    threshold: Threshold
    missing: MissingSpec = field(default_factory=MissingSpec)
    validity: ValiditySpec = field(default_factory=ValiditySpec)

    @property
    def name(self) -> str:
        return self.check.kind

    @property
    def label(self) -> str:
        """How the quarantine column names this check: ``missing(email)``."""
        return f"{self.check.kind}({','.join(self.columns)})" if self.columns else self.check.kind


def plan(check: Check, column: str | None = None) -> CheckPlan:
    """Plan ``check`` (declared on ``column``, or at dataset level when ``None``).

    Raises ``Unsupported`` with a one-line reason for anything the smoke test
    cannot evaluate as Soda would.
    """
    kind = check.kind
    spec: Mapping[str, Any] = check.spec or {}
    dbt_kind = kind[4:] if kind.startswith("dbt.") else kind
    if dbt_kind in _DBT_KINDS:
        kind, spec = _DBT_KINDS[dbt_kind], _dbt_spec(dbt_kind, spec)
    if kind not in _KINDS:
        raise Unsupported(f"check type '{check.kind}' is not evaluated by the smoke test")
    family, metric, fixed = _KINDS[kind]
    _refuse_unknown(spec, family)
    columns = _columns(check, spec, column, family)
    default = thresholds.must_be_greater_than(0) if family == ROW_COUNT else thresholds.must_be(0)
    threshold = thresholds.parse(spec, default=default, metric=metric, fixed=fixed)
    if family == ROW_COUNT and threshold.metric == "percent":
        raise Unsupported("row_count has no percent metric")
    missing = _missing(spec) if family in (MISSING, INVALID, DUPLICATE) else MissingSpec()
    validity = _validity(spec) if family == INVALID else ValiditySpec()
    if family == INVALID and validity == ValiditySpec():
        raise Unsupported(
            "invalid check without a validity option on the check itself "
            "(valid_values, valid_format, valid_min, ...)"
        )
    return CheckPlan(check, family, columns, threshold, missing, validity)


def _dbt_spec(kind: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A dbt test's options in Soda's words; ``config.severity: warn`` is a warn level."""
    out = {key: value for key, value in spec.items() if key != "config"}
    config = spec.get("config") or {}
    if not isinstance(config, Mapping):
        raise Unsupported("dbt test 'config' must be a mapping")
    if "where" in config:
        raise Unsupported("check filters are not evaluated by the smoke test")
    for key in config:
        if key not in _DBT_CONFIG_IGNORED:
            raise Unsupported(f"dbt test config '{key}' is not evaluated by the smoke test")
    severity = str(config.get("severity", "error")).lower()
    if severity == "warn":
        out["level"] = "warn"
    if kind == "accepted_values":
        if "values" not in out:
            raise Unsupported("'accepted_values' needs 'values'")
        out["valid_values"] = out.pop("values")
    return out


def _refuse_unknown(spec: Mapping[str, Any], family: str) -> None:
    if "filter" in spec or "filter_sql" in spec:
        raise Unsupported("check filters are not evaluated by the smoke test")
    if "column_expression" in spec:  # Soda v4: the check measures an expression, not the column
        raise Unsupported("checks on a 'column_expression' are not evaluated by the smoke test")
    for key in spec:
        if key in _REFERENCE_OPTIONS:
            raise Unsupported(f"'{key}' (reference data) is not evaluated by the smoke test")
    allowed = set(_IGNORED | _THRESHOLD_OPTIONS)
    if family in (MISSING, INVALID, DUPLICATE):
        allowed |= _MISSING_OPTIONS | {"columns"}
    if family == INVALID:
        allowed |= _VALIDITY_OPTIONS
    for key in spec:
        if key not in allowed:
            raise Unsupported(f"unsupported option '{key}'")


def _columns(
    check: Check, spec: Mapping[str, Any], column: str | None, family: str
) -> tuple[str, ...]:
    if family == ROW_COUNT:
        return ()
    columns = check.columns or ((column,) if column else ())
    if "columns" in spec:
        listed = spec["columns"]
        if (
            not isinstance(listed, list)
            or not listed
            or not all(isinstance(name, str) and name for name in listed)
        ):
            raise Unsupported("'columns' must be a list of column names")
        columns = tuple(listed)
    if not columns:
        raise Unsupported(f"a {family} check needs a column (declare it under a column)")
    if len(columns) > 1 and family != DUPLICATE:
        raise Unsupported(f"a {family} check takes one column")
    if len(set(columns)) != len(columns):
        raise Unsupported("a column is listed twice")
    return tuple(columns)


def _scalars(value: Any, key: str) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise Unsupported(f"'{key}' must be a list")
    for item in value:
        if isinstance(item, (dict, list)):
            raise Unsupported(f"'{key}' must hold plain values")
    return tuple(value)


def _regex(value: Any, key: str) -> str:
    """A regex from a string, a v4 ``{regex: ...}`` format or a SodaCL named format."""
    if isinstance(value, Mapping):
        regex = value.get("regex")
        if not isinstance(regex, str) or not regex:
            raise Unsupported(f"'{key}' needs a 'regex'")
        return _compiles(regex, key)
    if isinstance(value, str) and value:
        if key.endswith("_format"):
            named = NAMED_FORMATS.get(value.strip().lower())
            if named is None:
                raise Unsupported(f"unknown named format '{value}' in '{key}'")
            return named
        return _compiles(value, key)
    raise Unsupported(f"'{key}' must be a regex string or a mapping with 'regex'")


#: Longest regex a check may carry; longer ones are skipped as unsupported.
MAX_REGEX_LENGTH = 1000


def _compiles(regex: str, key: str) -> str:
    """A regex Spark may run on every row: it compiles and cannot backtrack for ages.

    Spark evaluates Java regexes, which backtrack: ``^(a+)+\\1$`` against 36
    ``a`` and a ``!`` runs for minutes on one value. Backreferences and
    nested quantifiers (a repeated group that holds a repetition) are the
    classic causes, so such patterns are reported as unsupported (the check
    is ``skipped`` with the reason). What slips through is bounded by the
    per-dataset time limit (``limits.smoke_seconds_per_dataset``).
    """
    if len(regex) > MAX_REGEX_LENGTH:
        raise Unsupported(f"'{key}' is longer than {MAX_REGEX_LENGTH} characters")
    try:
        parsed = _sre_parse(regex)
    except (re.error, RecursionError, OverflowError) as err:
        raise Unsupported(f"'{key}' is not a valid regex: {err}") from None
    risky = _backtracking_risk(parsed)
    if risky:
        raise Unsupported(f"'{key}' {risky}, which can make the regex run for hours")
    return regex


def _sre_parse(regex: str) -> Any:
    import importlib

    try:  # Python's own regex parser: re._parser from 3.11, sre_parse before
        sre_parse = importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        sre_parse = importlib.import_module("sre_parse")
    return sre_parse.parse(regex)


_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def _backtracking_risk(parsed: Any, inside_repeat: bool = False) -> str | None:
    """Why ``parsed`` (a ``re`` parse tree) may backtrack catastrophically, or None."""
    for op, arg in parsed:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            return "uses a backreference"
        if name in _REPEATS:
            _low, high, body = arg
            repeats = high > 1  # MAXREPEAT (no upper bound) is a large int
            if repeats and inside_repeat:
                return "nests quantifiers"
            found = _backtracking_risk(body, inside_repeat or repeats)
            if found:
                return found
            continue
        for child in _children(name, arg):
            found = _backtracking_risk(child, inside_repeat)
            if found:
                return found
    return None


def _children(name: str, arg: Any) -> list[Any]:
    """The sub-patterns of one parse-tree node."""
    if name == "SUBPATTERN":
        return [arg[-1]]
    if name == "BRANCH":
        return list(arg[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [arg[1]]
    if name == "ATOMIC_GROUP":
        return [arg]
    return []


def _missing(spec: Mapping[str, Any]) -> MissingSpec:
    values: tuple[str, ...] = ()
    regexes: list[str] = []
    if spec.get("missing_values") is not None:
        values = tuple(_text(value) for value in _scalars(spec["missing_values"], "missing_values"))
    for key in ("missing_format", "missing_regex_sql", "missing_regex"):
        if spec.get(key) is not None:
            regexes.append(_regex(spec[key], key))
    return MissingSpec(values, tuple(regexes))


def _validity(spec: Mapping[str, Any]) -> ValiditySpec:
    def number_or_text(key: str) -> float | str | None:
        value = spec.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise Unsupported(f"'{key}' must be a number (or a date string)")
        return value

    def length(key: str) -> int | None:
        value = spec.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise Unsupported(f"'{key}' must be a whole number")
        return value

    valid_regexes = [
        _regex(spec[key], key)
        for key in ("valid_format", "valid_regex_sql", "valid_regex", "regex")
        if spec.get(key) is not None
    ]
    invalid_regexes = [
        _regex(spec[key], key)
        for key in ("invalid_format", "invalid_regex_sql", "invalid_regex")
        if spec.get(key) is not None
    ]
    return ValiditySpec(
        valid_values=_scalars(spec["valid_values"], "valid_values")
        if spec.get("valid_values") is not None
        else None,
        invalid_values=_scalars(spec["invalid_values"], "invalid_values")
        if spec.get("invalid_values") is not None
        else None,
        valid_regexes=tuple(valid_regexes),
        invalid_regexes=tuple(invalid_regexes),
        valid_min=number_or_text("valid_min"),
        valid_max=number_or_text("valid_max"),
        valid_length=length("valid_length"),
        valid_min_length=length("valid_min_length"),
        valid_max_length=length("valid_max_length"),
    )


def _text(value: Any) -> str:
    """A YAML scalar as the text a sample holds (``true`` -> ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
