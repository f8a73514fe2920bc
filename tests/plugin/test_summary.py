"""The plugin's terminal summary: tasks, docs, snapshot outcomes, version bumps needed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

MYTASK_BUMPED_SUB = (
    'name="mytask:sub", version=1',
    'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
)


def _summary(result: pytest.RunResult) -> list[str]:
    """The lines of the `evaltasks` section."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ evaltasks =+", line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i][:1] in ("=", "-"))
    return [line for line in lines[start + 1 : end] if line]


def test_summary_counts_tasks_docs_snapshots_and_needed_bumps(project: EvalProject) -> None:
    project.write_tasks('name="mytask:sub", version=0', MYTASK_BUMPED_SUB[1])
    project.write_tasks('name="solo", version=0, hf_avail_splits=["test"]', module="solo")
    first = project.run("--evaltasks", "mytask,solo", "--snapshot-update")
    first.assert_outcomes(passed=3)
    assert _summary(first) == [
        "3 tasks checked, 18 docs rendered",
        "outcomes: 3 new",
        "snapshots: 3 written",
    ]

    # mytask:sub: versioned edit; mytask:other: unversioned edit; solo: untouched;
    # mytask:sub|1: never recorded.
    project.write_tasks(*MYTASK_BUMPED_SUB, edited=(2,))
    spec = "mytask,solo,mytask:sub|1"
    compare = project.run("--evaltasks", spec)
    compare.assert_outcomes(passed=1, failed=3)
    assert _summary(compare) == [
        "4 tasks checked, 24 docs rendered",
        "outcomes: 1 unchanged, 1 changed and versioned, 1 changed without a version bump, 1 new",
        "1 task needs a version bump:",
        "  mytask:other|0",
    ]

    update = project.run("--evaltasks", spec, "--snapshot-update")
    update.assert_outcomes(passed=3, failed=1)
    assert _summary(update) == [
        "4 tasks checked, 24 docs rendered",
        "outcomes: 1 unchanged, 1 changed and versioned, 1 changed without a version bump, 1 new",
        "snapshots: 2 written",
        "1 task needs a version bump:",
        "  mytask:other|0",
    ]


def test_a_failing_snapshot_is_never_counted_as_unchanged(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot("mytask:sub|0")
    path.write_text(
        path.read_text(encoding="utf-8").replace("| A:", "| A: (hand edit)", 1), encoding="utf-8"
    )
    result = project.run("--evaltasks", "mytask:sub")
    result.assert_outcomes(failed=1)
    assert _summary(result) == [
        "1 task checked, 6 docs rendered",
        "outcomes: 1 snapshot text edited",
    ]


def test_an_item_that_errors_counts_as_an_error(project: EvalProject) -> None:
    project.write_tasks(prompt_body="    raise RuntimeError('broken prompt')")
    result = project.run("--evaltasks", "mytask:sub")
    result.assert_outcomes(failed=1)
    assert _summary(result) == ["1 task checked, 0 docs rendered", "outcomes: 1 error"]
