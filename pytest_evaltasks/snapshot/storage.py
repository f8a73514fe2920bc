"""Snapshot files on disk: their names and tolerant reads.

They are written with `files.write_atomic`, so an interrupted run leaves each snapshot either
old or new, never half written.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from .format import FIRST_LINE, SnapshotFacts, SnapshotFileError, parse_snapshot

SNAPSHOT_SUFFIX = "txt"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


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
    """A snapshot file as read: its text and the facts parsed from it."""

    text: str
    facts: SnapshotFacts


def read_recorded(path: Path) -> Recorded | None:
    """The recorded snapshot at `path`, or None when there is none.

    Raises `SnapshotFileError` naming the file when it exists but cannot be read back.
    """
    text = read_snapshot_text(path)
    if text is None:
        return None
    try:
        return Recorded(text, parse_snapshot(text))
    except SnapshotFileError as exc:
        raise SnapshotFileError(f"snapshot file {path} {exc}") from None


def read_snapshot_text(path: Path) -> str | None:
    """The file's text; None when absent. Undecodable bytes are a `SnapshotFileError`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise SnapshotFileError(f"snapshot file {path} is a directory; remove it") from None
    except OSError as exc:
        raise SnapshotFileError(f"snapshot file {path} cannot be read: {exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotFileError(
            f"snapshot file {path} is not valid UTF-8 ({exc.reason} at byte {exc.start}): "
            f"restore it from version control, or delete it and record it again"
        ) from None


def recorded_labels(directory: Path) -> dict[Path, str | None]:
    """Every snapshot file in `directory` with the task label it records (None: unreadable).

    Only the header is parsed, which is all that `--evaltasks all` needs to know.
    """
    found: dict[Path, str | None] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob(f"*.{SNAPSHOT_SUFFIX}")):
        found[path] = recorded_label(path)
    return found


def recorded_label(path: Path) -> str | None:
    """The task label a snapshot file records (its `name:` line), read from the file's start;
    None when the file is not a readable snapshot."""
    try:
        with path.open("rb") as stream:
            head = stream.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith(FIRST_LINE):
        return None
    for line in head.replace("\r\n", "\n").split("\n"):
        if line.startswith("name: "):
            return line[len("name: ") :].rstrip()
    return None
