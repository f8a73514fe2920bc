"""syrupy's own options on task items: `--snapshot-warn-unused` turns an orphan snapshot into a
warning (as syrupy does for unused snapshots), and `--snapshot-details` lists every item's
snapshot file and outcome in the evaltasks summary."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

WITHOUT_SOLO = (
    'name="mytask:sub", version=0',
    'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
)


def _with_an_orphan(project: EvalProject) -> str:
    """Record the three tasks, then drop `solo`: its snapshot is an orphan. Its name."""
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    project.write_tasks(*WITHOUT_SOLO)
    return project.snapshot("solo|0").name


def _details(result: pytest.RunResult) -> list[str]:
    """The `--snapshot-details` block of the evaltasks summary."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("snapshot details ("))
    end = next(
        (i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines)
    )
    return lines[start:end]


def test_warn_unused_makes_an_orphan_a_warning_instead_of_a_failure(
    project: EvalProject,
) -> None:
    orphan = _with_an_orphan(project)
    failing = project.run("--evaltasks", "all")
    failing.assert_outcomes(passed=2, failed=1)
    warned = project.run("--evaltasks", "all", "--snapshot-warn-unused", "-p", "no:xdist")
    warned.assert_outcomes(passed=3, warnings=1)
    assert warned.ret == pytest.ExitCode.OK
    warned.stdout.fnmatch_lines(
        [
            f"*EvalTasksWarning: orphan snapshot tasks/__snapshots__/{orphan}: it records task "
            f"'solo', which is not registered; restore its task (a renamed task, a module that "
            f"no longer defines it or whose table is misspelt, a config removed by mistake); if "
            f"the task is gone for good, delete the snapshot with --snapshot-update "
            f"(--snapshot-warn-unused: a warning, not a failure)",
        ]
    )
    warned.stdout.fnmatch_lines(["outcomes: 2 unchanged, 1 orphan"])
    assert (project.snapshot_dir / orphan).is_file()  # a warning never deletes
    parallel = project.run("--evaltasks", "all", "--snapshot-warn-unused", "-n", "2")
    parallel.assert_outcomes(passed=3)
    assert parallel.ret == pytest.ExitCode.OK


def test_warn_unused_with_update_deletes_orphans_as_syrupy_does(project: EvalProject) -> None:
    orphan = _with_an_orphan(project)
    result = project.run("--evaltasks", "all", "--snapshot-update", "--snapshot-warn-unused")
    result.assert_outcomes(passed=3)
    assert not (project.snapshot_dir / orphan).exists()


def test_warn_unused_under_W_error_fails_the_orphan(project: EvalProject) -> None:
    _with_an_orphan(project)
    result = project.run("--evaltasks", "all", "--snapshot-warn-unused", "-W", "error")
    result.assert_outcomes(passed=2, failed=1)


def test_snapshot_details_lists_every_items_file_and_outcome(project: EvalProject) -> None:
    written = project.run("--evaltasks", "all", "--snapshot-update", "--snapshot-details")
    written.assert_outcomes(passed=3)
    sub, other, solo = (
        project.snapshot(f"{name}|0").name for name in ("mytask:sub", "mytask:other", "solo")
    )
    assert _details(written) == [
        "snapshot details (3 items):",
        f"  mytask:other|0: new, written (tasks/__snapshots__/{other})",
        f"  mytask:sub|0: new, written (tasks/__snapshots__/{sub})",
        f"  solo|0: new, written (tasks/__snapshots__/{solo})",
    ]
    project.write_tasks(*WITHOUT_SOLO[:1], 'name="mytask:other", version=0')  # an orphan too
    args = ("--evaltasks", "all", "--snapshot-details")
    compare = project.run(*args)
    compare.assert_outcomes(passed=1, failed=2)
    expected = [
        "snapshot details (3 items):",
        f"  mytask:other|0: changed without a version bump (tasks/__snapshots__/{other})",
        f"  mytask:sub|0: unchanged (tasks/__snapshots__/{sub})",
        f"  tasks/__snapshots__/{solo}: orphan",
    ]
    assert _details(compare) == expected
    assert _details(project.run(*args, "-n", "2")) == expected
    plain = project.run("--evaltasks", "all")
    assert not [line for line in plain.outlines if line.startswith("snapshot details")]
    project.write_tasks(*WITHOUT_SOLO[:1], 'name="mytask:other", version=1')
    deleted = project.run(*args, "--snapshot-update")
    assert [re.sub(r"--\w+\.txt", "", line) for line in _details(deleted)] == [
        "snapshot details (3 items):",
        "  mytask:other|0: changed and versioned, written (tasks/__snapshots__/mytask-other-0)",
        "  mytask:sub|0: unchanged (tasks/__snapshots__/mytask-sub-0)",
        "  tasks/__snapshots__/solo-0: orphan, deleted",
    ]


def test_no_cleanup_keeps_an_orphan_under_update_and_says_so(project: EvalProject) -> None:
    orphan = _with_an_orphan(project)
    kept = project.run("--evaltasks", "all", "--snapshot-update", "--snapshot-no-cleanup")
    assert kept.ret == pytest.ExitCode.OK
    kept.stdout.fnmatch_lines(["*orphan snapshot*solo*kept (--snapshot-no-cleanup)*"])
    assert "deleted" not in kept.stdout.str()
    assert (project.snapshot_dir / orphan).is_file()
    project.run("--evaltasks", "all", "--snapshot-update").stdout.fnmatch_lines(
        ["snapshots: 0 written, 1 deleted"]
    )
    assert not (project.snapshot_dir / orphan).exists()


def test_disable_unused_looks_for_no_orphan(project: EvalProject) -> None:
    orphan = _with_an_orphan(project)
    quiet = project.run("--evaltasks", "all", "--snapshot-disable-unused")
    quiet.assert_outcomes(passed=2)
    updated = project.run("--evaltasks", "all", "--snapshot-update", "--snapshot-disable-unused")
    updated.assert_outcomes(passed=2)
    assert (project.snapshot_dir / orphan).is_file()


def test_update_new_only_records_new_tasks_and_checks_the_others(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    recorded = project.snapshot("mytask:sub|0").read_bytes()
    project.write_tasks(edited=(1,))  # mytask:sub's prompts change, without a version bump
    result = project.run("--evaltasks", "all", "--snapshot-update-new-only")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*(update new only mode)*", "*mytask:sub|0*version is still 0*"])
    assert project.snapshot("mytask:sub|0").read_bytes() == recorded
    assert project.snapshot("solo|0").is_file() and project.snapshot("mytask:other|0").is_file()


def test_snapshot_dirname_names_the_snapshot_folder(project: EvalProject) -> None:
    project.run("--evaltasks", "all", "--snapshot-update", "--snapshot-dirname=snaps")
    snaps = project.root / "tasks" / "snaps"
    assert {path.name for path in snaps.iterdir()} == {
        project.snapshot(label).name for label in ("mytask:sub|0", "mytask:other|0", "solo|0")
    }
    assert not project.snapshot_dir.exists()
    project.run("--evaltasks", "all", "--snapshot-dirname=snaps").assert_outcomes(passed=3)
