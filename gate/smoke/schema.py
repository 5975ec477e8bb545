"""Contract columns against a sample: which columns, and which Spark type each value must fit.

Two jobs, both pure Python (no Spark):

- ``target_type``: a contract ``data_type`` -> what the smoke test casts to.
  Types are parsed by sqlglot in the contract's dialect (``gate.lattice.parse``,
  so ``INT8`` is BIGINT in postgres) and written as Spark DDL. Spark refuses
  CHAR/VARCHAR in read schemas, so they become STRING and their length is
  checked explicitly; JSON becomes STRING and must parse as JSON; UUID becomes
  STRING and must look like a UUID. Types Spark cannot represent (TIME,
  INTERVAL, unsigned integers, decimals over 38 digits...) are reported as not
  checked rather than approximated.
- ``schema_findings``: Delta Lake's schema enforcement on the sample's column
  names: no column outside the contract (unless ``allow_extra_columns``), every
  contract column present (unless optional), no two names differing only by case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from gate import lattice as types
from gate.model import Column, GateError
from gate.smoke.result import FAILED, PASSED, SmokeResult

T = exp.DataType.Type

_TEXT = frozenset({T.TEXT, T.VARCHAR, T.NVARCHAR, T.CHAR, T.NCHAR, T.NAME})
_JSON = frozenset({T.JSON, T.JSONB})
_CASTABLE = frozenset(
    {
        T.TINYINT,
        T.SMALLINT,
        T.INT,
        T.BIGINT,
        T.FLOAT,
        T.DOUBLE,
        T.DECIMAL,
        T.MONEY,
        T.SMALLMONEY,
        T.BOOLEAN,
        T.DATE,
        T.DATETIME,
        T.TIMESTAMP,
        T.TIMESTAMPTZ,
        T.TIMESTAMPLTZ,
        T.TIMESTAMPNTZ,
        T.BINARY,
        T.VARBINARY,
        T.ARRAY,
        T.MAP,
        T.STRUCT,
        *_TEXT,
        *_JSON,
        T.UUID,
    }
)
_UNSIGNED = frozenset({T.UTINYINT, T.USMALLINT, T.UINT, T.UBIGINT, T.UMEDIUMINT})

#: The widest decimal Spark holds.
MAX_DECIMAL_DIGITS = 38


@dataclass(frozen=True)
class TargetType:
    """What a contract column's values must fit, as the smoke test checks it."""

    declared: str  # the contract's text
    label: str  # for messages: "INT", "DECIMAL(10, 2)", "VARCHAR(10)"
    name: str  # result name: "cast_to_int", "cast_to_varchar"
    spark_ddl: str | None = None  # try_cast target; None: no cast
    max_length: int | None = None  # CHAR/VARCHAR(n)
    validator: str | None = None  # "json" | "uuid"
    skip_reason: str | None = None  # the type cannot be checked

    @property
    def checks_values(self) -> bool:
        return bool(self.spark_ddl or self.max_length is not None or self.validator)


def target_type(data_type: str, dialect: str) -> TargetType:
    """Map a contract ``data_type`` (in ``dialect``) to the smoke test's target."""
    declared = data_type.strip()
    try:
        dt = types.parse(declared, dialect)
    except GateError as err:  # unknown dialect
        return TargetType(declared, declared.upper(), "cast", skip_reason=str(err))
    if dt is None:
        return TargetType(
            declared,
            declared.upper(),
            "cast",
            skip_reason=f"type '{declared}' is not understood by sqlglot ({dialect} dialect)",
        )
    kind = dt.this
    top_label = dt.sql("spark")
    for node in dt.find_all(exp.DataType):
        if node.this in _UNSIGNED:
            return TargetType(
                declared,
                declared.upper(),
                "cast",
                skip_reason="Spark has no unsigned integer types",
            )
        if node.this not in _CASTABLE:
            return TargetType(
                declared,
                declared.upper(),
                "cast",
                skip_reason=f"type {node.this.value} cannot be checked in Spark",
            )
        if node.this in (T.DECIMAL, T.BIGDECIMAL):
            digits = _first_param(node)
            if digits is not None and digits > MAX_DECIMAL_DIGITS:
                return TargetType(
                    declared,
                    top_label,
                    "cast_to_decimal",
                    skip_reason=f"Spark decimals hold at most {MAX_DECIMAL_DIGITS} digits",
                )
    if kind in _TEXT:
        length = _first_param(dt)
        if length is None:  # VARCHAR / TEXT / STRING without a length: every value fits
            return TargetType(declared, top_label, "cast_to_string")
        base = "char" if kind in (T.CHAR, T.NCHAR) else "varchar"
        return TargetType(
            declared, f"{base.upper()}({length})", f"cast_to_{base}", max_length=length
        )
    if kind in _JSON:
        return TargetType(declared, "JSON", "cast_to_json", validator="json")
    if kind == T.UUID:
        return TargetType(declared, "UUID", "cast_to_uuid", validator="uuid")
    if kind == T.DECIMAL and _first_param(dt) is None:
        # An unbounded NUMERIC (postgres, Oracle): any number fits; Spark has none.
        return TargetType(declared, "NUMERIC", "cast_to_decimal", spark_ddl="DOUBLE")
    spark = _spark_only(dt)
    ddl = spark.sql("spark")
    name = "cast_to_" + ddl.split("(")[0].split("<")[0].strip().lower()
    return TargetType(declared, top_label, name, spark_ddl=ddl)


def _first_param(node: exp.DataType) -> int | None:
    for param in node.expressions:
        if isinstance(param, exp.DataTypeParam):
            value = param.this
            if isinstance(value, exp.Literal) and value.is_int:
                return int(value.this)
            return None
    return None


def _spark_only(dt: exp.DataType) -> exp.DataType:
    """A copy with the types Spark refuses in schemas (CHAR, VARCHAR, JSON...) as STRING."""
    copy = dt.copy()
    for node in list(copy.find_all(exp.DataType)):
        if node.this in _TEXT or node.this in _JSON or node.this == T.UUID:
            node.set("this", T.TEXT)
            node.set("expressions", None)
    return copy


def schema_findings(
    columns: Sequence[Column], data_columns: Sequence[str], allow_extra: bool
) -> list[SmokeResult]:
    """Delta Lake's schema enforcement on names; one result per finding."""
    results: list[SmokeResult] = []
    seen: dict[str, int] = {}
    for name in data_columns:
        seen[name] = seen.get(name, 0) + 1
    for name, count in seen.items():
        if count > 1:
            results.append(
                SmokeResult(
                    "schema",
                    "duplicate_column",
                    name,
                    FAILED,
                    f"column '{name}' appears {count} times in the sample",
                )
            )
    by_fold: dict[str, list[str]] = {}
    for name in seen:
        by_fold.setdefault(name.casefold(), []).append(name)
    for names in by_fold.values():
        if len(names) > 1:
            shown = " and ".join(f"'{name}'" for name in names)
            results.append(
                SmokeResult(
                    "schema",
                    "case_clash",
                    names[0],
                    FAILED,
                    f"columns {shown} in the sample differ only by case",
                )
            )
    if not columns:
        results.append(
            SmokeResult(
                "schema",
                "schema",
                None,
                PASSED if not results else FAILED,
                "the contract declares no columns; column names are not enforced",
            )
        )
        return results
    contract_names = {column.name for column in columns}
    explained: set[str] = set()
    for column in columns:
        if column.name in seen:
            continue
        variants = [
            name for name in by_fold.get(column.name.casefold(), []) if name not in contract_names
        ]
        if variants:
            explained.update(variants)
            results.append(
                SmokeResult(
                    "schema",
                    "case_clash",
                    column.name,
                    FAILED,
                    f"contract column '{column.name}' is '{variants[0]}' in the sample "
                    "(names differ only by case)",
                    line=column.line,
                )
            )
        elif column.required is False:
            results.append(
                SmokeResult(
                    "schema",
                    "missing_column",
                    column.name,
                    PASSED,
                    f"optional column '{column.name}' is not in the sample",
                    line=column.line,
                )
            )
        else:
            results.append(
                SmokeResult(
                    "schema",
                    "missing_column",
                    column.name,
                    FAILED,
                    f"contract column '{column.name}' is not in the sample",
                    line=column.line,
                )
            )
    extras = [name for name in seen if name not in contract_names and name not in explained]
    if extras and not allow_extra:
        for name in extras:
            results.append(
                SmokeResult(
                    "schema",
                    "extra_column",
                    name,
                    FAILED,
                    f"column '{name}' is in the sample but not in the contract "
                    "(allow it with schema: {allow_extra_columns: true})",
                )
            )
    if not any(result.status == FAILED for result in results):
        present = sum(1 for column in columns if column.name in seen)
        extra_note = f"; {len(extras)} extra allowed" if extras else "; no extra columns"
        results.append(
            SmokeResult(
                "schema",
                "schema",
                None,
                PASSED,
                f"{present} of {len(columns)} contract columns present{extra_note}",
            )
        )
    return results
