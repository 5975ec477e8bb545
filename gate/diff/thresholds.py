"""The diff's names for check thresholds; the vocabulary lives in gate/check_thresholds.py.

Kept so ``from gate.diff.thresholds import OPS, Interval, intersect, intervals,
order`` keeps working: the diff and the smoke test read one vocabulary.
"""

from gate.check_thresholds import OPS, Interval, intersect, intervals, order

__all__ = ["OPS", "Interval", "intersect", "intervals", "order"]
