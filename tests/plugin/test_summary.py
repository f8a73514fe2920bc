"""The plugin's terminal summary: tasks, docs, snapshot outcomes, version bumps needed."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from pytest_evaltasks.plugin.summary import Collected, ItemResult, RunSummary
from pytest_evaltasks.snapshot.gate import Outcome

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


KEPT_PROBE = """\
import json

import pytest

from pytest_evaltasks.plugin.items import RUN_KEY


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    session = config.stash.get(RUN_KEY, None)
    if session is not None:
        collected = session.collected
        with open("kept.json", "w") as out:
            json.dump([collected.tally.items, len(collected.kept), len(collected.finished)], out)
"""


@pytest.mark.parametrize(
    ("options", "kept"),
    [
        ((), 0),
        (("--evaltasks-report=report.md",), 2),
        (("--evaltasks-results=results.json",), 2),
        (("--snapshot-details",), 2),
    ],
)
def test_a_run_keeps_every_result_only_when_it_reports_every_item(
    project: EvalProject, options: tuple[str, ...], kept: int
) -> None:
    """A corpus-sized run holds its summary's counts, not a result per item, unless a report,
    a results file or `--snapshot-details` lists every item; the counts are the same."""
    project.run("--evaltasks", "mytask", "--snapshot-update").assert_outcomes(passed=2)
    (project.root / "conftest.py").write_text(KEPT_PROBE, encoding="utf-8")
    project.write_tasks(edited=(1,))
    result = project.run("--evaltasks", "mytask", *options)
    result.assert_outcomes(failed=2)
    # every result an item finished was taken by its report, none is left over
    assert json.loads((project.root / "kept.json").read_text(encoding="utf-8")) == [2, kept, 0]
    assert _summary(result)[:5] == [
        "2 tasks checked, 12 docs rendered",
        "outcomes: 2 changed without a version bump",
        "2 tasks need a version bump:",
        "  mytask:other|0",
        "  mytask:sub|0",
    ]


def _result(label: str, **fields: object) -> ItemResult:
    return ItemResult(label=label, **fields)  # type: ignore[arg-type]


def test_a_tally_counts_as_the_results_it_was_given_one_at_a_time() -> None:
    """Whatever order the reports arrive in, the summary lines are those of the whole list."""
    results = [
        _result("a|0", outcome=Outcome.UNCHANGED, docs=4, snapshot="a_0.txt"),
        _result("b|0", outcome=Outcome.UNVERSIONED, docs=2, changed_docs=1),
        _result("c|0", outcome=Outcome.UNVERSIONED, docs=2, written=True),
        _result("d|0", outcome=Outcome.NEW, docs=3, written=True),
        _result("e|0", outcome=Outcome.UNCHANGED, docs=5, checked=2, recorded_docs=7),
        _result("tasks/x.py", kind="module"),
        _result("old_0.txt", kind="orphan", outcome=Outcome.ORPHAN, deleted=True),
    ]
    expected = [
        ("5 tasks checked, 16 docs rendered", None),
        ("partial run: 2 of 7 recorded docs checked against their hashes in 1 task "
         "(--evaltasks-max-samples)", None),
        ("outcomes: 2 unchanged, 2 changed without a version bump, 1 new, 1 orphan, 1 error",
         None),
        ("snapshots: 2 written, 1 deleted", None),
        ("1 task needs a version bump:", "red"),
        ("  b|0", None),
    ]  # fmt: skip
    for order in (results, results[::-1], results[3:] + results[:3]):
        collected = Collected(keep=False)
        for result in order:
            collected.add(result, "passed")
        assert collected.kept == []
        assert collected.tally.items == len(results)
        assert collected.tally.lines() == expected
        assert RunSummary(order).lines() == expected
