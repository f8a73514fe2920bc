"""Save a slice of a task's real rows into the data root, so CI can check it offline.

`--evaltasks-save-data N` loads each requested task's dataset through `datasets` (the Hub, its
cache, or a local dataset folder), and writes the first N rows of every split the task reads,
evaluation and few-shot, as `<data root>/<hf_repo>/<hf_subset>/<split>.jsonl`, with a
`MANIFEST` saying where they came from, each file written atomically. Later runs read the
slice and never the Hub.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError
from ..files import write_atomic
from .rows import RowSource, load_hub_dataset, local_dataset_dir

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


def splits_read(task: Task) -> list[str]:
    """Every split a task reads, in order: evaluation splits, then the few-shot split(s)."""
    return list(dict.fromkeys([*task.config.evaluation_splits, *(task.fewshot_splits or [])]))


def save_slice(
    task: Task, data_dir: Path, count: int, splits: list[str] | None = None
) -> SavedSlice:
    """Write the first `count` rows of each of `splits` (default: the splits `task` reads) of
    `task`'s dataset, from the Hub, to `data_dir`.

    Several tasks may share one dataset and read different splits of it: the caller passes the
    splits they read together, so one slice serves them all.
    """
    config = task.config
    source = RowSource.for_config(config, None)
    dataset = load_hub_dataset(source)
    directory = local_dataset_dir(data_dir, config.hf_repo, config.hf_subset)
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for split in splits or splits_read(task):
        if split not in dataset:
            raise DatasetError(
                f"task {task.name!r}: split {split!r} not in dataset {config.hf_repo!r} subset "
                f"{config.hf_subset!r}; it has: {', '.join(dataset)}"
            )
        rows = dataset[split]
        sizes[split] = len(rows)
        head = rows.select(range(min(count, len(rows))))
        lines = [_json_line(row, task.name, split, index) for index, row in enumerate(head)]
        write_atomic(directory / f"{split}.jsonl", "".join(lines).encode("utf-8"))
        written[split] = len(lines)
    manifest = {
        "hf_repo": config.hf_repo,
        "hf_subset": config.hf_subset,
        "hf_revision": config.hf_revision,
        "saved_rows": written,
        "split_sizes": sizes,
        "saved_for": task.name,
        "saved_on": datetime.date.today().isoformat(),
    }
    write_atomic(directory / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    return SavedSlice(directory, written, sizes)


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
