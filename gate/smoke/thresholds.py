"""The smoke test's names for Soda thresholds; the vocabulary lives in gate/check_thresholds.py.

Soda v4 nests the threshold::

    - missing:
        threshold:
          metric: percent
          must_be_less_than: 5
          level: warn

v3 writes the same keys beside the check type (``must_be_less_than: 5``, and
its own ``must_be_greater_than_or_equal_to``) and spells ranges as a list
(``must_be_between: [0, 10]``, bounds included). v4 spells ranges as a mapping
(``must_be_between: {greater_than: 0, less_than_or_equal: 10}``;
``must_be_not_between: {less_than: 0, greater_than: 10}`` names the passing
sides). Several single comparisons must all hold.

Defaults, as in Soda v4 (soda-core ``ThresholdImpl`` defaults): ``missing``,
``invalid`` and ``duplicate`` must be 0; ``row_count`` must be greater than 0.
"""

from gate.check_thresholds import (
    FLAT_KEYS,
    Threshold,
    Unsupported,
    must_be,
    must_be_greater_than,
    parse,
)

#: The threshold keys the smoke test reads beside a check (checkspec's known options).
THRESHOLD_KEYS = FLAT_KEYS

__all__ = [
    "THRESHOLD_KEYS",
    "Threshold",
    "Unsupported",
    "must_be",
    "must_be_greater_than",
    "parse",
]
