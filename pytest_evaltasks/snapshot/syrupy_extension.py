"""Everything that touches syrupy's internals lives here.

One single-file text snapshot per task item, at a path the item chooses. Discovery is scoped
to that one file, so a run over some tasks never flags or deletes another task's snapshot;
orphaned files are found by our own check against the registry instead. The file itself is
read by `storage` (tolerant reads) and written by `files.write_atomic`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from syrupy.assertion import SnapshotAssertion
from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from ..files import write_atomic
from .parse import SnapshotFileError
from .storage import SNAPSHOT_SUFFIX, read_snapshot_text

if TYPE_CHECKING:
    import pytest


class TaskLocation(PyTestLocation):
    """syrupy's location for a task item: names come from the item, not a test function."""

    def matches_snapshot_name(self, snapshot_name: str) -> bool:
        """Every snapshot this location writes is its own."""
        return True


class EvalTaskSnapshotExtension(SingleFileSnapshotExtension):
    """Plain UTF-8 text, one file per task item, written atomically with LF line endings."""

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
        """The recorded text as it is: the item decided to write, and a file that differs from
        the text in any byte (CRLF from a checkout, say) is written."""
        try:
            return read_snapshot_text(Path(snapshot_location))
        except SnapshotFileError:
            return None

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


def write_snapshot(item: pytest.Item, text: str) -> str | None:
    """Write `text` as the item's snapshot through syrupy, so its report counts it; the cause
    when the write failed (syrupy catches it and only counts a failure), else None.

    The assertion is built here, at the moment of use, the way syrupy's `snapshot` fixture
    builds it; custom items have no fixtures. The item has already decided to write.
    """
    assertion = SnapshotAssertion(
        session=item.config._syrupy,  # type: ignore[attr-defined]
        extension_class=EvalTaskSnapshotExtension,
        test_location=TaskLocation(item),
        update_snapshots=True,
    )
    written = assertion == text  # syrupy's assertion runs (and writes) in its `__eq__`
    failure = None
    if not written:
        causes = (r.exception for r in assertion.executions.values() if r.exception is not None)
        cause = next(causes, None)
        failure = "syrupy did not write it" if cause is None else str(cause) or type(cause).__name__
    for result in assertion.executions.values():
        # syrupy keeps every assertion for its report, which counts them by name and outcome:
        # the texts are let go, or an update would hold every snapshot it wrote, twice.
        result.asserted_data = result.recalled_data = None
    return failure
