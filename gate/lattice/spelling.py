"""How reports spell a type: the dialect's own names, one container style, no spaces in parameters.

Split from the lattice so the rendering of a parsed type lives apart from its
ordering; ``canonical`` (in ``comparison``) checks that a spelling reads back
as the same type before it is used.
"""

from __future__ import annotations

import re

from sqlglot import exp

from gate.lattice.parsing import _parse
from gate.lattice.structure import _element, _fields, _key_value


def _render(dt: exp.DataType, dialect: str) -> str:
    if (element := _element(dt)) is not None:
        return f"{dt.this.value}<{_render(element, dialect)}>"
    if (kv := _key_value(dt)) is not None:
        return f"MAP<{_render(kv[0], dialect)}, {_render(kv[1], dialect)}>"
    if (fields := _fields(dt)) is not None:
        parts = [
            (f"{f.identifier.sql(dialect=dialect)} " if f.identifier else "")
            + _render(f.type, dialect)
            + (" NOT NULL" if f.not_null else "")
            for f in fields.values()
        ]
        return f"{dt.this.value}<{', '.join(parts)}>"
    return _render_leaf(dt, dialect)


def _render_leaf(dt: exp.DataType, dialect: str) -> str:
    """The dialect's spelling when it reads back as the same type, else sqlglot's.

    Dialect generators are not always reversible (DuckDB writes CHAR as TEXT),
    and a canonical spelling must parse back to the type it names.
    """
    spellings = [_tidy(dt.sql(dialect=dialect)), _tidy(dt.sql())]
    for spelling in spellings:
        if _parse(spelling, dialect) == dt:
            return spelling
    return spellings[-1]


def _tidy(sql: str) -> str:
    """``DECIMAL(10, 2)`` -> ``DECIMAL(10,2)``; quoted text is left alone."""
    return sql if "'" in sql else re.sub(r"(?<=\w), (?=[\w-])", ",", sql)
