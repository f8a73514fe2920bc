"""Everything that touches syrupy's internals lives here.

One single-file text snapshot per task item, at a path the item chooses. Discovery is scoped
to that one file, so a run over some tasks never flags or deletes another task's snapshot;
stale files are found by our own check against the registry instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syrupy.assertion import SnapshotAssertion
from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.terminal import disable_color

if TYPE_CHECKING:
    import pytest

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


class TaskLocation(PyTestLocation):
    """syrupy's location for a task item: names come from the item, not a test function."""

    def matches_snapshot_name(self, snapshot_name: str) -> bool:
        """Every snapshot this location writes is its own."""
        return True


class EvalTaskSnapshotExtension(SingleFileSnapshotExtension):
    """Plain UTF-8 text, one file per task item, written atomically."""

    file_extension = SNAPSHOT_SUFFIX
    _write_mode = WriteMode.TEXT

    @classmethod
    def get_location(cls, *, test_location: PyTestLocation, index: Any) -> str:
        """The item decided where its snapshot lives."""
        return str(_item_path(test_location))

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        """The file's stem: what discovery reads back as the snapshot's name."""
        return _item_path(test_location).name[: -len(SNAPSHOT_SUFFIX) - 1]

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """The snapshot directory."""
        return str(_item_path(test_location).parent)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        """Discovery is cached per this key: make it the item's own file.

        syrupy also asks about ordinary tests collected in the same run; they own nothing here.
        """
        path = _item_path_or_none(test_location)
        return str(path) if path is not None else f"<not an evaltask: {test_location.nodeid}>"

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        """The location came from the item itself."""
        return True

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Only the item's own file: never other tasks' snapshots."""
        discovered = SnapshotCollections()
        path = _item_path_or_none(test_location)
        if path is not None and path.is_file():
            collection = SnapshotCollection(location=str(path))
            collection.add(Snapshot(name=path.stem))
            discovered.add(collection)
        return discovered

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> str | None:
        """Read as bytes so a corrupted file is reported by us, not as a decode traceback."""
        data = read_snapshot_text(Path(snapshot_location))
        return data if isinstance(data, str) else None

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        """Atomic: an interrupted run leaves the old file whole."""
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"snapshot data must be text, got {type(data).__name__}")
        write_atomic(Path(snapshot_collection.location), data.encode("utf-8"))


def _item_path(test_location: PyTestLocation) -> Path:
    """The snapshot path the task item carries."""
    path = _item_path_or_none(test_location)
    if path is None:
        raise TypeError(f"{test_location.nodeid} is not an evaltasks item")
    return path


def _item_path_or_none(test_location: PyTestLocation) -> Path | None:
    """The task item's snapshot path; None for any other kind of test."""
    path = getattr(test_location.item, "snapshot_path", None)
    return path if isinstance(path, Path) else None


def read_snapshot_text(path: Path) -> str | UnicodeDecodeError | None:
    """The recorded text; None when absent; the decode error when the file is corrupted."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc


def write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, then rename over the old file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_name, 0o666 & ~_umask())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def assert_snapshot(item: pytest.Item, text: str, update: bool) -> tuple[bool, list[str]]:
    """Compare (or, in update mode, write) `text` through syrupy; return success and diff.

    The assertion is built here, at the moment of use, the way syrupy's `snapshot` fixture
    builds it; custom items have no fixtures.
    """
    assertion = SnapshotAssertion(
        session=item.config._syrupy,  # type: ignore[attr-defined]
        extension_class=EvalTaskSnapshotExtension,
        test_location=TaskLocation(item),
        update_snapshots=update,
    )
    ok = assertion == text
    if ok:
        return True, []
    with disable_color():
        return False, assertion.get_assert_diff()


def diff_lines(old: str, new: str) -> list[str]:
    """syrupy's diff between two texts, uncoloured: for refusals where nothing is asserted."""
    with disable_color():
        return list(EvalTaskSnapshotExtension().diff_lines(new, old))
