"""A written file is read back to check that it landed: chunk by chunk, and exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_evaltasks import files


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_holds_is_true_only_for_the_same_bytes(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "READ_BACK_CHUNK", chunk)
    path = tmp_path / "f"
    data = b"abcdefghij" * 3
    path.write_bytes(data)
    assert files.holds(path, data)
    assert not files.holds(path, data[:-1])  # the file is longer
    assert not files.holds(path, data + b"k")  # the file is shorter
    assert not files.holds(path, data[:14] + b"X" + data[15:])  # one byte differs
    path.write_bytes(b"")
    assert files.holds(path, b"") and not files.holds(path, b"a")


def test_write_atomic_writes_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "f.txt"
    files.write_atomic(path, b"one\n")
    files.write_atomic(path, b"two\n")
    assert path.read_bytes() == b"two\n"
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]  # no temp file left
