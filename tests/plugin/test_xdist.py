"""pytest-xdist: `-n 2` gives the serial run's outcomes and writes the same snapshot bytes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from conftest import EvalProject

SPEC = "mytask|1,solo,mytask:sub,mytask:other@k=2|0"


def _outcomes(result: pytest.RunResult) -> list[str]:
    """`PASSED id` / `FAILED id - message` lines of the short summary, sorted, with the two
    runs' snapshot folders made equal (CI terminals do not truncate these lines)."""
    return sorted(
        re.sub(r"/(serial|xdist)/", "/<snapshots>/", line)
        for line in result.outlines
        if re.match(r"(PASSED|FAILED) evaltasks::", line)
    )


def _summary(result: pytest.RunResult) -> list[str]:
    """The plugin's own terminal summary section."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ evaltasks =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i][:1] in ("=", "-"))
    return [line for line in lines[start + 1 : end] if line.strip()]


def test_xdist_writes_the_serial_snapshots_and_gives_the_same_outcomes(
    project: EvalProject,
) -> None:
    serial_dir, xdist_dir = project.root / "serial", project.root / "xdist"
    serial = project.run(
        "--evaltasks", SPEC, "--snapshot-update", "--evaltasks-snapshot-dir", "serial"
    )
    serial.assert_outcomes(passed=5)
    parallel = project.run(
        "--evaltasks", SPEC, "--snapshot-update", "--evaltasks-snapshot-dir", "xdist", "-n", "2"
    )
    parallel.assert_outcomes(passed=5)
    parallel.stdout.fnmatch_lines(["*2 workers*"])
    written = project.snapshots(serial_dir)
    assert len(written) == 5
    assert project.snapshots(xdist_dir) == written
    assert _summary(parallel) == _summary(serial)
    assert "5 tasks checked, 30 docs rendered" in _summary(parallel)

    # Mixed outcomes: a refused unversioned change, a version-only bump, a missing snapshot.
    project.write_tasks(
        'name="mytask:sub", version=0',
        'name="mytask:other", version=0, stop_sequence=["\\n", "##"], generation_size=5',
        'name="solo", version=1, hf_avail_splits=["test"]',
    )
    for folder in (serial_dir, xdist_dir):
        (folder / project.snapshot("mytask:sub|0").name).unlink()
    args = ("--evaltasks", SPEC, "-rA")
    serial = project.run(*args, "--evaltasks-snapshot-dir", "serial")
    parallel = project.run(*args, "--evaltasks-snapshot-dir", "xdist", "-n", "2")
    serial.assert_outcomes(passed=1, failed=4)
    parallel.assert_outcomes(passed=1, failed=4)
    assert _outcomes(parallel) == _outcomes(serial)
    assert len(_outcomes(serial)) == 5
    assert _summary(parallel) == _summary(serial)
    assert "2 tasks need a version bump:" in _summary(serial)


NO_HEADER_READS = """\
import pytest

from pytest_evaltasks.snapshot import storage


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if hasattr(config, "workerinput"):  # this run's own workers (not an outer xdist's)
        def label_of_file(path):
            raise AssertionError(f"a worker read the header of {path}")

        storage.label_of_file = label_of_file
"""


def test_xdist_workers_plan_all_from_the_controllers_reading_of_the_snapshot_folder(
    project: EvalProject,
) -> None:
    """Under `all`, the controller reads each snapshot's label once and hands the labels to
    its workers: they plan (recorded shot counts, orphans) and collect the serial run's items
    without reading every file's header again."""
    assert project.run("--evaltasks", "mytask|1,solo", "--snapshot-update").ret == 0
    orphan = project.snapshot("mytask:gone|0")
    orphan.write_bytes(project.snapshot("solo|0").read_bytes().replace(b"solo", b"mytask:gone"))
    (project.root / "conftest.py").write_text(NO_HEADER_READS, encoding="utf-8")
    serial = project.run("--evaltasks", "all", "-rA", subprocess=True)
    parallel = project.run("--evaltasks", "all", "-rA", "-n", "2", subprocess=True)
    assert "a worker read the header" not in parallel.stdout.str()
    assert _outcomes(parallel) == _outcomes(serial)
    assert "PASSED evaltasks::mytask:sub|1" in _outcomes(parallel)  # its recorded shots
    assert any("mytask-gone-0" in line and "orphan" in line for line in _outcomes(parallel))
