"""Read local data files into rows with the values `datasets` would give a prompt function.

`.jsonl`, `.json`, `.parquet` and `.csv`, read as the `datasets` builders read them: JSON rows
get one key set (missing values None), ints promoted to floats in a column that mixes both or
holds an int beyond 64 bits, uniform nested objects, and ISO timestamps (Arrow's forms only) as
datetimes. What `datasets` refuses (two objects on one line, a key twice in one object, a lone
surrogate) is an error naming the file, line and column. `datasets` itself is never imported:
the import alone costs most of a second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import chain
from operator import itemgetter
from pathlib import Path
from sys import intern
from typing import Any

from ..errors import DatasetError

Row = dict[str, Any]
LOCAL_EXTENSIONS = (".jsonl", ".json", ".parquet", ".csv")
INT64_MAX = 2**63 - 1


def read_rows_file(path: Path) -> list[Row]:
    """Read one local data file into row dicts, by extension."""
    suffix = path.suffix
    try:
        if suffix in (".jsonl", ".json"):
            rows = _read_json_file(path)
            return normalise_json_rows(rows)
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_table(path).to_pylist())
        if suffix == ".csv":
            return _read_csv(path)
    except DatasetError:
        raise
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    except PermissionError:
        raise DatasetError(f"{path}: permission denied; make the file readable") from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read data file {path}: {type(exc).__name__}: {exc}") from exc
    raise DatasetError(f"unsupported data file {path}; use one of {', '.join(LOCAL_EXTENSIONS)}")


def _read_json_file(path: Path) -> list[Row]:
    """A `.jsonl` or `.json` file: JSON Lines, a JSON array of rows, or one object.

    As `datasets` does, a `.json` file may hold JSON Lines, and a UTF-8 byte-order mark is
    skipped. A `.jsonl` file is read in chunks of lines, so its text is never in memory whole.
    """
    if path.suffix != ".json":
        with path.open(encoding="utf-8-sig") as stream:  # newlines as `read_text` gives them
            return _json_lines(path, iter(lambda: stream.readlines(CHUNK_CHARS), []))
    text = path.read_text(encoding="utf-8-sig")
    stripped = text.lstrip()
    if stripped.startswith("["):
        return _array_rows(path, text)
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError:
        pass  # JSON Lines in a `.json` file, read below
    except _DuplicateKey as exc:
        raise DatasetError(f"{path}: {exc}") from None
    else:
        if isinstance(data, dict):
            return [_checked_row(path, 1, data)]
        raise DatasetError(f"{path}: expected a JSON array of row objects (or one object)")
    lines = text.split("\n")
    del text
    if lines[-1] == "":
        lines.pop()  # after the last newline: not a line (a blank one would keep the chunk slow)
    return _json_lines(path, iter([lines]))


CHUNK_CHARS = 1 << 21
"""Characters of JSON Lines read and parsed at a time (about 2 MB of text)."""


def _json_lines(path: Path, chunks: Iterator[list[str]]) -> list[Row]:
    """JSON Lines, each line decoded where it stands; a chunk with any other line, line by line.

    Lines are separated by `\\n` only, as in JSON Lines and Arrow's reader: `str.splitlines`
    would also split at U+2028, U+0085 and friends, which may appear raw inside JSON strings.
    The fast path takes a line only when one object starts at its first character and nothing
    but whitespace follows it, so every row is exactly one line: a value spread over two lines,
    two values on one line, a blank or indented line all send their chunk to the line-by-line
    path, which skips blank lines and names the offending line. (Parsing a chunk as one array
    of its lines joined by `,` is no faster, and it can pair lines wrongly: a value spread over
    two lines and a line holding two values give the right count of rows.) Lone surrogate
    escapes are looked for once every line has parsed, so a file with both problems names the
    invalid line, as a line-by-line reading of the whole file would.
    """
    rows: list[Row] = []
    escapes: list[tuple[int, int, int, list[str]]] = []
    first = 1
    for lines in chunks:
        parsed = _whole_lines(lines)
        if parsed is None:
            parsed = [
                _parse_line(path, number, line.rstrip("\n"))
                for number, line in _numbered(lines, first)
            ]
        if _SURROGATE_ESCAPE.search("".join(lines)):
            escapes.append((first, len(rows), len(parsed), lines))
        rows.extend(parsed)
        del parsed
        first += len(lines)
    for first, start, count, lines in escapes:
        for (number, _), row in zip(
            _numbered(lines, first), rows[start : start + count], strict=True
        ):
            _checked_row(path, number, row)
    return rows


def _whole_lines(lines: list[str]) -> list[Row] | None:
    """Each line's one object, or None when any line is not exactly one object (then the
    caller reads the chunk line by line, which names the problem)."""
    decode = _DECODER.raw_decode
    rows: list[Row] = []
    append = rows.append
    try:
        for line in lines:
            row, end = decode(line)
            if type(row) is not dict or (end != len(line) and line[end:].strip(_JSON_SPACE)):
                return None
            append(row)
    except (json.JSONDecodeError, _DuplicateKey):
        return None
    return rows


def _array_rows(path: Path, text: str) -> list[Row]:
    """A JSON array of row objects."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    except _DuplicateKey as exc:
        raise DatasetError(f"{path}: {exc}") from None
    if not all(isinstance(row, dict) for row in data):
        raise DatasetError(f"{path}: expected a JSON array of row objects (or one object)")
    for position, row in enumerate(data):
        _checked_row(path, position + 1, row)
    return list(data)


class _DuplicateKey(ValueError):
    """A key appears twice in one JSON object (Arrow refuses it; `json` would keep the last)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json`'s object hook: a dict, unless a key repeats. Keys are interned, so every row
    holds the same key strings: each line is decoded on its own, and a decoder shares keys
    only within one call (200,000 rows: 37 MB more without it)."""
    row = {intern(key): value for key, value in pairs}
    if len(row) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _DuplicateKey(f"key {repeated!r} appears twice in one object")
    return row


_JSON_SPACE = " \t\n\r"
"""What JSON counts as whitespace (not NBSP and the other Unicode spaces)."""

_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
"""Decodes one line's object at its start (`raw_decode`), keys checked for repeats."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _checked_row(path: Path, number: int, row: Any) -> Row:
    """A row with no lone surrogate (`\\ud800` alone is not text; Arrow refuses it)."""
    if not isinstance(row, dict):
        raise DatasetError(f"{path}:{number}: the row is {type(row).__name__}, not an object")
    try:
        json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise DatasetError(
            f"{path}:{number}: the row holds a lone surrogate escape (such as \\ud800) that is "
            f"not text; fix the data (datasets refuses it too)"
        ) from None
    return row


def _numbered(lines: list[str], first: int = 1) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers, the first numbered `first`."""
    for number, line in enumerate(lines, start=first):
        if line.strip():
            yield number, line


def _parse_line(path: Path, number: int, line: str) -> Row:
    """Parse one JSON Lines line, naming the file, line and column on failure."""
    try:
        value = json.loads(line, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        what = "two JSON values on one line" if exc.msg == "Extra data" else exc.msg
        raise DatasetError(
            f"{path}:{number}:{exc.colno}: invalid JSON Lines ({what}): {line[:120]}"
        ) from None
    except _DuplicateKey as exc:
        raise DatasetError(f"{path}:{number}: {exc}") from None
    if not isinstance(value, dict):
        raise DatasetError(f"{path}:{number}: the row is {type(value).__name__}, not an object")
    return value


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
    if _mixes_numbers(kinds) or (kinds == {int} and _beyond_int64(values)):
        return [float(v) if type(v) is int else v for v in values]
    if kinds == {str} and _all_timestamps(values):
        return [None if v is None else _timestamp(v) for v in values]
    return values


def _beyond_int64(values: list[Any]) -> bool:
    """An int column holding a value Arrow cannot store as int64: it types the column float."""
    present = [v for v in values if v is not None]
    return bool(present) and (max(present) > INT64_MAX or min(present) < -INT64_MAX - 1)


# What Arrow's JSON reader (and so `datasets`) infers as a timestamp: a date, optionally a
# time to the hour, minute or second (no fraction) and then optionally a UTC offset. A
# string of that shape that is not a real date or time (`2021-02-30`, `T24:00`) stays text.
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
)


def _all_timestamps(values: list[Any]) -> bool:
    """True when every string is a valid timestamp; the first string usually settles it."""
    present = [v for v in values if v is not None]
    if not present or not _TIMESTAMP.fullmatch(present[0]):
        return False
    if not all(_TIMESTAMP.fullmatch(v) for v in present):
        return False
    try:
        for value in present:
            _timestamp(value)
    except ValueError:
        return False
    return True


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
    if kinds not in ({list}, {dict}, {str}, {int}) and not _mixes_numbers(kinds):
        return values  # nothing to unify: the usual case, with no flat copy
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
