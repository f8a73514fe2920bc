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


def test_all_fails_on_orphan_snapshots_and_update_deletes_them(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)
    recorded = project.snapshots()
    solo = project.snapshot("solo|0")
    project.write_tasks(
        'name="mytask:sub", version=0',
        'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
    )

    compare = project.run("--evaltasks", "all")
    compare.assert_outcomes(passed=2, failed=1)
    assert compare.ret == 1
    compare.stdout.fnmatch_lines(
        [f"FAILED evaltasks::tasks/__snapshots__/{solo.name} - orphan snapshot*"]
    )
    assert "records task 'solo', which is not registered" in project.failures(compare)
    assert solo.read_bytes() == recorded[solo.name]

    subset = project.run("--evaltasks", "mytask")
    subset.assert_outcomes(passed=2)
    subset.stdout.no_fnmatch_line("*orphan snapshot*")

    update = project.run("--evaltasks", "all", "--snapshot-update")
    update.assert_outcomes(passed=3)
    update.stdout.fnmatch_lines(["snapshots: 0 written, 1 deleted"])
    assert not solo.exists()
    project.run("--evaltasks", "all").assert_outcomes(passed=2)


def test_all_checks_every_recorded_shot_count_and_zero_for_the_rest(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub|2", "--snapshot-update").assert_outcomes(passed=1)
    result = project.run("--evaltasks", "all", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["evaltasks::mytask:other|0", "evaltasks::mytask:sub|2", "evaltasks::solo|0"]
    )
    result.stdout.no_fnmatch_line("evaltasks::mytask:sub|0")
    # the recorded shot count passes; the two unrecorded tasks are new
    run = project.run("--evaltasks", "all")
    run.assert_outcomes(passed=1, failed=2)
    run.stdout.fnmatch_lines(
        ["FAILED evaltasks::mytask:other|0 - *", "FAILED evaltasks::solo|0 - *"]
    )
    assert project.failures(run).count("new task, no snapshot recorded yet") == 2


def test_all_fails_for_a_broken_module_and_keeps_its_snapshots(project: EvalProject) -> None:
    project.write_tasks('name="extra", version=0', module="extra")
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=4)
    extra = project.snapshot("extra|0")
    (project.root / "tasks" / "extra.py").write_text(
        'raise RuntimeError("half-written task file")\n', encoding="utf-8"
    )
    compare = project.run("--evaltasks", "all")
    compare.assert_outcomes(passed=3, failed=1)
    compare.stdout.fnmatch_lines(["FAILED evaltasks::tasks/extra.py - task module tasks/extra.py*"])
    failure = project.failures(compare)
    assert "half-written task file" in failure
    assert f"may be its tasks'; they are not checked until it imports: {extra.name}" in failure
    assert "orphan snapshot" not in compare.stdout.str()  # never offered for deletion
    update = project.run("--evaltasks", "all", "--snapshot-update")
    update.assert_outcomes(passed=3, failed=1)
    assert extra.exists()
