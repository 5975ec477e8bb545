"""The type lattice: is a column's new type safe for the data already stored?

Types are parsed by sqlglot in the contract's dialect, never compared as text:
``INT``, ``integer`` and ``int4`` are one type, and ``INT8`` is BIGINT in
postgres but TINYINT in ClickHouse. Each dialect's implicit parameters are
filled in first (Spark ``decimal`` is ``DECIMAL(10,0)``), so an omitted default
never hides a change.

``compare`` answers with a ``TypeChange``:

- SAME: the types are the same type once spelling and defaults are normalised;
- WIDENED: the new type holds every value of the old one (after Delta Lake 4.0's
  type widening: integers upward, integers to a wide enough double or decimal,
  float to double, decimals gaining integer digits and scale, longer strings,
  date to timestamp, containers whose parts all widen, structs gaining fields);
- NARROWED: the reverse change would be a widening, or both types belong to one
  family and the new one loses values (``int -> uint``, ``DECIMAL(10,2) ->
  DECIMAL(10,4)``);
- CHANGED: anything else: another family, a lossy move between families
  (``bigint -> double``), a time zone semantics change, an unknown type.

Nested struct fields are paired by name (case-sensitive). Removed fields are
listed, not classified: ``change`` describes the rest of the type, so the diff
can emit one ``column_removed`` per field. Field paths are relative to the
compared type: a struct field is ``name`` (``a.b`` below another field), an
array element is ``[]``, a map value ``{}`` and a map key ``{key}``; names that
contain ``. [ ] { }``, a backtick or a space are wrapped in backticks. Use
``join_path(column, path)`` to anchor a path at a column (``items[].sku``).

Decisions worth knowing, each fail-closed where the facts are unclear:

- Integer -> decimal needs Spark's digit counts (tinyint 3, smallint 5, int 10,
  bigint 20, as Spark's ``DecimalType.forType`` and Delta Lake use), so
  ``BIGINT -> DECIMAL(19,0)`` is NARROWED.
- Unsigned integers are ranked by value range: ``UTINYINT -> SMALLINT`` widens,
  ``INT <-> UINT`` is NARROWED both ways (each loses values).
- ``timestamp`` flavours (plain/NTZ, TZ, LTZ) never convert into each other:
  the time zone semantics change, so that is CHANGED. Spark's ``TIMESTAMP`` is
  its ``TIMESTAMP_LTZ``; Snowflake's ``TIMESTAMP`` is ``TIMESTAMP_NTZ`` (its
  default ``TIMESTAMP_TYPE_MAPPING``).
- Snowflake and Oracle integers are ``NUMBER(38,0)``, BigQuery's are INT64:
  ``int -> bigint`` there is SAME.
- A bare ``DECIMAL`` is unbounded (wider than any bounded one) in postgres and
  Oracle; in a dialect whose default we do not know it equals only itself.
- ``VARCHAR(n) -> CHAR(m)`` pads values and is never a widening; ``CHAR(n) ->
  CHAR(m>=n)`` widens. N-variants (NVARCHAR) are their plain types except in
  T-SQL, where switching between them is CHANGED.
- A struct field that becomes ``NOT NULL`` (or a new ``NOT NULL`` field) narrows.
- Known limitation: sqlglot reads T-SQL ``REAL`` and ``FLOAT`` as one type.

Results are cached: contracts with thousands of columns compare the same few
type pairs over and over.

Modules, one job each (names with a leading underscore are private to this
package, shared between its modules):

- ``dialects``: each dialect's tables (sizes, synonyms, defaults, limits);
- ``bounds``: the size limits on a type's text, checked before parsing;
- ``parsing``: text -> ``exp.DataType`` with the dialect's defaults filled in;
- ``structure``: arrays, maps, structs and their field paths;
- ``leaves``: scalar types as values the lattice orders (the widening rules);
- ``spelling``: how reports write a type;
- ``change``: ``TypeChange`` / ``TypeComparison``;
- ``comparison``: ``compare`` and ``canonical``;
- ``unknown``: ``is_known`` and ``suggest`` for types a dialect does not know.
"""

from __future__ import annotations

from gate.lattice.bounds import (
    MAX_STRUCT_FIELDS,
    MAX_TYPE_CHARS,
    MAX_TYPE_DEPTH,
    MAX_TYPE_PARAMS,
    check_bounds,
)
from gate.lattice.change import TypeChange, TypeComparison
from gate.lattice.comparison import canonical, compare
from gate.lattice.dialects import DIALECTS, Kind, T, load_dialect, validate_dialect
from gate.lattice.parsing import parse
from gate.lattice.structure import join_path
from gate.lattice.unknown import is_known, suggest

__all__ = [
    "DIALECTS",
    "MAX_STRUCT_FIELDS",
    "MAX_TYPE_CHARS",
    "MAX_TYPE_DEPTH",
    "MAX_TYPE_PARAMS",
    "Kind",
    "T",
    "TypeChange",
    "TypeComparison",
    "canonical",
    "check_bounds",
    "compare",
    "is_known",
    "join_path",
    "load_dialect",
    "parse",
    "suggest",
    "validate_dialect",
]
