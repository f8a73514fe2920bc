"""Snapshot files on disk: their names, tolerant reads, verified writes, and stale temp files.

A write goes through `files.write_atomic` and is read back: an item that says it recorded a
snapshot has one on disk, byte for byte. A run that was killed mid-write leaves a temp file
named for its process; the next run removes it (`remove_stale_temp_files`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..files import TEMP_SUFFIX, remove_stale_temp_files
from .facts import SnapshotFacts
from .parse import FileProblem, SnapshotFileError, parse_snapshot, recorded_label

SNAPSHOT_SUFFIX = "txt"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")

__all__ = [
    "SNAPSHOT_SUFFIX",
    "TEMP_SUFFIX",
    "Recorded",
    "label_of_file",
    "read_recorded",
    "recorded_labels",
    "remove_stale_temp_files",
    "snapshot_filename",
]


def snapshot_filename(key: str) -> str:
    """A file name for an item key that is safe everywhere and never ambiguous.

    The readable part keeps letters, digits and `_`, and folds every other run of characters
    into `-`; the hash of the exact key keeps `mmlu|5` and `mmlu5` (or `ARC` and `arc` on a
    case-insensitive disk) apart. No `/` or `..` can survive, so no name escapes the folder.
    """
    readable = _UNSAFE.sub("-", key).strip("-")[:80] or "task"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"{readable}--{digest}.{SNAPSHOT_SUFFIX}"


@dataclass(frozen=True)
class Recorded:
    """A snapshot as read: its text and the facts parsed from it; `where` names it in messages
    (a path, or `path at REF`)."""

    where: str
    text: str
    facts: SnapshotFacts


def parse_recorded(where: str, text: str) -> Recorded:
    """A snapshot's text read back, its problems raised as `SnapshotFileError` naming `where`."""
    try:
        return Recorded(where, text, parse_snapshot(text))
    except SnapshotFileError as exc:
        message = str(exc).replace("FILE", where)
        raise SnapshotFileError(f"snapshot file {where} {message}", exc.kind) from None


def read_recorded(path: Path, where: str | None = None) -> Recorded | None:
    """The recorded snapshot at `path`, or None when there is none.

    Raises `SnapshotFileError` naming the file when it exists but cannot be read back.
    """
    where = where or str(path)
    text = read_snapshot_text(path, where)
    return None if text is None else parse_recorded(where, text)


def read_snapshot_text(path: Path, where: str | None = None) -> str | None:
    """The file's text; None when absent. Undecodable bytes are a `SnapshotFileError`."""
    where = where or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise SnapshotFileError(f"snapshot file {where} is a directory; remove it") from None
    except OSError as exc:
        raise SnapshotFileError(f"snapshot file {where} cannot be read: {exc}") from None
    return decode(raw, where)


def decode(raw: bytes, where: str) -> str:
    """A file's bytes as text; not UTF-8 is a `SnapshotFileError` naming the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotFileError(
            f"snapshot file {where} is not valid UTF-8 ({exc.reason} at byte {exc.start}): "
            f"restore it from version control (git checkout -- {where})",
            FileProblem.UNREADABLE,
        ) from None


def recorded_labels(directory: Path) -> dict[Path, str | None]:
    """Every snapshot file in `directory` with the task label it records (None: unreadable).

    Only the header is parsed, which is all that `--evaltasks all` needs to know.
    """
    found: dict[Path, str | None] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob(f"*.{SNAPSHOT_SUFFIX}")):
        found[path] = label_of_file(path)
    return found


def label_of_file(path: Path) -> str | None:
    """The task label a snapshot file records, read from its first bytes; None when it is not
    a readable snapshot."""
    try:
        with path.open("rb") as stream:
            head = stream.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    return recorded_label(head)
