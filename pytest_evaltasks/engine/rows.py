"""Load a task's dataset rows: from the local data root, or through `datasets` from the Hub.

Local layout: `<data_dir>/<hf_repo>/<hf_subset or "default">/<split>.{jsonl,json,parquet,csv}`.
When that directory exists it is the only source for the task (no silent fall-back to the Hub).
Local JSON rows are normalised the way Arrow would type them, so a prompt function sees the
same values whichever path the rows took. `datasets` is imported only on the Hub path: the
import alone costs most of a second.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError

if TYPE_CHECKING:
    from .config import TaskConfig

Row = dict[str, Any]
LOCAL_EXTENSIONS = (".jsonl", ".json", ".parquet", ".csv")


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
    def local_dir(self) -> Path | None:
        """The local dataset directory, when the data root has one for this dataset."""
        if self.data_dir is None:
            return None
        directory = self.data_dir / self.hf_repo / (self.hf_subset or "default")
        return directory if directory.is_dir() else None

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
        files = self._local_files(directory, split)
        rows: list[Row] = []
        for path in files:
            rows.extend(read_rows_file(path))
        if any(path.suffix in (".json", ".jsonl") for path in files):
            rows = normalise_json_rows(rows)
        return rows

    def _local_files(self, directory: Path, split: str) -> list[Path]:
        """The file(s) holding `split`: `hf_data_files` when set, else `<split>.<ext>`."""
        if self.hf_data_files is not None:
            return self._data_files_for(directory, split)
        for extension in LOCAL_EXTENSIONS:
            candidate = directory / f"{split}{extension}"
            if candidate.is_file():
                return [candidate]
        raise DatasetError(
            f"task {self.task_name!r}: split {split!r} not found in {directory} "
            f"(looked for {split}{{{','.join(LOCAL_EXTENSIONS)}}}); "
            f"splits there: {', '.join(local_splits(directory)) or 'none'}. "
            f"Add the file or fix the task's evaluation_splits / few_shots_split."
        )

    def _data_files_for(self, directory: Path, split: str) -> list[Path]:
        """Resolve `hf_data_files` (as `datasets` reads it) inside the local dataset directory."""
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
            matched = sorted(directory.glob(str(pattern)))
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


def load_hub_dataset(source: RowSource) -> Any:
    """Call `datasets.load_dataset`, turning its many failure modes into one clear error."""
    import datasets

    try:
        return datasets.load_dataset(
            path=source.hf_repo,
            name=source.hf_subset or None,
            revision=source.hf_revision,
            data_files=source.hf_data_files,
        )
    except Exception as exc:
        local_hint = (
            f"no local copy at {source.data_dir / source.hf_repo / (source.hf_subset or 'default')}"
            if source.data_dir is not None
            else "no local data root configured"
        )
        offline = os.environ.get("HF_DATASETS_OFFLINE") or os.environ.get("HF_HUB_OFFLINE")
        raise DatasetError(
            f"task {source.task_name!r}: cannot load dataset {source.hf_repo!r} subset "
            f"{source.hf_subset!r} (revision {source.hf_revision or 'default'}) from the Hugging "
            f"Face Hub or its cache ({local_hint}"
            f"{'; offline mode is on' if offline else ''}): {type(exc).__name__}: {exc}. "
            f"Put the split files in the local data directory, or make the dataset reachable."
        ) from exc


def local_splits(directory: Path) -> list[str]:
    """Split names present in a local dataset directory."""
    return sorted({p.stem for p in directory.iterdir() if p.suffix in LOCAL_EXTENSIONS})


def read_rows_file(path: Path) -> list[Row]:
    """Read one local data file into row dicts, by extension."""
    suffix = path.suffix
    try:
        if suffix == ".jsonl":
            return _read_jsonl(path)
        if suffix == ".json":
            return _read_json(path)
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_table(path).to_pylist())
        if suffix == ".csv":
            return _read_csv(path)
    except DatasetError:
        raise
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read data file {path}: {type(exc).__name__}: {exc}") from exc
    raise DatasetError(f"unsupported data file {path}; use one of {', '.join(LOCAL_EXTENSIONS)}")


def _read_jsonl(path: Path) -> list[Row]:
    """JSON Lines, parsed by one `json.loads` over the whole file; on failure, name the bad line.

    Lines are separated by `\\n` only, as in JSON Lines and Arrow's reader: `str.splitlines`
    would also split at U+2028, U+0085 and friends, which may appear raw inside JSON strings.
    A raw newline cannot occur inside a JSON value, so turning every `\\n` into `,` yields one
    array with the same rows; blank lines make it invalid and take the line-by-line path.
    """
    text = path.read_text(encoding="utf-8")
    try:
        rows: list[Row] = json.loads("[" + text.strip().replace("\n", ",") + "]")
    except json.JSONDecodeError:
        rows = [_parse_line(path, number, line) for number, line in _numbered(text)]
    if not all(type(row) is dict for row in rows):
        for position, row in enumerate(rows):
            if not isinstance(row, dict):
                raise DatasetError(f"{path}: row {position} is {type(row).__name__}, not an object")
    return rows


def _numbered(text: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers (split at `\\n` only)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def _parse_line(path: Path, number: int, line: str) -> Row:
    """Parse one JSONL line, naming file and line on failure."""
    try:
        value: Row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{number}: invalid JSON ({exc.msg}): {line[:120]}") from exc
    return value


def _read_json(path: Path) -> list[Row]:
    """A JSON array of row objects; a lone top-level object is one row, as `datasets` reads it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from exc
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        return data
    raise DatasetError(f"{path}: expected a JSON array of row objects (or one object)")


def _read_csv(path: Path) -> list[Row]:
    """CSV through pandas and Arrow, the way the `datasets` CSV builder types it."""
    import pandas as pd
    import pyarrow as pa

    frame = pd.read_csv(path)
    return list(pa.Table.from_pandas(frame, preserve_index=False).to_pylist())


def normalise_json_rows(rows: list[Row]) -> list[Row]:
    """Give JSON rows the shape `datasets` gives them: one key set, missing values None, ints
    promoted to floats in a column that mixes both (also inside lists and uniform objects).

    Runs once per split over every row, so the scans are C-level (`map`, `set`): a split whose
    rows already agree (the usual case) costs a few milliseconds and is returned unchanged.
    """
    if not rows:
        return rows
    shapes = set(map(tuple, rows))
    if len(shapes) == 1:
        columns = list(shapes.pop())
    else:
        columns = _union_keys(rows)
        rows = [{key: row.get(key) for key in columns} for row in rows]
    for key in columns:
        values = list(map(itemgetter(key), rows))
        fixed = _unify_values(values)
        if fixed is not values:
            for row, value in zip(rows, fixed, strict=True):
                row[key] = value
    return rows


def _union_keys(rows: list[Row]) -> list[str]:
    """All keys in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def _unify_values(values: list[Any]) -> list[Any]:
    """Values of one column (or list elements) typed alike; returns `values` itself if unchanged."""
    kinds = _kinds(values)
    if kinds == {list}:
        return _unify_lists(values)
    if kinds == {dict}:
        return _unify_dicts(values)
    if _mixes_numbers(kinds):
        return [float(v) if type(v) is int else v for v in values]
    if kinds == {str} and _all_timestamps(values):
        return [None if v is None else _timestamp(v) for v in values]
    return values


# What Arrow's JSON reader (and so `datasets`) infers as a timestamp: a date, optionally a
# time to the hour, minute or second (no fraction), optionally a UTC offset.
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?"
)


def _all_timestamps(values: list[Any]) -> bool:
    """True when every string looks like a timestamp; the first string usually settles it."""
    present = [v for v in values if v is not None]
    if not present or not _TIMESTAMP.fullmatch(present[0]):
        return False
    return all(_TIMESTAMP.fullmatch(v) for v in present)


def _timestamp(text: str) -> datetime:
    """The naive UTC datetime Arrow makes of a timestamp string."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


def _kinds(values: Iterable[Any]) -> set[type]:
    """The types among `values`, None aside (a C-level scan)."""
    kinds = set(map(type, values))
    kinds.discard(type(None))
    return kinds


def _mixes_numbers(kinds: set[type]) -> bool:
    """Ints next to floats (and nothing else): Arrow types the column as float."""
    return int in kinds and float in kinds and kinds <= {int, float}


def _unify_lists(values: list[Any]) -> list[Any]:
    """Unify the elements of every list in a column together, as one Arrow list type."""
    present = values if None not in values else [value for value in values if value is not None]
    kinds = _kinds(chain.from_iterable(present))
    if kinds != {list} and kinds != {dict} and not _mixes_numbers(kinds):
        return values  # scalars already typed alike: the usual case, no flat copy needed
    flat = list(chain.from_iterable(present))
    fixed = _unify_values(flat)
    if fixed is flat:
        return values
    out: list[Any] = []
    position = 0
    for value in values:
        if value is None:
            out.append(None)
            continue
        out.append(fixed[position : position + len(value)])
        position += len(value)
    return out


def _unify_dicts(values: list[Any]) -> list[Any]:
    """Nested objects with one key set become typed structs; objects whose keys differ stay
    as they are, as `datasets` keeps them (its `Json` feature)."""
    present = [value for value in values if value is not None]
    if any(value.keys() != present[0].keys() for value in present):
        return values
    normalised = normalise_json_rows([dict(value) for value in present])
    iterator = iter(normalised)
    return [None if value is None else next(iterator) for value in values]


def preview(row: Row, limit: int = 200) -> str:
    """A short, single-line view of a row for error messages."""
    shown = {k: v for k, v in row.items() if not str(k).startswith("__")}
    text = repr(shown).replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
