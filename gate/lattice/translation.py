"""A type written for one dialect, spelled for another: a contract that moves between
dbt projects on different warehouses keeps what its base side meant.

Postgres' ``int8`` is a BIGINT, Spark's a TINYINT: a PR moving a Postgres
contract into a Databricks project compared the base's ``int8`` as Spark reads
it (``bigint -> smallint`` passed as a widening). The base type is parsed in
its own dialect and spelled in the other's; a spelling that does not read back
as the same type there is refused (``None``), and the caller fails closed.
"""

from __future__ import annotations

import functools

from gate.lattice.comparison import _same
from gate.lattice.dialects import validate_dialect
from gate.lattice.parsing import _parse
from gate.lattice.spelling import _render


@functools.lru_cache(maxsize=4096)
def translate(text: str, source: str, target: str) -> str | None:
    """``text`` (a type in ``source``) spelled as ``target`` reads the same type;
    ``text`` itself when ``source`` does not know it (unknown stays unknown);
    ``None`` when no spelling in ``target`` reads back as that type."""
    source, target = validate_dialect(source), validate_dialect(target)
    if source == target:
        return text
    parsed = _parse(text, source)
    if parsed is None:
        return text
    spelled = _render(parsed, target)
    back = _parse(spelled, target)
    if back is not None and (back == parsed or _same(parsed, back, target)):
        return spelled
    return None
