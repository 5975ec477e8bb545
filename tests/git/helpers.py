"""Helpers shared by the git tests."""

from __future__ import annotations

from gate.git import FileChange

C = "soda/contracts"


def contract(name: str, *columns: str) -> str:
    cols = "".join(f"  - name: {c}\n    data_type: int\n" for c in columns or ("id",))
    return f"dataset: {name}\ncolumns:\n{cols}"


def by_path(changes: list[FileChange]) -> dict[str, FileChange]:
    return {(c.new_path or c.old_path or ""): c for c in changes}
