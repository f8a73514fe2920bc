"""Where a task's dataset rows come from: the local data root, or `datasets` (the Hub).

Local layout: `<data_dir>/<hf_repo>/<hf_subset or "default">/<split>.{jsonl,json,parquet,csv}`.
When that directory exists it is the only source for the task (no silent fall-back to the Hub);
`local_files` reads it with the values `datasets` would give. `datasets` is imported only on
the Hub path, and when the Hub cannot be reached the error says so at once, naming the local
path that was looked for, instead of after half a minute of retries.
"""

from __future__ import annotations

import glob
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError
from .local_files import LOCAL_EXTENSIONS, Row, read_rows_file

if TYPE_CHECKING:
    from .config import TaskConfig

__all__ = [
    "LOCAL_EXTENSIONS",
    "Row",
    "RowSource",
    "load_hub_dataset",
    "local_dataset_dir",
    "preview",
]

HUB_HOST = ("huggingface.co", 443)
PACKAGED_BUILDERS = frozenset(
    {"json", "csv", "parquet", "text", "arrow", "pandas", "imagefolder", "audiofolder"}
)
"""`hf_repo` values that name a `datasets` builder for local files: no Hub needed."""


@dataclass
class RowSource:
    """Where one task's rows come from; yields each split's rows after `hf_filter`."""

    task_name: str
    hf_repo: str
    hf_subset: str | None
    hf_revision: str | None = None
    hf_data_files: str | list[str] | dict[str, Any] | None = None
    hf_filter: Callable[[Row], bool] | None = None
    data_dir: Path | None = None
    _hub: Any = field(default=None, repr=False)

    @classmethod
    def for_config(cls, config: TaskConfig, data_dir: Path | None) -> RowSource:
        """The source a task config names."""
        return cls(
            task_name=config.name,
            hf_repo=config.hf_repo,
            hf_subset=config.hf_subset,
            hf_revision=config.hf_revision,
            hf_data_files=config.hf_data_files,
            hf_filter=config.hf_filter,
            data_dir=data_dir,
        )

    @property
    def expected_dir(self) -> Path | None:
        """Where the data root would hold this dataset."""
        if self.data_dir is None:
            return None
        return local_dataset_dir(self.data_dir, self.hf_repo, self.hf_subset)

    @property
    def local_dir(self) -> Path | None:
        """The local dataset directory, when the data root has one for this dataset."""
        directory = self.expected_dir
        return directory if directory is not None and directory.is_dir() else None

    @property
    def location(self) -> str:
        """Where rows are read from, for messages and snapshot headers."""
        local = self.local_dir
        return str(local) if local is not None else f"hub:{self.hf_repo}/{self.hf_subset}"

    def rows(self, split: str) -> list[Row]:
        """Every row of `split`, in file order, after `hf_filter`; fresh objects on each call."""
        local = self.local_dir
        raw = self._local_rows(local, split) if local is not None else self._hub_rows(split)
        if self.hf_filter is None:
            return raw if isinstance(raw, list) else list(raw)
        return [row for row in raw if self._keep(row, split)]

    def _keep(self, row: Row, split: str) -> bool:
        """Apply `hf_filter`, naming the task when the filter itself fails."""
        assert self.hf_filter is not None
        try:
            return bool(self.hf_filter(row))
        except Exception as exc:
            raise DatasetError(
                f"task {self.task_name!r}: hf_filter raised {type(exc).__name__}: {exc} "
                f"on a row of split {split!r}: {preview(row)}"
            ) from exc

    def _local_rows(self, directory: Path, split: str) -> list[Row]:
        """Rows of one split from the local dataset directory."""
        rows: list[Row] = []
        for path in self._local_files(directory, split):
            rows.extend(read_rows_file(path))
        return rows

    def _local_files(self, directory: Path, split: str) -> list[Path]:
        """The file(s) holding `split`: `hf_data_files` when set, else `<split>.<ext>`."""
        if self.hf_data_files is not None:
            return self._data_files_for(directory, split)
        candidates = [directory / f"{split}{extension}" for extension in LOCAL_EXTENSIONS]
        present = [path for path in candidates if path.is_file()]
        if len(present) > 1:
            raise DatasetError(
                f"task {self.task_name!r}: split {split!r} is in more than one file: "
                f"{', '.join(str(path) for path in present)}; keep one (the other is stale)"
            )
        if present:
            return present
        odd = [path for path in candidates if path.is_symlink() or path.exists()]
        why = "".join(f"; {path.name} is {_not_a_file(path)}" for path in odd)
        raise DatasetError(
            f"task {self.task_name!r}: split {split!r} not found in {directory} "
            f"(looked for {split}{{{','.join(LOCAL_EXTENSIONS)}}}{why}); "
            f"splits there: {', '.join(local_splits(directory)) or 'none'}. "
            f"Add the file or fix the task's evaluation_splits / few_shots_split."
        )

    def _data_files_for(self, directory: Path, split: str) -> list[Path]:
        """Resolve `hf_data_files` (as `datasets` reads it) inside the local dataset directory;
        absolute paths and patterns are taken as they are, as `datasets` takes them."""
        spec = self.hf_data_files
        mapping: dict[str, Any] = spec if isinstance(spec, dict) else {"train": spec}
        if split not in mapping:
            raise DatasetError(
                f"task {self.task_name!r}: hf_data_files has no entry for split {split!r} "
                f"(it names {', '.join(map(str, mapping)) or 'nothing'})"
            )
        patterns = mapping[split]
        paths: list[Path] = []
        for pattern in [patterns] if isinstance(patterns, str) else list(patterns):
            text = str(pattern)
            base = text if os.path.isabs(text) else str(directory / text)
            matched = sorted(Path(found) for found in glob.glob(base, recursive=True))
            matched = [path for path in matched if path.is_file()]
            if not matched:
                raise DatasetError(
                    f"task {self.task_name!r}: hf_data_files pattern {pattern!r} for split "
                    f"{split!r} matches no file in {directory}"
                )
            paths.extend(matched)
        return paths

    def _hub_rows(self, split: str) -> Iterator[Row]:
        """Rows of one split through `datasets.load_dataset` (Hub or its cache)."""
        dataset = self._hub_dataset()
        if split not in dataset:
            raise DatasetError(
                f"task {self.task_name!r}: split {split!r} not in dataset "
                f"{self.hf_repo}/{self.hf_subset}; it has: {', '.join(dataset)}"
            )
        return iter(dataset[split])

    def _hub_dataset(self) -> Any:
        """Load (once) the whole dataset dict, as lighteval does."""
        if self._hub is None:
            self._hub = load_hub_dataset(self)
        return self._hub


def local_dataset_dir(data_dir: Path, hf_repo: str, hf_subset: str | None) -> Path:
    """Where the data root holds a dataset: `<data_dir>/<hf_repo>/<hf_subset or "default">`."""
    return data_dir / hf_repo / (hf_subset or "default")


def _not_a_file(path: Path) -> str:
    """What a split path that is not a readable file is."""
    if path.is_symlink() and not path.exists():
        return f"a broken symbolic link (to {os.readlink(path)})"
    if path.is_dir():
        return "a directory (a Spark-style folder of parts? point hf_data_files at the parts)"
    return "not a regular file"


def local_splits(directory: Path) -> list[str]:
    """Split names present in a local dataset directory (regular files only)."""
    try:
        entries = list(directory.iterdir())
    except PermissionError:
        raise DatasetError(f"{directory}: permission denied; make the folder readable") from None
    return sorted({p.stem for p in entries if p.suffix in LOCAL_EXTENSIONS and p.is_file()})


def load_hub_dataset(source: RowSource) -> Any:
    """Call `datasets.load_dataset`, turning its many failure modes into one clear error."""
    where = source.expected_dir
    local_hint = f"no local copy at {where}" if where is not None else "no local data root"
    offline = _offline()
    # A dataset folder (read as a repo) or a packaged builder needs no Hub.
    local = Path(source.hf_repo).is_dir() or source.hf_repo in PACKAGED_BUILDERS
    if not offline and not local and not hub_reachable():
        raise DatasetError(
            f"task {source.task_name!r}: {local_hint}, and the Hugging Face Hub "
            f"({HUB_HOST[0]}) cannot be reached to load {source.hf_repo!r} subset "
            f"{source.hf_subset!r}. Put the split files at {where or '<data root>'}, save a "
            f"slice with --evaltasks-save-data where the Hub is reachable, or set "
            f"HF_HUB_OFFLINE=1 to use the datasets cache."
        )
    import datasets

    try:
        return datasets.load_dataset(
            path=source.hf_repo,
            name=source.hf_subset or None,
            revision=source.hf_revision,
            data_files=source.hf_data_files,
        )
    except Exception as exc:
        raise DatasetError(
            f"task {source.task_name!r}: cannot load dataset {source.hf_repo!r} subset "
            f"{source.hf_subset!r} (revision {source.hf_revision or 'default'}) from the Hugging "
            f"Face Hub or its cache ({local_hint}"
            f"{'; offline mode is on' if offline else ''}): {type(exc).__name__}: {exc}. "
            f"Put the split files in the local data directory, or make the dataset reachable."
        ) from exc


def _offline() -> bool:
    """`HF_HUB_OFFLINE` or `HF_DATASETS_OFFLINE` is set (the cache alone is used)."""
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


@cache
def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a connection to the Hub opens (asked once per process)."""
    try:
        with socket.create_connection(HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def preview(row: Row, limit: int = 200) -> str:
    """A short, single-line view of a row for error messages."""
    shown = {k: v for k, v in row.items() if not str(k).startswith("__")}
    text = repr(shown).replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
