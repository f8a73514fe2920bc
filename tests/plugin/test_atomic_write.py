"""Killing `--snapshot-update` leaves each snapshot old or new, never partial."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import EvalProject

# The runs under test kill themselves, or are killed: never this process.
pytestmark = pytest.mark.subprocess

SPEC = "mytask:sub,mytask:other,solo"
KEYS = ("mytask:sub|0", "mytask:other|0", "solo|0")
BUMPED = (
    'name="mytask:sub", version=1',
    'name="mytask:other", version=1, stop_sequence=["\\n"], generation_size=5',
    'name="solo", version=1, hf_avail_splits=["test"]',
)

# Loaded by the run under test (conftest.py in its rootdir): when asked to, the process kills
# itself with SIGKILL right after the Nth fsync, i.e. in the middle of an atomic write, after
# the temp file holds the new data and before it replaces the snapshot.
KILLING_CONFTEST = """\
import os
import signal

_after = int(os.environ.get("KILL_AFTER_FSYNC", "0"))
if _after:
    _real_fsync = os.fsync
    _count = [0]

    def _fsync_then_die(fd):
        _real_fsync(fd)
        _count[0] += 1
        if _count[0] == _after:
            os.kill(os.getpid(), signal.SIGKILL)

    os.fsync = _fsync_then_die
"""

SLEEPING_PROMPT = """\
    if task_name == "solo" and os.environ.get("SLEEP_IN_SOLO"):
        time.sleep(60)
    query = f"{PREFIX}{row['q']}\\nA:"
    if row["__index"] in EDITED and not row["__few_shots"]:
        query += " (edited)"
    return Doc(query=query, choices=[" yes", " no"], gold_index=row["label"])"""


def _snapshot_like(project: EvalProject) -> list[str]:
    """Files a reader could take for snapshots: visible `.txt` files."""
    return sorted(
        name for name in project.snapshots() if name.endswith(".txt") and not name.startswith(".")
    )


def _expected_new(project: EvalProject) -> dict[str, bytes]:
    """The complete new snapshots, written by an uninterrupted run into another directory."""
    project.run("--evaltasks", SPEC, "--snapshot-update", "--evaltasks-snapshot-dir", "clean")
    clean = project.snapshots(project.root / "clean")
    assert len(clean) == 3
    return clean


def test_kill_inside_an_atomic_write_leaves_old_or_new_whole(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.pytester.makeconftest(KILLING_CONFTEST)
    project.run("--evaltasks", SPEC, "--snapshot-update").assert_outcomes(passed=3)
    old = project.snapshots()
    project.write_tasks(*BUMPED, edited=(1, 2))
    new = _expected_new(project)
    assert all(new[name] != old[name] for name in old)

    monkeypatch.setenv("KILL_AFTER_FSYNC", "2")
    killed = project.run("--evaltasks", SPEC, "--snapshot-update")
    assert killed.ret == -signal.SIGKILL
    monkeypatch.delenv("KILL_AFTER_FSYNC")

    names = [project.snapshot(key).name for key in KEYS]
    now = project.snapshots()
    for name in names:
        assert now[name] in (old[name], new[name]), f"{name} is neither old nor new"
    assert now[names[0]] == new[names[0]]  # written before the kill
    assert now[names[1]] == old[names[1]]  # killed while writing: the old file, whole
    assert now[names[2]] == old[names[2]]  # never reached
    assert _snapshot_like(project) == sorted(names)
    leftovers = sorted(set(now) - set(names))
    assert leftovers, "the kill did not land inside a write (no temp file left behind)"
    assert all(name.startswith(".") and not name.endswith(".txt") for name in leftovers)

    # The next update completes the job; leftovers are not taken for snapshots of a task.
    again = project.run("--evaltasks", "all", "--snapshot-update")
    again.assert_outcomes(passed=3)
    again.stdout.no_fnmatch_line("*belong to no registered task*")
    assert {name: project.snapshot_dir.joinpath(name).read_bytes() for name in names} == new


def test_external_sigkill_between_tasks_keeps_every_file_whole(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write_tasks(header="import os\nimport time\n", prompt_body=SLEEPING_PROMPT)
    project.run("--evaltasks", SPEC, "--snapshot-update").assert_outcomes(passed=3)
    old = project.snapshots()
    project.write_tasks(
        *BUMPED, edited=(0, 5), header="import os\nimport time\n", prompt_body=SLEEPING_PROMPT
    )
    new = _expected_new(project)
    names = [project.snapshot(key).name for key in KEYS]

    monkeypatch.setenv("SLEEP_IN_SOLO", "1")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:anyio",
        "-p",
        "no:cacheprovider",
        "--evaltasks",
        SPEC,
        "--snapshot-update",
    ]
    process = subprocess.Popen(
        command, cwd=project.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        # Polls the one file the run replaces atomically: listing the folder while the run
        # writes would meet its temporary files, which vanish between listing and reading.
        while (
            time.monotonic() < deadline and _read(project.snapshot_dir / names[1]) != new[names[1]]
        ):
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    now = project.snapshots()
    assert now[names[0]] == new[names[0]]
    assert now[names[1]] == new[names[1]]
    assert now[names[2]] == old[names[2]]
    assert sorted(now) == sorted(names), "stray files left in the snapshot directory"


def _read(path: Path) -> bytes | None:
    """A file's bytes, or None while it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
