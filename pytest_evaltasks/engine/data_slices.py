"""Save a slice of a task's real rows into the data root, so CI can check it offline.

`--evaltasks-save-data N` loads each requested task's dataset through `datasets` (the Hub, its
cache, or a local dataset folder), and writes the first N rows of every split the task reads,
evaluation and few-shot, into the folder where a later run's row lookup finds them
(`rows.slice_dir`: `<data root>/<hf_repo>/<hf_subset>/<split>.jsonl`, and a folder of its own
for each set of `hf_data_files`), with a `MANIFEST` saying where they came from. Later runs
read the slice and never the Hub.

Inspect's tasks are built to learn what they read (`sources/inspect/data`,
`sources/inspect/source.InspectSlice`):
their datasets are sliced the same way, and the files they read by URL are saved whole.

Nothing is written before every slice of the run is loaded and checked (`SliceSource`,
`prepare_slice`, then `write_slice`), each file is written atomically, and nothing is written
outside the data root: a local dataset folder whose slice would land outside it, or inside the
folder itself, is refused.
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import DatasetError
from ..files import write_atomic
from .rows import PACKAGED_BUILDERS, RowSource, load_hub_dataset, normalised_data_files, slice_dir

if TYPE_CHECKING:
    from .task import Task

MANIFEST = "MANIFEST"
"""The slice's provenance, beside its split files (no data extension: never read as a split)."""


@dataclass(frozen=True)
class SavedSlice:
    """One dataset's slice as written."""

    directory: Path
    rows: dict[str, int]
    """Rows written per split."""
    sizes: dict[str, int]
    """Rows the full split has."""
    skipped: list[str] = field(default_factory=list)
    """Few-shot splits only 0-shot tasks read, absent from the dataset, so not saved."""
    url: str | None = None
    """The URL of a file saved whole (its one entry in `rows` is its line count)."""


class SlicePlan(Protocol):
    """One slice folder a source will save, before anything is loaded: tasks whose plans
    name the same folder are merged into the first one's."""

    directory: Path

    def merge(self, other: SlicePlan) -> None:
        """Also save what `other` (a plan for the same folder) needs."""
        ...

    def prepare(self, count: int, root: Path | None = None) -> list[PreparedSlice]:
        """Load and check the first `count` rows of each split; nothing is written. A source
        whose folders are known only once its task is built (Inspect's) names the data root as
        its plan's `directory`, and prepares a slice for each folder its tasks read."""
        ...


@dataclass
class SliceSource:
    """One slice folder to write, and the splits the tasks reading it need (the `SlicePlan`
    of lighteval-style tasks)."""

    directory: Path
    data_dir: Path
    task: Task
    """The first task reading this folder: its config names the data source."""
    splits: dict[str, str | None] = field(default_factory=dict)
    """Each split, in the order first read, with the first task that needs it; None when only
    0-shot tasks read it, as their few-shot pool (saved when the dataset has it)."""

    @classmethod
    def for_task(cls, task: Task, data_dir: Path) -> SliceSource:
        """The slice folder of `task`'s data source, holding nothing yet; refused (naming the
        task) when it would be outside the data root or inside a local source folder."""
        return cls(slice_directory(task, data_dir), data_dir, task)

    def merge(self, other: SlicePlan) -> None:
        """Also save what the tasks of `other` read."""
        assert isinstance(other, SliceSource)
        self.add(other.task)

    def prepare(self, count: int, root: Path | None = None) -> list[PreparedSlice]:
        return [prepare_slice(self, count, root)]

    def add(self, task: Task) -> None:
        """Also save what `task` reads (its data source must be this one's)."""
        mine, theirs = _source_of(self.task, self.data_dir), _source_of(task, self.data_dir)
        if mine != theirs:
            raise DatasetError(
                f"task {task.name!r} reads {_describe(theirs)} and task {self.task.name!r} "
                f"reads {_describe(mine)}, but a later run reads both from one slice, at "
                f"{self.directory} (slices are kept by repository, subset and data files, not "
                f"by revision); give them the same hf_revision, or save them one at a time"
            )
        needed, optional = splits_needed(task)
        for split in needed:
            if self.splits.get(split) is None:
                self.splits[split] = task.name
        for split in optional:
            self.splits.setdefault(split, None)


@dataclass(frozen=True)
class PreparedSlice:
    """A slice loaded and checked, held in memory until every slice of the run is."""

    directory: Path
    files: dict[str, bytes]
    """File name to content, the split files first and the MANIFEST last."""
    rows: dict[str, int]
    sizes: dict[str, int]
    skipped: list[str]
    url: str | None = None
    """The URL of a file saved whole."""


def splits_read(task: Task) -> list[str]:
    """Every split a task reads, in order: evaluation splits, then the few-shot split(s)."""
    return list(dict.fromkeys([*task.config.evaluation_splits, *(task.fewshot_splits or [])]))


def splits_needed(task: Task) -> tuple[list[str], list[str]]:
    """The splits `task` needs at its shot count, and those it would read at more shots: at 0
    shots the few-shot pool is never built, so its split may be missing from the dataset."""
    read = splits_read(task)
    if task.num_fewshots:
        return read, []
    evaluation = list(dict.fromkeys(task.config.evaluation_splits))
    return evaluation, [split for split in read if split not in evaluation]


def slice_directory(task: Task, data_dir: Path) -> Path:
    """Where `task`'s slice goes (where a later run's row lookup finds it); an error naming
    the task when that is outside the data root or inside a local source folder."""
    config = task.config
    directory = slice_dir(data_dir, config.hf_repo, config.hf_subset, config.hf_data_files)
    target, root = directory.resolve(), data_dir.resolve()
    folder = Path(config.hf_repo)
    local = folder.is_dir()
    inside_source = local and (target == folder.resolve() or folder.resolve() in target.parents)
    if root in target.parents and not inside_source:
        return directory
    where = (
        "inside that folder, where datasets would read it back as more rows"
        if inside_source
        else "outside the data root"
    )
    example = data_dir / "org" / "name" / (config.hf_subset or "default")
    advice = (
        f"Name the folder by a path relative to the working directory that stays out of the "
        f"data root (hf_repo='org/name' is sliced to {example}), or use the dataset's Hub id; "
        f"or, as the folder is local already, commit it and read it as it is."
        if local
        else "Use the dataset's Hub id, or a path relative to the working directory without '..'."
    )
    what = "is a local folder" if local else "names no dataset inside the data root"
    raise DatasetError(
        f"task {task.name!r}: hf_repo {config.hf_repo!r} {what}, and its slice would be "
        f"written to {target}, {where}; --evaltasks-save-data writes only inside the data root "
        f"({data_dir}), never into a source dataset. {advice}"
    )


def prepare_slice(source: SliceSource, count: int, root: Path | None = None) -> PreparedSlice:
    """Load `source`'s dataset and render the first `count` rows of each split it needs,
    writing nothing; an error naming the task when a needed split is missing or a row cannot be
    stored. `root` (the project root) is what MANIFEST's data files are relative to."""
    task = source.task
    config = task.config
    dataset = load_hub_dataset(RowSource.for_config(config, source.data_dir), saving=True)
    missing = [
        (split, name) for split, name in source.splits.items() if name and split not in dataset
    ]
    if missing:
        split, name = missing[0]
        also = f" (and {', '.join(repr(split) for split, _ in missing[1:])})" if missing[1:] else ""
        raise DatasetError(
            f"task {name!r}: split {split!r}{also} not in dataset {config.hf_repo!r} subset "
            f"{config.hf_subset!r}; it has: {', '.join(dataset)}"
        )
    skipped = [split for split in source.splits if split not in dataset]
    reason = "not in the dataset; read only at more than 0 shots"
    dataset_fields = {
        "hf_repo": config.hf_repo,
        "hf_subset": config.hf_subset,
        "hf_revision": config.hf_revision,
        "hf_data_files": _recorded_data_files(config.hf_repo, config.hf_data_files, root),
    }
    kept = [split for split in source.splits if split not in skipped]
    notes = {"not_saved": dict.fromkeys(skipped, reason)} if skipped else {}
    return sliced(dataset, kept, count, task.name, source.directory, dataset_fields, notes, skipped)


def sliced(
    dataset: Any,
    splits: list[str],
    count: int,
    task_name: str,
    directory: Path,
    dataset_fields: dict[str, Any],
    notes: dict[str, Any] | None = None,
    skipped: list[str] | None = None,
) -> PreparedSlice:
    """The first `count` rows of each split as JSON Lines, with a MANIFEST that names the
    dataset (`dataset_fields`, in the task source's own terms), the rows saved and each split's
    size (then `notes`): what either task source's `--evaltasks-save-data` writes; `skipped`
    names the splits left out."""
    files: dict[str, bytes] = {}
    written: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for split in splits:
        rows = dataset[split]
        sizes[split] = len(rows)
        head = rows.select(range(min(count, len(rows))))
        lines = [_json_line(row, task_name, split, index) for index, row in enumerate(head)]
        files[f"{split}.jsonl"] = "".join(lines).encode("utf-8")
        written[split] = len(lines)
    manifest = {
        **dataset_fields,
        "saved_rows": written,
        "split_sizes": sizes,
        **(notes or {}),
        "saved_for": task_name,
        "saved_on": datetime.date.today().isoformat(),
    }
    files[MANIFEST] = (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
    return PreparedSlice(directory, files, written, sizes, skipped or [])


def write_slice(prepared: PreparedSlice) -> SavedSlice:
    """Write a prepared slice, each file atomically, the MANIFEST last."""
    prepared.directory.mkdir(parents=True, exist_ok=True)
    for name, data in prepared.files.items():
        write_atomic(prepared.directory / name, data)
    return SavedSlice(
        prepared.directory, prepared.rows, prepared.sizes, prepared.skipped, prepared.url
    )


def _source_of(task: Task, data_dir: Path) -> tuple[str, str | None, str | None, str]:
    """What identifies a task's data source: repository, subset, revision and data files."""
    config = task.config
    spec = config.hf_data_files
    files = None if spec is None else normalised_data_files(config.hf_repo, spec, data_dir)
    return (config.hf_repo, config.hf_subset, config.hf_revision, json.dumps(files))


def _describe(source: tuple[str, str | None, str | None, str]) -> str:
    """A data source, for messages."""
    repo, subset, revision, files = source
    text = f"{repo!r} subset {subset!r} at revision {revision or 'default'}"
    return text if files == "null" else f"{text} with data files {files}"


def _recorded_data_files(
    hf_repo: str, hf_data_files: str | list[str] | dict[str, Any] | None, root: Path | None
) -> dict[str, list[str]] | None:
    """`hf_data_files` as MANIFEST records it: `{split: [path, ...]}`, a packaged builder's
    paths resolved as `datasets` resolves them (against the working directory) and shown
    relative to `root` when inside it; a repository's paths as written (relative to it)."""
    if hf_data_files is None:
        return None
    base = Path.cwd() if root is None else root
    files = normalised_data_files(hf_repo, hf_data_files, base)
    if hf_repo not in PACKAGED_BUILDERS:
        return files
    return {split: [_outside(base, path) for path in paths] for split, paths in files.items()}


def _outside(base: Path, path: str) -> str:
    """A path relative to `base` as it stays when inside `base`, else absolute."""
    if "://" in path or not (path == ".." or path.startswith("../")):
        return path
    return os.path.normpath(os.path.join(os.path.abspath(base), path)).replace(os.sep, "/")


def _json_line(row: dict[str, Any], task: str, split: str, index: int) -> str:
    """One row as a JSON line that the local reader types back as `datasets` did."""
    try:
        return json.dumps(row, ensure_ascii=False, default=_plain) + "\n"
    except TypeError as exc:
        raise DatasetError(
            f"task {task!r}: row {index} of split {split!r} holds a value JSON cannot store "
            f"({exc}); save this dataset's slice as parquet by hand instead"
        ) from None


def _plain(value: Any) -> Any:
    """Dates as ISO text (read back as dates); anything else is not stored."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")
