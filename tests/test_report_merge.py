"""Merging `--evaltasks-results` files: the report of the shards is the unsharded run's, byte for
byte; the files round-trip; what makes shards not one run is said; the command's exit codes."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_evaltasks.plugin.report import (
    REPORT_CHARS,
    SUMMARY_BYTES,
    Budget,
    main,
    markdown,
    publish,
)
from pytest_evaltasks.plugin.results import (
    ResultsError,
    RunResults,
    Shard,
    document,
    merge,
    parse,
)
from pytest_evaltasks.plugin.summary import ItemResult, RunSummary, Selection
from pytest_evaltasks.snapshot.gate import Outcome

SELECTION = Selection(spec="all", tasks=64, broken=1, orphans=1, base_ref="origin/main")
DURATIONS = "sha256:" + "ab" * 32


def diff_body(doc_id: int, old: str = "Answer:", new: str = "ANSWER:") -> list[str]:
    """A failure body as `snapshot/failure.py` writes it (diff lines indented by two)."""
    return [
        "docs: 1 of 6 docs changed (ids 3)",
        "prompt diff of the docs shown in full (recorded -> current):",
        f"  [doc 1 of 6] id={doc_id}",
        "  @@ -3,3 +3,3 @@",
        f"   | D. option {doc_id}",
        f"  -| {old} B",
        f"  +| {new} B",
        "   |",
    ]


def run_results() -> list[tuple[ItemResult, str]]:
    """One run's items, each kind of row and block the report has: 57 tasks that changed the
    same way (one group, whichever shards they ran in), a different change, passing versioned
    changes to review, unchanged tasks, a written snapshot, lint findings, a broken module, an
    orphan."""
    items: list[tuple[ItemResult, str]] = []
    for number in range(57):
        label = f"mmlu:subject_{number:02d}|5"
        result = ItemResult(
            label=label,
            outcome=Outcome.UNVERSIONED,
            docs=6,
            changed_docs=1,
            version_before="0",
            version_after="0",
            headline=f"{label}: 1 of 6 docs changed (ids 3), but its version is still 0",
            details=diff_body(number),
            lint=["trailing-space: 2 docs (ids 1, 4)"] if number % 20 == 0 else [],
        )
        items.append((result, "failed"))
    items.append(
        (
            ItemResult(
                label="arc:easy|0",
                outcome=Outcome.UNVERSIONED,
                docs=6,
                changed_docs=1,
                version_before="1",
                version_after="1",
                headline="arc:easy|0: 1 of 6 docs changed, but its version is still 1",
                details=diff_body(7, "Question:", "Q:"),
            ),
            "failed",
        )
    )
    for name in ("gsm8k|5", "gsm8k|0"):
        result = ItemResult(
            label=name,
            outcome=Outcome.REVIEWED,
            docs=6,
            changed_docs=1,
            version_before="0",
            version_after="1",
            headline=f"{name}: changed since the base, versioned 0 -> 1",
            details=diff_body(2, "A:", "Answer:"),
        )
        items.append((result, "passed"))
    for name in ("boolq|0", "piqa|0", "hellaswag|10"):
        items.append((ItemResult(label=name, outcome=Outcome.UNCHANGED, docs=6), "passed"))
    items.append((ItemResult(label="new|0", outcome=Outcome.NEW, docs=6, written=True), "passed"))
    module = ItemResult(
        label="tasks/broken.py",
        kind="module",
        outcome=Outcome.ERROR,
        headline="tasks/broken.py: the task module failed to import",
        details=["Traceback (most recent call last):", "ModuleNotFoundError: No module named 'x'"],
    )
    orphan = ItemResult(
        label="tasks/__snapshots__/gone-0.txt",
        kind="orphan",
        outcome=Outcome.ORPHAN,
        headline="an orphan snapshot",
        details=["why it is an orphan: it records task 'gone', which is not registered"],
    )
    items += [(module, "failed"), (orphan, "failed")]
    return items


def unsharded(
    items: list[tuple[ItemResult, str]],
    selection: Selection = SELECTION,
    budget: Budget | None = None,
) -> str:
    """The report the run of all `items` writes (`publish` builds it so)."""
    summary = RunSummary([result for result, _ in items])
    outcomes = {result.label: outcome for result, outcome in items}
    return markdown(summary, outcomes, selection, budget or Budget(REPORT_CHARS))


def shards(
    items: list[tuple[ItemResult, str]],
    groups: list[int],
    splits: int = 3,
    selection: Selection = SELECTION,
) -> list[RunResults]:
    """The items split by `groups` (item i in group groups[i]), each group's file written and
    read back; every group has a file, empty or not."""
    runs = []
    for group in range(1, splits + 1):
        mine = [item for item, chosen in zip(items, groups, strict=True) if chosen == group]
        shard = Shard(splits, group, "duration_based_chunks", DURATIONS)
        runs.append(parse(document(selection, mine, shard), f"shard-{group}.json"))
    return runs


def merged_report(runs: list[RunResults], budget: Budget | None = None) -> str:
    merged = merge(runs)
    assert merged.problems == []
    return markdown(
        merged.summary, merged.outcomes, merged.selection, budget or Budget(REPORT_CHARS)
    )


ITEMS = run_results()


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.integers(1, 3), min_size=len(ITEMS), max_size=len(ITEMS)),
    seed=st.integers(0, 2**16),
)
def test_the_shards_report_is_the_unsharded_one_byte_for_byte(groups: list[int], seed: int) -> None:
    shuffled = list(ITEMS)
    random.Random(seed).shuffle(shuffled)  # the order the reports arrived in
    runs = shards(shuffled, groups)
    random.Random(seed + 1).shuffle(runs)  # the order the files are given in
    expected = unsharded(ITEMS)
    assert merged_report(runs) == expected
    assert "57 tasks changed the same way" in expected  # one group across the shards


def test_a_report_cut_to_its_budget_is_cut_the_same_way() -> None:
    many = [
        (replace(result, label=f"{result.label}#{copy}"), outcome)
        for copy in range(40)
        for result, outcome in ITEMS
    ]
    groups = [1 + position % 3 for position in range(len(many))]
    runs = shards(many, groups)
    budgets = (Budget(REPORT_CHARS // 4), Budget(9_000), Budget(SUMMARY_BYTES, in_bytes=True))
    for budget in budgets:
        expected = unsharded(many, budget=budget)
        assert ("Cut to fit" in expected) == (budget.limit < SUMMARY_BYTES)
        assert merged_report(runs, budget) == expected


def test_shards_without_items_give_the_nothing_checked_report() -> None:
    selection = replace(SELECTION, tasks=0, broken=0, orphans=0, changed="0 tasks changed since x")
    runs = shards([], [], selection=selection)
    expected = unsharded([], selection)
    assert expected.startswith("## pytest-evaltasks: nothing checked")
    assert merged_report(runs) == expected


def test_a_results_file_round_trips_every_field_in_the_same_bytes() -> None:
    odd = ItemResult(
        label="odd|0",
        snapshot="tasks/__snapshots__/odd-0.txt",
        outcome=Outcome.PARTIAL,
        docs=3,
        checked=2,
        recorded_docs=9,
        changed_docs=1,
        version_before=None,
        version_after="2",
        deleted=True,
        headline="odd|0: caf\u00e9",
        details=["a lone surrogate \ud800 and \u00e9"],
        lint=["empty-text: 1 doc (id 0)"],
    )
    items = [*ITEMS, (odd, "failed")]
    shard = Shard(3, 2, "least_duration", None)
    data = document(SELECTION, items, shard)
    assert document(SELECTION, list(reversed(items)), shard) == data  # items by label
    data.decode("ascii")  # a lone surrogate: all escapes, never invalid UTF-8
    back = parse(data, "f.json")
    assert back.selection == SELECTION
    assert back.shard == shard
    assert sorted(back.items, key=lambda pair: pair[0].label) == sorted(
        items, key=lambda pair: pair[0].label
    )
    plain = document(SELECTION, [(replace(odd, details=["caf\u00e9"]), "failed")], None)
    assert "caf\u00e9" in plain.decode("utf-8")  # UTF-8 text as itself
    assert parse(plain, "g.json").shard is None
    plain = document(SELECTION, ITEMS, None)
    assert json.loads(plain)["items"][0]["result"]["label"] == "arc:easy|0"


def problems_of(runs: list[RunResults]) -> list[str]:
    return merge(runs).problems


def test_shards_of_different_selections_are_said_to_disagree() -> None:
    groups = [1 + position % 3 for position in range(len(ITEMS))]
    runs = shards(ITEMS, groups)
    other = replace(SELECTION, spec="mmlu", base_ref=None)
    runs[2] = replace(runs[2], selection=other)
    problems = problems_of(runs)
    assert problems == [
        "the results disagree on the task string: 'all' in shard-1.json, shard-2.json; "
        "'mmlu' in shard-3.json",
        "the results disagree on the base (--evaltasks-base): 'origin/main' in shard-1.json, "
        "shard-2.json; none in shard-3.json",
    ]
    runs[2] = replace(runs[2], selection=replace(SELECTION, mode="update"))
    assert problems_of(runs) == [
        "the results disagree on the mode: 'compare' in shard-1.json, shard-2.json; 'update' in "
        "shard-3.json"
    ]
    runs[2] = replace(runs[2], selection=replace(SELECTION, changed="2 tasks changed since x"))
    (problem,) = problems_of(runs)
    assert problem.startswith("the results disagree on what changed (--evaltasks-changed)")


def test_a_missing_or_repeated_group_and_a_different_split_are_said() -> None:
    groups = [1 + position % 3 for position in range(len(ITEMS))]
    runs = shards(ITEMS, groups)
    (problem,) = problems_of(runs[:1] + runs[2:])
    assert problem.startswith("group 2 of 3 missing: no results file of it was given")
    (repeated, twice) = problems_of([*runs, runs[0]])
    assert twice.startswith(f"{len(runs[0].items)} items ran in more than one results file")
    assert repeated == "group 1 of 3 given more than once: shard-1.json, shard-1.json"
    other = replace(runs[1], shard=replace(runs[1].shard, durations="sha256:00"))
    (problem,) = problems_of([runs[0], other, runs[2]])
    assert problem.startswith(
        "the shards were split differently, so items may have run twice or not at all: the "
        "durations file (--durations-path): "
    )
    assert "'sha256:00' in shard-2.json" in problem
    unsplit = replace(runs[1], shard=None)
    (problem, missing) = problems_of([runs[0], unsplit, runs[2]])
    assert problem == (
        "shard-2.json is not a pytest-split shard (no --splits/--group) but the other results are"
    )
    assert missing.startswith("group 2 of 3 missing")
    four = replace(runs[2], shard=replace(runs[2].shard, splits=4))
    found = problems_of([runs[0], runs[1], four])
    assert found[0].startswith("the shards were split differently") and "--splits" in found[0]
    assert found[1].startswith("group 4 of 4 missing")  # the larger split's groups


def test_an_item_in_two_files_is_counted_once_and_named() -> None:
    groups = [1 + position % 3 for position in range(len(ITEMS))]
    runs = shards(ITEMS, groups)
    extra = runs[0].items[0]
    runs[1] = replace(runs[1], items=[*runs[1].items, extra])
    merged = merge(runs)
    (problem,) = merged.problems
    assert problem == (
        f"1 item ran in more than one results file, counted once: {extra[0].label} "
        f"(shard-1.json, shard-2.json)"
    )
    assert len(merged.summary.results) == len(ITEMS)
    assert markdown(merged.summary, merged.outcomes, merged.selection) == unsharded(ITEMS)


def write_shards(folder: Path, items: list[tuple[ItemResult, str]]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    groups = [1 + position % 3 for position in range(len(items))]
    names = []
    for run in shards(items, groups):
        mine = run.items
        path = folder / run.source
        path.write_bytes(document(run.selection, mine, run.shard))
        names.append(str(path))
    return names


def test_the_command_writes_the_file_and_appends_the_step_summary_as_a_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = write_shards(tmp_path / "results", ITEMS)
    held = "## an earlier step's summary\n"
    (tmp_path / "run-summary.md").write_text(held, encoding="utf-8")
    (tmp_path / "merge-summary.md").write_text(held, encoding="utf-8")
    summary = RunSummary([result for result, _ in ITEMS])
    outcomes = {result.label: outcome for result, outcome in ITEMS}
    run_env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "run-summary.md")}
    assert publish(tmp_path / "run.md", summary, outcomes, SELECTION, run_env) == []
    merge_env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "merge-summary.md")}
    output = tmp_path / "out" / "merged.md"
    code = main(["merge", str(tmp_path / "results"), "--output", str(output)], merge_env)
    assert code == 1  # items failed
    assert output.read_bytes() == (tmp_path / "run.md").read_bytes()
    appended = (tmp_path / "merge-summary.md").read_bytes()
    assert appended == (tmp_path / "run-summary.md").read_bytes()
    err = capsys.readouterr().err
    failed = sum(outcome == "failed" for _, outcome in ITEMS)
    assert f"3 results files, {len(ITEMS)} items, {failed} failed; report written to " in err

    passing = [(result, "passed") for result, _ in ITEMS[57:62]]
    files = write_shards(tmp_path / "green", passing)
    assert main(["merge", *files], {}) == 0
    out = capsys.readouterr().out
    assert out == unsharded(passing)  # neither --output nor a step summary: stdout


def test_shards_that_disagree_still_give_a_report_that_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passing = [(result, "passed") for result, _ in ITEMS[57:62]]
    files = write_shards(tmp_path, passing)
    Path(files[1]).unlink()
    output = tmp_path / "r.md"
    assert main(["merge", *files[::2], "-o", str(output)], {}) == 1
    text = output.read_text(encoding="utf-8")
    heading, blank, warning = text.split("\n")[:3]
    assert heading.startswith("## pytest-evaltasks: ") and blank == ""
    assert warning.startswith("> **Warning**: group 2 of 3 missing: no results file of it")
    err = capsys.readouterr().err
    assert "evaltasks merge: group 2 of 3 missing" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "not JSON"),
        (b'{"format": "something else"}', "not a results file of pytest-evaltasks"),
        (b'{"format": "pytest-evaltasks results", "version": 99}', "format version 99"),
        (None, "items[0].result.docs: 'six' is not <class 'int'>"),
        (None, "items[0].result: unknown field 'colour'"),
        (None, "selection.tasks: None is not <class 'int'>"),
        (None, "'bogus' is not a valid Outcome"),
        (None, "items[0]: not an object with a `pytest` outcome"),
    ],
)
def test_a_file_that_is_not_a_results_file_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    if content is None:
        data = json.loads(document(SELECTION, ITEMS[:1], None))
        result = data["items"][0]["result"]
        if "docs" in message:
            result["docs"] = "six"
        elif "colour" in message:
            result["colour"] = "red"
        elif "selection" in message:
            data["selection"]["tasks"] = None
        elif "Outcome" in message:
            result["outcome"] = "bogus"
        else:
            del data["items"][0]["pytest"]
        content = json.dumps(data).encode("utf-8")
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    good = write_shards(tmp_path / "good", ITEMS[:3])
    output = tmp_path / "r.md"
    with pytest.raises(ResultsError, match=r"bad\.json"):
        parse(content, str(bad))
    assert main(["merge", *good, str(bad), "--output", str(output)], {}) == 2
    assert not output.exists()
    err = capsys.readouterr().err
    assert f"evaltasks merge: error: {bad}: " in err and message in err


def test_usage_errors_exit_2_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_shards(tmp_path / "good", ITEMS[:3])
    (tmp_path / "empty").mkdir()
    assert main(["merge", str(tmp_path / "empty")], {}) == 2
    assert "a folder without a *.json results file" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "shard-*.json")], {}) == 2
    assert "no such file (an unmatched shell pattern" in capsys.readouterr().err
    assert main(["merge", *good, "--output", str(tmp_path / "good")], {}) == 2
    err = capsys.readouterr().err
    assert "--output=" in err and "that is a directory" in err
    missing = {"GITHUB_STEP_SUMMARY": str(tmp_path / "nowhere" / "summary.md")}
    assert main(["merge", *good], missing) == 2
    assert "its folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["merge"], {})
    assert exited.value.code == 2
