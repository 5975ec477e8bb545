"""Find each dataset's sample data, inside the repository only.

Two places are looked at, in this order:

1. ``--sample-data DIR``: ``DIR/<dataset>.<ext>``, where a qualified dataset id
   has its ``/`` turned into ``.`` (``shop/db/public/orders`` ->
   ``shop.db.public.orders.csv``);
2. beside the contract: ``orders.yaml`` -> ``orders.sample.<ext>``; when one
   contract file holds several datasets, ``orders.<dataset>.sample.<ext>``.

``<ext>`` is one of ``csv``, ``jsonl``, ``json``, ``parquet``. Two samples for
one dataset in the same place is an error (which one did the author mean?).

Sample files come from the pull request, so every path is resolved with
``gate.git.Repo.safe_path``: a ``--sample-data`` folder or a sample that
is (or passes through) a symlink leading outside the repository, or into
``.git``, is refused with ``UsageError`` (exit 2) naming the path. Otherwise a
PR could make the smoke test read, and print samples of, any file on the CI
machine. A sample that is itself a symlink (or a Parquet folder holding one)
is not used even when it stays inside: the dataset is an ``error``. The found
path is then read only by the gate itself (``files``), never by Spark.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gate.git import Repo
from gate.model import Dataset, UsageError

#: Sample formats, in the order candidates are listed in messages.
FORMATS = ("csv", "jsonl", "json", "parquet")


class SampleError(Exception):
    """A sample that exists but cannot be used (ambiguous, broken link...)."""


@dataclass(frozen=True)
class Sample:
    """A sample data file found for a dataset."""

    path: Path  # resolved, inside the repository
    relpath: str  # repo-relative, as found (before resolving symlinks), POSIX separators
    format: str  # one of FORMATS


def sample_stem(dataset_id: str) -> str:
    """The file name stem of a dataset's sample: ``a/b/c`` -> ``a.b.c``."""
    stem = dataset_id.strip().replace("/", ".").replace("\\", ".")
    return stem.replace(os.sep, ".")


def resolve_sample_dir(repo: Repo, sample_data: str | None) -> Path | None:
    """The ``--sample-data`` folder, refused when it leads outside the repository."""
    if sample_data is None:
        return None
    folder = repo.safe_path(sample_data)
    if not folder.is_dir():
        raise UsageError(f"{sample_data}: --sample-data is not a folder in the repository")
    return folder


class SampleFinder:
    """Looks up samples for datasets of one run."""

    def __init__(self, repo: Repo, sample_dir: Path | None, datasets: Sequence[Dataset]) -> None:
        self.repo = repo
        self.root = repo.root
        self.sample_dir = sample_dir
        self._per_file: dict[str, int] = {}
        for dataset in datasets:
            self._per_file[dataset.path] = self._per_file.get(dataset.path, 0) + 1

    def find(self, dataset: Dataset) -> Sample | None:
        """The sample for ``dataset``, or ``None`` when there is none.

        Raises ``UsageError`` for a path leading outside the repository and
        ``SampleError`` for an ambiguous or unreadable sample.
        """
        stem = sample_stem(dataset.id)
        if stem in ("", ".", "..") or "\0" in stem:
            return None
        if self.sample_dir is not None:
            found = self._first(self.sample_dir, stem)
            if found is not None:
                return found
        contract = PurePosixPath(dataset.path.replace("\\", "/"))
        folder = self.repo.safe_path(str(contract.parent) if str(contract.parent) else ".")
        beside = contract.stem
        if self._per_file.get(dataset.path, 1) > 1:
            beside = f"{beside}.{stem}"
        return self._first(folder, f"{beside}.sample")

    def _first(self, folder: Path, stem: str) -> Sample | None:
        found: list[Sample] = []
        for fmt in FORMATS:
            candidate = folder / f"{stem}.{fmt}"
            if not os.path.lexists(candidate):
                continue
            shown = self._shown(candidate)
            real = self.repo.safe_path(candidate)  # UsageError when it leads outside
            if candidate.is_symlink():
                raise SampleError(f"{shown}: a symlink; commit the sample file itself")
            if real.is_dir() and fmt == "parquet":
                self._check_folder(real, shown)
            elif not real.is_file():
                raise SampleError(f"{shown}: not a regular file")
            found.append(Sample(path=real, relpath=shown, format=fmt))
        if len(found) > 1:
            names = ", ".join(sample.relpath for sample in found)
            raise SampleError(f"several samples for one dataset: {names}; keep one")
        return found[0] if found else None

    def _check_folder(self, folder: Path, shown: str) -> None:
        """A Parquet folder (as Spark writes it): nothing in it may lead outside."""
        for current, dirs, files in os.walk(folder):
            for name in dirs + files:
                inner = Path(current) / name
                if inner.is_symlink():
                    self.repo.safe_path(inner)  # UsageError when it leads outside
                    raise SampleError(f"{shown}: a symlink inside a Parquet sample folder")
        if not any(folder.rglob("*.parquet")):
            raise SampleError(f"{shown}: a folder without .parquet files")

    def _shown(self, candidate: Path) -> str:
        """Repo-relative path as the author wrote it (symlinks not resolved)."""
        try:
            return candidate.relative_to(self.root).as_posix()
        except ValueError:
            try:
                return candidate.relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return candidate.as_posix()
