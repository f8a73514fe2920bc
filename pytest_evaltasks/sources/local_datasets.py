"""Local dataset folders in the data root, as every harness's tasks read them.

A task's rows come from `<data root>/<dataset path>/<subset or default>/<split>.<ext>` when
that folder exists, read through `datasets` itself (so the rows are exactly what its loader
gives); otherwise from `datasets`' own loading (the Hub, its cache, local files the task
names). `LocalDatasets` stands in for the `datasets` module while a harness's task is built.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DatasetError

DATA_EXTENSIONS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
"""Split files of a local dataset folder, with the `datasets` builder that reads them."""


def folder_for(data_dir: Path | None, path: Any, name: Any) -> Path | None:
    """`<data root>/<dataset_path>/<dataset_name or default>`, where a dataset's local copy
    goes; None without a data root, or for a path that would leave it."""
    if data_dir is None or not isinstance(path, str) or not path:
        return None
    subset = name if isinstance(name, str) and name else "default"
    if any(os.path.isabs(part) or ".." in Path(part).parts for part in (path, subset)):
        return None
    return data_dir / path / subset


def local_folder(data_dir: Path | None, path: Any, name: Any) -> Path | None:
    """The dataset's local copy (`folder_for`) when it is there; None otherwise."""
    folder = folder_for(data_dir, path, name)
    return folder if folder is not None and folder.is_dir() else None


def split_files(folder: Path) -> tuple[str, dict[str, str]]:
    """The builder and split files of a local dataset folder (`<split>.<ext>`)."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(folder.iterdir()):
        builder = DATA_EXTENSIONS.get(path.suffix)
        if builder is None or not path.is_file():
            continue
        if path.stem in found:
            raise DatasetError(
                f"{folder}: split {path.stem!r} is given twice ({Path(found[path.stem][1]).name} "
                f"and {path.name}); keep one"
            )
        found[path.stem] = (builder, str(path))
    builders = {builder for builder, _ in found.values()}
    if len(builders) > 1:
        raise DatasetError(
            f"{folder}: its split files mix formats ({', '.join(sorted(builders))}); datasets "
            f"reads one format per dataset: convert them to one"
        )
    if not found:
        raise DatasetError(
            f"{folder}: no split files (<split>.jsonl, .json, .parquet or .csv) in the local "
            f"dataset folder"
        )
    return builders.pop(), {split: file for split, (_, file) in found.items()}


def missing_split(folder: Path, split: str, present: Iterable[str]) -> str:
    """A task asked a local dataset folder for a split it has no file for: where to put it,
    in the form the lighteval-style loader uses (`rows.LocalRows`)."""
    return (
        f"split {split!r} not found in {folder} (looked for {split}.jsonl, .json, .parquet or "
        f".csv); splits there: {', '.join(sorted(present)) or 'none'}. Add the file "
        f"{folder / (split + '.jsonl')}, or fix the task's split names (lm-eval: test_split, "
        f"validation_split, training_split, fewshot_split; Inspect: the split its dataset asks)"
    )


@functools.cache
def _checked_splits(dataset_dict: type) -> Any:
    """A `DatasetDict` type whose missing split is a `DatasetError` naming the folder and the
    file to add, instead of a bare `KeyError: 'train'` deep inside a harness."""

    class CheckedSplits(dataset_dict):  # type: ignore[misc]
        folder: Path

        def __init__(self, loaded: Any, folder: Path) -> None:
            super().__init__(loaded)
            self.folder = folder

        def __getitem__(self, key: Any) -> Any:
            if isinstance(key, str) and key not in self:
                raise DatasetError(missing_split(self.folder, key, self.keys()))
            return super().__getitem__(key)

    return CheckedSplits


class LocalDatasets:
    """The `datasets` module as a harness's task code sees it while a task is built: a local
    folder in the data root is read through `datasets` itself; anything else is `datasets`',
    its local data files recorded in `read` (`rows.declared_inputs`), a failure a
    `DatasetError` that says where the local copy goes."""

    def __init__(self, real: Any, data_dir: Path | None, read: list[str]) -> None:
        self._real = real
        self._data_dir = data_dir
        self._read = read

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def load_dataset(self, path: Any = None, name: Any = None, **kwargs: Any) -> Any:
        subset = local_subset(name, kwargs.get("data_dir"))
        folder = local_folder(self._data_dir, path, subset)
        if folder is not None:
            builder, files = split_files(folder)
            self._read.extend(files.values())
            split = kwargs.get("split")
            if split is None:
                loaded = self._real.load_dataset(builder, data_files=files)
                return _checked_splits(self._real.DatasetDict)(loaded, folder)
            if split not in files:
                raise DatasetError(missing_split(folder, split, files))
            return self._real.load_dataset(builder, data_files=files, split=split)
        from ..engine.rows import declared_inputs

        self._read.extend(declared_inputs(path, kwargs.get("data_files"), kwargs.get("data_dir")))
        try:
            return self._real.load_dataset(path=path, name=name, **kwargs)
        except Exception as exc:
            from ..engine.rows import cache_advice

            where = (
                self._data_dir / str(path) / (subset or "default")
                if self._data_dir is not None and isinstance(path, str)
                else None
            )
            raise DatasetError(
                f"no local copy of dataset {path!r} (subset {subset!r})"
                + (f" at {where}" if where is not None else "")
                + f", and datasets could not load it: {type(exc).__name__}: {exc}. Put its "
                f"split files there (<split>.jsonl), or save a slice with --evaltasks-save-data "
                f"where the Hub is reachable; {cache_advice()}"
            ) from exc


def local_subset(name: Any, data_dir: Any) -> Any:
    """The subset folder a `load_dataset(path, name, data_dir=...)` call's local copy is in:
    a Hub repository's folder (`data_dir="main"`, as Inspect's gsm8k reads it) stands for its
    subset here, and only that folder is its copy: another subset's rows are never read in its
    place. Loading and `--evaltasks-save-data` both place a dataset by it."""
    if name is None and isinstance(data_dir, str) and data_dir.strip("/"):
        return data_dir.strip("/")
    return name
