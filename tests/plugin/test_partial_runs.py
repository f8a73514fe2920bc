"""Runs over a subset of tasks leave other snapshots alone; `all` reports orphaned files."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from conftest import EvalProject

LEGACY = "legacy-task-0--deadbeef.txt"
"""A snapshot-looking file that belongs to no task of this project."""


def _assert_untouched(result: pytest.RunResult) -> None:
    result.stdout.no_fnmatch_line("*unused*")
    result.stdout.no_fnmatch_line("*deleted*")
    result.stdout.no_fnmatch_line("*belong to no registered task*")


def test_subset_run_never_flags_or_deletes_other_snapshots(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)
    (project.snapshot_dir / LEGACY).write_text("# not ours\n", encoding="utf-8")
    recorded = project.snapshots()
    sub = project.snapshot("mytask:sub|0").name
    others = {name: data for name, data in recorded.items() if name != sub}
    assert len(others) == 3

    compare = project.run("--evaltasks", "mytask:sub")
    compare.assert_outcomes(passed=1)
    _assert_untouched(compare)
    assert project.snapshots() == recorded

    # Every prompt changes, but only `mytask:sub` is bumped and requested.
    project.write_tasks(
        'name="mytask:sub", version=1',
        'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
        'name="solo", version=0, hf_avail_splits=["test"]',
        edited=(0, 3),
    )
    update = project.run("--evaltasks", "mytask:sub", "--snapshot-update")
    update.assert_outcomes(passed=1)
    _assert_untouched(update)
    after = project.snapshots()
    assert after[sub] != recorded[sub]
    assert {name: data for name, data in after.items() if name != sub} == others

    # Deselected with -k: collected, not run, so not touched either.
    deselected = project.run("--evaltasks", "mytask,solo", "-k", "sub", "--snapshot-update")
    deselected.assert_outcomes(passed=1, deselected=2)
    _assert_untouched(deselected)
    assert project.snapshots() == after


def test_all_reports_snapshot_files_of_removed_tasks_without_deleting_them(
    project: EvalProject,
) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)
    recorded = project.snapshots()
    solo = project.snapshot("solo|0")
    project.write_tasks(
        'name="mytask:sub", version=0',
        'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
    )

    compare = project.run("--evaltasks", "all")
    compare.assert_outcomes(passed=2)
    compare.stdout.fnmatch_lines(
        [
            "1 snapshot files belong to no registered task:",
            f"*{solo.name} (task 'solo')",
        ]
    )
    assert solo.read_bytes() == recorded[solo.name]

    update = project.run("--evaltasks", "all", "--snapshot-update")
    update.assert_outcomes(passed=2)
    update.stdout.fnmatch_lines([f"*{solo.name} (task 'solo')"])
    update.stdout.no_fnmatch_line("*deleted*")
    assert project.snapshots() == recorded

    subset = project.run("--evaltasks", "mytask")
    subset.assert_outcomes(passed=2)
    subset.stdout.no_fnmatch_line("*belong to no registered task*")
