"""Old module names that the README once documented, kept importable.

``gate.types`` became ``gate.lattice`` (a module named like the standard
library's ``types`` shadows it wherever ``gate/`` lands on ``sys.path``). Code
written against the old name (``from gate.types import compare``) keeps
working: this finder answers the old name with the new module itself, so both
names are one module object. Nothing inside the gate imports the old names.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

#: old dotted name -> the module that replaced it
RENAMED = {"gate.types": "gate.lattice"}


class _Loader:
    """A loader by protocol: subclassing importlib.abc.Loader costs ~12 ms at ``import gate``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Already executed under its new name."""


class RenamedFinder:
    """A ``sys.meta_path`` finder for :data:`RENAMED` only; every other name passes."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None):
        if name not in RENAMED:
            return None
        return importlib.machinery.ModuleSpec(name, cast("Loader", _Loader(RENAMED[name])))


def install() -> None:
    if not any(isinstance(f, RenamedFinder) for f in sys.meta_path):
        sys.meta_path.append(RenamedFinder())
