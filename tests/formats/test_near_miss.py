"""``near_miss`` looks only at known keys that share a two-deletion variant with
the key; it must answer exactly what measuring every known key answers."""

from __future__ import annotations

import random

from gate.formats.compared import _distance, _fold, near_miss
from gate.formats.validate.soda_keys import SODA_COLUMN_KEYS, SODA_TOP_KEYS


def every_key(key: str, known: frozenset[str], present: set[str]) -> str | None:
    """The measure before the variant index: a distance to each absent known key."""
    folded = _fold(key)
    best: tuple[int, str] | None = None
    for candidate in sorted(known - present):
        other = _fold(candidate)
        if other == folded:
            return candidate
        bound = 1 if min(len(other), len(folded)) <= 6 else 2
        distance = _distance(folded, other, bound)
        if distance <= bound and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


def edits(word: str, rng: random.Random) -> str:
    """``word`` with one or two random substitutions, insertions, deletions or swaps."""
    letters = "abcdefghijklmnopqrstuvwxyz_-"
    for _ in range(rng.choice((1, 2))):
        i = rng.randrange(len(word) + 1)
        kind = rng.choice(("sub", "ins", "del", "swap"))
        if kind == "ins" or not word:
            word = word[:i] + rng.choice(letters) + word[i:]
        elif kind == "del" and i < len(word):
            word = word[:i] + word[i + 1 :]
        elif kind == "swap" and i + 1 < len(word):
            word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif i < len(word):
            word = word[:i] + rng.choice(letters) + word[i + 1 :]
    return word


def test_the_variant_index_answers_what_every_known_key_answers() -> None:
    rng = random.Random(20261126)
    for known in (SODA_TOP_KEYS, SODA_COLUMN_KEYS):
        names = sorted(known)
        for _ in range(3000):
            key = edits(rng.choice(names), rng)
            present = set(rng.sample(names, rng.randrange(4)))
            mapping = dict.fromkeys(present, 1)
            expected = every_key(key, known, present)
            assert near_miss(key, known, mapping) == expected, (key, present)
            assert near_miss(key, list(known), list(present)) == expected, (key, present)


def test_a_key_far_longer_than_any_known_one_is_no_near_miss() -> None:
    assert near_miss("columns" * 1000, SODA_TOP_KEYS, {}) is None
    assert near_miss("colums", SODA_TOP_KEYS, {}) == "columns"
    assert near_miss("Data-Type", SODA_COLUMN_KEYS, {"name": 1}) == "data_type"
