"""``gate.formats.common.direct_constructor``: the model's frozen dataclasses built
in one step (#26), equal in every respect to what their ``__init__`` builds."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, dataclass, field, fields

import pytest

from gate.formats.common import direct_constructor
from gate.model import Check, Column


def test_a_column_built_directly_is_the_column_init_builds() -> None:
    new_column = direct_constructor(Column)
    values = {"name": "id", "data_type": "bigint", "line": 3, "position": 2, "required": False}
    direct, init = new_column(**values), Column(**values)
    assert direct == init
    assert hash(direct) == hash(init)
    assert vars(direct) == vars(init)
    assert list(vars(direct)) == [f.name for f in fields(Column)] == list(vars(init))
    assert type(direct) is Column
    assert pickle.loads(pickle.dumps(direct)) == init
    with pytest.raises(FrozenInstanceError):
        direct.name = "other"  # type: ignore[misc]


def test_every_default_is_the_init_default() -> None:
    check = Check.make("missing")
    direct = direct_constructor(Column)(name="c", checks=(check,), description="d")
    init = Column(name="c", checks=(check,), description="d")
    assert vars(direct) == vars(init)


def test_a_class_it_cannot_build_directly_is_refused() -> None:
    @dataclass(frozen=True)
    class WithFactory:
        items: list[int] = field(default_factory=list)

    @dataclass(frozen=True)
    class WithPostInit:
        a: int = 0

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class WithSlots:
        a: int = 0

    for cls in (WithFactory, WithPostInit, WithSlots):
        with pytest.raises(TypeError):
            direct_constructor(cls)
