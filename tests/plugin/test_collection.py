"""Collection: one item per expanded task, standard pytest selection, explicit test paths."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

TEST_FILE = "def test_x():\n    pass\n"


def _ids(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("evaltasks::")]


def test_collect_only_lists_one_item_per_expanded_task_in_request_order(
    project: EvalProject,
) -> None:
    first = project.run("--evaltasks", "solo, mytask|1", "--collect-only", "-q")
    assert first.ret == pytest.ExitCode.OK
    # The superset expands to its members in sorted order, after `solo` as requested.
    assert _ids(first) == [
        "evaltasks::solo|0",
        "evaltasks::mytask:other|1",
        "evaltasks::mytask:sub|1",
    ]

    second = project.run("--evaltasks", "mytask|1,solo,mytask:sub|1", "--collect-only", "-q")
    # Duplicates are dropped keeping the first occurrence; order follows the task string.
    assert _ids(second) == [
        "evaltasks::mytask:other|1",
        "evaltasks::mytask:sub|1",
        "evaltasks::solo|0",
    ]


def test_collect_only_counts_the_task_items(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask|1,solo", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["3 tests collected*"])
    result.stdout.no_fnmatch_line("*no tests collected*")


def test_k_selects_among_task_items(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask,solo", "-k", "other", "--snapshot-update")
    result.assert_outcomes(passed=1, deselected=2)
    # Only the selected item ran: only its snapshot was written.
    assert list(project.snapshots()) == [project.snapshot("mytask:other|0").name]


def test_m_evaltask_marks_every_task_item(project: EvalProject) -> None:
    selected = project.run("--evaltasks", "mytask,solo", "-m", "evaltask", "--snapshot-update")
    selected.assert_outcomes(passed=3)
    excluded = project.run("--evaltasks", "mytask,solo", "-m", "not evaltask")
    excluded.assert_outcomes(deselected=3)


def test_last_failed_reruns_only_the_failing_task(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    # `mytask:other` has no snapshot yet, so in compare mode it fails.
    first = project.run("--evaltasks", "mytask")
    first.assert_outcomes(passed=1, failed=1)
    first.stdout.fnmatch_lines(["FAILED evaltasks::mytask:other|0*"])

    rerun = project.run("--evaltasks", "mytask", "--lf", "-rA")
    rerun.assert_outcomes(failed=1, deselected=1)
    rerun.stdout.fnmatch_lines(["FAILED evaltasks::mytask:other|0*"])
    rerun.stdout.no_fnmatch_line("*mytask:sub*PASSED*")
    rerun.stdout.no_fnmatch_line("PASSED evaltasks::mytask:sub*")


def test_evaltasks_runs_only_task_items_without_test_paths(project: EvalProject) -> None:
    project.pytester.makepyfile(**{"tests/test_x": TEST_FILE})
    result = project.run("--evaltasks", "solo", "--snapshot-update", "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*test_x*")
    # Without --evaltasks, the ordinary test is collected as usual.
    plain = project.run("-q", "tests")
    plain.assert_outcomes(passed=1)


def test_evaltasks_also_runs_test_paths_named_explicitly(project: EvalProject) -> None:
    project.pytester.makepyfile(**{"tests/test_x": TEST_FILE})
    result = project.run("--evaltasks", "solo", "--snapshot-update", "tests/test_x.py", "-rA")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["PASSED*test_x.py::test_x*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


def test_items_report_the_task_source_file_and_line(project: EvalProject) -> None:
    module = project.root / "tasks" / "demo.py"
    lines = module.read_text(encoding="utf-8").splitlines()
    expected = {
        f"mytask:{member}|0": 1
        + next(i for i, line in enumerate(lines) if f'"mytask:{member}"' in line)
        for member in ("sub", "other")
    }
    result = project.run(
        "--evaltasks", "mytask", "--junitxml=report.xml", "-o", "junit_family=xunit1"
    )
    # No snapshots yet: both fail, and both still point at their config's line.
    result.assert_outcomes(failed=2)
    cases = ET.parse(project.root / "report.xml").getroot().iter("testcase")
    found = {case.get("name"): (case.get("file"), int(case.get("line") or -1)) for case in cases}
    assert found == {name: ("tasks/demo.py", line - 1) for name, line in expected.items()}
    assert expected["mytask:sub|0"] != expected["mytask:other|0"]


def test_task_run_never_ends_with_no_tests_ran(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\ntestpaths = tests\n")
    (project.root / "tests").mkdir()
    result = project.run("--evaltasks", "solo", "--snapshot-update")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*no tests ran*")
