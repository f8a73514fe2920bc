"""Atomic, verified file writes, shared by the snapshot store, the data slices and the report.

A write goes to a temporary file in the same folder, is flushed to disk, then renamed over the
old file, so an interrupted run leaves the file either old or new, never half written; then it
is read back, so a write that did not land (a full disk, a quota, a folder that lies) is an
error, never a success. The temp file carries the writer's process id, so a later run can
remove what a killed run left behind, and never a file another process is still writing.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path

TEMP_SUFFIX = ".evaltasks-tmp"
_TEMP = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX) + r"$")
STALE_AFTER = 3600.0
"""Seconds after which a temp file of a live process id is taken as left behind anyway (the
id may be reused, or belong to another machine sharing the folder)."""


class WriteError(OSError):
    """A write that did not land; the message names the file and the cause."""


def write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename over the old file, then read it back."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            with open(temp, "xb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temp, 0o666 & ~_umask())
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        landed = holds(path, data)
        size = len(data) if landed else path.stat().st_size  # a stat only to say what is wrong
    except OSError as exc:
        raise WriteError(f"could not write {path}: {exc.strerror or exc}") from exc
    if not landed:
        raise WriteError(
            f"could not write {path}: it reads back {size} bytes"
            + (", not what was written" if size == len(data) else f", not the {len(data)} written")
        )


READ_BACK_CHUNK = 1 << 20
"""Bytes compared at a time when a written file is read back."""


def holds(path: Path, data: bytes) -> bool:
    """Whether the file holds exactly `data`, read back a chunk at a time (a large snapshot is
    not held twice in memory to compare it)."""
    expected = memoryview(data)
    with open(path, "rb") as stream:
        for start in range(0, len(data), READ_BACK_CHUNK):
            chunk = stream.read(READ_BACK_CHUNK)
            if chunk != expected[start : start + READ_BACK_CHUNK]:
                return False
        return stream.read(1) == b""


def remove_stale_temp_files(directory: Path) -> list[Path]:
    """Remove temp files that a killed run left in `directory`; the files removed."""
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = _TEMP.match(entry.name)
        if match is None:
            continue
        try:
            old = now - entry.stat().st_mtime > STALE_AFTER
            if old or not _alive(int(match.group(1))):
                entry.unlink()
                removed.append(entry)
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with this id runs here."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
