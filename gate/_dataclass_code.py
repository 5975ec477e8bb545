"""The code ``dataclasses`` compiles for each class, kept beside the gate's byte code.

``dataclasses`` writes a class's ``__init__``, ``__repr__``, ``__eq__`` and,
for a frozen class, ``__hash__``, ``__setattr__`` and ``__delattr__`` as source
text and compiles it with ``exec`` (one text per method up to Python 3.12, one
per class from 3.13) when the module defining the class is imported: on 3.11
about 1 ms of CPU per frozen class, and a run
imports some 70 of them before it reads anything (0.05-0.08 s of a K = 1 run,
docs/performance.md). Byte code does not help: the text is made at import.

While installed (the command and the Action's entry point, never a host
program importing the gate as a library), ``dataclasses`` calls :func:`_exec`
instead of the built-in: a text already met is run from the code object
``compile(text, "<string>", "exec")`` made for it then, which is what
``exec(text)`` would build again; a text not met yet is compiled exactly as
``exec`` would and remembered. Nothing about a class changes, only who compiles
its methods and when.

The table lives where Python keeps the gate's own byte code
(``gate/__pycache__``, or under ``sys.pycache_prefix``), in
``dataclasses.<cache tag>.bin``, keyed by the interpreter's magic number
(another build of Python ignores it). It is written as Python writes byte code:
not under ``PYTHONDONTWRITEBYTECODE``, never an error when the folder is
read-only; :func:`warm` writes it explicitly, as ``compileall`` does, for an
image built once. Trust is the byte code's own: whoever can write that folder
can already replace the gate's ``.pyc`` files. A table that cannot be read is
ignored (the texts are compiled as without it).
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys
from types import CodeType
from typing import Any

#: text -> its code object, as ``compile(text, "<string>", "exec")`` makes it.
_codes: dict[str, CodeType] = {}
#: text -> that code object marshalled, as read from the table: decoded on first use
#: (a run meets about half of what ``warm`` stores; decoding all would cost ~10 ms).
_stored: dict[str, bytes] = {}
#: Whether a text was compiled since the table was read (then it is worth writing).
_grown = False
_installed = False


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, from the table when the text is known."""
    if globals is None:  # exec's own defaults: the caller's namespaces
        frame = sys._getframe(1)
        globals = frame.f_globals
        locals = frame.f_locals if locals is None else locals
    if type(source) is str:
        source = _code(source)
    builtins.exec(source, globals, locals)


def _code(text: str) -> CodeType:
    global _grown
    code = _codes.get(text)
    if code is not None:
        return code
    raw = _stored.get(text)
    if raw is not None:
        try:
            code = marshal.loads(raw)
        except (EOFError, ValueError, TypeError):
            code = None
        if type(code) is not CodeType:
            code = None
    if code is None:
        # dont_inherit: dataclasses' own exec inherits no __future__ flag either.
        code = compile(text, "<string>", "exec", dont_inherit=True)
        _grown = True
    _codes[text] = code
    return code


def _path() -> str | None:
    """Where the table is kept: beside ``gate/__init__.py``'s byte code."""
    try:
        from importlib.util import cache_from_source

        init = cache_from_source(os.path.join(os.path.dirname(__file__), "__init__.py"))
    except (ImportError, NotImplementedError, ValueError):
        return None
    return os.path.join(os.path.dirname(init), f"dataclasses.{sys.implementation.cache_tag}.bin")


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def _load(path: str) -> None:
    try:
        with open(path, "rb") as file:
            magic, table = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        return
    if magic == _magic() and type(table) is dict:
        for text, raw in table.items():
            if type(text) is str and type(raw) is bytes:
                _stored.setdefault(text, raw)


def install() -> None:
    """From now on, ``dataclasses`` compiles through the table (read once, here)."""
    global _installed
    import dataclasses

    # A dataclasses that defines its own ``exec``, or compiles under a __future__
    # flag (none does), is left alone: the table would not be what it compiles.
    if _installed or "exec" in vars(dataclasses) or "annotations" in vars(dataclasses):
        return
    path = _path()
    if path is not None:
        _load(path)
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # a module global shadows the built-in
    _installed = True


def uninstall() -> None:
    """``dataclasses`` back to the built-in ``exec`` (the table stays in memory)."""
    global _installed
    import dataclasses

    if vars(dataclasses).get("exec") is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    _installed = False


def save(force: bool = False) -> bool:
    """Write the table if it grew, as byte code is written (``force``: even under
    ``PYTHONDONTWRITEBYTECODE``). Never fails the run: ``False`` if not written."""
    global _grown
    if not (_grown or force) or (sys.dont_write_bytecode and not force):
        return False
    path = _path()
    if path is None:
        return False
    table = dict(_stored)
    table.update((text, marshal.dumps(code)) for text, code in _codes.items() if text not in table)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "wb") as file:
            file.write(marshal.dumps((_magic(), table)))
        os.replace(temp, path)  # whole or not at all, for a run reading it now
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False
    _grown = False
    return True


def warm() -> bool:
    """Compile the dataclasses of every gate module into the table and write it,
    whatever ``PYTHONDONTWRITEBYTECODE`` says (for an image built once, as
    ``compileall``). A module that cannot be imported here (PySpark absent) is skipped."""
    import importlib
    import pkgutil

    install()
    package = os.path.dirname(__file__)
    for info in pkgutil.walk_packages([package], "gate."):
        if info.name.rpartition(".")[2] == "__main__":
            continue  # importing it would run the command
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional dependency missing: that module is not warmed
            continue
    return save(force=True)
