"""The Markdown report's pure parts: grouping, escaping, size budgets, diff fences, details."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_evaltasks.plugin.destinations import report_problems as destination_problems
from pytest_evaltasks.plugin.report import (
    REPORT_CHARS,
    SUMMARY_BYTES,
    Budget,
    markdown,
    publish,
)
from pytest_evaltasks.plugin.summary import ItemResult, RunSummary, Selection
from pytest_evaltasks.snapshot.gate import Outcome

SUMMARY_BUDGET = Budget(SUMMARY_BYTES, in_bytes=True)
SUBJECTS = [f"subject_{i:02d}" for i in range(57)]


def failure_body(doc_ids: list[int], letters: str, old: str = "Answer:", new: str = "ANSWER:"):
    """A failure body as `snapshot/failure.py` writes it: diff lines indented by two spaces."""
    body = [
        f"docs: {len(doc_ids)} of {len(doc_ids)} docs changed (ids {', '.join(map(str, doc_ids))})",
        "prompt diff of the docs shown in full (recorded -> current):",
    ]
    for position, doc_id in enumerate(doc_ids[:3]):
        body.append(f"  [doc {position + 1} of {len(doc_ids)}] id={doc_id}")
        for line_no, letter in enumerate(letters):
            body += [
                f"  @@ -{17 + 7 * line_no},3 +{17 + 7 * line_no},3 @@",
                f"   | D. option {doc_id}-{line_no}",
                f"  -| {old} {letter}",
                f"  +| {new} {letter}",
                "   |",
            ]
    body.append(f"doc hashes: {len(doc_ids)} lines differ; not listed here")
    return body


def mmlu_like(subject: str, seed: int, old: str = "Answer:", new: str = "ANSWER:") -> ItemResult:
    label = f"mmlu:{subject}|5"
    ids = [seed % 7, seed % 5 + 10, 20 + seed]
    return ItemResult(
        label=label,
        outcome=Outcome.UNVERSIONED,
        docs=135,
        changed_docs=3,
        version_before="0",
        version_after="0",
        headline=f"{label}: 3 of 135 docs changed (ids ...), but its version is still 0",
        details=failure_body(ids, "ABCD"[seed % 4] + "DCBA"[seed % 3] + "B", old, new),
    )


REPORT_BUDGET = Budget(REPORT_CHARS)


def report(results: list[ItemResult], budget: Budget = REPORT_BUDGET, **facts) -> str:
    outcomes = {r.label: "passed" if r.outcome is Outcome.UNCHANGED else "failed" for r in results}
    return markdown(RunSummary(results), outcomes, Selection(**facts), budget)


def fences(text: str) -> list[tuple[str, list[str]]]:
    """Every fenced code block: its info string and its lines."""
    found = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        match = re.match(r"^(`{3,})(\w*)$", lines[index])
        if match:
            fence, info = match.groups()
            end = next(i for i in range(index + 1, len(lines)) if lines[i] == fence)
            found.append((info, lines[index + 1 : end]))
            index = end
        index += 1
    return found


def without_code(text: str) -> str:
    """The text outside fenced blocks and inline code spans (GFM's backtick-run rule)."""
    outside = []
    in_fence: str | None = None
    for line in text.split("\n"):
        fence = re.match(r"^(`{3,})", line)
        if in_fence is not None:
            if line == in_fence:
                in_fence = None
            continue
        if fence:
            in_fence = fence.group(1)
            continue
        outside.append(line)
    flat = "\n".join(outside)
    result, index = [], 0
    while index < len(flat):
        run = re.match(r"`+", flat[index:])
        if run is None:
            result.append(flat[index])
            index += 1
            continue
        ticks = run.group(0)
        close = re.search(rf"(?<!`){ticks}(?!`)", flat[index + len(ticks) :])
        if close is None:
            result.append(ticks)
            index += len(ticks)
            continue
        index += len(ticks) + close.end()
        result.append("CODE")
    return "".join(result)


def cells(row: str) -> list[str]:
    """A table row's cells, split as GFM splits them: on pipes not escaped by a backslash."""
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


# --- grouping --------------------------------------------------------------------------------


def test_57_identical_changes_give_one_group_with_one_diff() -> None:
    results = [mmlu_like(subject, seed) for seed, subject in enumerate(SUBJECTS)]
    text = report(results)
    assert "57 tasks changed the same way (<code>Answer:</code> → <code>ANSWER:</code>)" in text
    diffs = [lines for info, lines in fences(text) if info == "diff"]
    assert len(diffs) == 1
    assert text.count("<details>") == 1
    group = text[text.index("<details>") :]
    assert all(f"`mmlu:{subject}|5`" in group for subject in SUBJECTS)
    assert len(text) < 20_000


def test_a_different_change_is_not_grouped_with_them() -> None:
    results = [mmlu_like(subject, seed) for seed, subject in enumerate(SUBJECTS[:5])]
    results.append(mmlu_like("other", 3, old="Answer:", new="Reply:"))
    text = report(results)
    assert len([info for info, _ in fences(text) if info == "diff"]) == 2
    assert "5 tasks changed the same way (<code>Answer:</code> → <code>ANSWER:</code>)" in text
    assert "<summary><code>mmlu:other|5</code>: 3 of 135 docs changed" in text


def test_passing_versioned_changes_are_grouped_after_the_failures() -> None:
    reviewed = []
    for seed, subject in enumerate(SUBJECTS):
        result = mmlu_like(subject, seed)
        result.outcome, result.version_after = Outcome.REVIEWED, "1"
        result.headline = f"{result.label}: 3 of 135 docs changed since origin/main; version 0 -> 1"
        reviewed.append(result)
    unchanged = ItemResult(label="gsm8k|5", outcome=Outcome.UNCHANGED, docs=4)
    failing = mmlu_like("other", 3, old="Answer:", new="Reply:")
    results = [unchanged, *reviewed, failing]
    outcomes = {r.label: "failed" if r is failing else "passed" for r in results}
    text = markdown(RunSummary(results), outcomes, Selection())
    assert text.index("### Failures") < text.index("### Versioned changes (passing)")
    passing = text[text.index("### Versioned changes (passing)") :]
    assert passing.count("<details>") == 1 and passing.count("```diff") == 1
    heading = (
        "57 tasks changed the same way (<code>Answer:</code> → <code>ANSWER:</code>): "
        "changed since the base, versioned</summary>"
    )
    assert heading in passing
    rows = [line for line in text.split("\n") if line.startswith("| `")]
    assert rows[0].startswith("| `mmlu:other\\|5` | failed |")
    # the 57 identical rows fold into one that stands for the group
    assert len(rows) == 3, rows
    assert rows[1].startswith("| `mmlu:subject_00\\|5` and 56 more: 57 tasks changed the same way")
    assert "| passed | changed since the base, versioned | 171 | 0 → 1 |" in rows[1]
    assert rows[-1].startswith("| `gsm8k\\|5` | passed | unchanged |")


# --- diffs and details -----------------------------------------------------------------------


def test_diff_lines_are_at_column_zero_in_diff_fences() -> None:
    text = report([mmlu_like("anatomy", 1)])
    (diff,) = [lines for info, lines in fences(text) if info == "diff"]
    assert "-| Answer: B" in diff and "+| ANSWER: B" in diff
    assert "[doc 1 of 3] id=1" in diff
    assert not any(line.startswith("  ") for line in diff)
    assert "  -| Answer" not in text and "  +| ANSWER" not in text


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    result = mmlu_like("anatomy", 1, old="```py", new="````py")
    text = report([result])
    assert "\n`````diff\n" in text and "\n-| ```py B\n+| ````py B\n" in text


def test_broken_module_details_hold_the_traceback() -> None:
    traceback = [
        "Traceback (most recent call last):",
        *(f'  File "tasks/broken.py", line {n}, in <module>' for n in range(1, 200)),
        "ModuleNotFoundError: No module named 'nope'",
    ]
    module = ItemResult(
        label="tasks/broken.py",
        kind="module",
        headline="task module tasks/broken.py failed to import",
        details=traceback,
    )
    text = report([module])
    assert "<details><summary><code>tasks/broken.py</code>: task module" in text
    (body,) = [lines for _, lines in fences(text)]
    assert body[0] == "Traceback (most recent call last):"
    assert body[-1] == "ModuleNotFoundError: No module named 'nope'"
    assert 'File "tasks/broken.py", line 199, in <module>' in body[-2]
    assert "lines cut" in text


def test_an_orphan_says_why_it_is_one() -> None:
    orphan = ItemResult(
        label="tasks/__snapshots__/old-0--1234abcd.txt",
        kind="orphan",
        outcome=Outcome.ORPHAN,
        headline="orphan snapshot tasks/__snapshots__/old-0--1234abcd.txt: it records task "
        "'old', which is not registered",
        details=["why it is an orphan: it records task 'old', which is not registered"],
    )
    text = report([orphan])
    (body,) = [lines for _, lines in fences(text)]
    assert body == ["why it is an orphan: it records task 'old', which is not registered"]


# --- escaping --------------------------------------------------------------------------------

ODD = "odd`name<b>bold</b>&x|0"


def test_names_and_text_are_escaped_for_markdown_and_html() -> None:
    odd = ItemResult(
        label=ODD,
        outcome=Outcome.UNVERSIONED,
        changed_docs=1,
        version_before="0",
        version_after="0\n1",
        headline=f"{ODD}: changed <b>badly</b>",
        details=["docs: 1 of 1 docs changed (ids 0)"],
        lint=["empty-text: a `query` with <i>html</i> | and *stars*"],
    )
    text = report([odd])
    (row,) = [line for line in text.split("\n") if line.startswith("| ``odd")]
    assert len(cells(row)) == 5
    assert cells(row)[0] == " ``odd`name<b>bold</b>&x\\|0`` "
    assert cells(row)[4] == " 0 → 0 1 "
    summary = "<summary><code>odd`name&lt;b&gt;bold&lt;/b&gt;&amp;x|0</code>: changed &lt;b&gt;"
    assert summary in text
    assert (
        "- ``odd`name<b>bold</b>&x|0``: empty-text: a \\`query\\` with &lt;i&gt;html&lt;/i&gt; "
        "\\| and \\*stars\\*" in text
    )
    outside = without_code(text)
    assert "<b>" not in outside and "<i>" not in outside


def test_a_name_starting_with_a_backtick_keeps_its_code_span() -> None:
    result = ItemResult(label="`tick|0", outcome=Outcome.NEW)
    text = report([result])
    assert "| `` `tick\\|0 `` |" in text


# --- budgets ---------------------------------------------------------------------------------


def many(failing: int, passing: int) -> list[ItemResult]:
    """`failing` tasks that each changed differently, and `passing` unchanged ones with a lint
    finding each; non-ASCII text, so bytes and characters differ."""
    results = [
        mmlu_like(f"sujet_{n:05d}_¿qué?", n, old=f"Réponse{n}:", new=f"RÉPONSE{n}:")
        for n in range(failing)
    ]
    results += [
        ItemResult(
            label=f"tâche_{n:05d}|0",
            outcome=Outcome.UNCHANGED,
            docs=10,
            version_before="0",
            version_after="0",
            lint=[f"trailing-space: the prompt ends with a space (4 docs: 0, 1, 2, 3) ¿{n}?"],
        )
        for n in range(passing)
    ]
    return results


@pytest.mark.parametrize(("failing", "passing"), [(88, 7_912), (8_000, 0)])
def test_both_budgets_hold_on_8000_results(failing: int, passing: int) -> None:
    results = many(failing, passing)
    pr = report(results)
    assert len(pr) <= REPORT_CHARS
    summary = report(results, SUMMARY_BUDGET)
    assert len(summary.encode("utf-8")) <= SUMMARY_BYTES
    assert len(summary.encode("utf-8")) > len(summary)  # the byte budget is the binding one
    for text in (pr, summary):
        assert "> **Cut to fit" in text and "The pytest output has them all." in text
        rows = [line for line in text.split("\n") if line.startswith("| `")]
        first_passing = next((i for i, row in enumerate(rows) if "| passed |" in row), len(rows))
        assert all("| failed |" in row for row in rows[:first_passing])  # failures first
        assert "| failed |" not in "".join(rows[first_passing:])
        assert first_passing >= min(failing, 100)
        assert "```diff" in text  # failure details were kept; passing rows were cut first
    left = len(results) - len([line for line in pr.split("\n") if line.startswith("| `")])
    assert f"*… {left:,} more items not listed" in pr
    assert "the pytest output has them all.*" in pr
    assert len(summary) > 10 * len(pr)  # the summary uses its larger budget


def test_passing_rows_and_lint_lines_go_before_failure_details() -> None:
    results = many(20, 7_980)
    text = report(results)
    assert text.count("<details>") == 20
    assert "lint findings not listed" in text
    assert text.index("| failed |") < text.index("| passed |")


def test_a_small_run_is_not_cut() -> None:
    results = many(3, 10)
    text = report(results)
    assert "Cut to fit" not in text and "more items not listed" not in text
    assert report(results, SUMMARY_BUDGET) == text
    assert text.count("| `tâche_") == 10


# --- selection -------------------------------------------------------------------------------


def test_the_report_starts_with_the_selection() -> None:
    text = report(
        [mmlu_like("anatomy", 1)],
        mode="compare",
        spec="mmlu|5",
        tasks=57,
        broken=1,
        changed="57 tasks changed since origin/main: tasks/mmlu.py changed",
        base_ref="origin/main",
    )
    head = text[: text.index("| task |")]
    assert "- 57 tasks from `mmlu|5` and 1 broken task module (compare mode)" in head
    assert "57 tasks changed since origin/main: tasks/mmlu.py changed" in head
    assert "snapshots at `origin/main`" in head


def test_nothing_selected_says_so_instead_of_an_empty_table() -> None:
    changed = "0 tasks changed since origin/main"
    text = report([], spec="all", changed=changed)
    assert "0 tasks changed since origin/main: nothing to check" in text
    assert "| task |" not in text
    assert "- 0 tasks from `all` (compare mode)" in text


# --- destinations ----------------------------------------------------------------------------


def test_destinations_are_checked(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    ok = tmp_path / "new" / "deeper" / "report.md"
    assert destination_problems(ok, {}) == []
    (problem,) = destination_problems(tmp_path / "folder", {})
    assert "is a directory" in problem
    (problem,) = destination_problems(tmp_path / "file" / "report.md", {})
    assert "is a file" in problem
    missing = str(tmp_path / "nowhere" / "summary.md")
    (problem,) = destination_problems(ok, {"GITHUB_STEP_SUMMARY": missing})
    assert "does not exist" in problem
    (problem,) = destination_problems(ok, {"GITHUB_STEP_SUMMARY": str(tmp_path / "folder")})
    assert "GITHUB_STEP_SUMMARY" in problem and "is a directory" in problem


def test_a_failed_write_is_reported_never_raised(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "other").mkdir()
    summary = RunSummary([mmlu_like("anatomy", 1)])
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "other")}
    problems = publish(tmp_path / "folder", summary, {}, Selection(), env)
    assert len(problems) == 2
    assert "the report was not written" in problems[0]
    assert "not appended to GITHUB_STEP_SUMMARY" in problems[1]


def test_the_step_summary_budget_counts_what_the_file_holds(tmp_path: Path) -> None:
    step = tmp_path / "step.md"
    step.write_bytes(b"x" * (SUMMARY_BYTES - 100_000))
    results = many(88, 7_912)
    outcomes = {r.label: "passed" if r.outcome is Outcome.UNCHANGED else "failed" for r in results}
    env = {"GITHUB_STEP_SUMMARY": str(step)}
    assert publish(None, RunSummary(results), outcomes, Selection(), env) == []
    size = step.stat().st_size
    assert SUMMARY_BYTES - 100_000 + 50_000 < size <= SUMMARY_BYTES
