"""Where a task's dataset rows come from: the local data root, or `datasets` (the Hub).

Local layout: `<data_dir>/<hf_repo>/<hf_subset or "default">/<split>.{jsonl,json,parquet,csv}`.
A task with `hf_data_files` has a folder of its own beside it for a saved slice,
`<hf_subset or "default">.files-<digest of its data files>` (see `slice_dir`), read before the
shared folder, so two tasks reading different files of one repository (or two `json` tasks)
never share a slice.
When such a directory exists it is the only source for the task (no silent fall-back to the Hub);
`local_files` reads it with the values `datasets` would give. `datasets` is imported only on
the Hub path, and when the Hub cannot be reached the error says so at once, naming the local
path that was looked for, instead of after half a minute of retries.
"""

from __future__ import annotations

import glob
import hashlib
import json
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
    "data_file_strings",
    "load_hub_dataset",
    "local_dataset_dir",
    "normalised_data_files",
    "preview",
    "slice_dir",
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
        """Where the data root would hold this dataset (where a saved slice of it goes)."""
        if self.data_dir is None:
            return None
        return slice_dir(self.data_dir, self.hf_repo, self.hf_subset, self.hf_data_files)

    @property
    def local_dir(self) -> Path | None:
        """The local dataset directory, when the data root has one for this dataset: a saved
        slice of it, or (with `hf_data_files`, resolved inside it) the repository's folder."""
        if self.data_dir is None:
            return None
        candidates = [
            self.expected_dir,
            local_dataset_dir(self.data_dir, self.hf_repo, self.hf_subset),
        ]
        return next((path for path in candidates if path is not None and path.is_dir()), None)

    def declared_inputs(self) -> set[str]:
        """The local files `datasets` reads this source's rows from, whatever its cache holds
        (`declared_inputs`); none when the rows come from the data root, whose files are read
        directly (and seen being read)."""
        if self.local_dir is not None:
            return set()
        return declared_inputs(self.hf_repo, self.hf_data_files)

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
        """The file(s) holding `split`: `hf_data_files` when set (except in a saved slice,
        which holds the rows they name), else `<split>.<ext>`."""
        if self.hf_data_files is not None and directory != self.expected_dir:
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


def declared_inputs(path: object, data_files: object, data_dir: object = None) -> set[str]:
    """The local files a `datasets.load_dataset(path, data_files=...)` call reads, as absolute
    paths, found from its arguments and not from what it was seen opening: with a warm cache
    `datasets` reads its own copy and opens none of them. `data_files` (a string, a list, or a
    mapping of either) are resolved as `datasets` resolves them (inside `path` when it is a
    folder, else from the working directory; under `data_dir` when given); a pattern's files
    are taken with the folder it lists (ending with a separator), so a file added that matches
    is seen. A dataset folder read
    as a repository (no `data_files`) is taken whole. Remote files (`hf://`, `https://`) are
    not local inputs."""
    folder = Path(path) if isinstance(path, str) and path and Path(path).is_dir() else None
    found: set[str] = set()
    if data_files is None:
        if folder is not None:
            found |= _folder_files(folder)
        return found
    base = folder if folder is not None else Path.cwd()
    if isinstance(data_dir, str) and data_dir:
        base = base / data_dir
    for pattern in data_file_strings(data_files):
        if "://" in pattern:
            continue
        full = os.path.abspath(pattern if os.path.isabs(pattern) else os.path.join(base, pattern))
        if glob.has_magic(full):
            found |= {p for p in glob.glob(full, recursive=True) if os.path.isfile(p)}
            found.add(os.path.join(_listed_folder(full), ""))
        elif os.path.isfile(full):
            found.add(full)
    return found


def data_file_strings(value: object) -> Iterator[str]:
    """The strings of a `data_files` value (`hf_data_files`): a str or a path, a list, or a
    mapping of either."""
    if isinstance(value, (str, os.PathLike)):
        yield os.fspath(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from data_file_strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from data_file_strings(item)


def _listed_folder(pattern: str) -> str:
    """The folder a glob pattern lists: its part before the first magic component."""
    parts = Path(pattern).parts
    magic = next(index for index, part in enumerate(parts) if glob.has_magic(part))
    return str(Path(*parts[:magic])) if magic else os.sep


def _folder_files(folder: Path) -> set[str]:
    """Every file of a dataset folder (hidden ones and caches aside), and the folder itself
    as listed."""
    found = {os.path.join(os.path.abspath(folder), "")}
    for current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found |= {os.path.abspath(os.path.join(current, name)) for name in files
                  if not name.startswith(".")}  # fmt: skip
    return found


def dataset_caches() -> list[str]:
    """Where `datasets` and the Hub keep their caches: what a build opens there is never a
    task's input (the cache lives inside the project when HOME does)."""
    import sys

    folders = []
    config = sys.modules.get("datasets.config")
    for name in ("HF_DATASETS_CACHE", "HF_CACHE_HOME", "HF_MODULES_CACHE"):
        value = getattr(config, name, None) if config is not None else None
        if value:
            folders.append(str(value))
    for variable in ("HF_HOME", "HF_DATASETS_CACHE", "XDG_CACHE_HOME"):
        value = os.environ.get(variable)
        if value:
            folders.append(value)
    folders.append(os.path.join(os.path.expanduser("~"), ".cache", "huggingface"))
    return folders


def local_dataset_dir(data_dir: Path, hf_repo: str, hf_subset: str | None) -> Path:
    """Where the data root holds a dataset: `<data_dir>/<hf_repo>/<hf_subset or "default">`."""
    return data_dir / hf_repo / (hf_subset or "default")


def slice_dir(
    data_dir: Path,
    hf_repo: str,
    hf_subset: str | None,
    hf_data_files: str | list[str] | dict[str, Any] | None = None,
) -> Path:
    """Where the data root holds a saved slice of a data source: `local_dataset_dir`, or for
    `hf_data_files` a folder of its own beside it, `<hf_subset or "default">.files-<digest>`,
    the digest being of `normalised_data_files` (the same on every clone of a project)."""
    directory = local_dataset_dir(data_dir, hf_repo, hf_subset)
    if hf_data_files is None:
        return directory
    files = normalised_data_files(hf_repo, hf_data_files, data_dir)
    text = json.dumps(files, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return directory.with_name(f"{directory.name}.files-{digest}")


def normalised_data_files(
    hf_repo: str, hf_data_files: str | list[str] | dict[str, Any], data_dir: Path
) -> dict[str, list[str]]:
    """`hf_data_files` as `datasets` reads it, `{split: [pattern, ...]}` (a string or a list
    alone is the `train` split), each path in a form naming the same files on every clone: for
    a packaged builder (`json`, `csv`, ...), whose paths `datasets` resolves against the working
    directory, that absolute path relative to the data root; for a repository or a dataset
    folder, whose paths are relative to it, as written (normalised). URLs are kept as they are."""
    spec: Any = hf_data_files
    mapping: dict[Any, Any] = spec if isinstance(spec, dict) else {"train": spec}
    return {
        str(split): [
            _normalised_path(os.fspath(pattern), hf_repo, data_dir)
            for pattern in (
                [patterns] if isinstance(patterns, (str, os.PathLike)) else list(patterns)
            )
        ]
        for split, patterns in mapping.items()
    }


def _normalised_path(text: str, hf_repo: str, data_dir: Path) -> str:
    """One `hf_data_files` path as `normalised_data_files` records it."""
    if "://" in text:
        return text
    if hf_repo in PACKAGED_BUILDERS:
        absolute = os.path.abspath(text)
        try:
            text = os.path.relpath(absolute, os.path.abspath(data_dir))
        except ValueError:  # another drive
            text = absolute
    else:
        text = os.path.normpath(text)
    return text.replace(os.sep, "/")


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


def load_hub_dataset(source: RowSource, *, saving: bool = False) -> Any:
    """Call `datasets.load_dataset`, turning its many failure modes into one clear error.

    `saving`: the load is for `--evaltasks-save-data`, so the advice is how to get the data
    once (the local copy is what is being made, and that command is what was run)."""
    where = source.expected_dir
    local_hint = f"no local copy at {where}" if where is not None else "no data root"
    cache_only = offline()
    # A dataset folder (read as a repo) or a packaged builder needs no Hub.
    local = Path(source.hf_repo).is_dir() or source.hf_repo in PACKAGED_BUILDERS
    what = f"{source.hf_repo!r} subset {source.hf_subset!r}"
    if not cache_only and not local and not hub_reachable():
        if saving:
            raise DatasetError(
                f"task {source.task_name!r}: cannot save a slice of {what}: the Hugging Face "
                f"Hub ({HUB_HOST[0]}) cannot be reached from here. Connect to the network once "
                f"and save again (the slice goes to {where}, in the data root "
                f"{source.data_dir}); or set HF_HUB_OFFLINE=1 to save from the datasets cache, "
                f"if it holds this dataset; or commit a slice saved where the Hub is reachable."
            )
        put = f"put the split files at {where}" if where is not None else "give it a data root"
        raise DatasetError(
            f"task {source.task_name!r}: {local_hint}, and the Hugging Face Hub "
            f"({HUB_HOST[0]}) cannot be reached to load {what}. To run offline, {put}, or save "
            f"a slice with --evaltasks-save-data where the Hub is reachable, or set "
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
        revision = f"(revision {source.hf_revision or 'default'})"
        if saving:
            advice = (
                f"Offline mode is on (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE), so only the datasets "
                f"cache was asked: set HF_HUB_OFFLINE=0 and HF_DATASETS_OFFLINE=0 where the Hub "
                f"is reachable and save again, or commit a slice saved elsewhere to {where} (in "
                f"the data root {source.data_dir})."
                if cache_only
                else "Check hf_repo, hf_subset, hf_revision and hf_data_files, and that the "
                "dataset is reachable from here."
            )
            raise DatasetError(
                f"task {source.task_name!r}: cannot save a slice of {what} {revision}: "
                f"{type(exc).__name__}: {exc}. {advice}"
            ) from exc
        raise DatasetError(
            f"task {source.task_name!r}: cannot load dataset {what} {revision} from the Hugging "
            f"Face Hub or its cache ({local_hint}"
            f"{'; offline mode is on' if cache_only else ''}): {type(exc).__name__}: {exc}. "
            f"Put the split files in the local data directory, or make the dataset reachable."
        ) from exc


def cache_advice(verb: str = "use") -> str:
    """What to say of the datasets cache when a dataset could not be loaded: to turn offline
    mode on, unless it is on already (then the cache has no copy either)."""
    if offline():
        return "HF_HUB_OFFLINE is set, and the datasets cache holds no copy either"
    return f"or set HF_HUB_OFFLINE=1 to {verb} the datasets cache, if it holds one"


def offline() -> bool:
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
